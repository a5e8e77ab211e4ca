"""Linear algebra in the main namespace: ``matmul``, ``matrix_transpose``, ``tensordot``,
``vecdot``. Operands are promoted under the active policy first."""

from __future__ import annotations

from typing import Any, Final

from ..dtypes import Dtype
from .dispatch import array_input, kernel, not_defined, promoted_inputs

Array = Any

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]

_NUMERIC: Final = frozenset({"int", "uint", "float", "complex"})


def numeric_pair(name: str, x1: Array, x2: Array) -> tuple[Any, Dtype, Array, Array]:
    """Backend, promoted numeric dtype, and both operands cast to it."""
    backend, dtype, (a1, a2) = promoted_inputs(x1, x2)
    if dtype.kind not in _NUMERIC:
        raise not_defined(name, (dtype,), "numeric arrays")
    return backend, dtype, a1, a2


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product (batched over leading axes), in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("matmul", x1, x2)
    if len(a1.shape) == 0 or len(a2.shape) == 0:
        raise ValueError("matmul needs arrays of at least one dimension; use multiply for scalars.")
    return kernel(backend, "matmul", dtype)(a1, a2)


def matrix_transpose(x: Array, /) -> Array:
    """x with its last two axes swapped."""
    backend, x, dtype = array_input(x)
    if len(x.shape) < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got {len(x.shape)}.")
    return kernel(backend, "matrix_transpose", dtype)(x)


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Any, Any] = 2) -> Array:
    """Sum of products over ``axes`` (the last ``axes`` of x1 with the first of x2, or explicit
    pairs), in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("tensordot", x1, x2)
    return kernel(backend, "tensordot", dtype)(a1, a2, axes=axes)


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (x1 conjugated), in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("vecdot", x1, x2)
    return kernel(backend, "vecdot", dtype)(a1, a2, axis=axis)
