"""Manipulation kernels (shapes are static where TF knows them, dynamic otherwise)."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import positive_axis, same, via_int16
from arraylayer.kernels.tensorflow._high_rank import reverse

broadcast_to = tf.broadcast_to  # (input, shape): the Array API's (x, /, shape)
stack = tf.stack  # (values, axis=0): the Array API's (arrays, /, *, axis=0)


def broadcast_arrays(*arrays: Any) -> list[Any]:
    shape = _broadcast_shape([a.shape for a in arrays], [tf.shape(a) for a in arrays])
    return [tf.broadcast_to(a, shape) for a in arrays]


def _broadcast_shape(static: list[Any], dynamic: list[Any]) -> Any:
    """The common shape: static (no ops) when every shape is fully known."""
    if all(s.is_fully_defined() for s in static):
        result = static[0]
        for s in static[1:]:
            result = tf.broadcast_static_shape(result, s)
        return result
    result = dynamic[0]
    for s in dynamic[1:]:
        result = tf.broadcast_dynamic_shape(result, s)
    return result


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    if axis is None:
        return tf.concat([tf.reshape(a, [-1]) for a in arrays], 0)
    return tf.concat(list(arrays), axis)


def expand_dims(x: Any, /, axis: int) -> Any:
    return tf.expand_dims(x, axis)


def flip(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    if axis is None:
        axis = tuple(range(x.shape.rank))
    elif isinstance(axis, int):
        axis = (axis,)
    return reverse(x, tuple(positive_axis(a, x.shape.rank) for a in axis)) if axis else same(x)


def moveaxis(x: Any, source: int | tuple[int, ...], destination: int | tuple[int, ...], /) -> Any:
    rank = x.shape.rank
    source = [positive_axis(a, rank) for a in _as_tuple(source)]
    destination = [positive_axis(a, rank) for a in _as_tuple(destination)]
    order = [a for a in range(rank) if a not in source]
    for dest, src in sorted(zip(destination, source, strict=True)):
        order.insert(dest, src)
    return tf.transpose(x, order)


def _as_tuple(axis: int | tuple[int, ...]) -> tuple[int, ...]:
    return (axis,) if isinstance(axis, int) else tuple(axis)


def permute_dims(x: Any, /, axes: tuple[int, ...]) -> Any:
    return tf.transpose(x, axes)


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    return via_int16(tf.repeat, x, repeats, axis=axis)


def reshape(x: Any, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Any:
    """TF tensors are immutable: a reshape never needs a copy, whatever ``copy`` says."""
    return tf.reshape(x, shape)


def roll(x: Any, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Any:
    if axis is None:
        return tf.reshape(tf.roll(tf.reshape(x, [-1]), shift, 0), tf.shape(x))
    return tf.roll(x, shift, axis)


def squeeze(x: Any, /, axis: int | tuple[int, ...]) -> Any:
    axes = _as_tuple(axis)
    return tf.squeeze(x, axes) if axes else same(x)  # TF squeezes every 1 for axis=()


def tile(x: Any, repetitions: tuple[int, ...], /) -> Any:
    """NumPy's rule: the shorter of ``x.shape`` and ``repetitions`` is padded with leading 1s."""
    rank = x.shape.rank
    extra = len(repetitions) - rank
    if extra > 0:
        static = x.shape.is_fully_defined()
        x = tf.reshape(x, [1] * extra + x.shape.as_list() if static else tf.concat([[1] * extra, tf.shape(x)], 0))
    elif extra < 0:
        repetitions = (1,) * -extra + tuple(repetitions)
    return via_int16(tf.tile, x, repetitions)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    return tuple(tf.unstack(x, axis=axis))
