"""The fft extension's kernels: jnp.fft's own functions (see arraylayer/kernels/numpy_fft.py)."""

from __future__ import annotations

import jax.numpy as jnp

from arraylayer.kernels.numpy_fft import fft_kernels
from arraylayer.kernels.jax._common import HALF

_KERNELS = fft_kernels(jnp.fft, HALF.__contains__, "jnp.fft")
fft, ifft, rfft, irfft, hfft, ihfft = (_KERNELS[n] for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_KERNELS[n] for n in ("fftn", "ifftn", "rfftn", "irfftn"))
