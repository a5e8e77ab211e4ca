"""Utility functions: ``all``, ``any``, ``diff``."""

from __future__ import annotations

from typing import Any

from .dispatch import array_input, kernel, promoted_inputs

Array = Any
Axis = int | tuple[int, ...] | None

__all__ = ["all", "any", "diff"]


def all(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """True where every element along ``axis`` is non-zero (bool result)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "all", dtype)(x, axis=axis, keepdims=keepdims)


def any(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """True where some element along ``axis`` is non-zero (bool result)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "any", dtype)(x, axis=axis, keepdims=keepdims)


def diff(x: Array, /, *, axis: int = -1, n: int = 1, prepend: Array | None = None,
         append: Array | None = None) -> Array:
    """The n-th discrete difference along ``axis``; ``prepend``/``append`` are joined first,
    all in the promoted dtype of x and them."""
    if n < 0:
        raise ValueError(f"diff needs n >= 0, got {n}.")
    extra = [a for a in (prepend, append) if a is not None]
    backend, dtype, (x, *extra) = promoted_inputs(x, *extra)
    prepend = extra.pop(0) if prepend is not None else None
    append = extra.pop(0) if append is not None else None
    return kernel(backend, "diff", dtype)(x, axis=axis, n=n, prepend=prepend, append=append)
