"""keras.ops' functional updates: ``scatter``, ``scatter_update``, ``slice_update``.

Each returns a new array (the inputs are never written). An index row ``indices[i]`` of length m
names the sub-array ``x[indices[i, 0], ..., indices[i, m-1]]``; ``scatter`` adds the rows of values
into zeros (duplicates add up, as keras' scatter does), ``scatter_update`` replaces (duplicates: the
last row wins, on every backend). Both lay the index rows out flat and reduce per position with the
segment reductions (arraylayer/models/mathops/segments.py), so they are lazy on dask and
differentiable in the values; indices outside the shape are dropped. ``slice_update`` writes a
block at ``start_indices``, a negative start counted from the end and
clamped so the block fits (jax.lax.dynamic_update_slice's rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from arraylayer import arguments
from arraylayer.api import data_types, elementwise, indexing, manipulation, searching
from arraylayer.api.dispatch import array_input, refuse_without_zero
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.models.mathops.segments import _arange_like, segment_max, segment_sum

Array = Any


def _flat_positions(name: str, indices: Array, shape: tuple[int, ...], rows: int) -> tuple[Array, int]:
    """(flat position of each index row in the first m axes of ``shape``, -1 where out of bounds; m)."""
    _, indices, dtype = array_input(indices)
    if dtype.category not in ("int", "uint"):
        raise InvalidDtypeError(f"{name}: indices must be integers; got {dtype}.")
    if len(indices.shape) != 2 or indices.shape[0] != rows or not 1 <= indices.shape[1] <= len(shape):
        raise InvalidArgumentError(f"{name}: indices must have shape (N, m) with 1 <= m <= {len(shape)} and N = "
                                   f"{rows} (one row per update); got {tuple(indices.shape)}.")
    depth = indices.shape[1]
    if dtype.bits < 32 or dtype.category == "uint":  # room for the flat positions
        indices = data_types.astype(indices, "int32")
    flat, inside = None, None
    for axis in range(depth):
        column = indices[:, axis]
        ok = elementwise.logical_and(elementwise.greater_equal(column, 0), elementwise.less(column, shape[axis]))
        flat = column if flat is None else elementwise.add(elementwise.multiply(flat, shape[axis]), column)
        inside = ok if inside is None else elementwise.logical_and(inside, ok)
    return searching.where(inside, flat, -1), depth


def _rows(values: Array, shape: tuple[int, ...], depth: int, name: str) -> Array:
    """values as (N, prod of the remaining axes of ``shape``)."""
    rest = shape[depth:]
    if tuple(values.shape[1:]) != rest:
        raise InvalidArgumentError(f"{name}: each update must have shape {rest} (the axes the index rows leave); "
                                   f"got updates of shape {tuple(values.shape)}.")
    return manipulation.reshape(values, (values.shape[0], math.prod(rest)))


def scatter(indices: Array, values: Array, shape: Sequence[int]) -> Array:
    """zeros(shape) with ``values[i]`` added at ``indices[i]`` (duplicates add up); values' dtype."""
    shape = arguments.shape(shape)
    _, values, dtype = array_input(values)
    if dtype.category == "bool":
        raise InvalidDtypeError("scatter adds values up and takes numbers; got bool (cast to an integer first).")
    refuse_without_zero("scatter", dtype)  # the positions no index reaches hold 0
    if len(values.shape) == 0:
        raise InvalidArgumentError("scatter: values must have one row per index row; got a 0-d array.")
    positions, depth = _flat_positions("scatter", indices, shape, values.shape[0])
    total = segment_sum(_rows(values, shape, depth, "scatter"), positions, num_segments=math.prod(shape[:depth]))
    return manipulation.reshape(total, shape)


