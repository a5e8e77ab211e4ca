"""Linear algebra kernels (the ``linear_algebra`` category and the ``linalg`` extension).

TF's matmul has no kernel for bool, int8, int16 and unsigned integers: those multiply in
int32/int64 (or through the same-width signed bits) and cast back, which is exact since
integer products and sums are taken modulo 2**bits either way. TF's decompositions have
no float16/bfloat16 kernels: those compute in float32 and round the result once.
``pinv`` (no complex kernel in TF) and ``cross`` (no complex, no axis) are built here.

Matrices without an answer raise :class:`~arraylayer.errors.LinAlgError` eagerly (TF's own
InvalidArgumentError, or a result that is not finite: TF's CPU Cholesky gives NaN). Inside
tf.function they give NaN: each matrix without an answer (NaN/inf in it, or for inverses and
solves a zero determinant, read from one more LU through ``slogdet``) is replaced by the identity
before TF's kernel sees it, which would otherwise fail the whole graph.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import tensorflow as tf

from arraylayer.errors import linalg_error
from arraylayer.kernels.tensorflow import statistical
from arraylayer.kernels.tensorflow._common import BOOL, FLOAT32, broadcast_batch, is_half, positive_axis, via_int16
from arraylayer.kernels.tensorflow._high_rank import select
from arraylayer.kernels.tensorflow.elementwise import multiply
from arraylayer.kernels.tensorflow.manipulation import broadcast_arrays
from arraylayer.kernels.tensorflow.statistical import root

_INT32 = tf.int32
_INT64 = tf.int64

# dtype -> (dtype TF multiplies matrices in, whether to bitcast rather than cast there).
_MATMUL_VIA: dict[Any, tuple[Any, bool]] = {
    tf.bool: (_INT32, False), tf.int8: (_INT32, False), tf.int16: (_INT32, False),
    tf.uint8: (_INT32, False), tf.uint16: (_INT32, False), tf.uint32: (_INT32, True),
    tf.uint64: (_INT64, True),
}


def _widened(product: Any, x1: Any, x2: Any, *args: Any) -> Any:
    """``product(x1, x2, *args)`` in a dtype TF has a kernel for, back in the input dtype."""
    dtype = x1.dtype
    if dtype.is_floating or dtype.is_complex or dtype is _INT32 or dtype is _INT64:
        return product(x1, x2, *args)
    wide, bits = _MATMUL_VIA[dtype]
    convert = tf.bitcast if bits else tf.cast
    result = product(convert(x1, wide), convert(x2, wide), *args)
    if dtype is BOOL:
        return tf.math.not_equal(result, 0)
    return convert(result, dtype)


# -- linear_algebra --------------------------------------------------------------------------
def matmul(x1: Any, x2: Any, /) -> Any:
    """NumPy's matmul: a 1-d operand is a row (first) or column (second) vector, removed after."""
    drop = []
    if x1.shape.rank == 1:
        x1, drop = x1[None, :], [-2]
    if x2.shape.rank == 1:
        x2, drop = x2[:, None], [*drop, -1]
    result = _widened(tf.linalg.matmul, x1, x2)
    return tf.squeeze(result, drop) if drop else result


def matrix_transpose(x: Any, /) -> Any:
    return tf.linalg.matrix_transpose(x)


def tensordot(x1: Any, x2: Any, /, *, axes: Any = 2) -> Any:
    return _widened(tf.tensordot, x1, x2, axes)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """``sum(conj(x1) * x2)`` over ``axis`` after broadcasting; bool is ``any(x1 & x2)``."""
    if x1.dtype is BOOL:
        return tf.math.reduce_any(tf.math.logical_and(x1, x2), axis)
    if x1.dtype.is_complex:
        x1 = tf.math.conj(x1)
    return tf.math.reduce_sum(tf.math.multiply(x1, x2), axis)


# -- linalg ----------------------------------------------------------------------------------
def _work(x: Any) -> Any:
    """``x`` in a dtype TF decomposes: float16/bfloat16 as float32."""
    return tf.cast(x, FLOAT32) if is_half(x.dtype) else x


