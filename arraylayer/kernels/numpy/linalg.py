"""Linear-algebra kernels: the main namespace's (matmul, matrix_transpose, tensordot, vecdot) and
the linalg extension's.

numpy's LAPACK has no float16/bfloat16 routines (float16 raises; bfloat16 is silently computed
in float64). A factorisation or solve computed in a wider dtype and rounded back is not exact,
so those kernels refuse half precision (declared in UNSUPPORTED; so are the SVD norms and
negative matrix powers, which the declarations cannot name per argument). What is a sum or a
product (matmul's bfloat16 results come back float32, norms, trace, non-negative matrix powers)
is accumulated in float32 and rounded once, as the reductions are. Multi-output functions
return plain tuples.

Matrices without an answer raise :class:`~arraylayer.errors.LinAlgError` (also inside dask's
blocks, which call these kernels): an inverse, solve or Cholesky factor that is not finite (numpy's
own LinAlgError, or the inf of a matrix singular to working precision), and any decomposition of a
matrix holding NaN or inf.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import numpy as np

from arraylayer.errors import linalg_error
from arraylayer.kernels.numpy._common import BF16, F32, is_half

cross = np.linalg.cross
diagonal = np.linalg.diagonal
matrix_transpose = np.matrix_transpose
outer = np.linalg.outer
tensordot = np.tensordot  # numpy.dot, under it, accumulates halves in float32 already

_SVD_ORDS: Final = (2, -2, "nuc")


def _no_half(x: Any) -> Any:
    """``x``; TypeError for float16/bfloat16, which numpy's LAPACK cannot factorise."""
    if is_half(x.dtype):
        raise TypeError(f"numpy.linalg has no {x.dtype} routines; wider work rounded back would not be exact.")
    return x


def _finite(name: str, x: Any) -> Any:
    """``x`` (not half precision); LinAlgError when it holds NaN or inf (no decomposition exists)."""
    if not np.isfinite(_no_half(x)).all():
        raise linalg_error(name, "not_finite")
    return x


def _answer(name: str, problem: str, fn: Callable[..., Any], x: Any, *rest: Any) -> Any:
    """``fn(x, *rest)``; LinAlgError naming ``problem`` when numpy finds none or the result is not
    finite (``not_finite`` when an input already was not)."""
    try:
        with np.errstate(all="ignore"):
            result = fn(_no_half(x), *rest)
        if np.isfinite(result).all():
            return result
    except np.linalg.LinAlgError:
        pass
    finite = all(np.isfinite(a).all() for a in (x, *rest))
    raise linalg_error(name, problem if finite else "not_finite") from None


def _in_float32(fn: Callable[..., Any], x: Any, **kwargs: Any) -> Any:
    """``fn(x, **kwargs)``; float16/bfloat16 ``x`` accumulated in float32 and the result rounded back."""
    if is_half(x.dtype):
        return fn(x.astype(F32), **kwargs).astype(x.dtype)
    return fn(x, **kwargs)


def matmul(x1: Any, x2: Any, /) -> Any:
    if x1.dtype is BF16:
        return np.matmul(x1, x2).astype(BF16)
    return np.matmul(x1, x2)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    if x1.dtype is BF16:
        return np.vecdot(x1, x2, axis=axis).astype(BF16)
    return np.vecdot(x1, x2, axis=axis)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    if is_half(dtype):
        return np.linalg.trace(x, offset=offset, dtype=F32).astype(dtype)
    return np.linalg.trace(x, offset=offset, dtype=dtype)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    if ord in _SVD_ORDS:
        return np.linalg.matrix_norm(_no_half(x), keepdims=keepdims, ord=ord)
    return _in_float32(np.linalg.matrix_norm, x, keepdims=keepdims, ord=ord)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    # also float16: numpy squares in float16, so any element above 256 would make the norm inf
    return _in_float32(np.linalg.vector_norm, x, axis=axis, keepdims=keepdims, ord=ord)


def matrix_power(x: Any, n: int, /) -> Any:
    if n < 0:  # the inverse's power, as numpy computes it, with inv's outcome for singular matrices
        return np.linalg.matrix_power(_answer("matrix_power", "singular", np.linalg.inv, x), -n)
    return _in_float32(np.linalg.matrix_power, x, n=n)


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    # NaN/inf anywhere refused, although LAPACK reads one triangle only (jax symmetrizes)
    return _answer("cholesky", "not_positive_definite", lambda a: np.linalg.cholesky(_finite("cholesky", a), upper=upper), x)


def det(x: Any, /) -> Any:
    return np.linalg.det(_no_half(x))


def eigh(x: Any, /) -> tuple[Any, Any]:
    return tuple(np.linalg.eigh(_finite("eigh", x)))  # type: ignore[return-value]


def eigvalsh(x: Any, /) -> Any:
    return np.linalg.eigvalsh(_finite("eigvalsh", x))


def inv(x: Any, /) -> Any:
    return _answer("inv", "singular", np.linalg.inv, x)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    return np.linalg.matrix_rank(_finite("matrix_rank", x), rtol=rtol)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    return np.linalg.pinv(_finite("pinv", x), rtol=rtol)


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    return tuple(np.linalg.qr(_finite("qr", x), mode=mode))  # type: ignore[return-value]


def slogdet(x: Any, /) -> tuple[Any, Any]:
    return tuple(np.linalg.slogdet(_no_half(x)))  # type: ignore[return-value]


def solve(x1: Any, x2: Any, /) -> Any:
    return _answer("solve", "singular", np.linalg.solve, x1, x2)


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    return tuple(np.linalg.svd(_finite("svd", x), full_matrices=full_matrices))  # type: ignore[return-value]


def svdvals(x: Any, /) -> Any:
    return np.linalg.svdvals(_finite("svdvals", x))


def eig(x: Any, /) -> tuple[Any, Any]:
    """Eigenvalues and eigenvectors of general matrices, complex."""
    values, vectors = np.linalg.eig(_finite("eig", x))
    return _complex(values), _complex(vectors)


def eigvals(x: Any, /) -> Any:
    return _complex(np.linalg.eigvals(_finite("eigvals", x)))


def _complex(x: Any) -> Any:
    """x in the complex dtype of its precision (numpy's eig is real when every eigenvalue is)."""
    return x.astype(np.result_type(x.dtype, np.complex64))
