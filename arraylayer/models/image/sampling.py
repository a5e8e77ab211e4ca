"""Sampling at arbitrary coordinates: ``map_coordinates`` (scipy.ndimage's and
jax.scipy.ndimage's, orders 0 and 1) and ``affine_transform`` over it (keras.ops.image's).

Order 0 rounds each coordinate half away from zero; order 1 blends the 2**n corner values by their
linear weights. ``fill_mode`` says what lies beyond the edges: ``constant`` (``fill_value``, corner
by corner, as JAX does), ``nearest`` (the edge value), ``wrap`` (periodic), ``mirror`` (reflected
about the edge pixel's centre) and ``reflect`` (about its outer edge). Indices are computed with
arraylayer's functions on the coordinates and gathered from the flattened input with ``take``, so
every backend gives the same values, and the gradient flows to the input and, for order 1, to the
coordinates (zero at order 0)."""

from __future__ import annotations

import itertools
from typing import Any, Final

import numpy as np

from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (
    abs as absolute,
    add,
    clip,
    divide,
    floor,
    greater_equal,
    less,
    logical_and,
    multiply,
    remainder,
    sign,
    subtract,
)
from arraylayer.api.indexing import take
from arraylayer.api.manipulation import broadcast_to, reshape
from arraylayer.api.searching import where
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.image.common import channels_last, constant, dtype_of

FILL_MODES: Final = ("constant", "nearest", "wrap", "mirror", "reflect")
INTERPOLATIONS: Final = {"nearest": 0, "bilinear": 1}


def _fixed(index: Any, size: int, mode: str) -> Any:
    """Integer-valued float indices moved into [0, size) by the fill mode (constant: clamped, the
    value replaced by the caller)."""
    if mode in ("constant", "nearest"):
        return clip(index, 0.0, float(size - 1))
    if mode == "wrap":
        return remainder(index, float(size))
    if mode == "mirror":
        if size == 1:
            return multiply(index, 0.0)
        period = 2.0 * (size - 1)
        folded = remainder(index, period)
        return where(less(folded, float(size)), folded, subtract(period, folded))
    folded = remainder(index, 2.0 * size)  # reflect: about the outer edge, each edge pixel repeated
    return where(less(folded, float(size)), folded, subtract(2.0 * size - 1, folded))


def _round_half_away(x: Any) -> Any:
    return multiply(sign(x), floor(add(absolute(x), 0.5)))


def map_coordinates(inputs: Any, coordinates: Any, order: int, fill_mode: str = "constant",
                    fill_value: float = 0.0) -> Any:
    """``inputs`` sampled at ``coordinates`` (shape ``(inputs.ndim, ...)``: one array of positions
    per axis), of the coordinates' trailing shape and the inputs' dtype."""
    dtype = dtype_of(inputs, "map_coordinates", floating=order != 0)
    if order not in (0, 1) or isinstance(order, bool):
        raise InvalidArgumentError(f"image.map_coordinates(order={order!r}): choose 0 (nearest) or 1 (linear).")
    if fill_mode not in FILL_MODES:
        raise InvalidArgumentError(f"image.map_coordinates(fill_mode={fill_mode!r}): choose one of "
                                   f"{', '.join(map(repr, FILL_MODES))}.")
    if not hasattr(coordinates, "shape") or len(coordinates.shape) < 2 or coordinates.shape[0] != len(inputs.shape):
        shape = getattr(coordinates, "shape", None)
        raise InvalidArgumentError(f"image.map_coordinates: coordinates must have shape (inputs.ndim, ...) = "
                                   f"({len(inputs.shape)}, ...), at least 2-d; got {shape}.")
    if as_dtype(coordinates.dtype).category != "float":
        coordinates = astype(coordinates, dtype if dtype.category == "float" else "float32")
    return _sample(inputs, [coordinates[k] for k in range(len(inputs.shape))], order, fill_mode, fill_value)


