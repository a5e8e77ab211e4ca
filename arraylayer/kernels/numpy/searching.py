"""Searching, sorting and set kernels.

numpy sorts ml_dtypes' bfloat16 with a generic comparison that NaNs break (``[nan, 1.5, nan,
-0.5]`` comes back unchanged), so sort, argsort, searchsorted and unique_* order bfloat16 as
an exact float32 copy. numpy has no ``descending=``: a descending sort is an ascending
stable sort of the flipped array, flipped back, which keeps equal elements in their original
order (flipping an ascending sort would reverse them); NaNs come first, as on jax. The
``unique_*`` functions return plain tuples; numpy 2 already counts every NaN as distinct and
gives ``inverse_indices`` x's shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.kernels.numpy._common import BF16, F32, PY_REAL, bf16_scalar

argmax = np.argmax
argmin = np.argmin
count_nonzero = np.count_nonzero
nonzero = np.nonzero


def _orderable(x: Any) -> Any:
    """``x``, or for bfloat16 an exact float32 copy, which numpy orders correctly."""
    return x.astype(F32) if x.dtype is BF16 else x


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    """numpy.where; a Python scalar beside a bfloat16 array stays bfloat16 (else float64)."""
    if type(x2) in PY_REAL:
        x2 = bf16_scalar(x2, x1)
    elif type(x1) in PY_REAL:
        x1 = bf16_scalar(x1, x2)
    return np.where(condition, x1, x2)


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    y = _orderable(x)
    if descending:
        y = np.flip(np.sort(np.flip(y, axis), axis=axis, stable=stable), axis)
    else:
        y = np.sort(y, axis=axis, stable=stable)
    return y.astype(x.dtype, copy=False)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    x = _orderable(x)
    if descending:
        # positions in the flipped array, sorted ascending, read backwards and mapped back
        flipped = np.argsort(np.flip(x, axis), axis=axis, stable=stable)
        return (x.shape[axis] - 1) - np.flip(flipped, axis)
    return np.argsort(x, axis=axis, stable=stable)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    return np.searchsorted(_orderable(x1), _orderable(x2), side=side, sorter=sorter)


def unique_all(x: Any, /) -> tuple[Any, Any, Any, Any]:
    values, indices, inverse, counts = np.unique_all(_orderable(x))
    return values.astype(x.dtype, copy=False), indices, inverse, counts


def unique_counts(x: Any, /) -> tuple[Any, Any]:
    values, counts = np.unique_counts(_orderable(x))
    return values.astype(x.dtype, copy=False), counts


def unique_inverse(x: Any, /) -> tuple[Any, Any]:
    values, inverse = np.unique_inverse(_orderable(x))
    return values.astype(x.dtype, copy=False), inverse


def unique_values(x: Any, /) -> Any:
    """Sorted, as on the other backends: numpy >= 2.3 hashes and leaves the order unspecified."""
    return np.sort(np.unique_values(_orderable(x))).astype(x.dtype, copy=False)
