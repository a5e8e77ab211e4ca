"""Linear algebra in the main namespace: ``matmul``, ``matrix_transpose``, ``tensordot``,
``vecdot``. Operands are promoted under the active policy first."""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, kernel, not_defined, promoted_inputs

Array = Any

__all__ = ["matmul", "matrix_transpose", "tensordot", "vecdot"]

_NUMERIC: Final = frozenset({"int", "uint", "float", "complex"})


def numeric_pair(name: str, x1: Array, x2: Array) -> tuple[Any, Dtype, Array, Array]:
    """Backend, promoted numeric dtype, and both operands cast to it."""
    backend, dtype, (a1, a2) = promoted_inputs(x1, x2)
    if dtype.category not in _NUMERIC:
        raise not_defined(name, (dtype,), "numeric arrays")
    return backend, dtype, a1, a2


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product (batched over leading axes), in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("matmul", x1, x2)
    if len(a1.shape) == 0 or len(a2.shape) == 0:
        raise InvalidArgumentError("matmul needs arrays of at least one dimension; use multiply for scalars.")
    inner1, inner2 = a1.shape[-1], a2.shape[0] if len(a2.shape) == 1 else a2.shape[-2]
    if inner1 != inner2:
        raise InvalidArgumentError(f"matmul cannot multiply shapes {tuple(a1.shape)} and {tuple(a2.shape)}: the inner "
                                   f"lengths {inner1} and {inner2} differ.")
    arguments.broadcast_shapes(tuple(a1.shape[:-2]), tuple(a2.shape[:-2]))
    return kernel(backend, "matmul", dtype)(a1, a2)


def matrix_transpose(x: Array, /) -> Array:
    """x with its last two axes swapped."""
    backend, x, dtype = array_input(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"matrix_transpose needs at least 2 dimensions, got {len(x.shape)}.")
    return kernel(backend, "matrix_transpose", dtype)(x)


def tensordot(x1: Array, x2: Array, /, *, axes: int | tuple[Any, Any] = 2) -> Array:
    """Sum of products over ``axes`` (the last ``axes`` of x1 with the first of x2, or explicit
    pairs), in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("tensordot", x1, x2)
    if isinstance(axes, tuple) and len(axes) == 2:
        pairs = [tuple(a) if isinstance(a, (list, tuple)) else (a,) for a in axes]
        if len(pairs[0]) != len(pairs[1]):
            raise InvalidArgumentError(f"tensordot needs as many axes of x1 as of x2, got axes={axes!r}.")
        first = arguments.axes(pairs[0], len(a1.shape), "axes[0]")
        second = arguments.axes(pairs[1], len(a2.shape), "axes[1]")
        if any(a1.shape[i] != a2.shape[j] for i, j in zip(first, second, strict=True)):
            raise InvalidArgumentError(f"tensordot axes={axes!r} pair lengths that differ: shapes {tuple(a1.shape)} "
                                       f"and {tuple(a2.shape)}.")
        axes = (first, second)
    else:
        n = arguments.count(axes, "axes", upper=min(len(a1.shape), len(a2.shape)))
        if tuple(a1.shape[len(a1.shape) - n:]) != tuple(a2.shape[:n]):
            raise InvalidArgumentError(f"tensordot axes={n} needs the last {n} lengths of x1 {tuple(a1.shape)} to "
                                       f"equal the first {n} of x2 {tuple(a2.shape)}.")
        axes = n
    return kernel(backend, "tensordot", dtype)(a1, a2, axes=axes)


def _same_length(n1: Any, n2: Any) -> bool:
    """Whether two lengths match; a dask length unknown until computed (nan) matches any, as in
    dask's element-wise functions, which check the chunks when computing."""
    return n1 == n2 or n1 != n1 or n2 != n2


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (x1 conjugated), in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("vecdot", x1, x2)
    shape = arguments.broadcast_shapes(tuple(a1.shape), tuple(a2.shape))
    if not shape:
        raise InvalidArgumentError("vecdot needs arrays of at least one dimension.")
    axis = arguments.axis(axis, len(shape)) - len(shape)
    if -axis > min(len(a1.shape), len(a2.shape)) or not _same_length(a1.shape[axis], a2.shape[axis]):
        raise InvalidArgumentError(f"vecdot needs x1 {tuple(a1.shape)} and x2 {tuple(a2.shape)} of one length along "
                                   f"axis {axis} (the Array API does not broadcast the contracted axis).")
    return kernel(backend, "vecdot", dtype)(a1, a2, axis=axis)
