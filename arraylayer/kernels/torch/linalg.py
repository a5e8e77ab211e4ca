"""Linear algebra kernels (the main namespace's four and the linalg extension).

torch has no bool matrix products: they are computed in float (exact: the counts stay far below
2**24 / 2**53) and compared with 0. torch.linalg.vecdot takes floats only: integers multiply and
sum in their own dtype (wrapping as numpy does). torch.linalg.cross broadcasts only between
inputs of the same rank. torch.linalg.solve reads a ``(..., M)`` right
side as a stack of vectors whenever it has one dimension less than ``x1``; the Array API does so
only for a 1-d ``x2``. torch's multi-output results are named tuples; the contract wants tuples.
torch.linalg has no float16/bfloat16 factorizations (see UNSUPPORTED in ``__init__``).
"""

from __future__ import annotations

from typing import Any

import torch

cholesky = torch.linalg.cholesky  # (x, *, upper=False)
det = torch.linalg.det
eigvalsh = torch.linalg.eigvalsh
eigvals = torch.linalg.eigvals
inv = torch.linalg.inv
matrix_power = torch.linalg.matrix_power
outer = torch.outer  # bool: logical and, as numpy
svdvals = torch.linalg.svdvals

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
    """Over the last two axes (torch.trace takes 2-d input and no offset), summed in ``dtype``."""
    return torch.sum(torch.diagonal(x, offset, -2, -1), dim=-1, dtype=x.dtype if dtype is None else dtype)


def eigh(x: Any, /) -> tuple[Any, Any]:
    values, vectors = torch.linalg.eigh(x)
    return values, vectors


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    q, r = torch.linalg.qr(x, mode=mode)
    return q, r


def slogdet(x: Any, /) -> tuple[Any, Any]:
    sign, logabsdet = torch.linalg.slogdet(x)
    return sign, logabsdet


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    u, s, vh = torch.linalg.svd(x, full_matrices=full_matrices)
    return u, s, vh


def solve(x1: Any, x2: Any, /) -> Any:
    """x2 is one vector when 1-d, else a stack of matrices (a leading axis keeps torch from reading
    a (..., M) x2 with one dimension less than x1 as a stack of vectors)."""
    if x2.ndim > 1 and x2.ndim == x1.ndim - 1:
        return torch.linalg.solve(x1, x2[None])
    return torch.linalg.solve(x1, x2)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    return torch.linalg.matrix_norm(x, ord=ord, keepdim=keepdims)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    if axis == ():  # torch reads dim=() as every axis
        return torch.linalg.vector_norm(x[..., None], ord=ord, dim=-1)
    return torch.linalg.vector_norm(x, ord=ord, dim=axis, keepdim=keepdims)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    return torch.linalg.matrix_rank(x, rtol=rtol)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    return torch.linalg.pinv(x, rtol=rtol)


def eig(x: Any, /) -> tuple[Any, Any]:
    return tuple(torch.linalg.eig(x))
