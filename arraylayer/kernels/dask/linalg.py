"""Linear-algebra kernels.

Products and norms are dask's blocked computations (half precision accumulated in float32 and
rounded once, as on the NumPy backend). Factorisations, solves and other functions of whole
matrices run NumPy's kernels on every matrix of a stack (``dask.array.apply_gufunc``): the two
matrix axes become one chunk each, lazily, and the stack axes keep their chunks. Their
signatures, in NumPy's generalised-ufunc notation, are the table ``_WHOLE_MATRICES``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

import dask.array as da
import numpy as np
from dask.array.core import elemwise

from arraylayer.kernels.dask._lazy import F32, NUMPY, in_float32, is_half

#: kernel -> signature over the matrix axes (NumPy's generalised-ufunc notation)
_WHOLE_MATRICES: Final = {
    "cholesky": "(m,m)->(m,m)",
    "det": "(m,m)->()",
    "eig": "(m,m)->(m),(m,m)",
    "eigh": "(m,m)->(m),(m,m)",
    "eigvals": "(m,m)->(m)",
    "eigvalsh": "(m,m)->(m)",
    "inv": "(m,m)->(m,m)",
    "slogdet": "(m,m)->(),()",
    "svdvals": "(m,n)->(k)",
}


def _whole(signature: str, function: Callable[..., Any], *arrays: Any, sizes: dict[str, int] | None = None,
           **kwargs: Any) -> Any:
    """``function`` on every matrix of the stacks ``arrays`` (matrix axes made whole), lazily.
    Empty stacks or matrices hold no values: their results are NumPy's, made from empty arrays
    (dask's gufuncs cannot chunk a zero-length axis), each one chunk (dask's automatic chunking
    divides by zero on some empty shapes, such as (4, 1, 1, 1, 5, 0, 17))."""
    if any(getattr(a, "size", 1) == 0 for a in arrays):
        empties = [np.empty(a.shape, a.dtype) if isinstance(a, da.Array) else a for a in arrays]
        result = function(*empties, **kwargs)
        if isinstance(result, tuple):
            return tuple(da.from_array(r, chunks=-1) for r in result)
        return da.from_array(result, chunks=-1)
    result = da.apply_gufunc(function, signature, *arrays, allow_rechunk=True, output_sizes=sizes,
                             output_dtypes=_output_dtypes(signature, function, arrays), **kwargs)
    return tuple(result) if isinstance(result, (list, tuple)) else result


def _output_dtypes(signature: str, function: Callable[..., Any], arrays: tuple[Any, ...]) -> Any:
    """The dtypes ``function`` returns, read from one call on small well-conditioned samples
    (identity matrices, vectors of ones) of the inputs' dtypes: dask's own inference calls it
    on 1x1 blocks of ones, which factorisations can refuse."""
    inputs = signature.split("->")[0]
    cores = [part.strip("()").split(",") for part in inputs.replace("),(", ")|(").split("|")]
    samples = []
    for array, core in zip(arrays, cores, strict=False):
        dtype = array.dtype if hasattr(array, "dtype") else np.asarray(array).dtype
        if core == [""]:
            samples.append(np.ones((), dtype))
        elif len(core) == 2:
            samples.append(np.eye(3, dtype=dtype))
        else:
            samples.append(np.ones(3, dtype))
    result = function(*samples)
    if isinstance(result, tuple):
        return [np.asarray(r).dtype for r in result]
    return np.asarray(result).dtype


def _kernel(name: str) -> Callable[..., Any]:
    signature = _WHOLE_MATRICES[name]

    def kernel(x: Any, /, **kwargs: Any) -> Any:
        return _whole(signature, NUMPY[name], x, sizes={"k": min(x.shape[-2:])}, **kwargs)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"NumPy's {name} on every matrix of the stack ({signature})."
    return kernel


globals().update({name: _kernel(name) for name in _WHOLE_MATRICES})


def _product(function: Callable[..., Any], x1: Any, x2: Any, **kwargs: Any) -> Any:
    """A contraction in x1's dtype: half precision computed in float32 and rounded once, as on
    the NumPy backend; narrow integers, which dask sums in 64 bits, cast back (the same bits as
    NumPy's wrapping arithmetic in the narrow dtype)."""
    if is_half(x1.dtype):
        return function(x1.astype(F32), x2.astype(F32), **kwargs).astype(x1.dtype)
    result = function(x1, x2, **kwargs)
    return result if result.dtype == x1.dtype else result.astype(x1.dtype)


def matmul(x1: Any, x2: Any, /) -> Any:
    return _product(da.matmul, x1, x2)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    return _product(da.tensordot, x1, x2, axes=axes)


def _vecdot(x1: Any, x2: Any, axis: int) -> Any:
    return da.sum(da.conj(x1) * x2 if np.iscomplexobj(x1._meta) else x1 * x2, axis=axis)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    return _product(_vecdot, x1, x2, axis=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    """Products of every pair, chunk by chunk with NumPy's multiply kernel (bfloat16 included)."""
    return elemwise(NUMPY["multiply"], x1[:, None], x2[None, :])


def matrix_transpose(x: Any, /) -> Any:
    return da.swapaxes(x, -1, -2)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    return da.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    work = F32 if is_half(dtype) else dtype
    result = da.sum(diagonal(x, offset=offset), axis=-1, dtype=work)
    return result.astype(dtype) if work is not dtype else result


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    return _whole("(i),(i)->(i)", lambda a, b: np.linalg.cross(a, b, axis=-1), x1, x2,
                  axes=[(axis,), (axis,), (axis,)])


def _vector_norm(x: Any, axis: Any, keepdims: bool, ord: Any) -> Any:
    size = abs(x)
    if ord == math.inf:
        return da.max(size, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return da.min(size, axis=axis, keepdims=keepdims)
    if ord == 0:
        return da.sum(size != 0, axis=axis, keepdims=keepdims, dtype=size.dtype)
    if ord == 1:
        return da.sum(size, axis=axis, keepdims=keepdims)
    if ord == 2:
        return da.sqrt(da.sum(size * size, axis=axis, keepdims=keepdims))
    return da.sum(size ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    return in_float32(_vector_norm, x, x.dtype, axis=axis, keepdims=keepdims, ord=ord)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    norms = _whole("(m,n)->()", lambda a: NUMPY["matrix_norm"](a, ord=ord), x)
    return norms[..., None, None] if keepdims else norms


def matrix_power(x: Any, n: int, /) -> Any:
    return _whole("(m,m)->(m,m)", lambda a: NUMPY["matrix_power"](a, n), x)


def _with_tolerance(signature: str, name: str, x: Any, rtol: Any, sizes: dict[str, int] | None = None) -> Any:
    if isinstance(rtol, (da.Array, np.ndarray)):
        return _whole(signature.replace("->", ",()->", 1), lambda a, r: NUMPY[name](a, rtol=r), x, rtol, sizes=sizes)
    return _whole(signature, lambda a: NUMPY[name](a, rtol=rtol), x, sizes=sizes)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    return _with_tolerance("(m,n)->()", "matrix_rank", x, rtol)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    return _with_tolerance("(m,n)->(n,m)", "pinv", x, rtol)


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    signature = "(m,n)->(m,k),(k,n)" if mode == "reduced" else "(m,n)->(m,m),(m,n)"
    return _whole(signature, lambda a: NUMPY["qr"](a, mode=mode), x, sizes={"k": min(x.shape[-2:])})


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    signature = "(m,n)->(m,m),(k),(n,n)" if full_matrices else "(m,n)->(m,k),(k),(k,n)"
    return _whole(signature, lambda a: NUMPY["svd"](a, full_matrices=full_matrices), x,
                  sizes={"k": min(x.shape[-2:])})


def solve(x1: Any, x2: Any, /) -> Any:
    signature = "(m,m),(m)->(m)" if x2.ndim == 1 else "(m,m),(m,n)->(m,n)"
    return _whole(signature, NUMPY["solve"], x1, x2)
