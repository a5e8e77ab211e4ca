"""The fft extension's kernels: np.fft's own functions (see arraylayer/kernels/numpy_fft.py)."""

from __future__ import annotations

import numpy as np

from arraylayer.kernels.numpy_fft import fft_kernels
from arraylayer.kernels.numpy._common import is_half

_KERNELS = fft_kernels(np.fft, is_half, "np.fft")
fft, ifft, rfft, irfft, hfft, ihfft = (_KERNELS[n] for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_KERNELS[n] for n in ("fftn", "ifftn", "rfftn", "irfftn"))
