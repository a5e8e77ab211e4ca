"""The probe: which dtypes each backend's kernels really support, checked against the declarations.

:func:`probe` calls every kernel of a backend (``backend.kernels``) directly, on small sample
inputs of every dtype the api layer may call it with (:func:`~arraylayer.support.kernel_domain`)
that the backend holds as installed and configured. A cell is *supported* when the call
returns the Array API's result dtype (:data:`CASES`: per kernel, how to build its arguments and
what it returns) and the values NumPy gives for the same inputs computed in a wide dtype
(float64, complex128; integers and bool as they are), within the dtype's tolerance;
otherwise it is *unsupported*, with the reason. :func:`compare` lists the cells where the
declarations (``SUPPORTED``/``UNSUPPORTED`` of the kernel package, for the installed version)
say otherwise, and :func:`format_differences` prints them, one line per cell.

Command line (see :mod:`arraylayer.cli`)::

    python -m arraylayer probe [--backend NAME] [--output FILE|-] [--x64] [--check]
    python -m arraylayer support [--backend NAME] [--format text|markdown|html] [--x64]

``probe`` writes the observed support of every installed backend (or one) as JSON: per
kernel, the supported dtypes and each unsupported one's reason; per public function, what
follows from that. The JSON goes to a file (``--output``, default ``arraylayer-probe.json``;
``-`` for standard output) and a summary per backend is printed. ``--check`` makes it exit
with status 1 when the declarations differ.
``support`` prints the function x dtype matrix generated from the declarations.

One module per job, their public names re-exported here: :mod:`~arraylayer.cli.probe.cases` (the
sample inputs and each kernel's :class:`Case`), :mod:`~arraylayer.cli.probe.run` (running the
probe), :mod:`~arraylayer.cli.probe.lowp` (the low-precision cells, called through the public
functions), :mod:`~arraylayer.cli.probe.report` (the differences from the declarations and the JSON
report) and :mod:`~arraylayer.cli.probe.commands` (the two commands).
"""

from arraylayer.cli.probe.cases import CASES, TOLERANCE, Case, Maker
from arraylayer.cli.probe.commands import DEFAULT_OUTPUT, PROBE_COMMAND, SUPPORT_COMMAND
from arraylayer.cli.probe.lowp import CALLS, LowPrecisionDifference, probe_low_precision
from arraylayer.cli.probe.report import Difference, compare, format_differences, probe_report
from arraylayer.cli.probe.run import Observation, ProbeResult, jax_x64, probe, probe_cell

__all__ = [
    "Case", "CASES", "Observation", "ProbeResult", "Difference", "probe", "compare", "format_differences",
    "probe_report", "PROBE_COMMAND", "SUPPORT_COMMAND", "DEFAULT_OUTPUT", "Maker", "TOLERANCE", "jax_x64", "probe_cell",
    "CALLS", "LowPrecisionDifference", "probe_low_precision",
]
