"""Indexing functions: ``take`` and ``take_along_axis``. Indices must be integer arrays."""

from __future__ import annotations

from typing import Any

from arraylayer.errors import InvalidArgumentError
from arraylayer.runtime.registry import backend_of
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, as_array, kernel, not_defined

Array = Any

__all__ = ["take", "take_along_axis"]


def _indices(name: str, x: Array, indices: Any) -> tuple[Any, Array, Any, Array]:
    backend = backend_of(x, indices)
    _, x, dtype = array_input(x)
    if not isinstance(indices, backend.array_types):
        from arraylayer.dtypes.inference import infer_dtype_unchecked

        indices = as_array(backend, indices, infer_dtype_unchecked(None, indices))
    kind = backend.dtype_of(indices).category
    if kind not in ("int", "uint"):
        raise not_defined(name, (backend.dtype_of(indices),), "integer index arrays as indices")
    return backend, x, dtype, indices


def take(x: Array, indices: Array, /, *, axis: int | None = None) -> Array:
    """Elements of x at ``indices`` along ``axis`` (optional for 1-d x)."""
    backend, x, dtype, indices = _indices("take", x, indices)
    if axis is None and len(x.shape) != 1:
        raise InvalidArgumentError(f"take needs axis= for a {len(x.shape)}-d array (axis=None is for 1-d arrays only).")
    axis = 0 if axis is None else arguments.axis(axis, len(x.shape))
    indices = arguments.indices_in_bounds(backend, indices, x.shape[axis])
    return kernel(backend, "take", dtype)(x, indices, axis=axis)


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """Elements of x at ``indices`` (same rank as x) along ``axis``."""
    backend, x, dtype, indices = _indices("take_along_axis", x, indices)
    axis = arguments.axis(axis, len(x.shape))
    if len(indices.shape) != len(x.shape):
        raise InvalidArgumentError(f"take_along_axis needs indices of x's rank {len(x.shape)}, got shape "
                                   f"{tuple(indices.shape)}.")
    clash = [i for i, (a, b) in enumerate(zip(x.shape, indices.shape, strict=True)) if i != axis and a != b and 1 not in (a, b)]
    if clash:
        raise InvalidArgumentError(
            f"take_along_axis: indices of shape {tuple(indices.shape)} do not broadcast with x of shape "
            f"{tuple(x.shape)} on axis {clash[0]} (every axis but axis={axis} must match or be 1). Reshape "
            f"or broadcast the indices first."
        )
    indices = arguments.indices_in_bounds(backend, indices, x.shape[axis])
    return kernel(backend, "take_along_axis", dtype)(x, indices, axis=axis)
