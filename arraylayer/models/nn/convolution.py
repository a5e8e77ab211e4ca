"""Convolution and pooling through each framework's own operation, with TensorFlow's
"SAME" padding arithmetic on every backend."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from arraylayer.api.creation import ones_like
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import divide
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError
from arraylayer.dtypes.promotion import result_type
from arraylayer.models.nn.common import _floating, _kernels, _native

_LAYOUTS: Final = {"NHWC": True, "NCHW": False}  # data format -> channels last


def _pair(value: Any, parameter: str) -> tuple[int, int]:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(values) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v < 2**31 for v in values):
        raise InvalidArgumentError(f"{parameter}={value!r}: pass a positive int (below 2**31) or a pair of them.")
    return values  # type: ignore[return-value]


def _layout(data_format: str) -> bool:
    try:
        return _LAYOUTS[data_format]
    except (KeyError, TypeError):
        raise InvalidArgumentError(f"data_format={data_format!r}: choose 'NHWC' or 'NCHW'.") from None


def _padding(padding: Any, size: Sequence[int], extent: Sequence[int], strides: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Explicit (before, after) pairs for the two spatial axes. "SAME" is TensorFlow's: the output
    has ceil(size / stride) positions and the odd pixel of padding goes after."""
    if padding == "VALID":
        return ((0, 0), (0, 0))
    if padding == "SAME":
        pairs = []
        for n, k, s in zip(size, extent, strides, strict=True):
            total = max((math.ceil(n / s) - 1) * s + k - n, 0)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    if isinstance(padding, int) and not isinstance(padding, bool) and padding >= 0:
        return ((padding, padding), (padding, padding))
    try:
        pairs = tuple((int(a), int(b)) for a, b in padding)
        if len(pairs) == 2 and all(a >= 0 and b >= 0 for a, b in pairs):
            return pairs
    except (TypeError, ValueError):
        pass
    raise InvalidArgumentError(f"padding={padding!r}: pass 'VALID', 'SAME', a non-negative int or "
                               f"((top, bottom), (left, right)).")


def _spatial(x: Any, channels_last: bool, function: str) -> tuple[int, int]:
    if x.ndim != 4:
        raise InvalidArgumentError(f"nn.{function} takes 4-d inputs (batch, height, width, channels or batch, "
                                   f"channels, height, width); got shape {tuple(x.shape)}.")
    shape = tuple(int(n) for n in x.shape)
    return shape[1:3] if channels_last else shape[2:4]  # type: ignore[return-value]


def conv2d(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
           data_format: str = "NHWC") -> Any:
    """2-d convolution (cross-correlation, as every framework computes it) through the framework's own
    operation. ``kernel``: HWIO for NHWC input, OIHW for NCHW. x and kernel are promoted to one
    floating dtype first."""
    channels_last = _layout(data_format)
    strides, dilations = _pair(stride, "stride"), _pair(dilation, "dilation")
    dtype = result_type(x, kernel)
    if dtype.category != "float":
        raise InvalidDtypeError(f"nn.conv2d takes real floating arrays; got {as_dtype(x.dtype)} and "
                                f"{as_dtype(kernel.dtype)}.")
    native, rewrap = _native(x)
    weights, _ = _native(kernel)
    size = _spatial(native, channels_last, "conv2d")
    if weights.ndim != 4:
        raise InvalidArgumentError(f"nn.conv2d takes a 4-d kernel; got shape {tuple(weights.shape)}.")
    spatial = tuple(int(n) for n in (weights.shape[:2] if channels_last else weights.shape[2:]))
    channels = int(native.shape[-1] if channels_last else native.shape[1])
    kernel_in = int(weights.shape[2] if channels_last else weights.shape[1])
    if channels != kernel_in:
        raise InvalidArgumentError(f"nn.conv2d: x has {channels} channels but the kernel takes {kernel_in} "
                                   f"({'HWIO' if channels_last else 'OIHW'} layout for {data_format}).")
    extent = tuple((k - 1) * d + 1 for k, d in zip(spatial, dilations, strict=True))
    pads = _padding(padding, size, extent, strides)
    if any(n + a + b < e for n, (a, b), e in zip(size, pads, extent, strict=True)):
        raise InvalidArgumentError(f"nn.conv2d: the kernel (extent {extent}) is larger than the padded input {size}.")
    native, weights = astype(native, dtype, copy=False), astype(weights, dtype, copy=False)
    return rewrap(_kernels(native).conv2d(native, weights, strides, pads, dilations, channels_last))


def _pool_arguments(x: Any, window: Any, stride: Any, padding: Any, data_format: str,
                    function: str) -> tuple[Any, Any, Any, Any, Any, bool]:
    channels_last = _layout(data_format)
    windows = _pair(window, "window")
    strides = windows if stride is None else _pair(stride, "stride")
    _floating(x, function)
    native, rewrap = _native(x)
    size = _spatial(native, channels_last, function)
    pads = _padding(padding, size, windows, strides)
    if any(n + a + b < w for n, (a, b), w in zip(size, pads, windows, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: the window {windows} is larger than the padded input {size}.")
    if any(max(a, b) >= w for (a, b), w in zip(pads, windows, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: padding={padding!r} is as wide as the window {windows}, so some "
                                   f"windows would hold padding only; pad less than the window.")
    return native, rewrap, windows, strides, pads, channels_last


def max_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The maximum of each window (``stride`` None: the window, non-overlapping); padding never wins."""
    native, rewrap, windows, strides, pads, last = _pool_arguments(x, window, stride, padding, data_format, "max_pool2d")
    return rewrap(_kernels(native).max_pool(native, windows, strides, pads, last))


def avg_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The mean of each window over its elements inside the input (padding is not counted: TensorFlow's
    and Keras's convention), the same on every backend."""
    native, rewrap, windows, strides, pads, last = _pool_arguments(x, window, stride, padding, data_format, "avg_pool2d")
    kernels = _kernels(native)
    sums = kernels.sum_pool(native, windows, strides, pads, last)
    if not any(a or b for a, b in pads):
        return rewrap(divide(sums, float(windows[0] * windows[1])))
    ones = ones_like(native[:1, :1] if not last else native[:1, ..., :1])
    counts = kernels.sum_pool(ones, windows, strides, pads, last)  # how many elements each window holds
    return rewrap(divide(sums, counts))

