"""Linear algebra kernels (the main namespace's four and the linalg extension).

torch has no bool matrix products: they are computed in float (exact: the counts stay far below
2**24 / 2**53) and compared with 0. torch.linalg.vecdot takes floats only: integers multiply and
sum in their own dtype (wrapping as numpy does). torch.linalg.cross broadcasts only between
inputs of the same rank. torch.linalg.solve reads a ``(..., M)`` right
side as a stack of vectors whenever it has one dimension less than ``x1``; the Array API does so
only for a 1-d ``x2``. torch's multi-output results are named tuples; the contract wants tuples.
torch.linalg has no float16/bfloat16 factorizations (see UNSUPPORTED in ``__init__``).

Matrices without an answer: inverses, solves and Cholesky factors go through torch's ``*_ex``
functions (no check of their own), then eagerly raise :class:`~arraylayer.errors.LinAlgError`
(one device sync) and under torch.compile give NaN for those matrices. Decompositions of a
matrix holding NaN or inf raise eagerly; compiled, they factorise the identity instead and give NaN.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.compiler import is_compiling

from arraylayer.errors import linalg_error
from arraylayer.kernels.torch.statistical import sum as _sum

det = torch.linalg.det
outer = torch.outer  # bool: logical and, as numpy

_EXACT_FLOAT32_SUM = 2**24  # a float32 sum of that many 0/1 products is still exact


def matmul(x1: Any, x2: Any, /) -> Any:
    if x1.dtype is not torch.bool:
        return torch.matmul(x1, x2)
    wide = torch.float32 if x1.shape[-1] < _EXACT_FLOAT32_SUM else torch.float64
    return torch.matmul(x1.to(wide), x2.to(wide)) != 0


def matrix_transpose(x: Any, /) -> Any:
    return x.mT


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    if x1.dtype is not torch.bool:
        return torch.tensordot(x1, x2, dims=axes)
    return torch.tensordot(x1.double(), x2.double(), dims=axes) != 0


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """sum(conj(x1) * x2) over ``axis``, after broadcasting."""
    if x1.is_floating_point() or x1.is_complex():
        return torch.linalg.vecdot(x1, x2, dim=axis)
    if x1.dtype is torch.bool:
        return torch.any(x1 & x2, dim=axis)
    return torch.sum(x1 * x2, dim=axis, dtype=x1.dtype)


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """torch.linalg.cross broadcasts only between inputs of the same rank."""
    if x1.ndim != x2.ndim:
        x1, x2 = torch.broadcast_tensors(x1, x2)
    return torch.linalg.cross(x1, x2, dim=axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    return torch.diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """Over the last two axes (torch.trace takes 2-d input and no offset), summed in ``dtype`` by
    the sum kernel (a uint16/32/64 accumulator in int64, cast back: see statistical.py)."""
    return _sum(torch.diagonal(x, offset, -2, -1), axis=-1, dtype=x.dtype if dtype is None else dtype)


def _answer(name: str, problem: str, result: Any, info: Any, core: int, *inputs: Any) -> Any:
    """``result`` of an ``*_ex`` function over matrices of ``core`` dimensions: NaN where torch
    reports a failure or it is not finite when compiled; eagerly LinAlgError naming ``problem``."""
    if is_compiling():
        ok = torch.isfinite(result).flatten(-core).all(-1) & (info == 0)
        return torch.where(ok.reshape(ok.shape + (1,) * core), result, torch.nan)
    finite = torch.isfinite(result).all()
    for a in inputs:  # NaN/inf input is refused anywhere (cholesky reads one triangle)
        finite &= torch.isfinite(a).all()
    if bool(info.any() | ~finite):  # the device sync
        raise linalg_error(name, problem if all(torch.isfinite(a).all() for a in inputs) else "not_finite")
    return result


def _decomposed(name: str, x: Any, fn: Any) -> tuple[Any, ...]:
    """``fn(x)`` as a tuple: eagerly LinAlgError when ``x`` holds NaN or inf; compiled, NaN (``-1``
    for integer results) for each matrix that does, computed from the identity instead."""
    if not is_compiling():
        if not torch.isfinite(x).all():  # the device sync
            raise linalg_error(name, "not_finite")
        result = fn(x)
        return tuple(result) if isinstance(result, tuple) else (result,)
    finite = torch.isfinite(x).flatten(-2).all(-1)
    stand_in = torch.eye(x.shape[-2], x.shape[-1], dtype=x.dtype, device=x.device)
    result = fn(torch.where(finite[..., None, None], x, stand_in))
    return tuple(torch.where(finite.reshape(finite.shape + (1,) * (r.ndim - finite.ndim)), r,
                             torch.nan if r.is_floating_point() or r.is_complex() else -1)
                 for r in (tuple(result) if isinstance(result, tuple) else (result,)))


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    def factor(a: Any) -> Any:
        result, info = torch.linalg.cholesky_ex(a, upper=upper)
        return _answer("cholesky", "not_positive_definite", result, info, 2, a)

    return _decomposed("cholesky", x, factor)[0] if is_compiling() else factor(x)


def inv(x: Any, /, *, name: str = "inv") -> Any:
    inverse, info = torch.linalg.inv_ex(x)
    return _answer(name, "singular", inverse, info, 2, x)


def matrix_power(x: Any, n: int, /) -> Any:
    """Negative powers are powers of :func:`inv` (the outcome of singular matrices is inv's)."""
    return torch.linalg.matrix_power(inv(x, name="matrix_power") if n < 0 else x, abs(n))


def eigh(x: Any, /) -> tuple[Any, Any]:
    return _decomposed("eigh", x, torch.linalg.eigh)  # type: ignore[return-value]


def eigvalsh(x: Any, /) -> Any:
    return _decomposed("eigvalsh", x, torch.linalg.eigvalsh)[0]


def eigvals(x: Any, /) -> Any:
    return _decomposed("eigvals", x, torch.linalg.eigvals)[0]


def svdvals(x: Any, /) -> Any:
    return _decomposed("svdvals", x, torch.linalg.svdvals)[0]


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    return _decomposed("qr", x, lambda a: torch.linalg.qr(a, mode=mode))  # type: ignore[return-value]


def slogdet(x: Any, /) -> tuple[Any, Any]:
    sign, logabsdet = torch.linalg.slogdet(x)
    return sign, logabsdet


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    return _decomposed("svd", x, lambda a: torch.linalg.svd(a, full_matrices=full_matrices))  # type: ignore[return-value]


def solve(x1: Any, x2: Any, /) -> Any:
    """x2 is one vector when 1-d, else a stack of matrices (a leading axis keeps torch from reading
    a (..., M) x2 with one dimension less than x1 as a stack of vectors)."""
    rhs = x2[None] if x2.ndim > 1 and x2.ndim == x1.ndim - 1 else x2
    result, info = torch.linalg.solve_ex(x1, rhs)
    return _answer("solve", "singular", result, info, min(x2.ndim, 2), x1, x2)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    return torch.linalg.matrix_norm(x, ord=ord, keepdim=keepdims)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    if axis == ():  # torch reads dim=() as every axis
        return torch.linalg.vector_norm(x[..., None], ord=ord, dim=-1)
    return torch.linalg.vector_norm(x, ord=ord, dim=axis, keepdim=keepdims)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    return _decomposed("matrix_rank", x, lambda a: torch.linalg.matrix_rank(a, rtol=rtol))[0]


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    return _decomposed("pinv", x, lambda a: torch.linalg.pinv(a, rtol=rtol))[0]


def eig(x: Any, /) -> tuple[Any, Any]:
    return _decomposed("eig", x, torch.linalg.eig)  # type: ignore[return-value]
