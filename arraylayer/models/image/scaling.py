"""``scale_and_translate``: jax.image's (and Keras') resampling of arbitrary axes by a scale and a
translation, with the triangle, Keys cubic or Lanczos kernel, widened when downsampling where
``antialias`` asks.

Per resampled axis, the output is a weighted sum of the input (one ``tensordot`` with an
``(input, output)`` weight matrix). The weights are computed with arraylayer's element-wise
functions from ``scale`` and ``translation`` themselves, so they may be arrays (traced ones too)
and the gradient reaches them as well as the images."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

import numpy as np

from arraylayer.api import statistical
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (
    abs as absolute,
    add,
    divide,
    greater,
    greater_equal,
    less_equal,
    logical_and,
    maximum,
    multiply,
    not_equal,
    sin,
    subtract,
)
from arraylayer.api.linear_algebra import tensordot
from arraylayer.api.manipulation import moveaxis, reshape
from arraylayer.api.searching import where
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.image.common import constant, dtype_of


def _triangle(x: Any) -> Any:
    return maximum(subtract(1.0, x), 0.0)


def _keys_cubic(x: Any) -> Any:
    """Keys' cubic with a = -0.5 (x >= 0)."""
    near = add(multiply(multiply(subtract(multiply(x, 1.5), 2.5), x), x), 1.0)
    far = add(multiply(subtract(multiply(add(multiply(x, -0.5), 2.5), x), 4.0), x), 2.0)
    return where(greater_equal(x, 2.0), 0.0, where(greater_equal(x, 1.0), far, near))


def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        y = multiply(multiply(sin(multiply(x, math.pi)), sin(multiply(x, math.pi / radius))), radius)
        safe = where(not_equal(x, 0.0), multiply(multiply(x, x), math.pi ** 2), 1.0)
        return where(greater(x, radius), 0.0, where(greater(x, 1e-3), divide(y, safe), 1.0))
    return kernel


#: method -> kernel (jax.image's names)
KERNELS: Final = {**dict.fromkeys(("linear", "bilinear", "trilinear", "triangle"), _triangle),
                  **dict.fromkeys(("cubic", "bicubic", "tricubic"), _keys_cubic),
                  "lanczos3": _lanczos(3.0), "lanczos5": _lanczos(5.0)}
_TINY: Final = 1000.0 * float(np.finfo(np.float32).eps)


def _weights(like: Any, size: int, out: int, scale: Any, shift: Any, kernel: Callable[[Any], Any],
             antialias: bool) -> Any:
    """The ``(size, out)`` weights: output pixel j reads the input around
    ``(j + 0.5 - shift) / scale - 0.5``, each column normalised, zero where that point lies
    outside the input."""
    inverse = divide(1.0, scale)
    centres = subtract(multiply(subtract(constant(like, np.arange(out) + 0.5, like.dtype), shift), inverse), 0.5)
    distance = absolute(subtract(reshape(centres, (1, out)), constant(like, np.arange(size)[:, None], like.dtype)))
    weights = kernel(divide(distance, maximum(inverse, 1.0)) if antialias else distance)
    total = statistical.sum(weights, axis=0, keepdims=True)
    weights = where(greater(absolute(total), _TINY), divide(weights, where(not_equal(total, 0.0), total, 1.0)), 0.0)
    inside = logical_and(greater_equal(centres, -0.5), less_equal(centres, size - 0.5))
    return where(reshape(inside, (1, out)), weights, 0.0)


def _per_axis(values: Any, like: Any, count: int, parameter: str) -> Any:
    """scale or translation as a 1-d array of ``count`` values in like's dtype."""
    if not hasattr(values, "shape"):
        values = constant(like, np.asarray(values, dtype=np.float64), like.dtype)
    elif as_dtype(values.dtype) != as_dtype(like.dtype):
        values = astype(values, like.dtype)
    if tuple(values.shape) != (count,):
        raise InvalidArgumentError(f"image.scale_and_translate: {parameter} needs one value per spatial dim "
                                   f"({count}); got shape {tuple(values.shape)}.")
    return values


def scale_and_translate(images: Any, output_shape: tuple[int, ...], scale: Any, translation: Any,
                        spatial_dims: tuple[int, ...], method: str, antialias: bool = True) -> Any:
    """images resampled along ``spatial_dims`` to ``output_shape`` (the whole shape; the other
    axes keep their length): output pixel j of axis ``spatial_dims[i]`` maps to the input point
    ``(j + 0.5 - translation[i]) / scale[i] - 0.5``. ``method``: ``"linear"`` (or ``"bilinear"``,
    ``"trilinear"``, ``"triangle"``), ``"cubic"`` (``"bicubic"``, ``"tricubic"``), ``"lanczos3"``
    or ``"lanczos5"``. Floating images only; the result keeps their dtype."""
    dtype_of(images, "scale_and_translate")
    if method not in KERNELS:
        raise InvalidArgumentError(f"image.scale_and_translate(method={method!r}): choose one of "
                                   f"{', '.join(map(repr, KERNELS))}.")
    rank = len(images.shape)
    shape = tuple(output_shape)
    if len(shape) != rank or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise InvalidArgumentError(f"image.scale_and_translate(output_shape={output_shape!r}): give {rank} "
                                   f"non-negative ints, the whole output shape.")
    dims = tuple(spatial_dims)
    if not all(isinstance(d, int) and -rank <= d < rank for d in dims) or len({d % rank for d in dims}) != len(dims):
        raise InvalidArgumentError(f"image.scale_and_translate(spatial_dims={spatial_dims!r}): give distinct axes "
                                   f"of the {rank}-d images.")
    if any(shape[a] != images.shape[a] for a in range(rank) if a not in {d % rank for d in dims}):
        raise InvalidArgumentError(f"image.scale_and_translate: output_shape {shape} may differ from the images' "
                                   f"{tuple(images.shape)} only along spatial_dims {dims}.")
    scales = _per_axis(scale, images, len(dims), "scale")
    shifts = _per_axis(translation, images, len(dims), "translation")
    result = images
    for i, d in enumerate(dims):
        d %= rank
        weights = _weights(images, images.shape[d], shape[d], scales[i], shifts[i], KERNELS[method], antialias)
        result = moveaxis(tensordot(result, weights, axes=([d], [0])), -1, d)
    return result
