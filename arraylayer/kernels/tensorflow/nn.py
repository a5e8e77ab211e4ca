"""TensorFlow kernels of arraylayer.nn: tf.nn.conv2d and tf.nn.max_pool2d / avg_pool2d.

Inputs as in arraylayer/kernels/numpy/nn.py. TensorFlow's CPU convolution and pooling take
NHWC only, so NCHW inputs are transposed there and back (the kernel OIHW -> HWIO); the
explicit padding goes to conv2d as a list, and to the pools through tf.pad.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

erf = tf.math.erf


def _nhwc(x: Any, channels_last: bool) -> Any:
    return x if channels_last else tf.transpose(x, (0, 2, 3, 1))


def _back(y: Any, channels_last: bool) -> Any:
    return y if channels_last else tf.transpose(y, (0, 3, 1, 2))


def _padded(x: Any, padding: Any, value: float) -> Any:
    if not any(padding[0] + padding[1]):
        return x
    return tf.pad(x, ((0, 0), padding[0], padding[1], (0, 0)), constant_values=tf.cast(value, x.dtype))


def _dilated(kernel: Any, rate: int, axis: int) -> Any:
    """The HWIO ``kernel`` with ``rate - 1`` zeros between its taps along ``axis`` (0 or 1)."""
    if rate == 1:
        return kernel
    taps = int(kernel.shape[axis])
    spread = tf.stack([kernel] + [tf.zeros_like(kernel)] * (rate - 1), axis=axis + 1)
    shape = tf.concat([tf.shape(kernel)[:axis], [taps * rate], tf.shape(kernel)[axis + 1:]], 0)
    whole = tf.reshape(spread, shape)
    return whole[: (taps - 1) * rate + 1] if axis == 0 else whole[:, : (taps - 1) * rate + 1]


def conv2d(x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, channels_last: bool) -> Any:
    hwio = kernel if channels_last else tf.transpose(kernel, (2, 3, 1, 0))
    # TensorFlow's CPU gradient of a dilated convolution is missing ("dilation rates larger than
    # 1" unsupported): the kernel is dilated with zeros instead, which the gradient passes through.
    hwio = _dilated(_dilated(hwio, dilation[0], 0), dilation[1], 1)
    pads = [[0, 0], list(padding[0]), list(padding[1]), [0, 0]]
    out = tf.nn.conv2d(_nhwc(x, channels_last), hwio, strides=stride, padding=pads)
    return _back(out, channels_last)


def max_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    padded = _padded(_nhwc(x, channels_last), padding, -float("inf"))
    return _back(tf.nn.max_pool2d(padded, window, stride, "VALID"), channels_last)


def sum_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    padded = _padded(_nhwc(x, channels_last), padding, 0.0)
    area = tf.cast(window[0] * window[1], x.dtype)
    return _back(tf.nn.avg_pool2d(padded, window, stride, "VALID") * area, channels_last)
