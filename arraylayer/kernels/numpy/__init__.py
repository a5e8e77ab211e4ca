"""The numpy kernels (numpy >= 2.4, bfloat16 through ml_dtypes); see ``arraylayer/kernels/__init__.py``.

``KERNELS`` maps every name of ``names.KERNEL_NAMES`` to the function of that name in the
module of its category. Most are numpy's own functions; the others are documented in their
modules (bfloat16 scalars, half precision computed in float32, descending sorts, plain tuples).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arraylayer.kernels.names import collect_kernels, half_precision_decompositions_unsupported

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(__name__)

# numpy's reductions return numpy scalars for a 0-d result; the standard (and the other
# backends) return 0-d arrays, so these kernels pass their result through ``np.asarray``.
_SCALAR_RESULTS = ("sum", "prod", "max", "min", "mean", "std", "var", "all", "any", "argmax", "argmin",
                   "count_nonzero", "vecdot", "trace", "vector_norm", "matrix_norm", "det", "matrix_rank", "slogdet")


def _as_array(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` with a 0-d ndarray where numpy would return a scalar."""

    def array_result(*args: Any, **kwargs: Any) -> Any:
        result = kernel(*args, **kwargs)
        return tuple(map(np.asarray, result)) if isinstance(result, tuple) else np.asarray(result)

    array_result.__name__ = array_result.__qualname__ = getattr(kernel, "__name__", "kernel")
    array_result.__doc__ = kernel.__doc__
    return array_result


KERNELS.update({name: _as_array(KERNELS[name]) for name in _SCALAR_RESULTS if name in KERNELS})

# No float16/bfloat16 factorisations or solves (see linalg.py); everything else the api layer
# sends has a kernel on numpy 2.4 (tests/test_kernels_*.py call every one).
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(">=2.4,<2.5")
