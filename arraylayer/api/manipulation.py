"""Manipulation functions. Those that join arrays (``concat``, ``stack``) promote them under the
active policy first; the others keep x's dtype."""

from __future__ import annotations

import math
import numbers
import operator
from collections.abc import Sequence
from typing import Any

from arraylayer.dtypes.defaults import default_int_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.runtime.registry import backend_of
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, kernel, promoted_inputs

Array = Any

__all__ = [
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims", "repeat",
    "reshape", "roll", "squeeze", "stack", "tile", "transpose", "unstack",
]



def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The shape the given shapes broadcast to (an InvalidArgumentError, a ValueError naming them
    all, when they do not)."""
    return arguments.broadcast_shapes(*(arguments.shape(s, "shapes") for s in shapes))


def broadcast_arrays(*arrays: Array) -> tuple[Array, ...]:
    """The arrays broadcast to one shape, as a tuple (2025.12); each keeps its dtype."""
    if not arrays:
        return ()
    backend = backend_of(*arrays)
    inputs = [array_input(x)[1] for x in arrays]
    arguments.broadcast_shapes(*(tuple(x.shape) for x in inputs))
    return tuple(backend.kernels["broadcast_arrays"](*inputs))


def broadcast_to(x: Array, /, shape: tuple[int, ...]) -> Array:
    """x broadcast to ``shape``."""
    backend, x, dtype = array_input(x)
    if isinstance(shape, tuple) and any(n != n for n in shape if isinstance(n, float)):
        raise InvalidArgumentError(
            f"broadcast_to shape={shape} holds an unknown length (nan: a dask length known only once computed). "
            f"Broadcast against the array y of that shape with broadcast_arrays(x, y), which works lazily, or call "
            f"y.compute_chunk_sizes() on the dask array first (it computes).")
    target = arguments.shape(shape)
    if arguments.broadcast_shapes(tuple(x.shape), target) != target or len(x.shape) > len(target):
        raise InvalidArgumentError(f"broadcast_to cannot broadcast shape {tuple(x.shape)} to {target}; pass a shape "
                                   f"whose trailing lengths match x's (or where x has length 1).")
    return kernel(backend, "broadcast_to", dtype)(x, target)


def _known(shape: Any) -> tuple[int | None, ...]:
    """A shape with each unknown length (dask's NaN, a traced None) as None."""
    return tuple(d if d.__class__ is int else None for d in shape)


def _agree(shapes: list[tuple[int | None, ...]], skip: int | None = None) -> bool:
    """Whether shapes of one rank have equal lengths on every axis but ``skip``; an unknown
    length agrees with any (it is checked where it becomes known)."""
    for i in range(len(shapes[0])):
        known = {s[i] for s in shapes if s[i] is not None}
        if i != skip and len(known) > 1:
            return False
    return True


def _joined(name: str, arrays: Sequence[Array], axis: int | None) -> Array:
    if not isinstance(arrays, (list, tuple)):
        raise arguments.InvalidArgumentTypeError(
            f"{name} takes a list or tuple of arrays, got {type(arrays).__name__}; pass [x1, x2, ...].")
    if len(arrays) == 0:
        raise InvalidArgumentError(f"{name} needs at least one array.")
    backend, dtype, inputs = promoted_inputs(*arrays)
    shapes = [_known(x.shape) for x in inputs]
    ndim = len(shapes[0])
    one_rank = len({len(s) for s in shapes}) == 1
    if name == "stack":
        if not (one_rank and _agree(shapes)):
            raise InvalidArgumentError(f"stack needs arrays of one shape, got {_listed(shapes)}.")
        axis = arguments.axis(axis, ndim + 1)
    elif axis is not None:
        if not one_rank or ndim == 0:
            raise InvalidArgumentError(f"concat needs arrays of one rank (at least 1), got shapes {_listed(shapes)}.")
        axis = arguments.axis(axis, ndim)
        if not _agree(shapes, skip=axis):
            raise InvalidArgumentError(f"concat along axis {axis} needs the other lengths to match, got {_listed(shapes)}.")
    return kernel(backend, name, dtype)(inputs, axis=axis)


def _listed(shapes: list[tuple[int | None, ...]]) -> str:
    return ", ".join(dict.fromkeys(str(s) for s in shapes))


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
    ndim = len(x.shape) + (len(axis) if isinstance(axis, tuple) else 1)
    positions = arguments.axes(axis, ndim, "expand_dims: axis")
    expand = kernel(backend, "expand_dims", dtype)
    for position in sorted(positions) if isinstance(positions, tuple) else (positions,):
        x = expand(x, axis=position)  # ascending: each insertion leaves the earlier positions in place
    return x


def flip(x: Array, /, *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x with the order of elements reversed along ``axis`` (all axes when None)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "flip", dtype)(x, axis=arguments.axes(axis, len(x.shape)))


def moveaxis(x: Array, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Array:
    """x with axes ``source`` moved to ``destination``."""
    backend, x, dtype = array_input(x)
    ndim = len(x.shape)
    source = arguments.axes(source, ndim, "source")
    destination = arguments.axes(destination, ndim, "destination")
    if source is None or destination is None or isinstance(source, int) != isinstance(destination, int) or (
            isinstance(source, tuple) and len(source) != len(destination)):
        raise InvalidArgumentError(f"moveaxis needs source and destination of the same length, got {source} and "
                                   f"{destination}.")
    return kernel(backend, "moveaxis", dtype)(x, source, destination)


def permute_dims(x: Array, /, axes: tuple[int, ...]) -> Array:
    """x with its axes permuted."""
    backend, x, dtype = array_input(x)
    order = arguments.axes(tuple(axes) if isinstance(axes, (list, tuple)) else axes, len(x.shape), "axes")
    if not isinstance(order, tuple) or len(order) != len(x.shape):
        raise InvalidArgumentError(f"permute_dims needs a permutation of all {len(x.shape)} axes, got {axes!r}.")
    return kernel(backend, "permute_dims", dtype)(x, order)


def transpose(x: Array, /, axes: tuple[int, ...] | None = None) -> Array:
    """NumPy's ``transpose``: ``permute_dims`` with the axes reversed when ``axes`` is None (xarray's
    ``quantile`` and other NumPy-minded code call ``xp.transpose(x, axes)``)."""
    if axes is None:
        _, native, _ = array_input(x)
        axes = tuple(range(len(native.shape) - 1, -1, -1))
    return permute_dims(x, axes)


def repeat(x: Array, repeats: int | Array, /, *, axis: int | None = None) -> Array:
    """Each element repeated ``repeats`` times along ``axis`` (of the flattened x when None)."""
    backend, x, dtype = array_input(x)
    axis = None if axis is None else arguments.axis(axis, len(x.shape))
    length = math.prod(x.shape) if axis is None else x.shape[axis]
    if isinstance(repeats, numbers.Integral) and type(repeats) is not bool:
        repeats = operator.index(repeats)  # a NumPy integer counts as the Python int it holds
    if hasattr(repeats, "dtype") or isinstance(repeats, (list, tuple)):
        owner, repeats, kind = array_input(repeats)
        if len(repeats.shape) == 0 and kind.category in ("int", "uint"):  # a 0-d count: one count for all
            repeats = owner.kernels["reshape"](repeats, (1,), copy=None)
        if kind.category not in ("int", "uint") or len(repeats.shape) != 1 or repeats.shape[0] not in (1, length):
            raise InvalidArgumentError(f"repeats must be an int or a 1-d integer array of length 1 or {length}; "
                                       f"got {kind} of shape {tuple(repeats.shape)}.")
        if backend.chunked:  # lazy values: NumPy's repeat checks them when the graph runs
            return kernel(backend, "repeat", dtype)(x, backend.astype(repeats, default_int_dtype()), axis=axis)
        counts = backend.to_numpy(repeats)
        if counts.size and (counts.min() < 0 or int(counts.sum()) * max(1, math.prod(x.shape) // max(length, 1)) > arguments.MAX_ELEMENTS):
            raise InvalidArgumentError("repeats must be non-negative, with a result no backend refuses for its size.")
        # Every backend takes the default int here (torch has no int8/int16/uint8 repeat kernel).
        repeats = [int(c) for c in counts] if counts.shape[0] == length else int(counts[0])
        if isinstance(repeats, list):
            repeats = backend.asarray(repeats, default_int_dtype())
    else:
        repeats = arguments.count(repeats, "repeats")
        arguments.shape((math.prod(x.shape), repeats))
    return kernel(backend, "repeat", dtype)(x, repeats, axis=axis)


def reshape(x: Array, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Array:
    """x with a new shape (one entry may be -1). copy=True always copies; copy=False raises
    when a view is impossible."""
    backend, x, dtype = array_input(x)
    if copy is not None:
        arguments.flag(copy, "copy")
    sequence = arguments.dims_sequence(shape)
    target = shape if sequence is None else sequence
    if isinstance(target, tuple) and math.isnan(math.prod(x.shape)):  # dask's unknown lengths: its kernel decides
        arguments.shape(tuple(1 if d == -1 else d for d in target))
        return kernel(backend, "reshape", dtype)(x, target, copy=copy)
    if isinstance(target, tuple) and target.count(-1) == 1:
        known = arguments.shape(tuple(1 if d == -1 else d for d in target))
        size, rest = math.prod(x.shape), math.prod(known)
        if rest == 0 or size % rest:
            raise InvalidArgumentError(f"reshape cannot fit {size} elements into shape {target}.")
        target = tuple(size // rest if d == -1 else d for d in target)
    target = arguments.shape(target)
    if math.prod(target) != math.prod(x.shape):
        raise InvalidArgumentError(f"reshape cannot turn shape {tuple(x.shape)} ({math.prod(x.shape)} elements) into "
                                   f"{target} ({math.prod(target)} elements); pass a shape of the same size.")
    return kernel(backend, "reshape", dtype)(x, target, copy=copy)


def roll(x: Array, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Array:
    """x with elements shifted by ``shift`` along ``axis`` (of the flattened x when None)."""
    backend, x, dtype = array_input(x)
    axis = arguments.axes(axis, len(x.shape))
    if isinstance(shift, tuple) or isinstance(axis, tuple):
        shifts = tuple(arguments.integer(s, "shift") for s in (shift if isinstance(shift, tuple) else (shift,)))
        along = axis if isinstance(axis, tuple) else (axis,)
        if len(shifts) != len(along) or None in along:
            raise InvalidArgumentError(f"roll needs one shift per axis, got shift={shift!r} and axis={axis!r}.")
        shift = tuple(s % x.shape[a] if x.shape[a] else 0 for s, a in zip(shifts, along, strict=True))
    else:
        length = math.prod(x.shape) if axis is None else x.shape[axis]
        shift = arguments.integer(shift, "shift") % length if length else 0
    return kernel(backend, "roll", dtype)(x, shift, axis=axis)


def squeeze(x: Array, /, axis: int | tuple[int, ...]) -> Array:
    """x without the length-one axes ``axis`` (ValueError when one is not of length one)."""
    backend, x, dtype = array_input(x)
    axis = arguments.axes(axis, len(x.shape))
    for a in (axis,) if isinstance(axis, int) else axis or ():
        if x.shape[a] != 1:
            raise InvalidArgumentError(f"squeeze: axis {a} has length {x.shape[a]}, not 1.")
    return kernel(backend, "squeeze", dtype)(x, axis=axis)


def tile(x: Array, repetitions: tuple[int, ...], /) -> Array:
    """x repeated ``repetitions`` times along each axis."""
    backend, x, dtype = array_input(x)
    reps = arguments.shape(repetitions, "repetitions")
    padded = (1,) * (len(reps) - len(x.shape)) + tuple(x.shape)
    if not math.isnan(math.prod(padded)):  # dask's unknown lengths (nan): dask tiles them when it computes
        arguments.shape(tuple(a * b for a, b in zip((1,) * (len(padded) - len(reps)) + reps, padded, strict=True)),
                        "the result of tile")
    return kernel(backend, "tile", dtype)(x, reps)


def unstack(x: Array, /, *, axis: int = 0) -> tuple[Array, ...]:
    """x split along ``axis`` into a tuple of arrays of one rank less."""
    backend, x, dtype = array_input(x)
    return tuple(kernel(backend, "unstack", dtype)(x, axis=arguments.axis(axis, len(x.shape))))
