"""keras.ops' linalg names beyond the standard's extension, as compositions of ``arraylayer.linalg``:
``solve_triangular``, ``lstsq``, ``lu_factor``, ``cholesky_inverse`` and ``norm``.

Each runs on every backend with the extension's dtype rules (integers in the default float, bool
refused), lazily on dask and under jit and autodiff, because it only calls arraylayer's functions.
``lu_factor`` is partial-pivoting Gaussian elimination written out step by step, so its pivots are
LAPACK's (the first row of largest magnitude, ``|re| + |im|`` for complex, as ``getrf`` picks).
"""

from __future__ import annotations

import contextlib
from typing import Any, Final, Literal

from arraylayer import arguments
from arraylayer.api import creation, data_types, elementwise, indexing, manipulation, searching
from arraylayer.api import linalg as _linalg
from arraylayer.api.dispatch import array_input, not_defined, promoted_inputs
from arraylayer.api.interchange import dev
from arraylayer.api.linear_algebra import matmul, matrix_transpose
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.runtime.registry import backend_of, current_backend, use_backend

Array = Any

__all__ = ["cholesky_inverse", "lstsq", "lu_factor", "norm", "solve_triangular"]
#: Names the Array namespaces (arraylayer.xp) leave out of their linalg: array-API clients read
#: ``xp.linalg.lstsq`` as NumPy's, torch's and jax's, a tuple of four (SciPy's savgol_filter unpacks
#: it), where this one is keras.ops' solution only; without it they take their own path, as before.
NOT_IN_ARRAY_NAMESPACES: Final = frozenset({"lstsq"})

_INF: Final = float("inf")
_MATRIX_ORDS: Final = ("fro", "nuc", 1, -1, 2, -2, _INF, -_INF)


def _floating_pair(name: str, a: Array, b: Array) -> tuple[Array, Array]:
    """a and b in their promoted floating dtype (integers: the default float; bool refused)."""
    backend, dtype, (a, b) = promoted_inputs(a, b)
    if dtype.category == "bool":
        raise not_defined(f"linalg.{name}", (dtype,), "floating-point (or integer) arrays")
    if dtype.category in ("int", "uint"):
        dtype = default_float_dtype()
        a, b = backend.astype(a, dtype), backend.astype(b, dtype)
    return a, b


def _floating(name: str, x: Array) -> Array:
    """x in a floating dtype, as a (stack of) matrices."""
    backend, x, dtype = array_input(x)
    if dtype.category == "bool":
        raise not_defined(f"linalg.{name}", (dtype,), "floating-point (or integer) arrays")
    if dtype.category in ("int", "uint"):
        x = backend.astype(x, default_float_dtype())
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"linalg.{name} needs a (stack of) matrices: at least 2 dimensions, got {len(x.shape)}.")
    return x


def _conj_t(x: Array) -> Array:
    """The conjugate transpose of each matrix (the transpose for real input)."""
    t = matrix_transpose(x)
    return elementwise.conj(t) if array_input(t)[2].category == "complex" else t


def solve_triangular(a: Array, b: Array, /, lower: bool = False) -> Array:
    """The solution ``x`` of ``a @ x = b`` for triangular ``a`` (upper unless ``lower``; the other
    triangle is not read), as scipy.linalg.solve_triangular; b is (..., n) or (..., n, k)."""
    lower = arguments.flag(lower, "lower")
    a, b = _floating_pair("solve_triangular", a, b)
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise InvalidArgumentError(f"linalg.solve_triangular needs square matrices as a, got shape {tuple(a.shape)}.")
    triangle = creation.tril(a) if lower else creation.triu(a)
    return _linalg.solve(triangle, b)


def lstsq(a: Array, b: Array, /, rcond: float | None = None) -> Array:
    """The least-squares solution ``x`` minimising ``||a @ x - b||`` (the minimum-norm one when a
    is rank-deficient), keras' ``lstsq``: the solution only. Singular values below ``rcond`` times
    the largest count as zero (None: machine epsilon times max(M, N), NumPy's default)."""
    a, b = _floating_pair("lstsq", a, b)
    if len(a.shape) != 2 or len(b.shape) not in (1, 2) or b.shape[0] != a.shape[0]:
        raise InvalidArgumentError(f"linalg.lstsq needs a matrix a (M, N) and b of shape (M,) or (M, K); got "
                                   f"{tuple(a.shape)} and {tuple(b.shape)}.")
    if rcond is not None and (rcond.__class__ not in (int, float) or not rcond >= 0):
        raise InvalidArgumentTypeError(f"rcond={rcond!r} must be a non-negative float (or None).")
    return matmul(_linalg.pinv(a, rtol=None if rcond is None else float(rcond)), b)


def _magnitude(x: Array) -> Array:
    """What LAPACK's pivot search compares: |x|, or |re| + |im| for complex x."""
    if array_input(x)[2].category != "complex":
        return elementwise.abs(x)
    return elementwise.add(elementwise.abs(elementwise.real(x)), elementwise.abs(elementwise.imag(x)))


