"""The Array API's ``linalg`` extension, as ``arraylayer.linalg``.

Decompositions, solvers and norms are defined for floating-point input; integer input is
computed in the default float dtype (the rule of :func:`~arraylayer.divide`), the same on every
backend, and bool input is refused. Norms of complex input are real. Results with several parts
are named tuples with the standard's field names.

Matrices without an answer (singular ones to invert or solve with, ones that are not positive
definite to factorise, NaN or inf to decompose) raise :class:`~arraylayer.errors.LinAlgError`
eagerly and give NaN under jax.jit, tf.function and torch.compile: the kernels do both (on dask,
inside each block, so at compute).
"""

from __future__ import annotations

from typing import Any, Final, Literal, NamedTuple

from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.dtypes import Dtype, DtypeLike
from arraylayer.errors import InvalidArgumentError
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, index_result, kernel, native_dtype, not_defined, promoted_inputs
from arraylayer.api.linear_algebra import matmul, matrix_transpose, numeric_pair, tensordot, vecdot
from arraylayer.api.statistical import accumulator_dtype, accumulator_native

Array = Any

__all__ = [
    "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
    "trace", "vecdot", "vector_norm",
]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


def _floating(name: str, x: Array, *, matrix: bool = True) -> tuple[Any, Array, Dtype]:
    """x in a floating dtype (integers: the default float; bool refused); matrices need 2 dims."""
    backend, x, dtype = array_input(x)
    if dtype.category == "bool":
        raise not_defined(f"linalg.{name}", (dtype,), "floating-point (or integer) arrays")
    if dtype.category in ("int", "uint"):
        dtype = default_float_dtype()
        x = backend.astype(x, dtype)
    if matrix and len(x.shape) < 2:
        raise InvalidArgumentError(f"linalg.{name} needs a (stack of) matrices: at least 2 dimensions, got {len(x.shape)}.")
    return backend, x, dtype


def _square(name: str, x: Array) -> tuple[Any, Array, Dtype]:
    backend, x, dtype = _floating(name, x)
    if x.shape[-1] != x.shape[-2]:
        raise InvalidArgumentError(f"linalg.{name} needs square matrices, got shape {tuple(x.shape)}.")
    return backend, x, dtype


def cholesky(x: Array, /, *, upper: bool = False) -> Array:
    """The Cholesky factor of a Hermitian positive-definite matrix (lower unless ``upper``)."""
    backend, x, dtype = _square("cholesky", x)
    return kernel(backend, "cholesky", dtype)(x, upper=arguments.flag(upper, "upper"))


def det(x: Array, /) -> Array:
    """The determinant of each square matrix."""
    backend, x, dtype = _square("det", x)
    return kernel(backend, "det", dtype)(x)


_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}


def _as_complex(backend: Any, result: Array, dtype: Dtype) -> Array:
    """A general eigen-result in the complex dtype of ``dtype``'s precision (frameworks return
    real arrays when every eigenvalue happens to be real)."""
    return backend.astype(result, Dtype(_COMPLEX_OF.get(str(dtype), str(dtype))))


def eig(x: Array, /) -> EigResult:
    """Eigenvalues and (unit-norm) eigenvectors of general square matrices, always complex."""
    backend, x, dtype = _square("eig", x)
    values, vectors = kernel(backend, "eig", dtype)(x)
    return EigResult(_as_complex(backend, values, dtype), _as_complex(backend, vectors, dtype))


def eigvals(x: Array, /) -> Array:
    """Eigenvalues of general square matrices, always complex."""
    backend, x, dtype = _square("eigvals", x)
    return _as_complex(backend, kernel(backend, "eigvals", dtype)(x), dtype)


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending, real) and eigenvectors of Hermitian matrices."""
    backend, x, dtype = _square("eigh", x)
    return EighResult(*kernel(backend, "eigh", dtype)(x))


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending, real) of Hermitian matrices."""
    backend, x, dtype = _square("eigvalsh", x)
    return kernel(backend, "eigvalsh", dtype)(x)


def inv(x: Array, /) -> Array:
    """The inverse of each square matrix."""
    backend, x, dtype = _square("inv", x)
    return kernel(backend, "inv", dtype)(x)


