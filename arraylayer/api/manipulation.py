"""Manipulation functions. Those that join arrays (``concat``, ``stack``) promote them under the
active policy first; the others keep x's dtype."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..registry import backend_of
from .dispatch import array_input, kernel, promoted_inputs

Array = Any

__all__ = [
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
    "reshape", "roll", "squeeze", "stack", "tile", "unstack",
]


def _one(name: str, x: Array, *args: Any, **options: Any) -> Any:
    backend, x, dtype = array_input(x)
    return kernel(backend, name, dtype)(x, *args, **options)


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape the given shapes broadcast to (ValueError, naming them, when they do not)."""
    ndim = max((len(s) for s in shapes), default=0)
    result = []
    for i in range(-ndim, 0):
        sizes = {s[i] for s in shapes if len(s) >= -i and s[i] != 1}
        if len(sizes) > 1:
            raise ValueError(f"broadcast_shapes: shapes {', '.join(map(str, shapes))} do not broadcast "
                             f"(sizes {sorted(sizes)} at axis {i}).")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """The arrays broadcast to one shape, as a tuple (2025.12); each keeps its dtype."""
    if not arrays:
        return ()
    backend = backend_of(*arrays)
    inputs = [array_input(x)[1] for x in arrays]
    return tuple(backend.kernels["broadcast_arrays"](*inputs))


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """x broadcast to ``shape``."""
    return _one("broadcast_to", x, tuple(shape))


def _joined(name: str, arrays: Sequence[Array], axis: int | None) -> Array:
    if len(arrays) == 0:
        raise ValueError(f"{name} needs at least one array.")
    backend, dtype, inputs = promoted_inputs(*arrays)
    return kernel(backend, name, dtype)(inputs, axis=axis)


def concat(arrays: Sequence[Array], /, *, axis: int | None = 0) -> Array:
    """The arrays joined along an existing ``axis`` (flattened first when None), in their
    promoted dtype."""
    return _joined("concat", arrays, axis)


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """The arrays joined along a new ``axis``, in their promoted dtype."""
    return _joined("stack", arrays, axis)


def expand_dims(x: Array, /, axis: int | tuple[int, ...] = 0) -> Array:
    """x with a new axis of length one at ``axis`` (each of a tuple of axes, as 2025.12 allows;
    axes count in the result, negative from its end)."""
    backend, x, dtype = array_input(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = len(x.shape) + len(axes)
    if any(not -ndim <= a < ndim for a in axes):
        raise IndexError(f"expand_dims: axis {axis} is out of range for a result of {ndim} dimensions.")
    positions = sorted(a % ndim for a in axes)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: axis {axis} names one result axis twice.")
    expand = kernel(backend, "expand_dims", dtype)
    for position in positions:  # ascending: each insertion leaves the earlier positions in place
        x = expand(x, axis=position)
    return x


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x with the order of elements reversed along ``axis`` (all axes when None)."""
    return _one("flip", x, axis=axis)


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """x with axes ``source`` moved to ``destination``."""
    return _one("moveaxis", x, source, destination)


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """x with its axes permuted."""
    return _one("permute_dims", x, tuple(axes))


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Each element repeated ``repeats`` times along ``axis`` (of the flattened x when None)."""
    backend, x, dtype = array_input(x)
    if isinstance(repeats, int) and repeats < 0:
        raise ValueError(f"repeat needs repeats >= 0, got {repeats}.")
    return kernel(backend, "repeat", dtype)(x, repeats, axis=axis)


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """x with a new shape (one entry may be -1). copy=True always copies; copy=False raises
    when a view is impossible."""
    return _one("reshape", x, tuple(shape), copy=copy)


def roll(x: Array, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x with elements shifted by ``shift`` along ``axis`` (of the flattened x when None)."""
    return _one("roll", x, shift, axis=axis)


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """x without the length-one axes ``axis`` (ValueError when one is not of length one)."""
    backend, x, dtype = array_input(x)
    for a in (axis,) if isinstance(axis, int) else axis:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has length {x.shape[a]}, not 1.")
    return kernel(backend, "squeeze", dtype)(x, axis=axis)


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """x repeated ``repetitions`` times along each axis."""
    return _one("tile", x, tuple(repetitions))


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """x split along ``axis`` into a tuple of arrays of one rank less."""
    return tuple(_one("unstack", x, axis=axis))
