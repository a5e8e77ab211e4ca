"""Convolution in 1, 2 or 3 spatial dimensions, one implementation through each framework's own
operation (grouped, hence depthwise and separable too), with TensorFlow's "SAME" padding
arithmetic on every backend. The argument checks here are shared with pooling and the
transposed convolution."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from arraylayer.api.data_types import astype
from arraylayer.api.manipulation import reshape
from arraylayer.dtypes import as_dtype
from arraylayer.dtypes.promotion import result_type
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.models.nn.common import _kernels, _native, rounded_once

#: data format -> (spatial dimensions, channels last)
_LAYOUTS: Final = {"NWC": (1, True), "NCW": (1, False), "NHWC": (2, True), "NCHW": (2, False),
                   "NDHWC": (3, True), "NCDHW": (3, False)}
_DEFAULT_FORMAT: Final = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _tuple(value: Any, n: int, parameter: str, least: int = 1) -> tuple[int, ...]:
    """``value`` (an int or n of them, each >= ``least`` and below 2**31) as an n-tuple."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,) * n
    if len(values) != n or not all(isinstance(v, int) and not isinstance(v, bool) and least <= v < 2**31
                                   for v in values):
        kind = "positive" if least == 1 else "non-negative"
        raise InvalidArgumentError(f"{parameter}={value!r}: pass a {kind} int (below 2**31) or {n} of them.")
    return values  # type: ignore[return-value]


def _pair(value: Any, parameter: str) -> tuple[int, int]:
    return _tuple(value, 2, parameter)  # type: ignore[return-value]


def _layout(data_format: str, n: int | None = None, function: str = "conv") -> tuple[int, bool]:
    """(spatial dimensions, channels last) of ``data_format``, which must have ``n`` spatial axes."""
    layout = _LAYOUTS.get(data_format) if isinstance(data_format, str) else None
    if layout is None or (n is not None and layout[0] != n):
        names = [f for f, (d, _) in _LAYOUTS.items() if n is None or d == n]
        raise InvalidArgumentError(f"nn.{function}(data_format={data_format!r}): choose {' or '.join(map(repr, names))}.")
    return layout


