"""NumPy kernels of arraylayer.nn: erf, 2-d convolution and pooling with sliding windows.

The api layer (arraylayer/nn.py) hands over inputs of one floating dtype, explicit
``((top, bottom), (left, right))`` padding and int pairs for stride, dilation and window;
``channels_last`` says whether the layout is NHWC (kernel HWIO) or NCHW (kernel OIHW).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

try:  # SciPy's erf is vectorised; math.erf element by element is the exact fallback
    from scipy.special import erf as _scipy_erf
except ImportError:  # pragma: no cover - scipy is installed with the clients extra
    _scipy_erf = None

_math_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x: Any) -> Any:
    wide = x.astype(np.float64)
    result = _scipy_erf(wide) if _scipy_erf is not None else _math_erf(wide).astype(np.float64)
    return np.asarray(result).astype(x.dtype)


def _nhwc(x: Any, channels_last: bool) -> Any:
    return x if channels_last else np.moveaxis(x, 1, -1)


def _back(y: Any, channels_last: bool) -> Any:
    return y if channels_last else np.moveaxis(y, -1, 1)


def _windows(x: Any, window: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int]) -> Any:
    """(N, H_out, W_out, C, kh, kw) views of the NHWC ``x`` (already padded)."""
    span = ((window[0] - 1) * dilation[0] + 1, (window[1] - 1) * dilation[1] + 1)
    views = sliding_window_view(x, span, axis=(1, 2))
    return views[:, ::stride[0], ::stride[1], :, ::dilation[0], ::dilation[1]]


def _pad(x: Any, padding: Any, value: float) -> Any:
    return np.pad(x, ((0, 0), padding[0], padding[1], (0, 0)), constant_values=value)


def conv2d(x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, channels_last: bool) -> Any:
    hwio = kernel if channels_last else np.transpose(kernel, (2, 3, 1, 0))
    windows = _windows(_pad(_nhwc(x, channels_last), padding, 0), hwio.shape[:2], stride, dilation)
    wide = np.float32 if x.dtype.itemsize < 4 else x.dtype  # half precision accumulates in float32
    out = np.tensordot(windows.astype(wide, copy=False), hwio.astype(wide, copy=False), axes=((3, 4, 5), (2, 0, 1)))
    return _back(out.astype(x.dtype, copy=False), channels_last)


def max_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    windows = _windows(_pad(_nhwc(x, channels_last), padding, -np.inf), window, stride, (1, 1))
    return _back(windows.max(axis=(-2, -1)), channels_last)


def sum_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    windows = _windows(_pad(_nhwc(x, channels_last), padding, 0), window, stride, (1, 1))
    return _back(windows.sum(axis=(-2, -1), dtype=x.dtype), channels_last)
