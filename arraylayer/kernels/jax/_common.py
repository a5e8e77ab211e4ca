"""What several jax kernel modules share: Python ints jax cannot parse, and half precision.

jax turns a Python int into a weak int64 first (int32 without ``jax_enable_x64``), so one
beyond that range (a uint64 value such as 2**64 - 1, or 2**32 - 1 for uint32, which the
contract allows) raises OverflowError; an int outside int32 is made a 0-d array of the other
operand's dtype instead. jax accumulates explicit-dtype half sums and products in half
precision, so the kernels that accumulate compute float16/bfloat16 in float32 and round once.
Every check here is on Python values or static dtypes: free under ``jax.jit``.
"""

from __future__ import annotations

from typing import Any, Final

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