def _padding(padding: Any, size: Sequence[int], extent: Sequence[int], strides: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Explicit (before, after) pairs for the spatial axes. "SAME" is TensorFlow's: the output has
    ceil(size / stride) positions and the odd element of padding goes after."""
    n = len(size)
    if padding == "VALID":
        return ((0, 0),) * n
    if padding == "SAME":
        pairs = []
        for length, k, s in zip(size, extent, strides, strict=True):
            total = max((math.ceil(length / s) - 1) * s + k - length, 0)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    if isinstance(padding, int) and not isinstance(padding, bool) and padding >= 0:
        return ((padding, padding),) * n
    try:
        pairs = tuple((int(a), int(b)) for a, b in padding)
        if len(pairs) == n and all(a >= 0 and b >= 0 for a, b in pairs):
            return pairs
    except (TypeError, ValueError):
        pass
    raise InvalidArgumentError(f"padding={padding!r}: pass 'VALID', 'SAME', a non-negative int or {n} "
                               f"(before, after) pairs.")


def _spatial(x: Any, n: int, channels_last: bool, function: str) -> tuple[int, ...]:
    if x.ndim != n + 2:
        raise InvalidArgumentError(f"nn.{function} takes {n + 2}-d inputs (batch, {n} spatial axes and channels, "
                                   f"channels last or first); got shape {tuple(x.shape)}.")
    shape = tuple(int(s) for s in x.shape)
    return shape[1:n + 1] if channels_last else shape[2:]


def _float_pair(x: Any, kernel: Any, function: str) -> Any:
    for name, a in (("x", x), ("kernel", kernel)):
        if not hasattr(a, "dtype"):
            raise InvalidArgumentTypeError(f"nn.{function}: {name} is {type(a).__name__}, not an array.")
    dtype = result_type(x, kernel)
    if dtype.category != "float":
        raise InvalidDtypeError(f"nn.{function} takes real floating arrays; got {as_dtype(x.dtype)} and "
                                f"{as_dtype(kernel.dtype)}. Cast first, e.g. arraylayer.astype(x, 'float32').")
    return dtype


def _groups(groups: Any) -> int:
    if not (isinstance(groups, int) and not isinstance(groups, bool) and 0 < groups < 2**31):
        raise InvalidArgumentError(f"groups={groups!r}: pass a positive int.")
    return groups


@rounded_once
def conv(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
         data_format: str | None = None, groups: int = 1, *, n: int | None = None, function: str = "conv") -> Any:
    """N-d (1, 2 or 3) grouped convolution (cross-correlation, as every framework computes it).
    ``kernel``: (window..., in/groups, out) for channels-last input, (out, in/groups, window...) for
    channels first; ``n`` spatial axes (from ``data_format`` or the kernel's rank when None)."""
    if n is None:
        n = _LAYOUTS[data_format][0] if data_format in _LAYOUTS else max(int(getattr(kernel, "ndim", 4)) - 2, 1)
    dims, channels_last = _layout(_DEFAULT_FORMAT.get(n, "NHWC") if data_format is None else data_format, n,
                                  function)
    strides, dilations = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
    count = _groups(groups)
    dtype = _float_pair(x, kernel, function)
    native, rewrap = _native(x)
    weights, _ = _native(kernel)
    size = _spatial(native, n, channels_last, function)
    if weights.ndim != n + 2:
        raise InvalidArgumentError(f"nn.{function} takes a {n + 2}-d kernel; got shape {tuple(weights.shape)}.")
    shape = tuple(int(s) for s in weights.shape)
    window, kernel_in, out = (shape[:n], shape[n], shape[n + 1]) if channels_last else (shape[2:], shape[1], shape[0])
    channels = int(native.shape[-1] if channels_last else native.shape[1])
    if channels % count or out % count:
        raise InvalidArgumentError(f"nn.{function}(groups={groups}): the {channels} input and {out} output channels "
                                   f"must both be divisible by groups.")
    if channels != kernel_in * count:
        raise InvalidArgumentError(f"nn.{function}: x has {channels} channels but the kernel takes {kernel_in} per "
                                   f"group x {count} groups ({'(window..., in, out)' if channels_last else '(out, in, window...)'} "
                                   f"layout for channels {'last' if channels_last else 'first'}).")
    extent = tuple((k - 1) * d + 1 for k, d in zip(window, dilations, strict=True))
    pads = _padding(padding, size, extent, strides)
    if any(s + a + b < e for s, (a, b), e in zip(size, pads, extent, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: the kernel (extent {extent}) is larger than the padded input {size}.")
    native, weights = astype(native, dtype, copy=False), astype(weights, dtype, copy=False)
    return rewrap(_kernels(native).conv(native, weights, strides, pads, dilations, channels_last, count))


def conv1d(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
           data_format: str = "NWC", groups: int = 1) -> Any:
    """1-d convolution: ``kernel`` WIO for NWC input, OIW for NCW (torch's conv1d weight)."""
    return conv(x, kernel, stride, padding, dilation, data_format, groups, n=1, function="conv1d")


def conv2d(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
           data_format: str = "NHWC", groups: int = 1) -> Any:
    """2-d convolution (cross-correlation, as every framework computes it) through the framework's own
    operation. ``kernel``: HWIO for NHWC input, OIHW for NCHW. x and kernel are promoted to one
    floating dtype first."""
    return conv(x, kernel, stride, padding, dilation, data_format, groups, n=2, function="conv2d")


def conv3d(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
           data_format: str = "NDHWC", groups: int = 1) -> Any:
    """3-d convolution: ``kernel`` DHWIO for NDHWC input, OIDHW for NCDHW."""
    return conv(x, kernel, stride, padding, dilation, data_format, groups, n=3, function="conv3d")


def depthwise_conv(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
                   data_format: str = "NHWC") -> Any:
    """Each input channel convolved with its own ``multiplier`` filters (1-d or 2-d, from the
    format). ``kernel``: (window..., channels, multiplier) channels last (TensorFlow's layout),
    (channels * multiplier, 1, window...) channels first (torch's); output channel c * multiplier + m."""
    n, channels_last = _layout(data_format, None, "depthwise_conv")
    if n == 3 or getattr(kernel, "ndim", None) != n + 2:
        raise InvalidArgumentError(f"nn.depthwise_conv takes 1-d or 2-d data formats and a {n + 2}-d kernel; got "
                                   f"{data_format!r} and shape {tuple(getattr(kernel, 'shape', ()))}.")
    if channels_last:
        *window, channels, multiplier = (int(s) for s in kernel.shape)
        kernel = reshape(kernel, (*window, 1, channels * multiplier))
    else:
        channels = int(x.shape[1]) if hasattr(x, "shape") and len(x.shape) == n + 2 else int(kernel.shape[0])
    return conv(x, kernel, stride, padding, dilation, data_format, channels, n=n, function="depthwise_conv")


@rounded_once
def separable_conv(x: Any, depthwise_kernel: Any, pointwise_kernel: Any, stride: Any = 1, padding: Any = "VALID",
                   dilation: Any = 1, data_format: str = "NHWC") -> Any:
    """depthwise_conv, then a 1x1 convolution mixing the channels (``pointwise_kernel``:
    (1, [1,] channels * multiplier, out) channels last, (out, channels * multiplier, 1[, 1]) first)."""
    n, _ = _layout(data_format, None, "separable_conv")
    y = depthwise_conv(x, depthwise_kernel, stride, padding, dilation, data_format)
    return conv(y, pointwise_kernel, 1, "VALID", 1, data_format, n=n, function="separable_conv")
