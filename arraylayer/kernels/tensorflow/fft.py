"""The fft extension's kernels on TensorFlow.

``tf.signal`` transforms only the innermost axis (or 2/3 innermost axes), of complex64/complex128
(``rfft``/``irfft``: float32/float64), unnormalised forward and scaled by 1/n backward, and takes no
``n``. Every kernel here is built from the innermost one-axis transforms, exactly: the transformed
axis is moved innermost and back (a transpose, no arithmetic), cropped or zero-padded to ``n``, and
scaled for ``norm``. An n-dimensional transform is the one-axis transforms applied axis by axis
(the DFT is separable), ``hfft``/``ihfft`` are ``irfft``/``rfft`` of the conjugate with the norm
mirrored. The api layer passes non-negative axes, lengths or None and a valid norm.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

import tensorflow as tf

# norm -> scale of a forward transform of length n. An inverse one is scaled by 1 / n / that, and
# TF's inverse already divides by n: it is multiplied by 1 / that.
_FORWARD_SCALE: Final[dict[str, Callable[[int], float]]] = {
    "backward": lambda n: 1.0, "ortho": lambda n: 1.0 / math.sqrt(n), "forward": lambda n: 1.0 / n,
}
_MIRRORED: Final = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _scaled(x: Any, n: int, norm: str, inverse: bool) -> Any:
    scale = _FORWARD_SCALE[norm](n)
    if inverse:
        scale = 1.0 / scale
    return x if scale == 1.0 else x * tf.constant(scale, dtype=x.dtype)  # not tf.cast: float32 first


def _innermost(x: Any, axis: int, transform: Callable[[Any], Any]) -> Any:
    """``transform`` (an innermost-axis function) applied along ``axis``; TypeError for float16 and
    bfloat16 (declared unsupported: no complex dtype of half precision holds the result)."""
    if x.dtype in (tf.float16, tf.bfloat16):
        raise TypeError(f"tf.signal has no {x.dtype.name} transforms; wider work would change the result dtype.")
    rank = len(x.shape)
    if axis == rank - 1:
        return transform(x)
    perm = [*range(axis), *range(axis + 1, rank), axis]
    moved = transform(tf.transpose(x, perm))
    inverse = [0] * rank
    for i, p in enumerate(perm):
        inverse[p] = i
    return tf.transpose(moved, inverse)


def _resized(x: Any, n: int) -> Any:
    """x cropped or zero-padded to length ``n`` along its innermost axis."""
    m = x.shape[-1]
    if n < m:
        return x[..., :n]
    if n > m:
        return tf.pad(x, [[0, 0]] * (len(x.shape) - 1) + [[0, n - m]])
    return x


def _complex(x: Any, n: int | None, axis: int, norm: str, inverse: bool) -> Any:
    n = x.shape[axis] if n is None else n
    transform = tf.signal.ifft if inverse else tf.signal.fft
    result = _innermost(x, axis, lambda y: transform(_resized(y, n)))
    return _scaled(result, n, norm, inverse)


def _real_forward(x: Any, n: int | None, axis: int, norm: str) -> Any:
    n = x.shape[axis] if n is None else n
    complex_dtype = tf.complex128 if x.dtype == tf.float64 else tf.complex64
    result = _innermost(x, axis, lambda y: tf.signal.rfft(_resized(y, n), fft_length=[n]))
    return _scaled(tf.cast(result, complex_dtype), n, norm, False)


def _real_inverse(x: Any, n: int | None, axis: int, norm: str) -> Any:
    n = 2 * (x.shape[axis] - 1) if n is None else n
    if n < 1:
        raise ValueError(f"irfft: the output length {n} is not positive (pass n).")
    result = _innermost(x, axis, lambda y: tf.signal.irfft(_resized(y, n // 2 + 1), fft_length=[n]))
    return _scaled(result, n, norm, True)


def fft(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
    return _complex(x, n, axis, norm, False)


def ifft(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
    return _complex(x, n, axis, norm, True)


def rfft(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
    return _real_forward(x, n, axis, norm)


def irfft(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
    return _real_inverse(x, n, axis, norm)


def hfft(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
    return _real_inverse(tf.math.conj(x), n, axis, _MIRRORED[norm])


def ihfft(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
    return tf.math.conj(_real_forward(x, n, axis, _MIRRORED[norm]))


def _lengths(s: tuple[int, ...] | None, axes: tuple[int, ...]) -> tuple[int | None, ...]:
    return (None,) * len(axes) if s is None else s


def _complex_n(x: Any, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str, inverse: bool) -> Any:
    for n, axis in zip(_lengths(s, axes), axes, strict=True):
        x = _complex(x, n, axis, norm, inverse)
    return tf.identity(x)


def fftn(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
    return _complex_n(x, s, axes, norm, False)


def ifftn(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
    return _complex_n(x, s, axes, norm, True)


def rfftn(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
    """rfft over the last of ``axes``, then the complex transform over the others."""
    lengths = _lengths(s, axes)
    x = _real_forward(x, lengths[-1], axes[-1], norm)
    return _complex_n(x, None if s is None else s[:-1], axes[:-1], norm, False)


def irfftn(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
    """The inverse complex transform over all but the last of ``axes``, then irfft over that one."""
    lengths = _lengths(s, axes)
    x = _complex_n(x, None if s is None else s[:-1], axes[:-1], norm, True)
    return _real_inverse(x, lengths[-1], axes[-1], norm)
