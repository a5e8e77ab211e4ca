"""Convolution and pooling layers in 1, 2 or 3 spatial dimensions, channels last (``(batch,
space..., channels)``), as :class:`~arraylayer.models.layer_base.Layer` pairs over
``arraylayer.models.nn``: conv1d, conv3d, conv_transpose, depthwise_conv, separable_conv, and the
parameterless max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool (``init`` gives ``{}``;
the spatial rank is x's)."""

from __future__ import annotations

from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.elementwise import add
from arraylayer.errors import InvalidArgumentError
from arraylayer.models import checks, initializers, nn
from arraylayer.models.layer_base import Layer, _features, _inputs, _keys, _output, _positive, _weight
from arraylayer.models.mixed_precision import Policy
from arraylayer.models.nn.pooling import avg_pool as _avg_pool
from arraylayer.models.nn.pooling import max_pool as _max_pool
from arraylayer.models.lowp_rule import rounded_once

__all__ = ["conv1d", "conv3d", "conv_transpose", "depthwise_conv", "separable_conv", "max_pool", "avg_pool",
           "adaptive_avg_pool", "adaptive_max_pool"]

_FORMATS: Final = {1: "NWC", 2: "NHWC", 3: "NDHWC"}


def _size(kernel_size: Any, n: int, layer: str) -> tuple[int, ...]:
    size = tuple(kernel_size) if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * n
    if len(size) != n:
        raise InvalidArgumentError(f"{layer}.init(kernel_size={kernel_size!r}): pass an int or {n} ints.")
    return tuple(_positive(s, f"{layer}.init: kernel_size") for s in size)


def _rank(ndim: Any, layer: str) -> int:
    n = arguments.integer(ndim, "ndim")
    if n not in _FORMATS:
        raise InvalidArgumentError(f"{layer}.init(ndim={ndim!r}): pass 1, 2 or 3 spatial dimensions.")
    return n


def _images(layer: str, x: Any, n: int) -> None:
    if getattr(x, "ndim", None) != n + 2:
        raise InvalidArgumentError(f"{layer}.apply: x of shape {tuple(getattr(x, 'shape', ()))} is not {n + 2}-d; "
                                   f"pass channels-last input ({_FORMATS[n]}).")


def _kernel_rank(layer: str, params: Any, name: str) -> int:
    """The spatial rank of the kernel params[name] (1 to 3; 2 when it is not an array, so that
    ``_weight`` names what is wrong)."""
    n = int(getattr(checks.entry(layer, params, name), "ndim", 4)) - 2
    return n if n in _FORMATS else 2


def _biased(params: dict[str, Any], y: Any) -> Any:
    return add(y, params["b"]) if params.get("b") is not None else y