def scatter_update(inputs: Array, indices: Array, updates: Array) -> Array:
    """inputs with ``inputs[indices[i]]`` replaced by ``updates[i]`` (cast to inputs' dtype; for a
    repeated index row the last update wins)."""
    _, inputs, dtype = array_input(inputs)
    _, updates, _ = array_input(updates)
    shape = tuple(inputs.shape)
    if len(updates.shape) == 0:
        raise InvalidArgumentError("scatter_update: updates must have one row per index row; got a 0-d array.")
    rows = updates.shape[0]
    positions, depth = _flat_positions("scatter_update", indices, shape, rows)
    updates = _rows(data_types.astype(updates, dtype), shape, depth, "scatter_update")
    length = math.prod(shape[:depth])
    base = manipulation.reshape(inputs, (length, math.prod(shape[depth:])))
    if rows == 0 or length == 0:
        return inputs
    # the last row naming each position: the largest row number among them (-1: none)
    last = segment_max(_arange_like(positions, rows), positions, num_segments=length)
    hit = elementwise.greater_equal(last, 0)
    chosen = indexing.take(updates, searching.where(hit, last, 0), axis=0)
    return manipulation.reshape(searching.where(manipulation.expand_dims(hit, axis=1), chosen, base), shape)


def slice_update(inputs: Array, start_indices: Sequence[Any], updates: Array) -> Array:
    """inputs with the block ``inputs[s0:s0+u0, s1:s1+u1, ...]`` replaced by ``updates`` (shape
    (u0, u1, ...), cast to inputs' dtype). Starts are ints or 0-d integer arrays (traced ones too);
    a negative one counts from the end, and each is clamped to [0, n - u] so the block always fits."""
    _, inputs, dtype = array_input(inputs)
    _, updates, _ = array_input(updates)
    shape, block = tuple(inputs.shape), tuple(updates.shape)
    if not isinstance(start_indices, (tuple, list)):
        raise InvalidArgumentTypeError(f"slice_update: start_indices is {type(start_indices).__name__}; pass a tuple "
                                       f"of one start per axis of inputs (ints or 0-d integer arrays).")
    starts = tuple(start_indices)
    if len(starts) != len(shape) or len(block) != len(shape) or any(u > n for u, n in zip(block, shape, strict=True)):
        raise InvalidArgumentError(f"slice_update: one start per axis of inputs (shape {shape}) and updates of the "
                                   f"same rank no larger along any axis; got {len(starts)} starts and updates of "
                                   f"shape {block}.")
    result = data_types.astype(updates, dtype)
    inside = None
    for axis, (start, n, u) in enumerate(zip(starts, shape, block, strict=True)):
        if u == 0:
            return inputs
        start = _clamped(start, n, n - u, axis)
        offsets = elementwise.subtract(_arange_like_int(inputs, n), start)  # position - start along the axis
        ok = elementwise.logical_and(elementwise.greater_equal(offsets, 0), elementwise.less(offsets, u))
        result = indexing.take(result, elementwise.clip(offsets, 0, u - 1), axis=axis)
        ok = manipulation.reshape(ok, tuple(n if a == axis else 1 for a in range(len(shape))))
        inside = ok if inside is None else elementwise.logical_and(inside, ok)
    return inputs if inside is None else searching.where(inside, result, inputs)


def _clamped(start: Any, n: int, high: int, axis: int) -> Any:
    """A start index (negative: counted from the end, n added) clamped to [0, high]: a Python int
    here, an integer array by arraylayer's where and clip."""
    if not hasattr(start, "shape"):
        start = arguments.integer(start, f"start_indices[{axis}]")
        return min(max(start + n if start < 0 else start, 0), high)
    _, start, dtype = array_input(start)
    if dtype.category not in ("int", "uint") or len(start.shape) != 0:
        raise InvalidArgumentError(f"slice_update: start_indices[{axis}] must be an int or a 0-d integer array; "
                                   f"got a {dtype} array of shape {tuple(start.shape)}.")
    start = data_types.astype(start, "int32")
    return elementwise.clip(searching.where(elementwise.less(start, 0), elementwise.add(start, n), start), 0, high)


def _arange_like_int(like: Array, n: int) -> Array:
    """0 .. n-1 in int32 on ``like``'s backend and device."""
    from arraylayer.api import creation
    from arraylayer.models.nn.common import _creating_on, _device

    with _creating_on(like):
        return creation.arange(n, dtype="int32", device=_device(like))


