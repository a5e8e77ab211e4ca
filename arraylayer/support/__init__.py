"""Which dtypes each backend's kernels support, and from them, which dtypes every public function supports.

One module per job; this package re-exports their public names, so ``arraylayer.support.<name>``
is the one import path:

* :mod:`~arraylayer.support.declarations`: the data model of a kernel package's declarations
  (``SUPPORTED``/``UNSUPPORTED``, keyed by framework version range) and their checks;
* :mod:`~arraylayer.support.kernels`: what a backend's kernels support at the installed
  version: the declarations, and the stored-but-not-computable rule on top of them;
* :mod:`~arraylayer.support.table`: per public function, the kernels it calls and the rule
  that gives their dtype (:data:`FUNCTIONS`; element-wise rows from
  :mod:`arraylayer.dtypes.function_rules`, the table the api layer reads too);
* :mod:`~arraylayer.support.names`: public functions by qualified name (the namespaces
  ``arraylayer`` registers when it is imported);
* :mod:`~arraylayer.support.queries`: :func:`function_supported_dtypes` /
  :func:`function_unsupported_dtypes` and :func:`dtype_support`, from data, never by reading
  source code, computed once and served from a dict;
* :mod:`~arraylayer.support.lowp`: every public function's cells for the low-precision dtypes on a
  backend (computed by the one rule of :mod:`arraylayer.lowp.compute`, stored only, or not held);
* :mod:`~arraylayer.support.matrix`: the function x dtype matrix of a backend and its text,
  Markdown and HTML forms (``python -m arraylayer support``).

:mod:`arraylayer.cli.probe` checks the declarations against the installed frameworks. Nothing
here imports the api layer: the api layer and this package both read
:mod:`arraylayer.dtypes.function_rules`.

The folder ``arraylayer/support/`` owns which dtypes each kernel supports per framework version, the
support queries and matrix.

May import: the base modules, ``dtypes``, ``runtime``, ``kernels``, ``lowp``.
"""

from __future__ import annotations

from arraylayer.support.declarations import (
    GROUPS,
    UnverifiedVersionWarning,
    check_declarations,
    covering_range,
    declared_unsupported,
    expand_dtypes,
    version_matches,
)
from arraylayer.support.kernels import computes_stored, declaration_status, kernel_unsupported_dtypes, stored_only_dtypes
from arraylayer.support.lowp import low_precision_support
from arraylayer.support.matrix import CELL_MARKS, MATRIX_FORMATS, SupportMatrix, matrix_functions, render_matrix, support_matrix
from arraylayer.support.names import function_name, function_uses, public_functions
from arraylayer.support.queries import Cell, clear_caches, dtype_support, function_supported_dtypes, function_unsupported_dtypes
from arraylayer.support.table import FUNCTIONS, INDEPENDENT, RULES, Uses, function_table, kernel_domain, kernel_dtype

__all__ = [
    "GROUPS", "UnverifiedVersionWarning", "expand_dtypes", "version_matches", "kernel_unsupported_dtypes",
    "declared_unsupported", "covering_range", "declaration_status", "check_declarations",
    "Uses", "FUNCTIONS", "RULES", "function_table", "public_functions", "function_name", "function_uses",
    "kernel_dtype", "kernel_domain", "stored_only_dtypes", "computes_stored", "function_supported_dtypes",
    "function_unsupported_dtypes", "dtype_support", "Cell", "clear_caches", "INDEPENDENT", "SupportMatrix",
    "matrix_functions", "support_matrix", "render_matrix", "MATRIX_FORMATS", "CELL_MARKS", "low_precision_support",
]