def lu_factor(x: Array, /) -> tuple[Array, Array]:
    """The pivoted LU factorisation of each (M, N) matrix as scipy.linalg.lu_factor gives it:
    ``(lu, piv)``, L's unit-diagonal lower part and U in one matrix, and ``piv`` (int32, 0-based):
    row i was swapped with row ``piv[i]``. A zero pivot leaves its column unscaled (LAPACK's rule)."""
    lu = _floating("lu_factor", x)
    m, n = int(lu.shape[-2]), int(lu.shape[-1])
    rows = manipulation.reshape(_positions(lu, m), (m, 1))
    cols = _positions(lu, n)
    pivots = []
    for k in range(min(m, n)):
        # the pivot: the row at or below k whose entry in column k is largest
        column = _magnitude(lu[..., :, k])
        p = data_types.astype(searching.argmax(searching.where(elementwise.less(rows[:, 0], k), -1.0, column),
                                               axis=-1), "int32")
        pivots.append(p)
        p_row = manipulation.expand_dims(p, axis=(-1, -2))
        picked = indexing.take_along_axis(lu, manipulation.broadcast_to(p_row, (*lu.shape[:-2], 1, n)), axis=-2)
        row_k = manipulation.expand_dims(lu[..., k, :], axis=-2)
        lu = searching.where(elementwise.equal(rows, k), picked,
                             searching.where(elementwise.equal(rows, p_row), row_k, lu))
        # eliminate below the pivot: L's column k, then the Schur complement
        pivot = manipulation.expand_dims(lu[..., k, k], axis=-1)
        below = elementwise.greater(rows[:, 0], k)
        zero = elementwise.equal(pivot, 0)
        scaled = elementwise.divide(lu[..., :, k], searching.where(zero, 1, pivot))
        factors = searching.where(below, scaled, 0)
        upper_row = searching.where(elementwise.greater(cols, k), lu[..., k, :], 0)
        update = elementwise.multiply(manipulation.expand_dims(factors, axis=-1), manipulation.expand_dims(upper_row, axis=-2))
        lu = elementwise.subtract(lu, update)
        lu = searching.where(elementwise.logical_and(manipulation.expand_dims(below, axis=-1), elementwise.equal(cols, k)),
                             manipulation.expand_dims(factors, axis=-1), lu)
    if not pivots:
        return lu, manipulation.broadcast_to(_positions(lu, 0), (*lu.shape[:-2], 0))
    return lu, manipulation.stack(pivots, axis=-1)


def _positions(like: Array, n: int) -> Array:
    """0 .. n-1 in int32 on ``like``'s backend and device (None where a tracer has no device)."""
    backend = backend_of(like)
    try:
        device = dev(like)
    except Exception:  # noqa: BLE001 - a jax tracer without a device
        device = None
    scope = contextlib.nullcontext() if current_backend() == backend.name else use_backend(backend.name)
    with scope:
        return creation.arange(n, dtype="int32", device=device)


def cholesky_inverse(x: Array, /, upper: bool = False) -> Array:
    """The inverse of ``A`` from its Cholesky factor ``x``: ``A = L @ L^H`` (``upper``: ``U^H @ U``);
    only x's lower (upper) triangle is read, as torch.cholesky_inverse."""
    upper = arguments.flag(upper, "upper")
    x = _floating("cholesky_inverse", x)
    if x.shape[-1] != x.shape[-2]:
        raise InvalidArgumentError(f"linalg.cholesky_inverse needs square matrices, got shape {tuple(x.shape)}.")
    factor_inv = _linalg.inv(creation.triu(x) if upper else creation.tril(x))
    if upper:
        return matmul(factor_inv, _conj_t(factor_inv))
    return matmul(_conj_t(factor_inv), factor_inv)


def norm(x: Array, /, ord: int | float | Literal["fro", "nuc"] | None = None,  # noqa: A002 - NumPy's name
         axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """numpy.linalg.norm: a vector norm over one axis, a matrix norm over two, real for complex input.

    ``axis=None``: the 2-norm of all elements when ``ord`` is None, otherwise the vector norm of 1-d
    or the matrix norm of 2-d input. Vector ords: any number (0 counts the non-zeros, inf/-inf the
    largest/smallest magnitude); matrix ords: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.
    """
    backend, x, dtype = array_input(x)
    keepdims = arguments.flag(keepdims, "keepdims")
    ndim = len(x.shape)
    if axis is None:
        if ord is None:
            return _linalg.vector_norm(x, axis=None, keepdims=keepdims)
        if ndim not in (1, 2):
            raise InvalidArgumentError(f"linalg.norm with ord={ord!r} and axis=None needs 1-d or 2-d input, got "
                                       f"{ndim} dimensions; pass axis (an int for vectors, two ints for matrices).")
        axis = tuple(range(ndim))
    axes = (arguments.axis(axis, ndim),) if not isinstance(axis, (tuple, list)) else \
        tuple(arguments.axis(a, ndim) for a in axis)
    if len(axes) == 1:
        return _vector(x, axes[0], ord, keepdims)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise InvalidArgumentError(f"linalg.norm: axis must be one axis or two different axes, got {axis!r}.")
    return _matrix(x, axes, ord, keepdims)


def _vector(x: Array, axis: int, ord: Any, keepdims: bool) -> Array:  # noqa: A002
    if ord is None:
        ord = 2  # noqa: A001
    if isinstance(ord, str):
        raise InvalidArgumentError(f"linalg.norm ord={ord!r} is a matrix norm; a vector norm takes a number "
                                   f"(2, 1, inf, -inf, 0, ...).")
    return _linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


def _matrix(x: Array, axes: tuple[int, ...], ord: Any, keepdims: bool) -> Array:  # noqa: A002
    if ord is None:
        ord = "fro"  # noqa: A001
    if ord.__class__ not in (int, float, str) or ord not in _MATRIX_ORDS:
        raise InvalidArgumentError(f"linalg.norm ord={ord!r} is not a matrix norm; pass one of 'fro', 'nuc', 1, -1, "
                                   f"2, -2, inf, -inf.")
    moved = manipulation.moveaxis(x, axes, (-2, -1))
    result = _linalg.matrix_norm(moved, ord=ord)
    if keepdims:
        result = manipulation.expand_dims(result, axis=tuple(sorted(axes)))
    return result

