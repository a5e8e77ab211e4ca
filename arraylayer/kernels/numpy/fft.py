"""The fft extension's kernels: np.fft's own functions, which keep single precision
(complex64 in, complex64 out; float32 rfft input gives complex64). The api layer passes
non-negative axes, lengths or None, and a valid norm; float16/bfloat16 are declared unsupported."""

from __future__ import annotations

from typing import Any

import numpy as np


def _one(transform: Any) -> Any:
    def kernel(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
        return transform(x, n=n, axis=axis, norm=norm)

    kernel.__name__ = transform.__name__
    return kernel


def _many(transform: Any) -> Any:
    def kernel(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
        return transform(x, s=s, axes=axes, norm=norm)

    kernel.__name__ = transform.__name__
    return kernel


fft, ifft, rfft, irfft, hfft, ihfft = (_one(f) for f in (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft,
                                                          np.fft.hfft, np.fft.ihfft))
fftn, ifftn, rfftn, irfftn = (_many(f) for f in (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn))
