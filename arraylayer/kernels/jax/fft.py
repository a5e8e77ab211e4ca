"""The fft extension's kernels: jnp.fft's own functions, which keep single precision
(complex64 in, complex64 out; float32 rfft input gives complex64). The api layer passes
non-negative axes, lengths or None, and a valid norm; float16/bfloat16 are declared unsupported and
refused here (the framework would widen them silently)."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from ._common import HALF


def _no_half(x: Any) -> Any:
    if x.dtype in HALF:
        raise TypeError(f"jnp.fft would widen {x.dtype}; no complex dtype of half precision holds the result.")
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


fft, ifft, rfft, irfft, hfft, ihfft = (_one(f) for f in (jnp.fft.fft, jnp.fft.ifft, jnp.fft.rfft, jnp.fft.irfft,
                                                          jnp.fft.hfft, jnp.fft.ihfft))
fftn, ifftn, rfftn, irfftn = (_many(f) for f in (jnp.fft.fftn, jnp.fft.ifftn, jnp.fft.rfftn, jnp.fft.irfftn))
