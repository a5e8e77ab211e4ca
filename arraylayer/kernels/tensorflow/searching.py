"""Searching kernels. Floats are searched and compared through integer order keys, so NaNs
behave as in NumPy (the first NaN is both the argmax and the argmin; NaN sorts last)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import BOOL, SCALARS, order_key, pair, scalar, sortable
from arraylayer.kernels.tensorflow._high_rank import along_axis, select
from arraylayer.kernels.tensorflow._high_rank import coordinates as high_rank_coordinates
from arraylayer.kernels.tensorflow.indexing import take


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    key = order_key(x) if x.dtype.is_floating else x
    return _arg_reduce(tf.math.argmax, key, axis, keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    key = order_key(x, nan_low=True) if x.dtype.is_floating else x
    return _arg_reduce(tf.math.argmin, key, axis, keepdims)


def _arg_reduce(reduce: Any, x: Any, axis: int | None, keepdims: bool) -> Any:
    """TF's argmax/argmin (first index among equals) with the Array API's axis and keepdims."""
    if axis is None:
        index = reduce(tf.reshape(x, [-1]), 0)
        return tf.reshape(index, [1] * x.shape.rank) if keepdims else index
    index = along_axis(reduce, x, axis)
    return tf.expand_dims(index, axis) if keepdims else index


def count_nonzero(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
    return tf.math.count_nonzero(x, axis, keepdims)


def nonzero(x: Any, /) -> tuple[Any, ...]:
    """One index array per axis (``tf.where`` gives coordinate rows; it has no float16
    kernel, so non-bool inputs are compared with 0 first)."""
    coordinates = high_rank_coordinates(x if x.dtype is BOOL else tf.math.not_equal(x, 0))
    return tuple(tf.unstack(coordinates, num=x.shape.rank, axis=1))


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """Positions in the sorted 1-d ``x1``; ``x2`` of any shape goes through TF as a 1-d array."""
    if sorter is not None:
        x1 = take(x1, sorter)
    if isinstance(x2, SCALARS):
        x2 = scalar(x2, x1.dtype)
    flat = tf.reshape(sortable(x2), [-1])
    positions = tf.searchsorted(sortable(x1), flat, side=side)
    return tf.reshape(positions, tf.shape(x2))


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    x1, x2 = pair(x1, x2)
    return select(condition, x1, x2)
