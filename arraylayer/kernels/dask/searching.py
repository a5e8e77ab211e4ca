"""Searching, sorting and set kernels.

Sorts need each slice along the sorted axis whole: that axis becomes one chunk (lazily) and
NumPy's sort kernel runs per chunk. ``unique_*`` run NumPy's kernels in one task over the
whole array (``_lazy.gathered``): their lengths are unknown (``nan``) until computed, and
NaNs stay distinct, as the standard asks. ``nonzero`` is dask's own (lengths unknown too).
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

from arraylayer.kernels.numpy._common import BF16 as NUMPY_BF16
from arraylayer.kernels.dask._lazy import NUMPY, along, chunkwise, gathered, unknown

argmax = da.argmax
argmin = da.argmin
where = chunkwise("where")
_INDEX = np.dtype(np.intp)


def count_nonzero(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    counts = da.count_nonzero(x, axis=axis)
    if keepdims:
        axes = range(x.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
        counts = da.expand_dims(counts, tuple(a % x.ndim for a in axes))
    return counts


def nonzero(x: Any, /) -> tuple[Any, ...]:
    """dask's nonzero; an empty array in several chunks is joined into one first (dask's ravel of it
    raised TypeError: "reduce() of empty iterable")."""
    if 0 in x.shape and x.npartitions > 1:
        x = x.rechunk(-1)
    return tuple(da.nonzero(x))


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """dask's searchsorted (x1 1-D, searched block by block); bfloat16 compared as exact float32
    copies, as on the NumPy backend; a 0-d x2 (or a Python scalar) gives a 0-d result."""
    if sorter is not None:
        x1 = da.take(x1, sorter)
    x2 = x2 if isinstance(x2, da.Array) else da.asarray(np.asarray(x2, dtype=x1.dtype))
    x1, x2 = _orderable(x1), _orderable(x2)
    if x2.ndim == 0:  # dask's block-wise search needs at least one axis
        return da.searchsorted(x1, x2.reshape(1), side=side).reshape(())
    return da.searchsorted(x1, x2, side=side)


def _orderable(x: Any) -> Any:
    """``x``, or for bfloat16 an exact float32 copy, which NumPy orders correctly."""
    return x.astype(np.float32) if x.dtype == NUMPY_BF16 else x


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    return along(NUMPY["sort"], x, (axis,), x.dtype, axis=axis, descending=descending, stable=stable)


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    return along(NUMPY["argsort"], x, (axis,), _INDEX, axis=axis, descending=descending, stable=stable)


def unique_all(x: Any, /) -> tuple[Any, Any, Any, Any]:
    return gathered(NUMPY["unique_all"], x, [(x.dtype, unknown()), (_INDEX, unknown()), (_INDEX, x.shape),
                                            (_INDEX, unknown())])  # type: ignore[return-value]


def unique_counts(x: Any, /) -> tuple[Any, Any]:
    return gathered(NUMPY["unique_counts"], x, [(x.dtype, unknown()), (_INDEX, unknown())])  # type: ignore[return-value]


def unique_inverse(x: Any, /) -> tuple[Any, Any]:
    return gathered(NUMPY["unique_inverse"], x, [(x.dtype, unknown()), (_INDEX, x.shape)])  # type: ignore[return-value]


def unique_values(x: Any, /) -> Any:
    return gathered(lambda a: (NUMPY["unique_values"](a),), x, [(x.dtype, unknown())])[0]
