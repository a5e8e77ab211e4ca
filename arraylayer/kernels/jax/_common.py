"""What several jax kernel modules share: Python ints jax cannot parse, half precision, and a
division XLA keeps a division.

jax turns a Python int into a weak int64 first (int32 without ``jax_enable_x64``), so one
beyond that range (a uint64 value such as 2**64 - 1, or 2**32 - 1 for uint32, which the
contract allows) raises OverflowError; an int outside int32 is made a 0-d array of the other
operand's dtype instead. jax accumulates explicit-dtype half sums and products in half
precision, so the kernels that accumulate compute float16/bfloat16 in float32 and round once.
XLA's algebraic simplifier rewrites a division by a broadcast value or a constant as a
multiplication by its reciprocal (``true_divide`` keeps the quotient). Every check here is on
Python values or static dtypes: free under ``jax.jit``.
"""

from __future__ import annotations

from typing import Any, Final

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np

F32: Final = np.dtype(np.float32)
HALF: Final = frozenset((np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)))
FLOATS: Final = HALF | {np.dtype(np.float32), np.dtype(np.float64)}
COMPLEX: Final = frozenset((np.dtype(np.complex64), np.dtype(np.complex128)))
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def is_big_int(value: Any) -> bool:
    """True for a Python int outside int32, which jax may not take as a weak scalar."""
    return type(value) is int and not _INT32_MIN <= value <= _INT32_MAX


def as_operand(value: Any, other: Any) -> Any:
    """``value``, or (a Python int outside int32) a 0-d array of ``other``'s dtype holding it."""
    if not is_big_int(value):
        return value
    dtype = other.dtype
    return jnp.asarray(value if np.issubdtype(dtype, np.integer) else float(value), dtype)


def operand_dtype(x1: Any, x2: Any) -> Any:
    """The dtype of the array among two operands (the contract allows one Python scalar)."""
    return x1.dtype if hasattr(x1, "dtype") else x2.dtype


def true_divide(x1: Any, x2: Any) -> Any:
    """``x1 / x2`` rounded from the exact quotient, as NumPy, torch and TensorFlow divide on the CPU.

    XLA's algebraic simplifier rewrites a division by what it can see into a multiplication:
    ``x / broadcast(c)`` (c a scalar, a 0-d array or a row) as ``x * broadcast(1 / c)``, and under
    jit ``x / constant`` as ``x * (1 / constant)``, ``x / sqrt(y)`` as ``x * rsqrt(y)``, ``x /
    exp(y)`` as ``x * exp(-y)``: each an ulp off the quotient in a quarter to a half of float32
    values (a third of those divided by 3.0). The divisor, broadcast to the quotient's shape, goes
    behind an optimization barrier, which XLA cannot see through. In eager code the barrier costs
    nothing; under jit it keeps the divisor out of the division's fusion (timings in
    docs/conformance.rst, "Division on JAX"). ``(x / y) / z``, which XLA computes as ``x / (y *
    z)``, stays open: a barrier on the numerator would cost a pass over it.
    """
    shape = jnp.broadcast_shapes(jnp.shape(x1), jnp.shape(x2))
    # in the quotient's dtype before the barrier: a weak float64 scalar (jax_enable_x64) converted
    # after it left XLA a constant to fold and divide by
    divisor = jnp.broadcast_to(jnp.asarray(x2, jnp.result_type(x1, x2)), shape)
    return jnp.divide(x1, jax.lax.optimization_barrier(divisor))
