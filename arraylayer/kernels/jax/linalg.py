"""Linear-algebra kernels: the main namespace's (matmul, matrix_transpose, tensordot, vecdot) and
the linalg extension's.

jax's LAPACK-backed functions have no float16/bfloat16 implementation on the CPU (``det`` and
``slogdet`` only for 2x2 matrices), and a factorisation computed in float32 and rounded back
would not be exact: those kernels refuse half precision, whatever the size (declared in
UNSUPPORTED; jax itself raises the same way for the SVD norms and negative matrix powers,
which the declarations cannot name per argument). What is a sum (the other norms, ``trace``)
is accumulated in float32 and rounded once for the half dtypes, as the reductions are.
Multi-output functions return plain tuples.

jax never raises for matrices without an answer (it returns inf or NaN, or for ``eigh`` of NaN
finite garbage). Eagerly these kernels raise :class:`~arraylayer.errors.LinAlgError` as every
backend does, which needs one look at the values on the host (a device sync); traced (jit, vmap,
grad) they give NaN for exactly those matrices of a stack.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

import jax
import jax.numpy as jnp

from arraylayer.errors import linalg_error
from arraylayer.kernels.jax._common import F32, HALF
from arraylayer.kernels.jax.statistical import root, static_axis

cross = jnp.linalg.cross
diagonal = jnp.linalg.diagonal
# Full float32 precision on every device: on a GPU, XLA's default multiplies float32 matrices in
# TF32 (an H200 gave values 1e-3 apart from the CPU's), where torch and TensorFlow keep float32.
_FULL: Final = jax.lax.Precision.HIGHEST
matmul = partial(jnp.matmul, precision=_FULL)
matrix_transpose = jnp.matrix_transpose
outer = jnp.linalg.outer
tensordot = partial(jnp.tensordot, precision=_FULL)
vecdot = partial(jnp.vecdot, precision=_FULL)

_SVD_ORDS: Final = (2, -2, "nuc")


def _no_half(x: Any) -> Any:
    """``x``; TypeError for float16/bfloat16, which jax cannot factorise on the CPU."""
    if x.dtype in HALF:
        raise TypeError(f"jax.numpy.linalg has no {x.dtype} factorisations; float32 work rounded back would not "
                        "be exact.")
    return x


def _answer(name: str, problem: str, result: Any, core: int, *inputs: Any) -> Any:
    """``result``, an inverse or solve over matrices of ``core`` dimensions: NaN where it is not
    finite when traced; eagerly LinAlgError naming ``problem`` (``not_finite`` for non-finite input)."""
    if isinstance(result, jax.core.Tracer):
        return jnp.where(jnp.isfinite(result).all(axis=tuple(range(-core, 0)), keepdims=True), result, jnp.nan)
    if not _all_finite(result, *inputs):  # the host round trip (NaN/inf input: refused anywhere)
        raise linalg_error(name, problem if _all_finite(*inputs) else "not_finite")
    return result


@jax.jit
def _finite_flag(*arrays: Any) -> Any:
    return jnp.all(jnp.stack([jnp.isfinite(a).all() for a in arrays]))


def _all_finite(*arrays: Any) -> bool:
    """Whether every value is finite: one compiled call and one transfer to the host."""
    return bool(_finite_flag(*arrays))


def _decomposed(name: str, x: Any, fn: Any) -> tuple[Any, ...]:
    """``fn(x)`` as a tuple: eagerly LinAlgError when ``x`` holds NaN or inf; traced, NaN (``-1``
    for integer results) for each matrix that does."""
    x = _no_half(x)
    if not isinstance(x, jax.core.Tracer):
        if not _all_finite(x):  # the host round trip
            raise linalg_error(name, "not_finite")
        result = fn(x)
        return result if isinstance(result, tuple) else (result,)
    finite = jnp.isfinite(x).all(axis=(-2, -1))
    result = fn(jnp.where(finite[..., None, None], x, jnp.eye(x.shape[-1], dtype=x.dtype)) if x.shape[-1] == x.shape[-2]
                else jnp.where(finite[..., None, None], x, 0))
    return tuple(jnp.where(finite.reshape(finite.shape + (1,) * (r.ndim - finite.ndim)), r,
                           jnp.nan if jnp.issubdtype(r.dtype, jnp.inexact) else -1)
                 for r in (result if isinstance(result, tuple) else (result,)))


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    if dtype in HALF:
        return jnp.linalg.trace(x, offset=offset, dtype=F32).astype(dtype)
    return jnp.linalg.trace(x, offset=offset, dtype=dtype)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    if x.dtype in HALF and ord not in _SVD_ORDS:  # jax squares in half precision: 300 gives inf
        return matrix_norm(x.astype(F32), keepdims=keepdims, ord=ord).astype(x.dtype)
    if ord == "fro":
        return _two_norm(x, (-2, -1), keepdims)
    return jnp.linalg.matrix_norm(x, keepdims=keepdims, ord=ord)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    if x.dtype in HALF:  # jax squares in half precision: an element above 256 gives a float16 inf
        return vector_norm(x.astype(F32), axis=axis, keepdims=keepdims, ord=ord).astype(x.dtype)
    if ord == 2:
        return _two_norm(x, static_axis(axis), keepdims)
    return jnp.linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)


@partial(jax.jit, static_argnums=(1, 2))
def _two_norm(x: Any, axis: Any, keepdims: bool) -> Any:
    """``sqrt(sum(|x|**2))`` as jax.numpy computes it, with gradient 0 at zeros (not NaN)."""
    return root(jnp.sum(jnp.real(x * jnp.conj(x)), axis=axis, keepdims=keepdims))


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    def factor(a: Any) -> Any:
        return _answer("cholesky", "not_positive_definite", jnp.linalg.cholesky(a, upper=upper), 2, a)

    return _decomposed("cholesky", x, factor)[0] if isinstance(x, jax.core.Tracer) else factor(_no_half(x))


def det(x: Any, /) -> Any:
    return jnp.linalg.det(_no_half(x))


def eigh(x: Any, /) -> tuple[Any, Any]:
    return _decomposed("eigh", x, lambda a: tuple(jnp.linalg.eigh(a)))  # type: ignore[return-value]


def eigvalsh(x: Any, /) -> Any:
    return _decomposed("eigvalsh", x, lambda a: jnp.linalg.eigvalsh(a))[0]


def inv(x: Any, /) -> Any:
    return _answer("inv", "singular", jnp.linalg.inv(_no_half(x)), 2, x)


def matrix_power(x: Any, n: int, /) -> Any:
    """Negative powers are powers of :func:`inv` (the outcome of singular matrices is inv's)."""
    if n < 0:
        x = _answer("matrix_power", "singular", jnp.linalg.inv(_no_half(x)), 2, x)
    return jnp.linalg.matrix_power(x, abs(n))


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    return _decomposed("matrix_rank", x, lambda a: jnp.linalg.matrix_rank(a, rtol=rtol))[0]


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    return _decomposed("pinv", x, lambda a: jnp.linalg.pinv(a, rtol=rtol))[0]


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    return _decomposed("qr", x, lambda a: tuple(jnp.linalg.qr(a, mode=mode)))  # type: ignore[return-value]


def slogdet(x: Any, /) -> tuple[Any, Any]:
    return tuple(jnp.linalg.slogdet(_no_half(x)))  # type: ignore[return-value]


def solve(x1: Any, x2: Any, /) -> Any:
    return _answer("solve", "singular", jnp.linalg.solve(_no_half(x1), x2), min(x2.ndim, 2), x1, x2)


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    return _decomposed("svd", x, lambda a: tuple(jnp.linalg.svd(a, full_matrices=full_matrices)))  # type: ignore[return-value]


def svdvals(x: Any, /) -> Any:
    return _decomposed("svdvals", x, lambda a: jnp.linalg.svdvals(a))[0]


def eig(x: Any, /) -> tuple[Any, Any]:
    """Eigenvalues and eigenvectors of general matrices, complex (jax's eig always is).

    Differentiable in the eigenvectors too, as on torch and tensorflow (jax.numpy's eig refuses:
    the derivative holds where the eigenvalues are distinct, and a loss must not depend on each
    vector's phase, which eig leaves free on every backend)."""
    return _decomposed("eig", x, lambda a: tuple(jax.lax.linalg.eig(a, compute_left_eigenvectors=False,
                                                                   enable_eigvec_derivs=True)))


def eigvals(x: Any, /) -> Any:
    return _decomposed("eigvals", x, lambda a: jnp.linalg.eigvals(a))[0]