# -- conv1d, conv3d ----------------------------------------------------------------------------------------
def _conv(n: int) -> Layer:
    layer = f"conv{n}d"

    def init(key: Any, in_channels: int, out_channels: int, kernel_size: Any = 3, *, groups: int = 1,
             bias: bool = True, dtype: Any = None) -> dict[str, Any]:
        """{"w": (window..., in/groups, out) He-normal, "b": (out,) zeros}."""
        count = _positive(groups, f"{layer}.init: groups")
        c_in, c_out = _positive(in_channels, f"{layer}.init: in_channels"), _positive(out_channels, f"{layer}.init: out_channels")
        if c_in % count or c_out % count:
            raise InvalidArgumentError(f"{layer}.init(groups={groups}): in_channels and out_channels must be divisible.")
        params = {"w": initializers.he_normal(key, (*_size(kernel_size, n, layer), c_in // count, c_out), dtype)}
        if arguments.flag(bias, "bias"):
            params["b"] = initializers.zeros(key, (c_out,), dtype)
        return params

    def apply(params: dict[str, Any], x: Any, *, stride: Any = 1, padding: Any = "SAME", dilation: Any = 1,
              policy: Policy | None = None) -> Any:
        """nn.conv of channels-last ``x`` with the kernel, plus the bias; the groups are the
        channels of x over the kernel's input channels (as init made it)."""
        params, x = _inputs(policy, params, x)
        w = _weight(layer, params, "w", n + 2)
        _images(layer, x, n)
        channels, per_group = int(x.shape[-1]), int(w.shape[-2])
        if channels % per_group:
            raise InvalidArgumentError(f"{layer}.apply: x has {channels} channels, not a multiple of the kernel's "
                                       f"{per_group} input channels per group (params['w'] is (window..., in/groups, out)).")
        y = getattr(nn, layer)(x, w, stride, padding, dilation, _FORMATS[n], channels // per_group)
        return _output(policy, _biased(params, y))

    return Layer(init, rounded_once(apply, trees=True))


conv1d, conv3d = _conv(1), _conv(3)


# -- conv_transpose ----------------------------------------------------------------------------------------
def _transpose_init(key: Any, in_channels: int, out_channels: int, kernel_size: Any = 3, *, ndim: int = 2,
                    bias: bool = True, dtype: Any = None) -> dict[str, Any]:
    """{"w": (window..., out, in) He-normal (Keras' layout), "b": (out,) zeros}; ``ndim`` spatial axes."""
    n = _rank(ndim, "conv_transpose")
    c_in = _positive(in_channels, "conv_transpose.init: in_channels")
    c_out = _positive(out_channels, "conv_transpose.init: out_channels")
    params = {"w": initializers.he_normal(key, (*_size(kernel_size, n, "conv_transpose"), c_out, c_in), dtype,
                                          in_axis=-1, out_axis=-2)}
    if arguments.flag(bias, "bias"):
        params["b"] = initializers.zeros(key, (c_out,), dtype)
    return params


def _transpose_apply(params: dict[str, Any], x: Any, *, stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     dilation: Any = 1, policy: Policy | None = None) -> Any:
    """nn.conv_transpose of channels-last ``x``, plus the bias."""
    params, x = _inputs(policy, params, x)
    n = _kernel_rank("conv_transpose", params, "w")
    w = _weight("conv_transpose", params, "w", n + 2)
    _images("conv_transpose", x, n)
    _features("conv_transpose", x, w.shape[-1], "params['w'] (window..., out, in)")
    y = nn.conv_transpose(x, w, stride, padding, output_padding, dilation, _FORMATS[n])
    return _output(policy, _biased(params, y))


conv_transpose = Layer(_transpose_init, rounded_once(_transpose_apply, trees=True))


# -- depthwise and separable -------------------------------------------------------------------------------
def _depthwise_init(key: Any, channels: int, kernel_size: Any = 3, *, multiplier: int = 1, ndim: int = 2,
                    bias: bool = True, dtype: Any = None) -> dict[str, Any]:
    """{"w": (window..., channels, multiplier) He-normal, "b": (channels * multiplier,) zeros}."""
    n = _rank(ndim, "depthwise_conv")
    if n == 3:
        raise InvalidArgumentError("depthwise_conv.init(ndim=3): depthwise convolution takes 1 or 2 spatial axes.")
    c, m = _positive(channels, "depthwise_conv.init: channels"), _positive(multiplier, "depthwise_conv.init: multiplier")
    shape = (*_size(kernel_size, n, "depthwise_conv"), c, m)
    params = {"w": initializers.he_normal(key, shape, dtype, in_axis=-1, out_axis=-2)}
    if arguments.flag(bias, "bias"):
        params["b"] = initializers.zeros(key, (c * m,), dtype)
    return params


def _depthwise_apply(params: dict[str, Any], x: Any, *, stride: Any = 1, padding: Any = "SAME", dilation: Any = 1,
                     policy: Policy | None = None) -> Any:
    """nn.depthwise_conv of channels-last ``x``, plus the bias."""
    params, x = _inputs(policy, params, x)
    n = _kernel_rank("depthwise_conv", params, "w")
    w = _weight("depthwise_conv", params, "w", n + 2)
    _images("depthwise_conv", x, n)
    _features("depthwise_conv", x, w.shape[-2], "params['w'] (window..., channels, multiplier)")
    return _output(policy, _biased(params, nn.depthwise_conv(x, w, stride, padding, dilation, _FORMATS[n])))


depthwise_conv = Layer(_depthwise_init, rounded_once(_depthwise_apply, trees=True))


def _separable_init(key: Any, in_channels: int, out_channels: int, kernel_size: Any = 3, *, multiplier: int = 1,
                    ndim: int = 2, bias: bool = True, dtype: Any = None) -> dict[str, Any]:
    """{"depthwise": (window..., in, multiplier), "pointwise": (1, .., in * multiplier, out), "b": (out,)}."""
    n = _rank(ndim, "separable_conv")
    depth, point = _keys(key, 2)
    inner = _depthwise_init(depth, in_channels, kernel_size, multiplier=multiplier, ndim=n, bias=False, dtype=dtype)
    width = int(inner["w"].shape[-2]) * int(inner["w"].shape[-1])
    c_out = _positive(out_channels, "separable_conv.init: out_channels")
    params = {"depthwise": inner["w"], "pointwise": initializers.he_normal(point, (*(1,) * n, width, c_out), dtype)}
    if arguments.flag(bias, "bias"):
        params["b"] = initializers.zeros(key, (c_out,), dtype)
    return params


def _separable_apply(params: dict[str, Any], x: Any, *, stride: Any = 1, padding: Any = "SAME", dilation: Any = 1,
                     policy: Policy | None = None) -> Any:
    """nn.separable_conv of channels-last ``x``, plus the bias."""
    params, x = _inputs(policy, params, x)
    n = _kernel_rank("separable_conv", params, "depthwise")
    depth = _weight("separable_conv", params, "depthwise", n + 2)
    point = _weight("separable_conv", params, "pointwise", n + 2)
    _images("separable_conv", x, n)
    _features("separable_conv", x, depth.shape[-2], "params['depthwise'] (window..., channels, multiplier)")
    y = nn.separable_conv(x, depth, point, stride, padding, dilation, _FORMATS[n])
    return _output(policy, _biased(params, y))


separable_conv = Layer(_separable_init, rounded_once(_separable_apply, trees=True))


# -- pooling -----------------------------------------------------------------------------------------------
def _no_params(key: Any = None, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """{}: pooling has no parameters."""
    return {}


def _spatial_rank(layer: str, x: Any) -> int:
    n = int(getattr(x, "ndim", 0)) - 2
    if n not in _FORMATS:
        raise InvalidArgumentError(f"{layer}.apply: x of shape {tuple(getattr(x, 'shape', ()))} has no 1 to 3 "
                                   f"spatial axes; pass (batch, space..., channels).")
    return n


def _pool(function: Any, layer: str) -> Layer:
    def apply(params: dict[str, Any], x: Any, *, window: Any = 2, stride: Any = None, padding: Any = "VALID",
              policy: Policy | None = None) -> Any:
        """The pool of channels-last ``x`` over its 1 to 3 spatial axes."""
        _, x = _inputs(policy, params, x)
        n = _spatial_rank(layer, x)
        return _output(policy, function(x, window, stride, padding, _FORMATS[n], n=n, function=layer))

    return Layer(_no_params, rounded_once(apply, trees=True))


def _adaptive(function: Any, layer: str) -> Layer:
    def apply(params: dict[str, Any], x: Any, *, output_size: Any = 1, policy: Policy | None = None) -> Any:
        """The adaptive pool of channels-last ``x`` to ``output_size`` per spatial axis."""
        _, x = _inputs(policy, params, x)
        return _output(policy, function(x, output_size, _FORMATS[_spatial_rank(layer, x)]))

    return Layer(_no_params, rounded_once(apply, trees=True))


max_pool, avg_pool = _pool(_max_pool, "max_pool"), _pool(_avg_pool, "avg_pool")
adaptive_avg_pool = _adaptive(nn.adaptive_avg_pool, "adaptive_avg_pool")
adaptive_max_pool = _adaptive(nn.adaptive_max_pool, "adaptive_max_pool")
