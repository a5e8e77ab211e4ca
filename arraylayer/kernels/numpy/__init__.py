"""The numpy kernels (numpy >= 2.4, bfloat16 through ml_dtypes); see ``arraylayer/kernels/__init__.py``.

``KERNELS`` maps every name of ``names.KERNEL_NAMES`` to the function of that name in the
module of its category. Most are numpy's own functions; the others are documented in their
modules (bfloat16 scalars, half precision computed in float32, descending sorts, plain tuples).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..names import collect_kernels, half_precision_decompositions_unsupported
from . import creation, elementwise, fft, linalg, manipulation, searching, statistical

_MODULES = {
    "creation": creation,
    "elementwise": elementwise,
    "fft": fft,
    "indexing": manipulation,
    "linear_algebra": linalg,
    "linalg": linalg,
    "manipulation": manipulation,
    "searching": searching,
    "sets": searching,
    "sorting": searching,
    "statistical": statistical,
    "utility": statistical,
}

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(_MODULES)

# No float16/bfloat16 factorisations or solves (see linalg.py); everything else the api layer
# sends has a kernel on numpy 2.4 (tests/test_kernels_*.py call every one).
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(">=2.4,<2.5")
