"""Resizing with half-pixel centres (jax.image.resize, keras.ops.image.resize, TensorFlow 2's
tf.image.resize and torch's ``align_corners=False`` agree on them): output pixel i of an axis
samples the input at ``(i + 0.5) * in / out - 0.5``. ``nearest`` takes the pixel that point lies in;
``bilinear`` blends the two neighbours, the point clamped to the image (the edge pixel's value
beyond it). The sampling indices and weights are computed once in NumPy from the static shapes; the
work is ``take`` and a weighted sum, so every backend gives the same values and gradients."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from arraylayer.api.elementwise import add, multiply
from arraylayer.api.indexing import take
from arraylayer.errors import InvalidArgumentError, UnsupportedOperationError
from arraylayer.models.image.common import channels_last, constant, dtype_of, sizes

INTERPOLATIONS: Final = ("nearest", "bilinear")


def _nearest(length: int, out: int) -> np.ndarray:
    """The input index of each output pixel (the pixel its centre falls in)."""
    return np.minimum(np.floor((np.arange(out) + 0.5) * (length / out)), length - 1).astype(np.int32)


def _bilinear(length: int, out: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower index, upper index, weight of the upper) of each output pixel."""
    point = np.clip((np.arange(out) + 0.5) * (length / out) - 0.5, 0.0, length - 1)
    lower = np.floor(point).astype(np.int32)
    return lower, np.minimum(lower + 1, length - 1).astype(np.int32), point - lower


def _along(x: Any, axis: int, out: int, interpolation: str) -> Any:
    """x resized along one axis."""
    length = x.shape[axis]
    if length == out:
        return x
    if interpolation == "nearest":
        return take(x, constant(x, _nearest(length, out), "int32"), axis=axis)
    lower, upper, weight = _bilinear(length, out)
    shape = [1] * len(x.shape)
    shape[axis] = out
    upper_weight = constant(x, weight.reshape(shape), x.dtype)
    lower_weight = constant(x, (1.0 - weight).reshape(shape), x.dtype)
    return add(multiply(take(x, constant(x, lower, "int32"), axis=axis), lower_weight),
               multiply(take(x, constant(x, upper, "int32"), axis=axis), upper_weight))


def resize(images: Any, size: tuple[int, int], interpolation: str = "bilinear", antialias: bool = False,
           crop_to_aspect_ratio: bool = False, data_format: str | None = None) -> Any:
    """images resized to ``size`` = (height, width). ``nearest`` keeps any real dtype; ``bilinear``
    takes floating images and keeps their dtype. ``crop_to_aspect_ratio`` first crops the largest
    centred window of the target's aspect ratio (Keras' rule). ``antialias=True`` is refused: no
    backend-independent filter is defined for it here yet."""
    if interpolation not in INTERPOLATIONS:
        raise InvalidArgumentError(f"image.resize(interpolation={interpolation!r}): choose one of "
                                   f"{', '.join(map(repr, INTERPOLATIONS))}.")
    if antialias:
        raise UnsupportedOperationError("image.resize(antialias=True) is not implemented; resize with "
                                        "antialias=False (or blur first, then resize).")
    target = sizes(size, "size", "resize")
    dtype_of(images, "resize", floating=interpolation != "nearest")
    batch, restore = channels_last(images, data_format, "resize", floating=False)
    if crop_to_aspect_ratio:
        batch = _centre_crop(batch, target)
    for axis, out in ((1, target[0]), (2, target[1])):
        batch = _along(batch, axis, out, interpolation)
    return restore(batch)


def _centre_crop(batch: Any, target: tuple[int, int]) -> Any:
    """The largest centred window of the target's aspect ratio (Keras' integer arithmetic)."""
    height, width = batch.shape[1], batch.shape[2]
    crop_h = min(int(width * target[0] / target[1]), height)
    crop_w = min(int(height * target[1] / target[0]), width)
    crop_h, crop_w = max(crop_h, 1), max(crop_w, 1)
    top, left = (height - crop_h) // 2, (width - crop_w) // 2
    return batch[:, top:top + crop_h, left:left + crop_w, :]