def _decomposable(x: Any) -> Any:
    """``x`` itself; TypeError for float16/bfloat16, which TF cannot decompose. Computing them in
    float32 would not be exact, so they are declared unsupported (as on torch) and the api layer
    raises before reaching here."""
    if is_half(x.dtype):
        raise TypeError(f"TensorFlow has no {x.dtype.name} decomposition kernels.")
    return x


def _back(result: Any, dtype: Any) -> Any:
    return result if result.dtype is dtype else tf.cast(result, dtype)


def _real_dtype(dtype: Any) -> Any:
    return dtype.real_dtype if dtype.is_complex else dtype


def _per_matrix(finite: Any, rank: int) -> Any:
    """A per-matrix flag shaped to select over results of ``rank`` dimensions."""
    return tf.reshape(finite, tf.concat([tf.shape(finite), tf.ones([rank - finite.shape.rank], tf.int32)], 0))


def _nan_where_not(ok: Any, result: Any) -> Any:
    ok = _per_matrix(ok, result.shape.rank)
    if result.dtype.is_floating or result.dtype.is_complex:
        return select(ok, result, tf.constant(math.nan, result.dtype))
    return select(ok, result, tf.constant(-1, result.dtype))


def _stand_in(ok: Any, x: Any) -> Any:
    """``x`` with each matrix that is not ``ok`` replaced by the identity (which TF factorises)."""
    eye = tf.eye(tf.shape(x)[-2], tf.shape(x)[-1], dtype=x.dtype)
    return select(_per_matrix(ok, x.shape.rank), x, eye)


def _all_finite(*arrays: Any) -> bool:
    """Whether every value is finite, eagerly: read on the host through NumPy for CPU tensors
    (one TF operation costs more than the whole check there), else one reduction and one sync."""
    for a in arrays:
        if a.device.endswith("CPU:0"):
            if not np.isfinite(a.numpy()).all():
                return False
        elif not bool(tf.math.reduce_all(tf.math.is_finite(tf.math.abs(a) if a.dtype.is_complex else a))):
            return False
    return True


def _finite(x: Any) -> Any:
    return tf.math.reduce_all(tf.math.is_finite(tf.math.abs(x) if x.dtype.is_complex else x), axis=[-2, -1])


def _decomposed(name: str, x: Any, fn: Any) -> tuple[Any, ...]:
    """``fn(x)`` as a tuple: eagerly LinAlgError when ``x`` holds NaN or inf; in a graph, NaN
    (``-1`` for integer results) for each matrix that does, computed from the identity instead."""
    x = _decomposable(x)
    if tf.executing_eagerly():
        if not _all_finite(x):
            raise linalg_error(name, "not_finite")
        result = fn(x)
        return tuple(result) if isinstance(result, (tuple, list)) else (result,)
    finite = _finite(x)
    result = fn(_stand_in(finite, x))
    return tuple(_nan_where_not(finite, r) for r in (tuple(result) if isinstance(result, (tuple, list)) else (result,)))


def _answer(name: str, problem: str, fn: Any, core: int, x: Any, *rest: Any) -> Any:
    """``fn(x, *rest)`` for an inverse, solve or Cholesky factor (over ``core`` result dimensions).
    Eagerly: LinAlgError naming ``problem`` when TF fails or the result is not finite. In a graph:
    singular or non-finite matrices replaced by the identity first, and NaN for them."""
    if tf.executing_eagerly():
        try:
            result = fn(x, *rest)
            if _all_finite(result):
                return result
        except tf.errors.InvalidArgumentError:
            pass
        raise linalg_error(name, problem if _all_finite(x, *rest) else "not_finite") from None
    ok = _finite(x)
    if problem == "singular":  # TF's inverse and solve fail the graph on a zero determinant
        ok = tf.math.logical_and(ok, tf.math.is_finite(tf.linalg.slogdet(_stand_in(ok, x))[1]))
    result = fn(_stand_in(ok, x), *rest)
    finite = tf.math.reduce_all(tf.math.is_finite(tf.math.abs(result) if result.dtype.is_complex else result),
                                axis=list(range(-core, 0)))
    return _nan_where_not(tf.math.logical_and(ok, finite), result)


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    lower = _decomposed("cholesky", x, lambda a: _answer("cholesky", "not_positive_definite", tf.linalg.cholesky, 2, a))[0]
    return _back(tf.linalg.adjoint(lower) if upper else lower, x.dtype)


