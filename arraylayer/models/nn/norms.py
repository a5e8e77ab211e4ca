"""Normalisation by statistics over the batch or over groups of channels: batch_norm (given
the statistics: a layer keeps the running ones), group_norm and instance_norm, composed of
arraylayer's own functions (so their gradients are arraylayer's)."""

from __future__ import annotations

from typing import Any

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.elementwise import add, divide, multiply, sqrt, square, subtract
from arraylayer.api.manipulation import reshape
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.nn.common import _array, _floating, rounded_once


def _eps(eps: Any, function: str) -> float:
    value = arguments.real_float(eps, "eps")
    if not value >= 0:
        raise InvalidArgumentError(f"nn.{function}(eps={eps}): eps must be >= 0 (it keeps the division away from 0).")
    return value


def _along(p: Any, ndim: int, axis: int, function: str, name: str) -> Any:
    """A per-channel vector p (an array: ``name`` of nn.``function``) shaped to broadcast along ``axis``
    of an ndim-d array."""
    if p is not None:
        _array(p, function, name)
    if p is None or getattr(p, "ndim", 1) != 1:
        return p
    shape = [1] * ndim
    shape[axis] = int(p.shape[0])
    return reshape(p, tuple(shape))


@rounded_once
def batch_norm(x: Any, mean: Any, var: Any, scale: Any = None, offset: Any = None, eps: float = 1e-5,
               axis: int = -1) -> Any:
    """(x - mean) / sqrt(var + eps) * scale + offset; 1-d statistics and parameters lie along the
    channel ``axis`` (-1 channels last, 1 channels first), others broadcast as they are."""
    _floating(x, "batch_norm")
    value = _eps(eps, "batch_norm")
    channel = arguments.axis(axis, x.ndim)
    mean, var = _along(mean, x.ndim, channel, "batch_norm", "mean"), _along(var, x.ndim, channel, "batch_norm", "var")
    y = divide(subtract(x, mean), sqrt(add(var, value)))
    if scale is not None:
        y = multiply(y, _along(scale, x.ndim, channel, "batch_norm", "scale"))
    return y if offset is None else add(y, _along(offset, x.ndim, channel, "batch_norm", "offset"))


@rounded_once
def group_norm(x: Any, groups: int, scale: Any = None, offset: Any = None, eps: float = 1e-5,
               axis: int = -1) -> Any:
    """Each example's channels (along ``axis``) split into ``groups``, each group normalised over its
    channels and the spatial axes (torch's group_norm), then ``* scale + offset`` per channel."""
    _floating(x, "group_norm")
    value = _eps(eps, "group_norm")
    channel = arguments.axis(axis, x.ndim)
    count = arguments.integer(groups, "groups")
    shape = tuple(int(s) for s in x.shape)
    if x.ndim < 2 or channel == 0:
        raise InvalidArgumentError(f"nn.group_norm takes (batch, ..., channels) arrays with the channels on an axis "
                                   f"other than 0; got shape {shape} and axis={axis}.")
    if count <= 0 or shape[channel] % count:
        raise InvalidArgumentError(f"nn.group_norm(groups={groups}): the {shape[channel]} channels must split into "
                                   f"a positive number of equal groups.")
    split = (*shape[:channel], count, shape[channel] // count, *shape[channel + 1:])
    grouped = reshape(x, split)
    axes = tuple(a for a in range(1, len(split)) if a != channel)
    mean = statistical.mean(grouped, axis=axes, keepdims=True)
    centred = subtract(grouped, mean)
    variance = statistical.mean(square(centred), axis=axes, keepdims=True)
    y = reshape(divide(centred, sqrt(add(variance, value))), shape)
    if scale is not None:
        y = multiply(y, _along(scale, x.ndim, channel, "group_norm", "scale"))
    return y if offset is None else add(y, _along(offset, x.ndim, channel, "group_norm", "offset"))


@rounded_once
def instance_norm(x: Any, scale: Any = None, offset: Any = None, eps: float = 1e-5, axis: int = -1) -> Any:
    """group_norm with one channel per group: each channel of each example normalised over space."""
    _floating(x, "instance_norm")
    channel = arguments.axis(axis, x.ndim)
    return group_norm(x, int(x.shape[channel]), scale, offset, eps, axis)
