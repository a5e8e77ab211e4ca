"""``stft`` and ``istft``: keras.ops' short-time Fourier transform and its inverse, composed of
arraylayer's ``pad``, ``take``, ``rfft``/``irfft`` (so lazy on dask and differentiable).

Frames of ``sequence_length`` samples every ``sequence_stride`` samples are multiplied by the
window (zero-padded at both ends to ``fft_length``) and transformed by ``rfft(n=fft_length)``;
``center=True`` first pads the signal by fft_length // 2 on each side by reflection. The result is
one complex array (..., frames, fft_length // 2 + 1) in the complex dtype of x's float dtype:
keras.ops.stft returns its real and imaginary parts as a pair, which is ``(real(y), imag(y))``.
``istft`` inverts it by weighted overlap-add (divided by the overlapped squared window), and also
accepts keras' ``(real, imag)`` pair.
"""

from __future__ import annotations

import math
from typing import Any

from arraylayer import arguments
from arraylayer.api import creation, elementwise, extensions, fft, indexing, manipulation
from arraylayer.api.dispatch import array_input
from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError
from arraylayer.models.nn.common import _creating_on, _device

Array = Any
Window = str | Array | None

#: periodic windows (SciPy's ``get_window(name, n)``, fftbins=True): cosine-sum coefficients
_WINDOWS: dict[str, tuple[float, float]] = {"hann": (0.5, 0.5), "hamming": (0.54, 0.46)}
_REAL: dict[str, str] = {"complex64": "float32", "complex128": "float64"}


def _lengths(sequence_length: Any, sequence_stride: Any, fft_length: Any, name: str) -> tuple[int, int, int]:
    length = arguments.integer(sequence_length, "sequence_length")
    stride = arguments.integer(sequence_stride, "sequence_stride")
    n = arguments.integer(fft_length, "fft_length")
    if length < 1 or stride < 1 or n < length:
        raise InvalidArgumentError(f"{name}: sequence_length and sequence_stride must be positive and fft_length >= "
                                   f"sequence_length; got {length}, {stride} and {n}.")
    return length, stride, n


def _window(window: Window, length: int, n: int, like: Array, dtype: Dtype, name: str) -> tuple[Array, list[float]]:
    """The window padded to ``n`` (an array of ``dtype`` beside ``like``) and its values as floats."""
    if window is None:
        values = [1.0] * length
    elif isinstance(window, str):
        if window not in _WINDOWS:
            raise InvalidArgumentError(f"{name}: window={window!r}; choose one of {', '.join(_WINDOWS)}, an array of "
                                       f"sequence_length values, or None.")
        a, b = _WINDOWS[window]
        values = [a - b * math.cos(2.0 * math.pi * i / length) for i in range(length)]
    else:
        import numpy as np

        from arraylayer.api.interchange import to_backend

        values = np.asarray(to_backend(window, "numpy"), dtype=np.float64).tolist()
        if not isinstance(values, list) or len(values) != length:
            raise InvalidArgumentError(f"{name}: the window must be 1-d of length sequence_length={length}.")
    left = (n - length) // 2
    padded = [0.0] * left + values + [0.0] * (n - length - left)
    with _creating_on(like):
        return creation.asarray(padded, dtype=dtype, device=_device(like)), padded


def _index(like: Array, rows: list[int]) -> Array:
    with _creating_on(like):
        return creation.asarray(rows, dtype="int32", device=_device(like))


