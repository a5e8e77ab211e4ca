"""Utility functions: ``all``, ``any``, ``diff``."""

from __future__ import annotations

import builtins
from typing import Any

from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, as_array, kernel, promoted_inputs

Array = Any
Axis = int | tuple[int, ...] | None

__all__ = ["all", "any", "diff"]


def all(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """True where every element along ``axis`` is non-zero (bool result)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "all", dtype)(x, axis=arguments.axes(axis, len(x.shape)),
                                         keepdims=arguments.flag(keepdims, "keepdims"))


def any(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """True where some element along ``axis`` is non-zero (bool result)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "any", dtype)(x, axis=arguments.axes(axis, len(x.shape)),
                                         keepdims=arguments.flag(keepdims, "keepdims"))


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The n-th discrete difference along ``axis``; ``prepend``/``append`` are joined first,
    all in the promoted dtype of x and them."""
    n = arguments.count(n, "n")
    extra = [a for a in (prepend, append) if a is not None]
    backend, dtype, (x, *extra) = promoted_inputs(x, *extra)
    if len(x.shape) == 0:
        raise InvalidArgumentError("diff needs an array of at least one dimension; reshape a 0-d array first.")
    axis = arguments.axis(axis, len(x.shape))
    for other in extra:
        if len(other.shape) != len(x.shape) or builtins.any(  # this module's any is the array function
                a != b for i, (a, b) in enumerate(zip(other.shape, x.shape, strict=True)) if i != axis):
            raise InvalidArgumentError(f"diff's prepend/append of shape {tuple(other.shape)} must match x's shape "
                                       f"{tuple(x.shape)} except along axis {axis}.")
    # Differences beyond the length are all empty: stop there instead of running n passes.
    length = x.shape[axis] + sum(e.shape[axis] for e in extra)
    n = min(n, int(length)) if length == length else n  # nan: a dask length unknown until computed
    prepend = extra.pop(0) if prepend is not None else None
    append = extra.pop(0) if append is not None else None
    if dtype.is_low_precision:
        return _low_precision_diff(backend, x, axis, n, prepend, append)
    return kernel(backend, "diff", dtype)(x, axis=axis, n=n, prepend=prepend, append=append)


def _low_precision_diff(backend: Any, x: Array, axis: int, n: int, prepend: Array | None,
                        append: Array | None) -> Array:
    """diff of a low-precision format: n passes of the rule's ``subtract`` of x's later and earlier
    elements (moved exactly by ``take``), each rounded to the format, as ``subtract`` rounds."""
    from arraylayer.api.elementwise import subtract
    from arraylayer.api.indexing import take
    from arraylayer.api.manipulation import concat

    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = concat(parts, axis=axis)
    index = as_dtype("int32")
    for _ in range(n):
        size = int(x.shape[axis])
        later, earlier = (as_array(backend, list(r), index) for r in (range(1, size), range(size - 1)))
        x = subtract(take(x, later, axis=axis), take(x, earlier, axis=axis))
    return x
