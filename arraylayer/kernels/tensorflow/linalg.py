"""Linear algebra kernels (the ``linear_algebra`` category and the ``linalg`` extension).

TF's matmul has no kernel for bool, int8, int16 and unsigned integers: those multiply in
int32/int64 (or through the same-width signed bits) and cast back, which is exact since
integer products and sums are taken modulo 2**bits either way. TF's decompositions have
no float16/bfloat16 kernels: those compute in float32 and round the result once.
``pinv`` (no complex kernel in TF) and ``cross`` (no complex, no axis) are built here.
"""

from __future__ import annotations

import math
from typing import Any

import tensorflow as tf

from . import statistical
from ._common import BOOL, FLOAT32, broadcast_batch, is_half, positive_axis, via_int16
from .elementwise import multiply
from .manipulation import broadcast_arrays
from .statistical import root

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


def cholesky(x: Any, /, *, upper: bool = False) -> Any:
    lower = tf.linalg.cholesky(_decomposable(x))
    return _back(tf.linalg.adjoint(lower) if upper else lower, x.dtype)


def det(x: Any, /) -> Any:
    return _back(tf.linalg.det(_decomposable(x)), x.dtype)


def inv(x: Any, /) -> Any:
    return _back(tf.linalg.inv(_decomposable(x)), x.dtype)


def slogdet(x: Any, /) -> tuple[Any, Any]:
    """(sign, log|det|); TF gives log|det| in the input dtype, complex for complex input."""
    sign, log_abs = tf.linalg.slogdet(_decomposable(x))
    return _back(sign, x.dtype), _back(tf.math.real(log_abs), _real_dtype(x.dtype))


def eigh(x: Any, /) -> tuple[Any, Any]:
    """Ascending eigenvalues (real, where TF keeps the complex dtype) and eigenvectors."""
    values, vectors = tf.linalg.eigh(_decomposable(x))
    return _back(tf.math.real(values), _real_dtype(x.dtype)), _back(vectors, x.dtype)


def eigvalsh(x: Any, /) -> Any:
    return _back(tf.math.real(tf.linalg.eigvalsh(_decomposable(x))), _real_dtype(x.dtype))


def qr(x: Any, /, *, mode: str = "reduced") -> tuple[Any, Any]:
    q, r = tf.linalg.qr(_decomposable(x), full_matrices=mode == "complete")
    return _back(q, x.dtype), _back(r, x.dtype)


def svd(x: Any, /, *, full_matrices: bool = True) -> tuple[Any, Any, Any]:
    """(U, S, Vh) with ``x = U @ diag(S) @ Vh``; TF returns (S, U, V)."""
    s, u, v = tf.linalg.svd(_decomposable(x), full_matrices=full_matrices)
    dtype = x.dtype
    return _back(u, dtype), _back(s, _real_dtype(dtype)), _back(tf.linalg.adjoint(v), dtype)


def svdvals(x: Any, /) -> Any:
    return _back(tf.linalg.svd(_decomposable(x), compute_uv=False), _real_dtype(x.dtype))


def solve(x1: Any, x2: Any, /) -> Any:
    """NumPy 2: ``x2`` is a vector only when 1-d, else a stack of matrices; batch axes broadcast."""
    vector = x2.shape.rank == 1
    if vector:
        x2 = x2[:, None]
    a, b = broadcast_batch(_decomposable(x1), _decomposable(x2), 2)  # TF's solve does not broadcast
    result = tf.linalg.solve(a, b)
    return _back(result[..., 0] if vector else result, x1.dtype)


def pinv(x: Any, /, *, rtol: Any = None) -> Any:
    """``V diag(1/s) U^H`` over the singular values above ``rtol * max(s)`` (default
    ``max(M, N) * eps``); TF's own pinv has no complex kernel."""
    work = _decomposable(x)
    s, u, v = tf.linalg.svd(work, full_matrices=False)
    cutoff = _tolerance(s, work, rtol)
    inverse = tf.where(s > cutoff, tf.math.reciprocal(s), 0.0)
    scaled = tf.math.multiply(tf.cast(inverse, work.dtype)[..., :, None], tf.linalg.adjoint(u))
    return _back(tf.linalg.matmul(v, scaled), x.dtype)


def matrix_rank(x: Any, /, *, rtol: Any = None) -> Any:
    work = _decomposable(x)
    s = tf.linalg.svd(work, compute_uv=False)
    return tf.math.count_nonzero(s > _tolerance(s, work, rtol), axis=-1)


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
        x, n = inv(x), -n
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
    return tuple(tf.linalg.eig(_decomposable(x)))


def eigvals(x: Any, /) -> Any:
    return tf.linalg.eigvals(_decomposable(x))