def _rtol(rtol: Any) -> Any:
    if rtol is None or hasattr(rtol, "dtype"):
        return rtol
    if rtol.__class__ not in (int, float) or not rtol >= 0:
        raise arguments.InvalidArgumentTypeError(f"rtol={rtol!r} must be a non-negative float (or None).")
    return float(rtol)


def pinv(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """The Moore-Penrose pseudo-inverse; singular values below ``rtol`` times the largest are zero."""
    backend, x, dtype = _floating("pinv", x)
    rtol = _rtol(rtol)
    return kernel(backend, "pinv", dtype)(x, rtol=rtol)


def matrix_rank(x: Array, /, *, rtol: float | Array | None = None) -> Array:
    """The rank of each matrix (singular values above ``rtol`` times the largest), as an index."""
    backend, x, dtype = _floating("matrix_rank", x)
    rtol = _rtol(rtol)
    if 0 in tuple(x.shape[-2:]):  # no singular values: rank 0 on every backend (JAX would raise)
        return index_result(backend, kernel(backend, "zeros", dtype)(tuple(x.shape[:-2]), dtype=native_dtype(backend, dtype),
                                                                     device=None))
    return index_result(backend, kernel(backend, "matrix_rank", dtype)(x, rtol=rtol))


def qr(x: Array, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """The QR decomposition of each matrix."""
    if mode not in ("reduced", "complete"):
        raise InvalidArgumentError(f"qr mode must be 'reduced' or 'complete', got {mode!r}.")
    backend, x, dtype = _floating("qr", x)
    return QRResult(*kernel(backend, "qr", dtype)(x, mode=mode))


def slogdet(x: Array, /) -> SlogdetResult:
    """Sign and natural log of the absolute determinant of each square matrix."""
    backend, x, dtype = _square("slogdet", x)
    return SlogdetResult(*kernel(backend, "slogdet", dtype)(x))


def solve(x1: Array, x2: Array, /) -> Array:
    """The solution of x1 @ result = x2, in the promoted floating dtype."""
    backend, dtype, (a1, a2) = promoted_inputs(x1, x2)
    if dtype.category == "bool":
        raise not_defined("linalg.solve", (dtype,), "floating-point (or integer) arrays")
    if dtype.category in ("int", "uint"):
        dtype = default_float_dtype()
        a1, a2 = backend.astype(a1, dtype), backend.astype(a2, dtype)
    if len(a1.shape) < 2 or a1.shape[-1] != a1.shape[-2]:
        raise InvalidArgumentError(f"linalg.solve needs square matrices as x1, got shape {tuple(a1.shape)}.")
    if len(a2.shape) == 0 or a2.shape[0 if len(a2.shape) == 1 else -2] != a1.shape[-1]:
        raise InvalidArgumentError(f"linalg.solve needs x2 of {a1.shape[-1]} rows for x1 of shape {tuple(a1.shape)}, got "
                                   f"shape {tuple(a2.shape)}.")
    return kernel(backend, "solve", dtype)(a1, a2)


def svd(x: Array, /, *, full_matrices: bool = True) -> SVDResult:
    """The singular value decomposition U, S, Vh of each matrix."""
    backend, x, dtype = _floating("svd", x)
    return SVDResult(*kernel(backend, "svd", dtype)(x, full_matrices=arguments.flag(full_matrices, "full_matrices")))


def svdvals(x: Array, /) -> Array:
    """The singular values of each matrix, descending."""
    backend, x, dtype = _floating("svdvals", x)
    return kernel(backend, "svdvals", dtype)(x)


def matrix_norm(x: Array, /, *, keepdims: bool = False,
                ord: int | float | Literal["fro", "nuc"] | None = "fro") -> Array:  # noqa: A002
    """The matrix norm of each matrix (Frobenius by default); real for complex input."""
    backend, x, dtype = _floating("matrix_norm", x)
    if ord.__class__ not in (int, float, str) or ord not in _MATRIX_ORDS:
        raise InvalidArgumentError(f"matrix_norm ord={ord!r} is not a matrix norm; pass one of {sorted(map(str, _MATRIX_ORDS))}.")
    return kernel(backend, "matrix_norm", dtype)(x, keepdims=arguments.flag(keepdims, "keepdims"), ord=ord)


_MATRIX_ORDS: Final = frozenset({"fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")})


def vector_norm(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False,
                ord: int | float = 2) -> Array:  # noqa: A002
    """The vector norm over ``axis`` (all elements when None); real for complex input."""
    backend, x, dtype = _floating("vector_norm", x, matrix=False)
    if ord.__class__ not in (int, float) or (ord != ord):
        raise arguments.InvalidArgumentTypeError(f"ord={ord!r} must be an int or float (1, 2, inf, -inf, 0, ...).")
    return kernel(backend, "vector_norm", dtype)(x, axis=arguments.axes(axis, len(x.shape)),
                                                 keepdims=arguments.flag(keepdims, "keepdims"), ord=ord)


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """The cross product of 3-element vectors along ``axis``, in the promoted dtype. The other axes
    broadcast (the standard's rule: the compute axis does not); ``axis`` counts from the end, so a
    non-negative one needs inputs of one rank."""
    backend, dtype, a1, a2 = numeric_pair("cross", x1, x2)
    rank = min(len(a1.shape), len(a2.shape))
    if not rank:
        raise InvalidArgumentError("linalg.cross needs arrays of at least one dimension.")
    axis = arguments.integer(axis, "axis")
    if axis >= 0 and len(a1.shape) != len(a2.shape):
        raise InvalidArgumentError(f"linalg.cross with axis={axis} needs arrays of one rank, got "
                                   f"{tuple(a1.shape)} and {tuple(a2.shape)}: pass a negative axis.")
    counted = len(a1.shape) if axis >= 0 else rank  # a negative axis must fall within both
    axis = arguments.axis(axis, counted) - counted
    if a1.shape[axis] != 3 or a2.shape[axis] != 3:
        raise InvalidArgumentError("linalg.cross needs vectors of 3 elements along axis.")
    arguments.broadcast_shapes(tuple(a1.shape), tuple(a2.shape))
    return kernel(backend, "cross", dtype)(a1, a2, axis=axis)


def outer(x1: Array, x2: Array, /) -> Array:
    """The outer product of two 1-d arrays, in the promoted dtype."""
    backend, dtype, a1, a2 = numeric_pair("outer", x1, x2)
    if len(a1.shape) != 1 or len(a2.shape) != 1:
        raise InvalidArgumentError("linalg.outer needs two 1-d arrays.")
    return kernel(backend, "outer", dtype)(a1, a2)


def matrix_power(x: Array, n: int, /) -> Array:
    """x raised to the integer power ``n`` by repeated matrix products (negative ``n`` inverts;
    that needs a floating dtype)."""
    backend, x, dtype = array_input(x)
    n = arguments.integer(n, "n")
    if abs(n) > 2**31:
        raise InvalidArgumentError(f"linalg.matrix_power needs |n| <= 2**31, got {n}.")
    if dtype.category == "bool":
        raise not_defined("linalg.matrix_power", (dtype,), "numeric arrays")
    if n < 0 and dtype.category in ("int", "uint"):
        raise not_defined("linalg.matrix_power with n < 0", (dtype,), "floating-point arrays")
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise InvalidArgumentError(f"linalg.matrix_power needs square matrices, got shape {tuple(x.shape)}.")
    return kernel(backend, "matrix_power", dtype)(x, int(n))


def _offset(x: Array, offset: Any) -> int:
    """``offset`` as an int, clamped to just beyond the matrix (the same empty diagonal)."""
    rows, cols = int(x.shape[-2]), int(x.shape[-1])
    return min(max(arguments.integer(offset, "offset"), -rows), cols)


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """The ``offset`` diagonal of each matrix."""
    backend, x, dtype = array_input(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"linalg.diagonal needs at least 2 dimensions, got {len(x.shape)}.")
    return kernel(backend, "diagonal", dtype)(x, offset=_offset(x, offset))


def trace(x: Array, /, *, offset: int = 0, dtype: DtypeLike | None = None) -> Array:
    """The sum of the ``offset`` diagonal of each matrix, in the accumulator dtype of
    :func:`~arraylayer.sum`."""
    backend, x, source = array_input(x)
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"linalg.trace needs at least 2 dimensions, got {len(x.shape)}.")
    accumulator = accumulator_dtype(source, dtype)
    run = kernel(backend, "trace", accumulator)
    return run(x, offset=_offset(x, offset), dtype=accumulator_native(backend, accumulator))

