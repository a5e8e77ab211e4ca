"""Statistical and utility kernels (reductions, cumulative sums and products, all/any, diff).

torch reads ``dim=()`` as every axis where numpy and the Array API reduce over none: such a
reduction runs over a new trailing axis of length 1, which gives numpy's result (x itself,
zero variance ...). torch.prod takes one axis only; torch.all/any of uint8 return uint8;
torch.cumsum/cumprod have no bool accumulator; include_initial is a concatenation.
torch stores uint16/uint32/uint64 but has no sum/prod/cumsum/cumprod for them: such an
accumulator (``sum(uint8)``'s default uint32) is computed in int64 and cast back. Exact: both
wrap modulo 2**64, and the cast keeps the low bits, so the result is NumPy's (wrap included),
for every input (uint64 ones enter int64 as their two's-complement bits).
Names are the Array API's, so some shadow builtins (sum, max, min, all, any) here.
"""

from __future__ import annotations

import math
from typing import Any

import torch

#: torch dtypes stored without accumulating kernels: computed in int64, then cast back.
_VIA_INT64: Any = frozenset({torch.uint16, torch.uint32, torch.uint64})


def _via_int64(reduce: Any, x: Any, dtype: Any, **options: Any) -> Any:
    """``reduce(x, dtype=dtype, ...)`` for an accumulator torch cannot compute in: in int64."""
    if x.dtype in _VIA_INT64:
        x = x.to(torch.int64)
    return reduce(x, dtype=torch.int64, **options).to(dtype)


def sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    if dtype in _VIA_INT64:
        return _via_int64(sum, x, dtype, axis=axis, keepdims=keepdims)
    if axis == ():
        return torch.sum(x[..., None], dim=-1, dtype=dtype)
    return torch.sum(x, dim=axis, keepdim=keepdims, dtype=dtype)


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    """torch.prod reduces one axis or all: several axes are moved last and flattened into one."""
    if dtype in _VIA_INT64:
        return _via_int64(prod, x, dtype, axis=axis, keepdims=keepdims)
    if isinstance(axis, int):
        return torch.prod(x, dim=axis, keepdim=keepdims, dtype=dtype)
    if axis is None:
        result = torch.prod(x, dtype=dtype)
        return result.reshape((1,) * x.ndim) if keepdims else result
    if axis == ():
        return torch.prod(x[..., None], dim=-1, dtype=dtype)
    axes = sorted({a % x.ndim for a in axis})
    kept = [a for a in range(x.ndim) if a not in axes]
    flat = x.permute(kept + axes).reshape([x.shape[a] for a in kept] + [math.prod(x.shape[a] for a in axes)])
    result = torch.prod(flat, dim=-1, dtype=dtype)
    return result.reshape([1 if a in axes else n for a, n in enumerate(x.shape)]) if keepdims else result


def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if axis == ():
        return x.clone()
    return torch.amax(x, dim=() if axis is None else axis, keepdim=keepdims)


def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if axis == ():
        return x.clone()
    return torch.amin(x, dim=() if axis is None else axis, keepdim=keepdims)


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if axis == ():
        return torch.mean(x[..., None], dim=-1)
    return torch.mean(x, dim=axis, keepdim=keepdims)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    if axis == ():
        return torch.var(x[..., None], dim=-1, correction=correction)
    return torch.var(x, dim=axis, correction=correction, keepdim=keepdims)


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    if axis == ():
        return torch.std(x[..., None], dim=-1, correction=correction)
    return torch.std(x, dim=axis, correction=correction, keepdim=keepdims)


def _cumulative(op: Any, initial: int, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
    """op (torch.cumsum or torch.cumprod) along ``axis`` (None: the only one) in ``dtype``; a bool
    accumulator (logical or / and) is an int64 one compared with 0."""
    if dtype in _VIA_INT64:
        return _via_int64(_cumulative_in, x, dtype, op=op, initial=initial, axis=axis, include_initial=include_initial)
    return _cumulative_in(x, op=op, initial=initial, axis=axis, dtype=dtype, include_initial=include_initial)


def _cumulative_in(x: Any, *, op: Any, initial: int, axis: int | None, dtype: Any, include_initial: bool) -> Any:
    axis = 0 if axis is None else axis
    if dtype is torch.bool:
        result = op(x, axis, dtype=torch.int64) != 0
    else:
        result = op(x, axis, dtype=dtype)
    if not include_initial:
        return result
    shape = list(result.shape)
    shape[axis] = 1
    first = torch.full(shape, initial, dtype=result.dtype, device=result.device)
    return torch.cat([first, result], dim=axis)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    return _cumulative(torch.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    return _cumulative(torch.cumprod, 1, x, axis, dtype, include_initial)


# -- utility --------------------------------------------------------------------------------
def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if axis == ():
        return x != 0
    result = torch.all(x, dim=axis, keepdim=keepdims)
    return result if result.dtype is torch.bool else result.bool()


def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if axis == ():
        return x != 0
    result = torch.any(x, dim=axis, keepdim=keepdims)
    return result if result.dtype is torch.bool else result.bool()


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    return torch.diff(x, n=n, dim=axis, prepend=prepend, append=append)
