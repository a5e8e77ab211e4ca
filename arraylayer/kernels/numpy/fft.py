"""The fft extension's kernels: np.fft's own functions, which keep single precision
(complex64 in, complex64 out; float32 rfft input gives complex64). The api layer passes
non-negative axes, lengths or None, and a valid norm; float16/bfloat16 are declared unsupported and
refused here (the framework would widen them silently)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._common import is_half


def _no_half(x: Any) -> Any:
    if is_half(x.dtype):
        raise TypeError(f"np.fft would widen {x.dtype}; no complex dtype of half precision holds the result.")
    return x


def _one(transform: Any) -> Any:
    def kernel(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
        return transform(_no_half(x), n=n, axis=axis, norm=norm)

    kernel.__name__ = transform.__name__
    return kernel


def _many(transform: Any) -> Any:
    def kernel(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
        return transform(_no_half(x), s=s, axes=axes, norm=norm)

    kernel.__name__ = transform.__name__
    return kernel


fft, ifft, rfft, irfft, hfft, ihfft = (_one(f) for f in (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft,
                                                          np.fft.hfft, np.fft.ihfft))
fftn, ifftn, rfftn, irfftn = (_many(f) for f in (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn))
