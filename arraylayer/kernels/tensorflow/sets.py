"""Set kernels: ``tf.unique`` on the flattened input (NaNs distinct, as in NumPy 2), then
sorted as NumPy returns them; TF lists the unique values in order of first occurrence."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import is_half
from arraylayer.kernels.tensorflow._high_rank import select
from arraylayer.kernels.tensorflow.sorting import argsort


def unique_values(x: Any, /) -> Any:
    values = tf.unique(_flat(x)).y
    return tf.gather(values, argsort(values))


def unique_counts(x: Any, /) -> tuple[Any, Any]:
    values, _, counts = tf.unique_with_counts(_flat(x))
    order = argsort(values)
    return tf.gather(values, order), tf.gather(counts, order)


def unique_inverse(x: Any, /) -> tuple[Any, Any]:
    values, inverse = tf.unique(_flat(x))
    order = argsort(values)
    return tf.gather(values, order), _inverse(order, inverse, x)


def unique_all(x: Any, /) -> tuple[Any, Any, Any, Any]:
    flat = _flat(x)
    values, inverse, counts = tf.unique_with_counts(flat)
    first = tf.math.unsorted_segment_min(tf.range(tf.size(flat)), inverse, tf.size(values))
    order = argsort(values)
    return (tf.gather(values, order), tf.gather(first, order), _inverse(order, inverse, x),
            tf.gather(counts, order))


def _flat(x: Any) -> Any:
    """``x`` flattened; float16/bfloat16 zeros made +0.0 (TF hashes half values by their bits,
    so -0.0 and 0.0 would be two unique values)."""
    flat = tf.reshape(x, [-1])
    if is_half(x.dtype):
        flat = select(tf.math.equal(flat, 0.0), tf.constant(0, flat.dtype), flat)
    return flat


def _inverse(order: Any, inverse: Any, x: Any) -> Any:
    """Positions in the sorted values, shaped like ``x`` (NumPy 2's inverse_indices)."""
    rank = tf.math.invert_permutation(tf.cast(order, inverse.dtype))
    return tf.reshape(tf.gather(rank, inverse), tf.shape(x))
