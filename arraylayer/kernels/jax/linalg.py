"""Linear-algebra kernels: the main namespace's (matmul, matrix_transpose, tensordot, vecdot) and
the linalg extension's.

jax's LAPACK-backed functions have no float16/bfloat16 implementation on the CPU (``det`` and
``slogdet`` only for 2x2 matrices), and a factorisation computed in float32 and rounded back
would not be exact: those kernels refuse half precision, whatever the size (declared in
UNSUPPORTED; jax itself raises the same way for the SVD norms and negative matrix powers,
which the declarations cannot name per argument). What is a sum (the other norms, ``trace``)
is accumulated in float32 and rounded once for the half dtypes, as the reductions are.
Multi-output functions return plain tuples.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

import jax
import jax.numpy as jnp

from ._common import F32, HALF
from .statistical import root, static_axis

cross = jnp.linalg.cross
diagonal = jnp.linalg.diagonal
matmul = jnp.matmul
matrix_power = jnp.linalg.matrix_power
matrix_transpose = jnp.matrix_transpose
outer = jnp.linalg.outer
tensordot = jnp.tensordot
vecdot = jnp.vecdot

_SVD_ORDS: Final = (2, -2, "nuc")


def _no_half(x: Any) -> Any:
    """``x``; TypeError for float16/bfloat16, which jax cannot factorise on the CPU."""
    if x.dtype in HALF:
        raise TypeError(f"jax.numpy.linalg has no {x.dtype} factorisations; float32 work rounded back would not "
                        "be exact.")
    return x


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
    return jnp.linalg.cholesky(_no_half(x), upper=upper)


def det(x: Any, /) -> Any:
    return jnp.linalg.det(_no_half(x))


def eigh(x: Any, /) -> tuple[Any, Any]:
    return tuple(jnp.linalg.eigh(_no_half(x)))  # type: ignore[return-value]


def eigvalsh(x: Any, /) -> Any:
    return jnp.linalg.eigvalsh(_no_half(x))


def inv(x: Any, /) -> Any:
    return jnp.linalg.inv(_no_half(x))


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    return jnp.linalg.matrix_rank(_no_half(x), rtol=rtol)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    return jnp.linalg.pinv(_no_half(x), rtol=rtol)


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    return tuple(jnp.linalg.qr(_no_half(x), mode=mode))  # type: ignore[return-value]


def slogdet(x: Any, /) -> tuple[Any, Any]:
    return tuple(jnp.linalg.slogdet(_no_half(x)))  # type: ignore[return-value]


def solve(x1: Any, x2: Any, /) -> Any:
    return jnp.linalg.solve(_no_half(x1), x2)


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    return tuple(jnp.linalg.svd(_no_half(x), full_matrices=full_matrices))  # type: ignore[return-value]


def svdvals(x: Any, /) -> Any:
    return jnp.linalg.svdvals(_no_half(x))


def eig(x: Any, /) -> tuple[Any, Any]:
    """Eigenvalues and eigenvectors of general matrices, complex (jax's eig always is).

    Differentiable in the eigenvectors too, as on torch and tensorflow (jax.numpy's eig refuses:
    the derivative holds where the eigenvalues are distinct, and a loss must not depend on each
    vector's phase, which eig leaves free on every backend)."""
    eigenvalues, eigenvectors = jax.lax.linalg.eig(_no_half(x), compute_left_eigenvectors=False,
                                                   enable_eigvec_derivs=True)
    return eigenvalues, eigenvectors


def eigvals(x: Any, /) -> Any:
    return jnp.linalg.eigvals(_no_half(x))