def det(x: Any, /) -> Any:
    return _back(tf.linalg.det(_decomposable(x)), x.dtype)


def inv(x: Any, /, *, name: str = "inv") -> Any:
    return _back(_answer(name, "singular", tf.linalg.inv, 2, _decomposable(x)), x.dtype)


def slogdet(x: Any, /) -> tuple[Any, Any]:
    """(sign, log|det|); TF gives log|det| in the input dtype, complex for complex input."""
    sign, log_abs = tf.linalg.slogdet(_decomposable(x))
    return _back(sign, x.dtype), _back(tf.math.real(log_abs), _real_dtype(x.dtype))


def eigh(x: Any, /) -> tuple[Any, Any]:
    """Ascending eigenvalues (real, where TF keeps the complex dtype) and eigenvectors."""
    values, vectors = _decomposed("eigh", x, tf.linalg.eigh)
    return _back(tf.math.real(values), _real_dtype(x.dtype)), _back(vectors, x.dtype)


def eigvalsh(x: Any, /) -> Any:
    return _back(tf.math.real(_decomposed("eigvalsh", x, tf.linalg.eigvalsh)[0]), _real_dtype(x.dtype))


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    q, r = _decomposed("qr", x, lambda a: tf.linalg.qr(a, full_matrices=mode == "complete"))
    return _back(q, x.dtype), _back(r, x.dtype)


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    """(U, S, Vh) with ``x = U @ diag(S) @ Vh``; TF returns (S, U, V)."""
    s, u, v = _decomposed("svd", x, lambda a: tf.linalg.svd(a, full_matrices=full_matrices))
    dtype = x.dtype
    return _back(u, dtype), _back(s, _real_dtype(dtype)), _back(tf.linalg.adjoint(v), dtype)


def svdvals(x: Any, /) -> Any:
    return _back(_decomposed("svdvals", x, lambda a: tf.linalg.svd(a, compute_uv=False))[0], _real_dtype(x.dtype))


def solve(x1: Any, x2: Any, /) -> Any:
    """NumPy 2: ``x2`` is a vector only when 1-d, else a stack of matrices; batch axes broadcast."""
    vector = x2.shape.rank == 1
    if vector:
        x2 = x2[:, None]
    a, b = broadcast_batch(_decomposable(x1), _decomposable(x2), 2)  # TF's solve does not broadcast
    result = _answer("solve", "singular", tf.linalg.solve, 2, a, b)
    return _back(result[..., 0] if vector else result, x1.dtype)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """``V diag(1/s) U^H`` over the singular values above ``rtol * max(s)`` (default
    ``max(M, N) * eps``); TF's own pinv has no complex kernel."""
    work = _decomposable(x)
    s, u, v = _decomposed("pinv", work, lambda a: tf.linalg.svd(a, full_matrices=False))
    cutoff = _tolerance(s, work, rtol)
    inverse = select(s > cutoff, tf.math.reciprocal(s), 0.0)
    scaled = tf.math.multiply(tf.cast(inverse, work.dtype)[..., :, None], tf.linalg.adjoint(u))
    return _back(tf.linalg.matmul(v, scaled), x.dtype)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    work = _decomposable(x)
    s = _decomposed("matrix_rank", work, lambda a: tf.linalg.svd(a, compute_uv=False))[0]
    rank = tf.math.count_nonzero(s > _tolerance(s, work, rtol), axis=-1)
    return select(tf.math.is_nan(s[..., 0]), tf.constant(-1, rank.dtype), rank) if s.shape[-1] != 0 else rank


def _tolerance(s: Any, x: Any, rtol: Any) -> Any:
    """``rtol * largest singular value`` for each matrix; ``rtol`` defaults to ``max(M, N) * eps``."""
    if rtol is None:
        rows, cols = x.shape[-2], x.shape[-1]
        if rows is None or cols is None:
            rtol = tf.cast(tf.reduce_max(tf.shape(x)[-2:]), s.dtype) * _EPS[s.dtype]
        else:
            rtol = float(max(rows, cols)) * _EPS[s.dtype]
    elif not isinstance(rtol, (int, float)):
        rtol = tf.cast(rtol, s.dtype)[..., None]
    return tf.math.multiply(tf.math.reduce_max(s, axis=-1, keepdims=True), rtol)


