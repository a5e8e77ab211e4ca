"""Indexing kernels: ``tf.gather``, with negative indices counted from the end (TF's CPU
gather rejects them) and any integer index dtype (gather takes int32/int64 only)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import broadcast_batch, positive_axis
from arraylayer.kernels.tensorflow._high_rank import select

_INT32 = tf.int32
_INT64 = tf.int64


def _wrapped(indices: Any, size: Any) -> Any:
    """``indices`` as int32/int64 with negative values counted back from ``size``."""
    dtype = indices.dtype
    if dtype is not _INT32 and dtype is not _INT64:
        indices = tf.cast(indices, _INT64)
        if dtype.is_unsigned:
            return indices
    return select(indices < 0, indices + tf.cast(size, indices.dtype), indices)


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    axis = 0 if axis is None else axis
    return tf.gather(x, _wrapped(indices, tf.shape(x)[axis]), axis=axis)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    axis = positive_axis(axis, x.shape.rank)
    return gather_along(x, _wrapped(indices, tf.shape(x)[axis]), axis)


def gather_along(x: Any, indices: Any, axis: int) -> Any:
    """``x[..., indices[..., j, ...], ...]`` along ``axis`` for non-negative int32/int64
    ``indices``: the axis moves last, the other axes broadcast and become gather's batch axes."""
    rank = x.shape.rank
    axis = positive_axis(axis, rank)
    last = rank - 1
    if axis != last:
        order = list(range(rank))
        order[axis], order[last] = last, axis
        x, indices = tf.transpose(x, order), tf.transpose(indices, order)
    x, indices = broadcast_batch(x, indices, 1)
    result = tf.gather(x, indices, batch_dims=last)
    return result if axis == last else tf.transpose(result, order)