def stft(x: Array, sequence_length: int, sequence_stride: int, fft_length: int, window: Window = "hann",
         center: bool = True) -> Array:
    """The short-time Fourier transform of real x (float32 or float64) along its last axis.

    Returns complex (..., frames, fft_length // 2 + 1); keras.ops.stft's ``(real, imag)`` is
    ``(arraylayer.real(y), arraylayer.imag(y))``. ``window``: "hann", "hamming" (periodic), an
    array of ``sequence_length`` values, or None (ones).
    """
    _, x, dtype = array_input(x)
    length, stride, n = _lengths(sequence_length, sequence_stride, fft_length, "stft")
    if dtype.name not in ("float32", "float64"):
        raise InvalidDtypeError(f"stft takes float32 or float64 signals; got {dtype}. Cast first, e.g. "
                                f"arraylayer.astype(x, 'float32').")
    if len(x.shape) == 0:
        raise InvalidArgumentError("stft takes a signal of rank >= 1 (time on the last axis); got a 0-d array.")
    if arguments.flag(center, "center"):
        x = extensions.pad(x, ((0, 0),) * (len(x.shape) - 1) + ((n // 2, n // 2),), mode="reflect")
    samples = x.shape[-1]
    if samples < n:
        raise InvalidArgumentError(f"stft: the signal has {samples} samples (after centring), fewer than "
                                   f"fft_length={n}; pass a longer signal or a smaller fft_length.")
    frames = 1 + (samples - n) // stride
    win, _ = _window(window, length, n, x, dtype, "stft")
    positions = _index(x, [f * stride + j for f in range(frames) for j in range(n)])
    framed = manipulation.reshape(indexing.take(x, positions, axis=-1), (*x.shape[:-1], frames, n))
    return fft.rfft(elementwise.multiply(framed, win), n=n, axis=-1)


def _overlap_add(frames: Array, stride: int) -> Array:
    """Frames (..., F, N) added at every ``stride`` samples: (..., N + stride * (F - 1))."""
    *lead, count, n = frames.shape
    pieces = -(-n // stride)
    pairs = ((0, 0),) * len(lead)
    blocks = extensions.pad(frames, pairs + ((0, 0), (0, pieces * stride - n)))
    blocks = manipulation.reshape(blocks, (*lead, count, pieces, stride))
    total = None
    for j in range(pieces):
        piece = manipulation.reshape(blocks[..., j, :], (*lead, count * stride))
        piece = extensions.pad(piece, pairs + ((j * stride, (pieces - 1 - j) * stride),))
        total = piece if total is None else elementwise.add(total, piece)
    return total[..., :n + stride * (count - 1)]


def istft(x: Array | tuple[Array, Array], sequence_length: int, sequence_stride: int, fft_length: int,
          length: int | None = None, window: Window = "hann", center: bool = True) -> Array:
    """The inverse of :func:`stft` for complex x (..., frames, fft_length // 2 + 1), or keras'
    ``(real, imag)`` pair: a real signal of ``length`` samples (default: all the frames cover,
    less the centring padding)."""
    if isinstance(x, (tuple, list)):
        if len(x) != 2:
            raise InvalidArgumentError("istft takes a complex array or a (real, imag) pair of arrays.")
        x = elementwise.add(x[0], elementwise.multiply(x[1], 1j))
    _, x, dtype = array_input(x)
    size, stride, n = _lengths(sequence_length, sequence_stride, fft_length, "istft")
    if dtype.name not in _REAL:
        raise InvalidDtypeError(f"istft takes complex64 or complex128 spectra (or a float32/float64 (real, imag) "
                                f"pair); got {dtype}.")
    if len(x.shape) < 2 or x.shape[-1] != n // 2 + 1:
        raise InvalidArgumentError(f"istft: x must have shape (..., frames, {n // 2 + 1}) for fft_length={n}; got "
                                   f"{tuple(x.shape)}.")
    real = Dtype(_REAL[dtype.name])
    win, values = _window(window, size, n, x, real, "istft")
    frames = x.shape[-2]
    signal = _overlap_add(elementwise.multiply(fft.irfft(x, n=n, axis=-1), win), stride)
    norm = [0.0] * (n + stride * (frames - 1))
    for f in range(frames):
        for j, w in enumerate(values):
            norm[f * stride + j] += w * w
    with _creating_on(x):
        scale = creation.asarray([v if v > 1e-10 else 1.0 for v in norm], dtype=real, device=_device(x))
    signal = elementwise.divide(signal, scale)
    start = n // 2 if arguments.flag(center, "center") else 0
    if length is not None:
        end = start + arguments.count(length, "length")
    else:
        end = signal.shape[-1] - (n // 2 if center else 0)
    return signal[..., start:end]

