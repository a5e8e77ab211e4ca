"""Warps over ``affine_transform``'s sampling: ``perspective_transform`` (the homography taking
four end points to four start points, solved with ``linalg.solve``) and ``elastic_transform``
(random displacement fields, drawn from an explicit arraylayer random key, smoothed by
``gaussian_blur`` and scaled by ``alpha``), both as keras.ops.image defines them."""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import add, multiply, subtract
from arraylayer.api.linalg import solve
from arraylayer.api.manipulation import broadcast_to, expand_dims, reshape, stack
from arraylayer.arguments import real_float
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.models import random
from arraylayer.models.image.common import channels_last, constant, dtype_of
from arraylayer.models.image.filters import gaussian_blur
from arraylayer.models.image.sampling import FILL_MODES, INTERPOLATIONS, _sample, affine_transform
from arraylayer.models.nn.common import _creating_on, _device


def _points(points: Any, parameter: str) -> Any:
    if not hasattr(points, "shape") or len(points.shape) not in (2, 3) or tuple(points.shape[-2:]) != (4, 2):
        raise InvalidArgumentError(f"image.perspective_transform: {parameter} must have shape (4, 2) or (batch, 4, 2): "
                                   f"four (x, y) corners; got {getattr(points, 'shape', type(points).__name__)}.")
    return points if len(points.shape) == 3 else expand_dims(points, axis=0)


def _float_points(points: Any, parameter: str) -> Any:
    """points (checked) in at least float32: the 8 x 8 system is solved in single precision or more."""
    _points(points, parameter)
    dtype = as_dtype(points.dtype)
    return points if dtype.category == "float" and dtype.itemsize >= 4 else astype(points, "float32")


def homography(start_points: Any, end_points: Any) -> Any:
    """The ``(batch, 8)`` projective transforms (affine_transform's form) mapping each end point to
    its start point: the 8 x 8 linear system of the four correspondences."""
    start, end = _points(start_points, "start_points"), _points(end_points, "end_points")
    if tuple(start.shape) != tuple(end.shape):
        raise InvalidArgumentError(f"image.perspective_transform: start_points and end_points must have one shape; got "
                                   f"{tuple(start_points.shape)} and {tuple(end_points.shape)}.")
    rows, targets = [], []
    for k in range(4):
        ex, ey, sx, sy = end[:, k, 0], end[:, k, 1], start[:, k, 0], start[:, k, 1]
        zero = multiply(ex, 0.0)
        one = add(zero, 1.0)
        rows.append(stack([ex, ey, one, zero, zero, zero, multiply(subtract(zero, sx), ex),
                           multiply(subtract(zero, sx), ey)], axis=-1))
        rows.append(stack([zero, zero, zero, ex, ey, one, multiply(subtract(zero, sy), ex),
                           multiply(subtract(zero, sy), ey)], axis=-1))
        targets += [sx, sy]
    solution = solve(stack(rows, axis=1), expand_dims(stack(targets, axis=-1), axis=-1))
    return reshape(solution, (-1, 8))


def _wide(images: Any) -> tuple[Any, Any]:
    """(images in at least float32, back to their dtype): half precision is warped in float32."""
    dtype = dtype_of(images, "perspective_transform")
    if dtype.itemsize >= 4:
        return images, lambda y: y
    return astype(images, "float32"), lambda y: astype(y, dtype)


def perspective_transform(images: Any, start_points: Any, end_points: Any, interpolation: str = "bilinear",
                          fill_value: float = 0.0, data_format: str | None = None) -> Any:
    """images warped so that the four ``end_points`` take the content at the four
    ``start_points`` (each ``(4, 2)`` (x, y) corners, or ``(batch, 4, 2)``); zero-padded
    (``fill_value``) outside."""
    wide, back = _wide(images)
    transforms = homography(_float_points(start_points, "start_points"), _float_points(end_points, "end_points"))
    return back(affine_transform(wide, transforms, interpolation, "constant", fill_value, data_format))


def elastic_transform(key: Any, images: Any, alpha: float = 20.0, sigma: float = 5.0, interpolation: str = "bilinear",
                      fill_mode: str = "reflect", fill_value: float = 0.0, data_format: str | None = None) -> Any:
    """images displaced pixel by pixel: two standard normal fields per image drawn from ``key``
    (``random.normal(key, (2, batch, height, width))``, y then x), times ``sigma``, blurred by a
    Gaussian of ``sigma`` over ``int(6 sigma) | 1`` pixels and scaled by ``alpha``; each output
    pixel samples the input at its own position plus that displacement (Keras' recipe, with an
    explicit key instead of a seed)."""
    if interpolation not in INTERPOLATIONS:
        raise InvalidArgumentError(f"image.elastic_transform(interpolation={interpolation!r}): choose 'nearest' or "
                                   f"'bilinear'.")
    if fill_mode not in FILL_MODES:
        raise InvalidArgumentError(f"image.elastic_transform(fill_mode={fill_mode!r}): choose one of "
                                   f"{', '.join(map(repr, FILL_MODES))}.")
    strength, spread = real_float(alpha, "alpha"), real_float(sigma, "sigma")
    if not spread > 0:
        raise InvalidArgumentError(f"image.elastic_transform(sigma={sigma}): give a positive number.")
    batch, restore = channels_last(images, data_format, "elastic_transform")
    count, height, width = batch.shape[0], batch.shape[1], batch.shape[2]
    with _creating_on(batch):
        noise = random.normal(key, (2 * count, height, width, 1), batch.dtype, device=_device(batch))
    size = int(6 * spread) | 1
    fields = gaussian_blur(multiply(noise, spread), (size, size), (spread, spread))
    fields = multiply(reshape(fields, (2, count, height, width)), strength)
    rows, columns = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    shape = (count, height, width)
    y = add(constant(batch, rows[None], batch.dtype), fields[0])
    x = add(constant(batch, columns[None], batch.dtype), fields[1])
    images_index = constant(batch, np.broadcast_to(np.arange(count)[:, None, None], shape), batch.dtype)
    warped = _sample(batch, [images_index, broadcast_to(y, shape), broadcast_to(x, shape)],
                     INTERPOLATIONS[interpolation], fill_mode, fill_value, exact=1)
    return restore(warped)
