"""Colour conversions, as keras.ops.image (and TensorFlow's tf.image) define them: grayscale by
ITU-R 601 weights, RGB <-> HSV with hue in [0, 1). Composed of arraylayer's element-wise functions,
so dtypes, errors and gradients are arraylayer's; divisions see a safe denominator where the branch
is not taken (no NaN leaks into a gradient)."""

from __future__ import annotations

from typing import Any, Final

from arraylayer.api.elementwise import (
    abs as absolute,
    add,
    clip,
    divide,
    equal,
    greater,
    less,
    multiply,
    subtract,
)
from arraylayer.api.data_types import astype
from arraylayer.api.manipulation import concat
from arraylayer.api.searching import where
from arraylayer.api.statistical import max as maximum_of, min as minimum_of, sum as total
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.image.common import channels_last, constant

#: ITU-R BT.601 luma weights, as Keras and tf.image.rgb_to_grayscale use them
GRAY_WEIGHTS: Final = (0.2989, 0.5870, 0.1140)


def _rgb(images: Any, data_format: str | None, function: str) -> tuple[Any, Any, tuple[Any, Any, Any]]:
    batch, restore = channels_last(images, data_format, function)
    if batch.shape[-1] != 3:
        raise InvalidArgumentError(f"image.{function} takes 3 channels (RGB or HSV); got {batch.shape[-1]}.")
    return batch, restore, (batch[..., 0:1], batch[..., 1:2], batch[..., 2:3])


def rgb_to_grayscale(images: Any, data_format: str | None = None) -> Any:
    """The luma of RGB images, ``0.2989 R + 0.5870 G + 0.1140 B``, keeping a channel axis of 1."""
    batch, restore, _ = _rgb(images, data_format, "rgb_to_grayscale")
    weights = constant(batch, list(GRAY_WEIGHTS), batch.dtype)
    return restore(total(multiply(batch, weights), axis=-1, keepdims=True))


def rgb_to_hsv(images: Any, data_format: str | None = None) -> Any:
    """RGB in [0, 1] to HSV, each channel in [0, 1] (hue 0 where the pixel is gray)."""
    batch, restore, (red, green, blue) = _rgb(images, data_format, "rgb_to_hsv")
    value = maximum_of(batch, axis=-1, keepdims=True)
    span = subtract(value, minimum_of(batch, axis=-1, keepdims=True))
    saturation = where(greater(value, 0.0), divide(span, where(greater(value, 0.0), value, 1.0)), 0.0)
    norm = divide(1.0, multiply(where(greater(span, 0.0), span, 1.0), 6.0))
    hue = where(equal(value, green), add(multiply(norm, subtract(blue, red)), 2.0 / 6.0),
                add(multiply(norm, subtract(red, green)), 4.0 / 6.0))
    hue = where(equal(value, red), multiply(norm, subtract(green, blue)), hue)
    hue = where(greater(span, 0.0), hue, 0.0)
    hue = add(hue, astype(less(hue, 0.0), batch.dtype))
    return restore(concat([hue, saturation, value], axis=-1))


def hsv_to_rgb(images: Any, data_format: str | None = None) -> Any:
    """HSV (each channel in [0, 1]) to RGB: the inverse of :func:`rgb_to_hsv`."""
    batch, restore, (hue, saturation, value) = _rgb(images, data_format, "hsv_to_rgb")
    sixths = multiply(hue, 6.0)
    red = clip(subtract(absolute(subtract(sixths, 3.0)), 1.0), 0.0, 1.0)
    green = clip(subtract(2.0, absolute(subtract(sixths, 2.0))), 0.0, 1.0)
    blue = clip(subtract(2.0, absolute(subtract(sixths, 4.0))), 0.0, 1.0)
    gray = subtract(1.0, saturation)
    channels = [multiply(value, add(gray, multiply(saturation, c))) for c in (red, green, blue)]
    return restore(concat(channels, axis=-1))
