"""Neural-network kernels of the TensorFlow backend (see arraylayer/models/nn.py): tf.nn's convolution
and pooling (channels last, as TensorFlow computes them on every device; channels-first input is
transposed around them), with explicit padding."""

from __future__ import annotations

import math
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
        y = _valid(x, weights, strides)
    else:  # TensorFlow's CPU kernels have no grouped convolution: one convolution per group
        parts = zip(tf.split(x, groups, axis=-1), tf.split(weights, groups, axis=-1), strict=True)
        y = tf.concat([_valid(a, w, strides) for a, w in parts], axis=-1)
    return _back(y, channels_last)


def _valid(x: Any, weights: Any, strides: tuple[int, ...]) -> Any:
    """The unpadded channels-last convolution. 3-d calls conv3d with its data format spelled out:
    through tf.nn.convolution the Conv3D op's format is None and its gradient fails to read it."""
    if len(strides) == 3:
        return tf.nn.conv3d(x, weights, strides=(1, *strides, 1), padding="VALID", data_format="NDHWC")
    return tf.nn.convolution(x, weights, strides=strides, padding="VALID")


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    return conv(x, kernel, strides, padding, dilation, channels_last)


_POOL3D_DTYPES = (tf.float32, tf.bfloat16)  # MaxPool3D/AvgPool3D's CPU kernels; others pool as 2-d twice


def _pooled(x: Any, window: tuple[int, ...], strides: tuple[int, ...], pool: Any) -> Any:
    """``pool(x, window, strides)`` of channels-last, padded ``x``; a 3-d pool in a dtype TensorFlow's
    CPU has no 3-d kernel for (float64) runs as a 2-d pool over (height, width) and then one over
    depth: the max of maxima and the sum of sums are the same numbers; float16 pools in float32."""
    if x.dtype == tf.float16:  # summed in float32 and rounded once, as the other backends sum half precision
        return tf.cast(pool(tf.cast(x, tf.float32), window, strides), tf.float16)  # (AvgPool's own: 8 ulps off)
    if len(window) != 3 or x.dtype in _POOL3D_DTYPES:
        return pool(x, window, strides)
    n, d, h, w, c = (tf.shape(x)[i] for i in range(5))
    planes = pool(tf.reshape(x, (n * d, h, w, c)), window[1:], strides[1:])
    h2, w2 = tf.shape(planes)[1], tf.shape(planes)[2]
    columns = pool(tf.reshape(planes, (n, d, h2 * w2, c)), (window[0], 1), (strides[0], 1))
    return tf.reshape(columns, (n, tf.shape(columns)[1], h2, w2, c))


def max_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    y = _pooled(_pad(_last(x, channels_last), padding, float("-inf")), window, strides,
                lambda v, k, s: tf.nn.max_pool(v, k, s, "VALID"))
    return _back(y, channels_last)


def sum_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    y = _pooled(_pad(_last(x, channels_last), padding), window, strides,
                lambda v, k, s: tf.nn.avg_pool(v, k, s, "VALID") * float(math.prod(k)))
    return _back(y, channels_last)


def einsum(subscripts: str, *operands: Any) -> Any:
    """TensorFlow's einsum; operands share one dtype (the api promotes, widening what Einsum lacks)."""
    return tf.einsum(subscripts, *operands)


complex_from_parts = tf.complex
