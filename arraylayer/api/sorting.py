"""Sorting functions: ``sort`` and ``argsort`` (stable by default, as the Array API says)."""

from __future__ import annotations

from typing import Any

from arraylayer import arguments
from arraylayer.api.dispatch import index_result, kernel
from arraylayer.api.searching import _real

Array = Any

__all__ = ["argsort", "sort"]


def sort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """x sorted along ``axis``; NaNs last. ``stable`` keeps equal elements in their order
    (descending too)."""
    backend, x, dtype = _real("sort", x)
    return kernel(backend, "sort", dtype)(x, axis=arguments.axis(axis, len(x.shape)), descending=arguments.flag(descending, "descending"),
                                              stable=arguments.flag(stable, "stable"))


def argsort(x: Array, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Array:
    """The indices that sort x along ``axis``, in the default index dtype."""
    backend, x, dtype = _real("argsort", x)
    return index_result(backend, kernel(backend, "argsort", dtype)(x, axis=arguments.axis(axis, len(x.shape)), descending=arguments.flag(descending, "descending"),
                                              stable=arguments.flag(stable, "stable")))
