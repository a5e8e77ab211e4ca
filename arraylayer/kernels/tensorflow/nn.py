"""Neural-network kernels of the TensorFlow backend (see arraylayer/models/nn.py): tf.nn's convolution
and pooling (channels last, as TensorFlow computes them on every device; channels-first input is
transposed around them), with explicit padding."""

from __future__ import annotations

import math
from typing import Any

import tensorflow as tf

erf = tf.math.erf
relu = tf.nn.relu
sigmoid = tf.math.sigmoid


def concrete(x: Any) -> Any:
    """x's values as a NumPy array; None inside tf.function, where a tensor has no values yet."""
    return x.numpy() if tf.executing_eagerly() and hasattr(x, "numpy") else None


def softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """Per-row -log_softmax(logits)[label] for 2-d logits: TensorFlow's fused cross-entropy."""
    return tf.nn.sparse_softmax_cross_entropy_with_logits(tf.cast(labels, tf.int64), logits)


def _last(x: Any, channels_last: bool) -> Any:
    return x if channels_last else tf.transpose(x, (0, *range(2, len(x.shape)), 1))


def _back(y: Any, channels_last: bool) -> Any:
    n = len(y.shape)
    return y if channels_last else tf.transpose(y, (0, n - 1, *range(1, n - 1)))


def _pad(x: Any, padding: Any, value: float = 0.0) -> Any:
    if not any(any(pair) for pair in padding):
        return x
    return tf.pad(x, [(0, 0), *padding, (0, 0)], constant_values=tf.cast(value, x.dtype))


def _dilated(kernel: Any, rate: int, axis: int) -> Any:
    """The (*window, in, out) ``kernel`` with ``rate - 1`` zeros between its taps along ``axis``."""
    if rate == 1:
        return kernel
    taps = int(kernel.shape[axis])
    spread = tf.stack([kernel] + [tf.zeros_like(kernel)] * (rate - 1), axis=axis + 1)
    shape = tf.concat([tf.shape(kernel)[:axis], [taps * rate], tf.shape(kernel)[axis + 1:]], 0)
    whole = tf.reshape(spread, shape)
    return tf.gather(whole, tf.range((taps - 1) * rate + 1), axis=axis)


def conv(x: Any, kernel: Any, strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
         dilation: tuple[int, ...], channels_last: bool, groups: int = 1) -> Any:
    n = len(strides)
    weights = kernel if channels_last else tf.transpose(kernel, (*range(2, n + 2), 1, 0))  # -> (*window, in, out)
    # TensorFlow's CPU gradient of a dilated convolution is missing ("dilation rates larger than 1"):
    # the kernel is spread with zeros instead, a plain convolution whose gradient exists everywhere.
    for axis, rate in enumerate(dilation):
        weights = _dilated(weights, rate, axis)
    x = _pad(_last(x, channels_last), padding)
    if groups == 1:
        y = tf.nn.convolution(x, weights, strides=strides, padding="VALID")
    else:  # TensorFlow's CPU kernels have no grouped convolution: one convolution per group
        parts = zip(tf.split(x, groups, axis=-1), tf.split(weights, groups, axis=-1), strict=True)
        y = tf.concat([tf.nn.convolution(a, w, strides=strides, padding="VALID") for a, w in parts], axis=-1)
    return _back(y, channels_last)


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    return conv(x, kernel, strides, padding, dilation, channels_last)


def max_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    y = tf.nn.max_pool(_pad(_last(x, channels_last), padding, float("-inf")), window, strides, "VALID")
    return _back(y, channels_last)


def sum_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    y = tf.nn.avg_pool(_pad(_last(x, channels_last), padding), window, strides, "VALID")
    return _back(y * float(math.prod(window)), channels_last)
