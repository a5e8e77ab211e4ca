"""Utility kernels: ``all``/``any`` of any dtype (TF reduces bool only; complex values are
compared with 0, since TF casts complex to bool by the real part alone) and ``diff``."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import BOOL, SCALARS, positive_axis, scalar
from arraylayer.kernels.tensorflow._high_rank import axis_slice


def all(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return tf.math.reduce_all(_truth(x), axis, keepdims)


def any(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    return tf.math.reduce_any(_truth(x), axis, keepdims)


def _truth(x: Any) -> Any:
    return x if x.dtype is BOOL else tf.math.not_equal(x, 0)


def diff(x: Any, /, *, axis: int = -1, n: int = 1, prepend: Any = None, append: Any = None) -> Any:
    """``n``-th forward difference; bool differences are ``!=``, as in NumPy."""
    rank = x.shape.rank
    axis = positive_axis(axis, rank)
    if prepend is not None or append is not None:
        parts = [_edge(prepend, x, axis), x, _edge(append, x, axis)]
        x = tf.concat([p for p in parts if p is not None], axis)
    step = tf.math.not_equal if x.dtype is BOOL else tf.math.subtract
    for _ in range(n):
        x = step(axis_slice(x, axis, 1, None), axis_slice(x, axis, None, -1))
    return x


def _edge(value: Any, x: Any, axis: int) -> Any:
    """``prepend``/``append`` as an array; a scalar becomes one slice along ``axis``."""
    if not isinstance(value, SCALARS):
        return value
    shape = tf.tensor_scatter_nd_update(tf.shape(x), [[axis]], [1])
    return tf.broadcast_to(scalar(value, x.dtype), shape)