def _sample(inputs: Any, points: list[Any], order: int, fill_mode: str, fill_value: float, exact: int = 0) -> Any:
    """inputs at the points (one float array per leading axis of inputs, all of one shape); trailing
    axes of inputs not given a point are kept whole, after the points' shape. The first ``exact``
    points hold in-range integers (a batch index): one corner, no weight."""
    sizes = list(inputs.shape[:len(points)])
    rest = tuple(inputs.shape[len(points):])
    flat = reshape(inputs, (-1, *rest))
    per_axis = []
    for axis, (point, size) in enumerate(zip(points, sizes)):
        if axis < exact:
            per_axis.append([(point, None)])
        elif order == 0:
            per_axis.append([(_round_half_away(point), None)])
        else:
            lower = floor(point)
            upper_weight = subtract(point, lower)
            per_axis.append([(lower, subtract(1.0, upper_weight)), (add(lower, 1.0), upper_weight)])
    shape = tuple(points[0].shape)
    result = None
    for corner in itertools.product(*per_axis):
        linear, valid, weight = None, None, None
        stride = 1
        for (index, w), size in reversed(list(zip(corner, sizes))):
            if fill_mode == "constant":
                inside = logical_and(greater_equal(index, 0.0), less(index, float(size)))
                valid = inside if valid is None else logical_and(valid, inside)
            term = multiply(_fixed(index, size, fill_mode), float(stride))
            linear = term if linear is None else add(linear, term)
            if w is not None:
                weight = w if weight is None else multiply(weight, w)
            stride *= size
        gathered = take(flat, reshape(astype(linear, "int32"), (-1,)), axis=0)
        value = reshape(gathered, (*shape, *rest))
        if valid is not None:
            value = where(_trailing(valid, len(rest)), value, _fill(value, fill_value))
        if weight is not None:
            value = multiply(value, _trailing(weight, len(rest)))
        result = value if result is None else add(result, value)
    return result


def _trailing(x: Any, count: int) -> Any:
    """x with ``count`` trailing axes of length 1 (to broadcast over the kept axes)."""
    return reshape(x, (*x.shape, *([1] * count))) if count else x


def _fill(like: Any, fill_value: Any) -> Any:
    """fill_value in like's dtype (a scalar array beside it)."""
    return constant(like, fill_value, like.dtype)


def affine_transform(images: Any, transform: Any, interpolation: str = "bilinear", fill_mode: str = "constant",
                     fill_value: float = 0.0, data_format: str | None = None) -> Any:
    """images warped by ``transform`` (shape ``(8,)`` or ``(batch, 8)``: ``[a0, a1, a2, b0, b1, b2,
    c0, c1]``, TensorFlow's projective form): output pixel (x, y) takes the input at
    ``((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k)`` with ``k = c0 x + c1 y + 1``."""
    if interpolation not in INTERPOLATIONS:
        raise InvalidArgumentError(f"image.affine_transform(interpolation={interpolation!r}): choose 'nearest' or "
                                   f"'bilinear'.")
    if fill_mode not in FILL_MODES:
        raise InvalidArgumentError(f"image.affine_transform(fill_mode={fill_mode!r}): choose one of "
                                   f"{', '.join(map(repr, FILL_MODES))}.")
    batch, restore = channels_last(images, data_format, "affine_transform")
    count, height, width = batch.shape[0], batch.shape[1], batch.shape[2]
    if not hasattr(transform, "shape") or len(transform.shape) not in (1, 2) or transform.shape[-1] != 8:
        raise InvalidArgumentError(f"image.affine_transform: transform must have shape (8,) or (batch, 8); got "
                                   f"{getattr(transform, 'shape', type(transform).__name__)}.")
    if len(transform.shape) == 2 and transform.shape[0] not in (1, count):
        raise InvalidArgumentError(f"image.affine_transform: {transform.shape[0]} transforms for {count} images.")
    transform = astype(reshape(transform, (-1, 8)), batch.dtype)
    rows, columns = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    y, x = constant(batch, rows[None], batch.dtype), constant(batch, columns[None], batch.dtype)
    a0, a1, a2, b0, b1, b2, c0, c1 = (reshape(transform[:, k], (-1, 1, 1)) for k in range(8))
    k = add(add(multiply(c0, x), multiply(c1, y)), 1.0)
    x_in = divide(add(add(multiply(a0, x), multiply(a1, y)), a2), k)
    y_in = divide(add(add(multiply(b0, x), multiply(b1, y)), b2), k)
    shape = (count, height, width)
    images_index = constant(batch, np.broadcast_to(np.arange(count)[:, None, None], shape), batch.dtype)
    points = [images_index, broadcast_to(y_in, shape), broadcast_to(x_in, shape)]
    warped = _sample(batch, points, INTERPOLATIONS[interpolation], fill_mode, fill_value, exact=1)
    return restore(warped)
