"""TensorFlow ops that stop at 8 axes, made to work on tensors of any rank.

Several TensorFlow CPU kernels handle at most 8 dimensions: ``SelectV2`` (``tf.where`` with
three arguments, broadcast or not), ``Where`` (``tf.where`` with one), ``ReverseV2``
(``tf.reverse``) and ``StridedSlice`` (``x[...]``). Arrays of more axes are legal everywhere
else, so the kernels call these replacements: below 9 axes each is the op itself (one rank test
more); above, the tensor is folded into at most three axes (which a reshape does without a copy),
the op runs there, and the result is unfolded.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

#: The most axes the kernels above accept (TensorFlow's ``MAX_NDIMS`` for them).
MAX_RANK = 8


def _rank(x: Any) -> int:
    """The static rank of a tensor (0 for a Python scalar or an unknown rank)."""
    shape = getattr(x, "shape", None)
    return 0 if shape is None else (shape.rank or 0)


def select(condition: Any, x1: Any, x2: Any) -> Any:
    """``tf.where(condition, x1, x2)`` with broadcasting, for any rank."""
    if max(_rank(condition), _rank(x1), _rank(x2)) <= MAX_RANK:
        return tf.where(condition, x1, x2)
    x1 = tf.convert_to_tensor(x1, dtype=getattr(x2, "dtype", None))
    x2 = tf.convert_to_tensor(x2, dtype=x1.dtype)
    shape = tf.broadcast_dynamic_shape(tf.broadcast_dynamic_shape(tf.shape(condition), tf.shape(x1)), tf.shape(x2))

    def flat(t: Any) -> Any:
        return tf.reshape(tf.broadcast_to(t, shape), [-1])

    return tf.reshape(tf.where(flat(condition), flat(x1), flat(x2)), shape)


def coordinates(condition: Any) -> Any:
    """``tf.where(condition)``: the (count, rank) int64 coordinates of the true elements."""
    rank = _rank(condition)
    if rank <= MAX_RANK:
        return tf.where(condition)
    shape = tf.shape(condition, out_type=tf.int64)
    flat = tf.where(tf.reshape(condition, [-1]))[:, 0]
    return tf.transpose(tf.unravel_index(flat, shape))


def _folded(x: Any, axis: int) -> tuple[Any, Any]:
    """``x`` as (before, along ``axis``, after), and ``x``'s shape."""
    shape = tf.shape(x)
    return tf.reshape(x, tf.stack([tf.reduce_prod(shape[:axis]), shape[axis], -1])), shape


def along_axis(reduce: Any, x: Any, axis: int) -> Any:
    """``reduce(x, axis)`` for a reduction over one axis (``tf.math.argmax``, which stops at 7
    axes), for any rank."""
    axis = axis % _rank(x) if _rank(x) else axis
    if _rank(x) < MAX_RANK:
        return reduce(x, axis)
    folded, shape = _folded(x, axis)
    return tf.reshape(reduce(folded, 1), tf.concat([shape[:axis], shape[axis + 1:]], 0))


def reverse(x: Any, axes: tuple[int, ...]) -> Any:
    """``tf.reverse(x, axes)`` (non-negative ``axes``) for any rank."""
    if _rank(x) <= MAX_RANK:
        return tf.reverse(x, axes)
    for axis in axes:
        folded, shape = _folded(x, axis)
        x = tf.reshape(tf.reverse(folded, [1]), shape)
    return x


def axis_slice(x: Any, axis: int, start: int | None, stop: int | None) -> Any:
    """``x[start:stop]`` along the non-negative ``axis``, for any rank."""
    if _rank(x) <= MAX_RANK:
        return x[(slice(None),) * axis + (slice(start, stop),)]
    folded, shape = _folded(x, axis)
    part = folded[:, start:stop]
    new_shape = tf.tensor_scatter_nd_update(shape, [[axis]], tf.shape(part)[1:2])
    return tf.reshape(part, new_shape)


__all__ = ["MAX_RANK", "along_axis", "axis_slice", "coordinates", "reverse", "select"]
