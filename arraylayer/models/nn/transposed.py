"""The transposed convolution (the gradient of a convolution with respect to its input), in 1, 2
or 3 spatial dimensions: the input spread with stride - 1 zeros between its elements, then a
stride-1 convolution with the kernel flipped, through the framework's own convolution."""

from __future__ import annotations

from typing import Any

from arraylayer.api.creation import zeros_like
from arraylayer.api.manipulation import flip, permute_dims, reshape, stack
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.nn.common import _native, rounded_once
from arraylayer.models.nn.convolution import _DEFAULT_FORMAT, _LAYOUTS, _float_pair, _groups, _layout, _spatial, _tuple, conv


def _spread(x: Any, axis: int, stride: int) -> Any:
    """x with stride - 1 zeros between consecutive elements along ``axis``."""
    if stride == 1:
        return x
    length = int(x.shape[axis])
    spread = stack([x] + [zeros_like(x)] * (stride - 1), axis=axis + 1)
    shape = tuple(int(s) for s in x.shape)
    whole = reshape(spread, (*shape[:axis], length * stride, *shape[axis + 1:]))
    return whole[(slice(None),) * axis + (slice(0, (length - 1) * stride + 1),)]


@rounded_once
def conv_transpose(x: Any, kernel: Any, stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                   dilation: Any = 1, data_format: str | None = None, groups: int = 1) -> Any:
    """torch's conv_transpose{1,2,3}d: ``kernel`` is the forward convolution's, (in, out/groups,
    window...) channels first (torch's weight) or (window..., out/groups, in) channels last (Keras').
    ``padding``: an int or one per axis, removed from each side of the output; ``output_padding``
    (below stride or dilation) added after. The output length is
    (L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1."""
    n = (_LAYOUTS[data_format][0] if data_format in _LAYOUTS
         else max(int(getattr(kernel, "ndim", 4)) - 2, 1))
    data_format = _DEFAULT_FORMAT.get(n, "NHWC") if data_format is None else data_format
    _, channels_last = _layout(data_format, n, "conv_transpose")
    strides, dilations = _tuple(stride, n, "stride"), _tuple(dilation, n, "dilation")
    pads, extra = _tuple(padding, n, "padding", 0), _tuple(output_padding, n, "output_padding", 0)
    count = _groups(groups)
    dtype = _float_pair(x, kernel, "conv_transpose")
    native, rewrap = _native(x)
    size = _spatial(native, n, channels_last, "conv_transpose")
    if getattr(kernel, "ndim", None) != n + 2:
        raise InvalidArgumentError(f"nn.conv_transpose takes a {n + 2}-d kernel; got shape "
                                   f"{tuple(getattr(kernel, 'shape', ()))}.")
    if any(e >= max(s, d) for e, s, d in zip(extra, strides, dilations, strict=True)):
        raise InvalidArgumentError(f"nn.conv_transpose(output_padding={output_padding!r}): each must be smaller than "
                                   f"the stride or the dilation of its axis.")
    shape = tuple(int(s) for s in kernel.shape)
    weights = kernel if not channels_last else permute_dims(kernel, (n + 1, n, *range(n)))  # -> (in, out/g, *window)
    channels, per_group, window = shape[n + 1] if channels_last else shape[0], shape[n] if channels_last else shape[1], \
        shape[:n] if channels_last else shape[2:]
    x_channels = int(native.shape[-1] if channels_last else native.shape[1])
    if x_channels != channels or channels % count:
        raise InvalidArgumentError(f"nn.conv_transpose: x has {x_channels} channels, the kernel takes {channels} "
                                   f"(divisible by groups={groups}).")
    # the equivalent convolution's weight: (out, in/groups, window...), flipped in space
    grouped = reshape(weights, (count, channels // count, per_group, *window))
    forward = reshape(permute_dims(grouped, (0, 2, 1, *range(3, n + 3))), (count * per_group, channels // count, *window))
    forward = flip(forward, axis=tuple(range(2, n + 2)))
    if channels_last:
        forward = permute_dims(forward, (*range(2, n + 2), 1, 0))
    first = 1 if channels_last else 2
    y = native
    explicit = []
    for i, (s, k, d, p, e) in enumerate(zip(strides, window, dilations, pads, extra, strict=True)):
        axis = first + i
        y = _spread(y, axis, s)
        before, after = d * (k - 1) - p, d * (k - 1) - p + e
        if before < 0 or after < 0:  # padding wider than the kernel: crop the spread input instead
            length = int(y.shape[axis])
            y = y[(slice(None),) * axis + (slice(max(-before, 0), length - max(-after, 0)),)]
            before, after = max(before, 0), max(after, 0)
        if int(y.shape[axis]) + before + after < d * (k - 1) + 1:
            raise InvalidArgumentError(f"nn.conv_transpose: padding={padding!r} leaves no output along axis {i} "
                                       f"(input {size}).")
        explicit.append((before, after))
    return rewrap(conv(y, forward, 1, tuple(explicit), dilations, data_format, count, n=n,
                       function="conv_transpose"))
