"""Statistical kernels. ``dtype`` (sum, prod, cumulative_*) is the accumulator the api layer
chose: the input is cast to it first, since TF reduces in the input dtype (uint8 sums stay
uint8, and bool has no sum at all). float16/bfloat16 accumulate in float32 and round once,
as NumPy's float16 reductions do (TF's float16 sums round at every step)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import BOOL, FLOAT32, is_half, positive_axis
from arraylayer.kernels.tensorflow._gradients import cumprod_gradient, may_differentiate, norm_sqrt_rule, with_gradient

_INT64 = tf.int64


def sum(x: Any, /, *, axis: Any = None, dtype: Any, keepdims: bool = False) -> Any:
    return _reduce(tf.math.reduce_sum, x, axis, dtype, keepdims)


def prod(x: Any, /, *, axis: Any = None, dtype: Any, keepdims: bool = False) -> Any:
    return _reduce(tf.math.reduce_prod, x, axis, dtype, keepdims)


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """Float and complex inputs only (TF's integer mean truncates)."""
    return _reduce(tf.math.reduce_mean, x, axis, x.dtype, keepdims)


def _reduce(reduce: Any, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Any:
    """``reduce`` in ``dtype``; half precision in float32, rounded once; a bool accumulator
    (sum is ``any``, prod is ``all``, as in NumPy) counts in int64."""
    if is_half(dtype):
        return tf.cast(reduce(tf.cast(x, FLOAT32), axis, keepdims), dtype)
    if dtype is BOOL:
        return tf.math.not_equal(reduce(tf.cast(x, _INT64), axis, keepdims), 0)
    return reduce(_as(x, dtype), axis, keepdims)


def max(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """NaN-propagating (TF's reduce_max is); bool is ``any``."""
    if x.dtype is BOOL:
        return tf.math.reduce_any(x, axis, keepdims)
    return tf.math.reduce_max(x, axis, keepdims)


def min(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    if x.dtype is BOOL:
        return tf.math.reduce_all(x, axis, keepdims)
    return tf.math.reduce_min(x, axis, keepdims)


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any, include_initial: bool = False) -> Any:
    return _cumulative(tf.math.cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any, include_initial: bool = False) -> Any:
    return _cumulative(tf.math.cumprod, 1, x, axis, dtype, include_initial)


def _cumulative(scan: Any, identity: int, x: Any, axis: int | None, dtype: Any, include_initial: bool) -> Any:
    """``include_initial``: the identity padded in front, so the scan itself yields it first.
    Accumulators as in :func:`_reduce`."""
    work = FLOAT32 if is_half(dtype) else _INT64 if dtype is BOOL else dtype
    x = _as(x, work)
    axis = 0 if axis is None else positive_axis(axis, x.shape.rank)
    if include_initial:
        padding = [[0, 0]] * x.shape.rank
        padding[axis] = [1, 0]
        x = tf.pad(x, padding, constant_values=identity)
    if scan is tf.math.cumprod and work.is_floating and may_differentiate():
        result = _differentiable_cumprod(x, axis)
    else:
        result = scan(x, axis)
    if dtype is BOOL:
        return tf.math.not_equal(result, 0)
    return result if work is dtype else tf.cast(result, dtype)


def _differentiable_cumprod(x: Any, axis: int) -> Any:
    """``tf.math.cumprod`` with a gradient that is right at zeros (see cumprod_gradient)."""

    @tf.custom_gradient
    def scan(x: Any) -> Any:
        return tf.math.cumprod(x, axis), lambda g: cumprod_gradient(x, axis, g)

    return scan(x)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """``sum((x - mean)**2) / (N - correction)``; float16/bfloat16 in float32, as NumPy does
    for float16."""
    dtype = x.dtype
    half = is_half(dtype)
    work = tf.cast(x, FLOAT32) if half else x
    centre = tf.math.reduce_mean(work, axis, keepdims=True)
    squares = tf.math.reduce_sum(tf.math.squared_difference(work, centre), axis, keepdims)
    count = tf.cast(tf.size(work) // tf.maximum(tf.size(centre), 1), work.dtype)  # elements per result
    result = tf.math.truediv(squares, tf.math.subtract(count, correction))
    return tf.cast(result, dtype) if half else result


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """``sqrt(var)``; where all values are equal its gradient is 0 (arraylayer's rule for norms)."""
    return root(var(x, axis=axis, correction=correction, keepdims=keepdims))


root = with_gradient(tf.math.sqrt, norm_sqrt_rule)  # sqrt with gradient 0 at 0, for norms


def _as(x: Any, dtype: Any) -> Any:
    return x if x.dtype is dtype else tf.cast(x, dtype)
