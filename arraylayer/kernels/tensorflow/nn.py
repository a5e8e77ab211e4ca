"""Neural-network kernels of the TensorFlow backend (see arraylayer/models/nn.py): tf.nn's convolution
and pooling (channels last, as TensorFlow computes them on every device; channels-first input is
transposed around them), with explicit padding."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

erf = tf.math.erf
erfc = tf.math.erfc
erfinv = tf.math.erfinv
relu = tf.nn.relu
sigmoid = tf.math.sigmoid


def concrete(x: Any) -> Any:
    """x's values as a NumPy array; None inside tf.function, where a tensor has no values yet."""
    return x.numpy() if tf.executing_eagerly() and hasattr(x, "numpy") else None


def softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """Per-row -log_softmax(logits)[label] for 2-d logits: TensorFlow's fused cross-entropy."""
    return tf.nn.sparse_softmax_cross_entropy_with_logits(tf.cast(labels, tf.int64), logits)


def _last(x: Any, channels_last: bool) -> Any:
    return x if channels_last else tf.transpose(x, (0, 2, 3, 1))


def _back(y: Any, channels_last: bool) -> Any:
    return y if channels_last else tf.transpose(y, (0, 3, 1, 2))


def _pad(x: Any, padding: Any, value: float = 0.0) -> Any:
    if not any(any(pair) for pair in padding):
        return x
    return tf.pad(x, [(0, 0), *padding, (0, 0)], constant_values=tf.cast(value, x.dtype))


def _dilated(kernel: Any, rate: int, axis: int) -> Any:
    """The HWIO ``kernel`` with ``rate - 1`` zeros between its taps along ``axis`` (0 or 1)."""
    if rate == 1:
        return kernel
    taps = int(kernel.shape[axis])
    spread = tf.stack([kernel] + [tf.zeros_like(kernel)] * (rate - 1), axis=axis + 1)
    shape = tf.concat([tf.shape(kernel)[:axis], [taps * rate], tf.shape(kernel)[axis + 1:]], 0)
    whole = tf.reshape(spread, shape)
    return whole[: (taps - 1) * rate + 1] if axis == 0 else whole[:, : (taps - 1) * rate + 1]


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    hwio = kernel if channels_last else tf.transpose(kernel, (2, 3, 1, 0))
    explicit = [(0, 0), *padding, (0, 0)]  # padded inside the convolution
    # TensorFlow's CPU gradient of a dilated convolution is missing ("dilation rates larger than 1"):
    # the kernel is spread with zeros instead, a plain convolution whose gradient exists everywhere.
    hwio = _dilated(_dilated(hwio, dilation[0], 0), dilation[1], 1)
    y = tf.nn.conv2d(_last(x, channels_last), hwio, strides=strides, padding=explicit)
    return _back(y, channels_last)


def max_pool(x: Any, window: tuple[int, int], strides: tuple[int, int], padding: Any, channels_last: bool) -> Any:
    y = tf.nn.max_pool2d(_pad(_last(x, channels_last), padding, float("-inf")), window, strides, "VALID")
    return _back(y, channels_last)


def sum_pool(x: Any, window: tuple[int, int], strides: tuple[int, int], padding: Any, channels_last: bool) -> Any:
    y = tf.nn.avg_pool2d(_pad(_last(x, channels_last), padding), window, strides, "VALID")
    return _back(y * (window[0] * window[1]), channels_last)