_EPS: dict[Any, float] = {tf.float32: 2.0 ** -23, tf.float64: 2.0 ** -52}


def matrix_power(x: Any, n: int, /) -> Any:
    """Binary powering with :func:`matmul` (integers too); negative ``n`` inverts first."""
    if n == 0:
        return tf.broadcast_to(tf.eye(tf.shape(x)[-1], dtype=x.dtype), tf.shape(x))
    if n < 0:
        x, n = inv(x, name="matrix_power"), -n
    result = None
    while True:
        if n & 1:
            result = x if result is None else matmul(result, x)
        n >>= 1
        if not n:
            return result
        x = matmul(x, x)


def outer(x1: Any, x2: Any, /) -> Any:
    return multiply(x1[:, None], x2[None, :])


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The 3-vector cross product along ``axis`` after broadcasting, for every numeric dtype."""
    x1, x2 = broadcast_arrays(x1, x2)
    axis = positive_axis(axis, x1.shape.rank)
    a0, a1, a2 = tf.unstack(x1, 3, axis)
    b0, b1, b2 = tf.unstack(x2, 3, axis)
    return tf.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """TF rejects an offset outside the matrix; NumPy returns the empty diagonal."""
    rows, cols = x.shape[-2], x.shape[-1]
    if (cols is not None and offset >= max(cols, 1)) or (rows is not None and -offset >= max(rows, 1)):
        return tf.zeros(tf.concat([tf.shape(x)[:-2], [0]], 0), x.dtype)
    return via_int16(tf.linalg.diag_part, x, k=offset)


def trace(x: Any, /, *, offset: int = 0, dtype: Any) -> Any:
    return statistical.sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """``(sum |x|**ord)**(1/ord)``, with max/min for +-inf and the nonzero count for 0;
    float16/bfloat16 in float32 (squares of half values overflow early)."""
    dtype = _real_dtype(x.dtype)
    a = tf.math.abs(_work(x))
    if ord == 2:
        result = root(tf.math.reduce_sum(tf.math.square(a), axis, keepdims))  # gradient 0 at zeros
    elif ord == 1:
        result = tf.math.reduce_sum(a, axis, keepdims)
    elif ord == math.inf:
        result = tf.math.reduce_max(a, axis, keepdims)
    elif ord == -math.inf:
        result = tf.math.reduce_min(a, axis, keepdims)
    elif ord == 0:
        result = tf.cast(tf.math.count_nonzero(a, axis, keepdims), a.dtype)
    else:
        result = tf.math.pow(tf.math.reduce_sum(tf.math.pow(a, ord), axis, keepdims), 1.0 / ord)
    return _back(result, dtype)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    dtype = _real_dtype(x.dtype)
    work = _work(x)
    result = _MATRIX_NORMS[ord](work)
    if keepdims:
        result = result[..., None, None]
    return _back(result, dtype)


def _sum_abs(x: Any, axis: int) -> Any:
    return tf.math.reduce_sum(tf.math.abs(x), axis)


_MATRIX_NORMS: dict[Any, Any] = {
    "fro": lambda x: root(tf.math.reduce_sum(tf.math.square(tf.math.abs(x)), [-2, -1])),
    "nuc": lambda x: tf.math.reduce_sum(tf.linalg.svd(x, compute_uv=False), -1),
    2: lambda x: tf.math.reduce_max(tf.linalg.svd(x, compute_uv=False), -1),
    -2: lambda x: tf.math.reduce_min(tf.linalg.svd(x, compute_uv=False), -1),
    1: lambda x: tf.math.reduce_max(_sum_abs(x, -2), -1),
    -1: lambda x: tf.math.reduce_min(_sum_abs(x, -2), -1),
    math.inf: lambda x: tf.math.reduce_max(_sum_abs(x, -1), -1),
    -math.inf: lambda x: tf.math.reduce_min(_sum_abs(x, -1), -1),
}


def eig(x: Any, /) -> tuple[Any, Any]:
    return _decomposed("eig", x, tf.linalg.eig)  # type: ignore[return-value]


def eigvals(x: Any, /) -> Any:
    return _decomposed("eigvals", x, tf.linalg.eigvals)[0]
