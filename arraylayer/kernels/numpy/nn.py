"""Neural-network kernels of the NumPy backend (see arraylayer/models/nn.py): convolution and pooling
with sliding windows, erf. Padding arrives as explicit ((top, bottom), (left, right)) pairs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from arraylayer.kernels.numpy._common import is_half

_ERF: Any = None  # erf in float64, see _erf_float64


def concrete(x: Any) -> Any:
    """x's values (NumPy arrays are always concrete)."""
    return x


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)) from e = exp(-|x|): 1 / (1 + e) for x >= 0, e / (1 + e) below, so nothing
    overflows and the lower tail keeps its relative precision (half precision computed in float32).
    The branch is max(e, x >= 0) (e <= 1), not np.where: 4x faster on mixed signs."""
    wide = x.astype(np.float32) if is_half(x.dtype) else x
    e = np.exp(-np.abs(wide))
    return (np.maximum(e, wide >= 0) / (1 + e)).astype(x.dtype, copy=False)


def relu(x: Any) -> Any:
    return np.maximum(x, x.dtype.type(0))


def erf(x: Any) -> Any:
    """The error function computed in float64 (SciPy's or math.erf), rounded to x's dtype."""
    return _erf_float64()(np.asarray(x, np.float64)).astype(x.dtype)


def erfc(x: Any) -> Any:
    """1 - erf(x) computed in float64 (SciPy's or math.erfc), rounded to x's dtype."""
    return _special_float64("erfc")(np.asarray(x, np.float64)).astype(x.dtype)


def erfinv(x: Any) -> Any:
    """The inverse error function in float64 (SciPy's, or Newton steps on math.erf), rounded to x's dtype."""
    return _special_float64("erfinv")(np.asarray(x, np.float64)).astype(x.dtype)


_SPECIAL: dict[str, Any] = {}


def _erfinv_newton(y: Any) -> Any:
    """erfinv without SciPy: Giles' single-precision start refined by Newton steps on math.erf."""
    y = np.asarray(y, np.float64)
    w = -np.log(np.maximum((1.0 - y) * (1.0 + y), 1e-300))
    x = np.where(w < 5.0, y * (1.50140941 + 0.246640727 * (w - 2.5)),
                 y * (2.83297682 + 1.00167406 * (np.sqrt(w) - 3.0)))
    erf64 = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(4):
        x = x - (erf64(x) - y) / (2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    x = np.where(np.abs(y) == 1.0, np.copysign(np.inf, y), x)
    return np.where(np.abs(y) > 1.0, np.nan, x)


def _special_float64(name: str) -> Any:
    """SciPy's ``name`` when SciPy is installed, else a float64 fallback; looked up once."""
    found = _SPECIAL.get(name)
    if found is None:
        try:
            import scipy.special as special
        except ImportError:
            found = np.vectorize(math.erfc, otypes=[np.float64]) if name == "erfc" else _erfinv_newton
        else:
            found = getattr(special, name)
        _SPECIAL[name] = found
    return found


def _erf_float64() -> Any:
    """SciPy's erf when SciPy is installed (double precision as well, 35x faster per element than
    math.erf), else math.erf per element. Looked up at the first call: importing SciPy is slow."""
    global _ERF
    if _ERF is None:
        try:
            from scipy.special import erf as scipy_erf
        except ImportError:
            _ERF = np.vectorize(math.erf, otypes=[np.float64])
        else:
            _ERF = scipy_erf
    return _ERF


def _channels_last(x: Any, channels_last: bool) -> Any:
    return x if channels_last else np.moveaxis(x, 1, -1)


def _back(y: Any, channels_last: bool) -> Any:
    return y if channels_last else np.moveaxis(y, -1, 1)


def _windows(x: Any, extent: tuple[int, ...], strides: tuple[int, ...], dilation: tuple[int, ...]) -> Any:
    """(N, *out, C, *window) windows of channels-last ``x`` with any number of spatial axes."""
    n = len(extent)
    windows = sliding_window_view(x, extent, axis=tuple(range(1, n + 1)))
    steps = (slice(None), *(slice(None, None, s) for s in strides), slice(None), *(slice(None, None, d) for d in dilation))
    return windows[steps]


def conv(x: Any, kernel: Any, strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
         dilation: tuple[int, ...], channels_last: bool, groups: int = 1) -> Any:
    """N-d grouped convolution: ``kernel`` (*window, in/groups, out) channels last, (out, in/groups,
    *window) channels first."""
    n = len(strides)
    x = np.pad(_channels_last(x, channels_last), ((0, 0), *padding, (0, 0)))
    weights = kernel if channels_last else np.moveaxis(np.moveaxis(kernel, 0, -1), 0, -2)  # -> (*window, in, out)
    extent = tuple((k - 1) * d + 1 for k, d in zip(weights.shape[:n], dilation, strict=True))
    windows = _windows(x, extent, strides, dilation)
    if is_half(x.dtype):  # half precision accumulated in float32, rounded once (einsum has no bfloat16)
        windows, weights = windows.astype(np.float32), weights.astype(np.float32)
    per_group, out = weights.shape[n], weights.shape[n + 1]
    windows = windows.reshape(*windows.shape[:n + 1], groups, per_group, *windows.shape[n + 2:])
    weights = weights.reshape(*weights.shape[:n], per_group, groups, out // groups)
    space, taps = "hwd"[:n], "ijk"[:n]
    y = np.einsum(f"n{space}gc{taps},{taps}cgo->n{space}go", windows, weights, optimize=True)
    y = y.reshape(*y.shape[:n + 1], out).astype(x.dtype, copy=False)
    return _back(y, channels_last)


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    return conv(x, kernel, strides, padding, dilation, channels_last)


def _pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool,
          fill: float, reduce: Any) -> Any:
    x = np.pad(_channels_last(x, channels_last), ((0, 0), *padding, (0, 0)), constant_values=fill)
    windows = _windows(x, window, strides, (1,) * len(window))
    axes = tuple(range(-len(window), 0))
    return _back(reduce(windows, axis=axes).astype(x.dtype, copy=False), channels_last)


def max_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    return _pool(x, window, strides, padding, channels_last, -np.inf, np.max)


def sum_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    return _pool(x, window, strides, padding, channels_last, 0.0,
                 lambda w, axis: np.sum(w, axis=axis, dtype=np.float32 if is_half(w.dtype) else None))


def einsum(subscripts: str, *operands: Any) -> Any:
    """NumPy's einsum (contraction order optimised); operands share one dtype (the api promotes)."""
    return np.einsum(subscripts, *operands, optimize=len(operands) > 2)


def complex_from_parts(real: Any, imag: Any) -> Any:
    """The complex array real + imag j, each part placed exactly (no 0 * inf from a multiply)."""
    out = np.empty(np.broadcast_shapes(real.shape, imag.shape), dtype=np.result_type(real.dtype, np.complex64))
    out.real, out.imag = real, imag
    return out
