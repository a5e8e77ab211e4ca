"""Pooling in 1, 2 or 3 spatial dimensions (one implementation: the framework's own windowed
reductions) and adaptive pooling (torch's bins, composed of slices and reductions)."""

from __future__ import annotations

import math
from typing import Any

from arraylayer.api import statistical
from arraylayer.api.creation import ones_like
from arraylayer.api.elementwise import divide
from arraylayer.api.manipulation import concat
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.nn.common import _floating, _kernels, _native, rounded_once
from arraylayer.models.nn.convolution import _DEFAULT_FORMAT, _layout, _padding, _spatial, _tuple


def _pool_arguments(x: Any, window: Any, stride: Any, padding: Any, data_format: str, n: int,
                    function: str) -> tuple[Any, Any, Any, Any, Any, bool]:
    _, channels_last = _layout(data_format, n, function)
    windows = _tuple(window, n, "window")
    strides = windows if stride is None else _tuple(stride, n, "stride")
    _floating(x, function)
    native, rewrap = _native(x)
    size = _spatial(native, n, channels_last, function)
    pads = _padding(padding, size, windows, strides)
    if any(s + a + b < w for s, (a, b), w in zip(size, pads, windows, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: the window {windows} is larger than the padded input {size}.")
    if any(max(a, b) >= w for (a, b), w in zip(pads, windows, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: padding={padding!r} is as wide as the window {windows}, so some "
                                   f"windows would hold padding only; pad less than the window.")
    return native, rewrap, windows, strides, pads, channels_last


@rounded_once
def max_pool(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str | None = None, *,
             n: int = 2, function: str = "max_pool") -> Any:
    """The maximum of each window over ``n`` spatial axes (``stride`` None: the window,
    non-overlapping); padding never wins."""
    native, rewrap, windows, strides, pads, last = _pool_arguments(
        x, window, stride, padding, data_format or _DEFAULT_FORMAT[n], n, function)
    return rewrap(_kernels(native).max_pool(native, windows, strides, pads, last))


@rounded_once
def avg_pool(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str | None = None, *,
             n: int = 2, function: str = "avg_pool") -> Any:
    """The mean of each window over its elements inside the input (padding is not counted:
    TensorFlow's and Keras's convention), the same on every backend."""
    native, rewrap, windows, strides, pads, last = _pool_arguments(
        x, window, stride, padding, data_format or _DEFAULT_FORMAT[n], n, function)
    kernels = _kernels(native)
    sums = kernels.sum_pool(native, windows, strides, pads, last)
    if not any(a or b for a, b in pads):
        return rewrap(divide(sums, float(math.prod(windows))))
    ones = ones_like(native[:1, :1] if not last else native[:1, ..., :1])
    counts = kernels.sum_pool(ones, windows, strides, pads, last)  # how many elements each window holds
    return rewrap(divide(sums, counts))


def max_pool1d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NWC") -> Any:
    """max_pool over one spatial axis (NWC or NCW)."""
    return max_pool(x, window, stride, padding, data_format, n=1, function="max_pool1d")


def max_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The maximum of each window (``stride`` None: the window, non-overlapping); padding never wins."""
    return max_pool(x, window, stride, padding, data_format, n=2, function="max_pool2d")


def max_pool3d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NDHWC") -> Any:
    """max_pool over three spatial axes (NDHWC or NCDHW)."""
    return max_pool(x, window, stride, padding, data_format, n=3, function="max_pool3d")


def avg_pool1d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NWC") -> Any:
    """avg_pool over one spatial axis (NWC or NCW)."""
    return avg_pool(x, window, stride, padding, data_format, n=1, function="avg_pool1d")


def avg_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The mean of each window over its elements inside the input (padding is not counted: TensorFlow's
    and Keras's convention), the same on every backend."""
    return avg_pool(x, window, stride, padding, data_format, n=2, function="avg_pool2d")


def avg_pool3d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NDHWC") -> Any:
    """avg_pool over three spatial axes (NDHWC or NCDHW)."""
    return avg_pool(x, window, stride, padding, data_format, n=3, function="avg_pool3d")


@rounded_once
def _adaptive(x: Any, output_size: Any, data_format: str | None, reduce: Any, function: str) -> Any:
    _floating(x, function)
    if data_format is None:
        rank = len(getattr(x, "shape", ()))
        data_format = _DEFAULT_FORMAT.get(rank - 2, "NHWC")
    n, channels_last = _layout(data_format, None, function)
    sizes = _tuple(output_size, n, "output_size")
    native, rewrap = _native(x)
    lengths = _spatial(native, n, channels_last, function)
    first = 1 if channels_last else 2
    y = native
    for axis, (length, out) in enumerate(zip(lengths, sizes, strict=True), start=first):
        if out > length:
            raise InvalidArgumentError(f"nn.{function}: output_size {sizes} is larger than the input's {lengths}.")
        before = (slice(None),) * axis
        bins = [(i * length // out, -(-(i + 1) * length // out)) for i in range(out)]  # torch's floor/ceil bins
        y = concat([reduce(y[(*before, slice(a, b))], axis=axis, keepdims=True) for a, b in bins], axis=axis)
    return rewrap(y)


def adaptive_avg_pool(x: Any, output_size: Any, data_format: str | None = None) -> Any:
    """The mean over torch's adaptive bins: output i of an axis of length L covers
    [floor(i * L / out), ceil((i + 1) * L / out)). 1, 2 or 3 spatial axes; ``data_format`` None:
    channels last, the rank deciding."""
    return _adaptive(x, output_size, data_format, statistical.mean, "adaptive_avg_pool")


def adaptive_max_pool(x: Any, output_size: Any, data_format: str | None = None) -> Any:
    """The maximum over torch's adaptive bins (see adaptive_avg_pool)."""
    return _adaptive(x, output_size, data_format, statistical.max, "adaptive_max_pool")
