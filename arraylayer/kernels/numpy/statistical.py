"""Statistical and utility kernels.

The accumulating functions compute float16/bfloat16 in float32 and round once: ml_dtypes'
bfloat16 loops accumulate in bfloat16 (the mean of 10000 values 1.1 comes out 0.05), and
numpy's float16 products and cumulative sums round at every step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.kernels.accumulate import reduction, scan
from arraylayer.kernels.numpy._common import F32, is_half

all = np.all
any = np.any
max = np.max
min = np.min

sum = reduction(np.add.reduce, is_half, F32)
prod = reduction(np.multiply.reduce, is_half, F32)
cumulative_sum = scan(np.cumulative_sum, is_half, F32)
cumulative_prod = scan(np.cumulative_prod, is_half, F32)


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if is_half(x.dtype):
        return np.mean(x, axis=axis, dtype=F32, keepdims=keepdims).astype(x.dtype)
    return np.mean(x, axis=axis, keepdims=keepdims)


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    if is_half(x.dtype):
        return np.std(x, axis=axis, dtype=F32, correction=correction, keepdims=keepdims).astype(x.dtype)
    return np.std(x, axis=axis, correction=correction, keepdims=keepdims)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    if is_half(x.dtype):
        return np.var(x, axis=axis, dtype=F32, correction=correction, keepdims=keepdims).astype(x.dtype)
    return np.var(x, axis=axis, correction=correction, keepdims=keepdims)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    """numpy.diff, which takes ``prepend=None`` as a value to prepend (it has its own sentinel)."""
    if prepend is not None or append is not None:
        parts = [p for p in (prepend, x, append) if p is not None]
        x = np.concat(parts, axis=axis)
    return np.diff(x, n=n, axis=axis)
