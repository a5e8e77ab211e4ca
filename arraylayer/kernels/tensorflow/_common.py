"""Helpers shared by the TensorFlow kernels: Python scalars, order keys, exact fallbacks.

A ``tf.DType`` taken from a tensor is the interned object (``x.dtype is tf.bool`` holds in
eager and graph mode, for variables too), so dtype tests here are identity tests, the
cheapest check there is; nothing hashes a dtype or builds a dtype name per call.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tensorflow as tf

from arraylayer.kernels.tensorflow._high_rank import select

BOOL: Any = tf.bool
UINT16: Any = tf.uint16
INT16: Any = tf.int16
FLOAT32: Any = tf.float32
SCALARS = (bool, int, float, complex)

# A floating dtype -> the signed integer dtype of the same width (for bit-level work).
SAME_WIDTH_INT: dict[Any, Any] = {tf.bfloat16: tf.int16, tf.float16: tf.int16, tf.float32: tf.int32,
                                  tf.float64: tf.int64}


def scalar(value: Any, dtype: Any) -> Any:
    """A Python scalar as a 0-d tensor of ``dtype`` (TF refuses ``True`` as a number, and a number as a bool).

    ``-0.0`` is built from NumPy: TF's eager cache of scalar constants keys on the value, and
    ``-0.0 == 0.0`` there, so ``tf.constant(-0.0)`` after ``tf.constant(0.0)`` returns ``+0.0``.
    """
    if value.__class__ is bool and dtype is not BOOL:
        value = int(value)
    elif dtype is BOOL and value.__class__ is not bool:  # full(shape, 0, dtype=bool), pad's 0: NumPy's False
        value = bool(value)
    elif value == 0 and value.__class__ is float and math.copysign(1.0, value) < 0:
        return tf.constant(np.asarray(value, dtype.as_numpy_dtype))
    return tf.constant(value, dtype)


def pair(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Both operands of a binary kernel as tensors; a Python scalar takes the other's dtype.

    TF's own conversion fails on a scalar in first position (``tf.add(1, int8_array)``) and
    on ``True`` with numeric tensors, so every binary kernel converts here first.
    """
    if isinstance(x1, SCALARS):
        return scalar(x1, x2.dtype), x2
    if isinstance(x2, SCALARS):
        return x1, scalar(x2, x1.dtype)
    return x1, x2


def raw_binary(op_name: str) -> Any:
    """TF's op ``op_name`` on two tensors of one dtype: what ``tf.math``'s function calls after its name
    scope and argument conversions, which such a pair does not need (a plan's callable)."""
    raw = getattr(tf.raw_ops, op_name)
    return lambda x1, x2: raw(x=x1, y=x2)


def same(x: Any) -> Any:
    """``x`` as a tensor, without an op when it already is one (tensors are immutable;
    a ``tf.Variable`` is read, so the result never aliases mutable state)."""
    return x if isinstance(x, tf.Tensor) else tf.convert_to_tensor(x)


def is_half(dtype: Any) -> bool:
    """float16 or bfloat16: dtypes whose composite formulas run in float32 (and round once)."""
    return dtype is tf.float16 or dtype is tf.bfloat16


def via_int16(fn: Any, x: Any, *args: Any, **kwargs: Any) -> Any:
    """``fn(x, ...)`` for a data-movement op; uint16 goes through its int16 bits, since TF has
    no uint16 kernel for tile/repeat/band_part/diag_part (the bits move unchanged)."""
    if x.dtype is UINT16:
        return tf.bitcast(fn(tf.bitcast(x, INT16), *args, **kwargs), UINT16)
    return fn(x, *args, **kwargs)


def order_key(x: Any, nan_low: bool = False) -> Any:
    """Signed integers ordered as NumPy orders the floats ``x`` in sort/argmax/searchsorted.

    ``-inf < ... < -0.0 == 0.0 < ... < inf < nan`` (every NaN equal; below -inf when
    ``nan_low``). The sign-magnitude bits become two's complement order by flipping the
    magnitude bits of negative values; negative keys then move up by one, so that -0.0
    meets 0.0 (done on the integers: graph optimisers fold a float ``x + 0.0`` away).
    TF compares NaN inconsistently (``tf.sort`` scatters NaNs), which the keys avoid.
    """
    itype = SAME_WIDTH_INT[x.dtype]
    nan = tf.constant(-float("nan") if nan_low else float("nan"), x.dtype)
    bits = tf.bitcast(select(tf.math.is_nan(x), nan, x), itype)
    sign = tf.bitwise.right_shift(bits, itype.size * 8 - 1)  # -1 for negatives, else 0
    return tf.math.subtract(tf.bitwise.bitwise_xor(bits, tf.bitwise.bitwise_and(sign, itype.max)), sign)


def sortable(x: Any) -> Any:
    """``x`` in a dtype TF sorts, searches and compares exactly: float order keys, bool as uint8."""
    dtype = x.dtype
    if dtype.is_floating:
        return order_key(x)
    return tf.cast(x, tf.uint8) if dtype is BOOL else x


def broadcast_batch(a: Any, b: Any, core: int) -> tuple[Any, Any]:
    """``a`` and ``b`` broadcast against each other on all but their last ``core`` axes
    (no ops when those already agree)."""
    if a.shape[:-core].is_fully_defined() and a.shape[:-core] == b.shape[:-core]:
        return a, b
    a_shape, b_shape = tf.shape(a), tf.shape(b)
    batch = tf.broadcast_dynamic_shape(a_shape[:-core], b_shape[:-core])
    return (tf.broadcast_to(a, tf.concat([batch, a_shape[-core:]], 0)),
            tf.broadcast_to(b, tf.concat([batch, b_shape[-core:]], 0)))


def positive_axis(axis: int, rank: int) -> int:
    """``axis`` counted from the start."""
    return axis + rank if axis < 0 else axis


def placed(device: Any, make: Any, *args: Any) -> Any:
    """``make(*args)`` on ``device`` (a ``tf.device`` name), or where TF places it when None."""
    if device is None:
        return make(*args)
    with tf.device(device):
        return make(*args)
