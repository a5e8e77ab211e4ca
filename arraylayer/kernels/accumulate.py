"""Accumulating kernels that compute float16/bfloat16 in float32 and round once.

A framework whose half-precision sums and products accumulate in the half dtype (NumPy's
float16 products and cumulative sums, ml_dtypes' bfloat16 loops, dask's chunk by chunk) is
wrapped here once, at definition time: the kernel is one Python function around the framework's
own, as a hand-written one would be.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["reduction", "scan"]


def reduction(reduce: Callable[..., Any], is_half: Callable[[Any], bool], wide: Any) -> Callable[..., Any]:
    """``sum``/``prod`` from ``reduce(x, axis=, dtype=, keepdims=)``: a half ``dtype`` computed in ``wide``."""

    def kernel(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
        if is_half(dtype):
            return reduce(x, axis=axis, dtype=wide, keepdims=keepdims).astype(dtype)
        return reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)

    return kernel


def scan(accumulate: Callable[..., Any], is_half: Callable[[Any], bool], wide: Any) -> Callable[..., Any]:
    """``cumulative_sum``/``cumulative_prod`` from ``accumulate(x, axis=, dtype=, include_initial=)``:
    a half ``dtype`` computed in ``wide``."""

    def kernel(x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
        if is_half(dtype):
            return accumulate(x, axis=axis, dtype=wide, include_initial=include_initial).astype(dtype)
        return accumulate(x, axis=axis, dtype=dtype, include_initial=include_initial)

    return kernel
