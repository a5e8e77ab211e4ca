"""The fft extension's kernels: torch.fft's own functions (``dim`` for ``axis``), which keep single
precision. The api layer passes non-negative axes, lengths or None, and a valid norm;
float16/bfloat16 are declared unsupported (torch computes half precision on CUDA only)."""

from __future__ import annotations

from typing import Any

import torch


def _one(transform: Any) -> Any:
    def kernel(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
        return transform(x, n=n, dim=axis, norm=norm)

    kernel.__name__ = transform.__name__
    return kernel


def _many(transform: Any) -> Any:
    def kernel(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
        if not axes:  # torch reads an empty dim as "every axis"; the transform over no axes is x
            return x.clone()
        return transform(x, s=s, dim=axes, norm=norm)

    kernel.__name__ = transform.__name__
    return kernel


fft, ifft, rfft, irfft, hfft, ihfft = (_one(f) for f in (torch.fft.fft, torch.fft.ifft, torch.fft.rfft,
                                                          torch.fft.irfft, torch.fft.hfft, torch.fft.ihfft))
fftn, ifftn, rfftn, irfftn = (_many(f) for f in (torch.fft.fftn, torch.fft.ifftn, torch.fft.rfftn,
                                                  torch.fft.irfftn))
