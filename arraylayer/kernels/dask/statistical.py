"""Statistical and utility kernels: dask's tree reductions, with NumPy's dtype rules.

float16/bfloat16 reductions accumulate in float32 and round once, as on the NumPy backend
(dask sums chunk by chunk, so half-precision partial sums would round at every step).
"""

from __future__ import annotations

import builtins
from typing import Any

import dask.array as da

from arraylayer.kernels.accumulate import reduction
from arraylayer.kernels.dask._lazy import F32, in_float32, is_half

all = da.all
any = da.any
max = da.max
min = da.min

sum = reduction(da.sum, is_half, F32)
prod = reduction(da.prod, is_half, F32)


def _cumulative(scan: Any, initial: int, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
    axis = 0 if axis is None else axis
    work = F32 if is_half(dtype) else dtype
    result = scan(x, axis=axis, dtype=work)
    if include_initial:
        shape = list(x.shape)
        shape[axis] = 1
        result = da.concatenate([da.full(tuple(shape), initial, dtype=result.dtype), result], axis=axis)
    return result.astype(dtype) if work is not dtype else result


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    return _cumulative(da.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    return _cumulative(da.cumprod, 1, x, axis, dtype, include_initial)


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return in_float32(da.mean, x, x.dtype, axis=axis, keepdims=keepdims)


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    return in_float32(da.std, x, x.dtype, axis=axis, ddof=correction, keepdims=keepdims)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    return in_float32(da.var, x, x.dtype, axis=axis, ddof=correction, keepdims=keepdims)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    """Forward differences; for bool, ``!=`` of neighbours, as numpy.diff (dask's subtracts)."""
    if prepend is not None or append is not None:
        x = da.concatenate([p for p in (prepend, x, append) if p is not None], axis=axis)
    if x.dtype != bool:
        return da.diff(x, n=n, axis=axis)
    axis %= x.ndim
    later = tuple(slice(1, None) if i == axis else slice(None) for i in range(x.ndim))
    earlier = tuple(slice(None, -1) if i == axis else slice(None) for i in range(x.ndim))
    for _ in range(builtins.min(n, x.shape[axis])):  # this module's min is the kernel
        x = x[later] != x[earlier]
    return x
