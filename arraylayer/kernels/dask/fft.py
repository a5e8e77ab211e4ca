"""The fft extension's kernels: ``dask.array.fft``'s, with the transformed axes made one chunk each.

dask transforms chunks that hold the transformed axes whole, so those axes are rechunked first
(lazily). The kernels themselves are built by ``kernels/numpy_fft.py``, as NumPy's and JAX's are
(float16/bfloat16 refused: declared unsupported).
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import dask.array as da

from arraylayer.kernels.names import KERNEL_NAMES
from arraylayer.kernels.numpy_fft import fft_kernels
from arraylayer.kernels.dask._lazy import is_half, whole_axes


def _on_whole_axes(name: str) -> Callable[..., Any]:
    """``dask.array.fft.<name>`` on x with the transformed axes rechunked to one chunk each."""
    transform = getattr(da.fft, name)

    def rechunked(x: Any, *, axis: int | None = None, axes: Any = None, **kwargs: Any) -> Any:
        if axis is not None:
            return transform(whole_axes(x, (axis,)), axis=axis, **kwargs)
        axes = tuple(range(x.ndim)) if axes is None else tuple(axes)
        return transform(whole_axes(x, axes), axes=axes, **kwargs)

    rechunked.__name__ = name
    return rechunked


_KERNELS = fft_kernels(SimpleNamespace(**{n: _on_whole_axes(n) for n in KERNEL_NAMES["fft"]}), is_half,
                       "dask.array.fft")
fft, ifft, rfft, irfft, hfft, ihfft = (_KERNELS[n] for n in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
fftn, ifftn, rfftn, irfftn = (_KERNELS[n] for n in ("fftn", "ifftn", "rfftn", "irfftn"))
