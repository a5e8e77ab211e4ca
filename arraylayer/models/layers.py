"""Layers as pure functions over plain parameter trees, built on ``arraylayer.models.nn``.

Each layer is a :class:`Layer` pair: ``init(key, ...) -> params`` (a dict of native arrays on the
key's backend, drawn by ``arraylayer.models.initializers``: the same key gives the same weights on every
backend) and ``apply(params, x, ...) -> y``. There is no hidden state and no registry: a model is
a dict of layer parameters and a function calling the applies. Every ``apply`` takes
``policy=`` (``arraylayer.models.mixed_precision.Policy``): parameters and inputs are cast to its compute
dtype and the result to its output dtype; ``init`` takes ``dtype=`` (the parameter dtype).

Shapes: dense and the attention work on the last axis of ``(..., features)``; sequences are
``(batch, sequence, features)``; conv2d is NHWC with HWIO kernels.

Bad input is refused with an arraylayer error naming the layer, the parameter and the fix: sizes
that are not positive ints (``3.0``, ``True``; NumPy ints are ints), parameter trees that are not
the dict ``init`` made or lack an entry, inputs whose feature axis does not match the weights.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arraylayer.models import checks, initializers, nn
from arraylayer import arguments
from arraylayer.api.elementwise import add, divide, multiply, sqrt, square
from arraylayer.api.linear_algebra import matmul
from arraylayer.api.manipulation import reshape
from arraylayer.api.statistical import mean
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.layer_base import Layer, _features, _inputs, _keys, _output, _positive, _weight
from arraylayer.models.mixed_precision import Policy
from arraylayer.models.nn.common import _floating
from arraylayer.models.random.samplers import _float_dtype
from arraylayer.models.conv_layers import (
    adaptive_avg_pool, adaptive_max_pool, avg_pool, conv1d, conv3d, conv_transpose, depthwise_conv, max_pool,
    separable_conv,
)
from arraylayer.models.norm_layers import StatefulLayer, batch_norm, group_norm
from arraylayer.models.recurrent import gru, gru_cell, lstm, lstm_cell
from arraylayer.models.lowp_rule import rounded_once

__all__ = ["Layer", "dense", "embedding", "conv2d", "layer_norm", "rms_norm", "mlp", "attention",
           "transformer_block", "gru", "gru_cell", "lstm", "lstm_cell",
           # arraylayer/models/conv_layers.py and norm_layers.py
           "conv1d", "conv3d", "conv_transpose", "depthwise_conv", "separable_conv", "max_pool", "avg_pool",
           "adaptive_avg_pool", "adaptive_max_pool", "StatefulLayer", "batch_norm", "group_norm"]


# -- dense -------------------------------------------------------------------------------------------------
def _dense_init(key: Any, in_features: int, out_features: int, *, bias: bool = True, dtype: Any = None) -> dict[str, Any]:
    """{"w": (in, out) Glorot-uniform, "b": (out,) zeros}."""
    shape = (_positive(in_features, "dense.init: in_features"), _positive(out_features, "dense.init: out_features"))
    params = {"w": initializers.glorot_uniform(key, shape, dtype)}
    if arguments.flag(bias, "bias"):
        params["b"] = initializers.zeros(key, (shape[1],), dtype)
    return params


def _dense(params: dict[str, Any], x: Any, layer: str = "dense", at: str = "params") -> Any:
    w = _weight(layer, params, "w", 2, at)
    _features(layer, x, w.shape[0], f"{at}['w']")
    y = matmul(x, w)
    return add(y, params["b"]) if params.get("b") is not None else y


def _dense_apply(params: dict[str, Any], x: Any, *, policy: Policy | None = None) -> Any:
    """x @ w + b over the last axis."""
    params, x = _inputs(policy, params, x)
    return _output(policy, _dense(params, x))


dense = Layer(_dense_init, rounded_once(_dense_apply, trees=True))


# -- embedding ---------------------------------------------------------------------------------------------
def _embedding_init(key: Any, vocabulary: int, features: int, *, stddev: float = 1.0, dtype: Any = None) -> dict[str, Any]:
    """{"table": (vocabulary, features) normal with ``stddev``}."""
    shape = (_positive(vocabulary, "embedding.init: vocabulary"), _positive(features, "embedding.init: features"))
    return {"table": initializers.normal(key, shape, dtype, stddev)}


def _embedding_apply(params: dict[str, Any], ids: Any, *, policy: Policy | None = None) -> Any:
    """The table's rows at integer ``ids``: ids.shape + (features,)."""
    table, _ = _inputs(policy, _weight("embedding", params, "table", 2), None)
    return _output(policy, nn.embedding(table, ids))


embedding = Layer(_embedding_init, rounded_once(_embedding_apply, trees=True))


# -- conv2d ------------------------------------------------------------------------------------------------
def _conv2d_init(key: Any, in_channels: int, out_channels: int, kernel_size: Any = 3, *, bias: bool = True,
                 dtype: Any = None) -> dict[str, Any]:
    """{"w": HWIO He-normal, "b": (out_channels,) zeros}."""
    size = tuple(kernel_size) if isinstance(kernel_size, (list, tuple)) else (kernel_size, kernel_size)
    if len(size) != 2:
        raise InvalidArgumentError(f"conv2d.init(kernel_size={kernel_size!r}): pass an int or a pair of ints "
                                   f"(height, width).")
    shape = (*(_positive(s, "conv2d.init: kernel_size") for s in size),
             _positive(in_channels, "conv2d.init: in_channels"), _positive(out_channels, "conv2d.init: out_channels"))
    params = {"w": initializers.he_normal(key, shape, dtype)}
    if arguments.flag(bias, "bias"):
        params["b"] = initializers.zeros(key, (shape[-1],), dtype)
    return params


def _conv2d_apply(params: dict[str, Any], x: Any, *, stride: Any = 1, padding: Any = "SAME", dilation: Any = 1,
                  policy: Policy | None = None) -> Any:
    """nn.conv2d of NHWC ``x`` with the kernel, plus the bias."""
    params, x = _inputs(policy, params, x)
    w = _weight("conv2d", params, "w", 4)
    if getattr(x, "ndim", None) != 4:
        raise InvalidArgumentError(f"conv2d.apply: x of shape {tuple(getattr(x, 'shape', ()))} is not 4-d; pass "
                                   f"NHWC images (batch, height, width, channels).")
    _features("conv2d", x, w.shape[2], "params['w'] (HWIO)")
    y = nn.conv2d(x, w, stride, padding, dilation)
    return _output(policy, add(y, params["b"]) if params.get("b") is not None else y)


conv2d = Layer(_conv2d_init, rounded_once(_conv2d_apply, trees=True))


# -- normalisation -----------------------------------------------------------------------------------------
def _layer_norm_init(key: Any, features: int, *, dtype: Any = None) -> dict[str, Any]:
    """{"scale": ones, "offset": zeros} of (features,)."""
    shape = (_positive(features, "layer_norm.init: features"),)
    dtype = _float_dtype(dtype, "layers.layer_norm.init")[1]  # floating parameters, as every layer's
    return {"scale": initializers.ones(key, shape, dtype), "offset": initializers.zeros(key, shape, dtype)}


def _layer_norm_apply(params: dict[str, Any], x: Any, *, eps: float = 1e-5, policy: Policy | None = None) -> Any:
    """nn.layer_norm over the last axis with the scale and offset."""
    params, x = _inputs(policy, params, x)
    scale = _weight("layer_norm", params, "scale", 1)
    _features("layer_norm", x, scale.shape[0], "params['scale']")
    return _output(policy, nn.layer_norm(x, scale, _weight("layer_norm", params, "offset", 1), eps=eps))


layer_norm = Layer(_layer_norm_init, rounded_once(_layer_norm_apply, trees=True))


def _rms_norm_init(key: Any, features: int, *, dtype: Any = None) -> dict[str, Any]:
    """{"scale": ones of (features,)}."""
    shape = (_positive(features, "rms_norm.init: features"),)
    return {"scale": initializers.ones(key, shape, _float_dtype(dtype, "layers.rms_norm.init")[1])}


def _rms_norm_apply(params: dict[str, Any], x: Any, *, eps: float = 1e-6, policy: Policy | None = None) -> Any:
    """x / sqrt(mean(x**2) + eps) * scale over the last axis (Zhang and Sennrich)."""
    params, x = _inputs(policy, params, x)
    scale = _weight("rms_norm", params, "scale", 1)
    _floating(x, "rms_norm")
    _features("rms_norm", x, scale.shape[0], "params['scale']")
    if not arguments.real_scalar(eps, "eps") >= 0:
        raise InvalidArgumentError(f"rms_norm(eps={eps}): eps must be >= 0 (it keeps the division away from 0).")
    mean_square = mean(square(x), axis=-1, keepdims=True)
    return _output(policy, multiply(divide(x, sqrt(add(mean_square, eps))), scale))


rms_norm = Layer(_rms_norm_init, rounded_once(_rms_norm_apply, trees=True))


# -- MLP ---------------------------------------------------------------------------------------------------
def _mlp_init(key: Any, features: int, hidden: int, out_features: int | None = None, *, dtype: Any = None
              ) -> dict[str, Any]:
    """{"up": dense(features, hidden), "down": dense(hidden, out_features or features)}."""
    up, down = _keys(key, 2)
    return {"up": _dense_init(up, features, hidden, dtype=dtype),
            "down": _dense_init(down, hidden, features if out_features is None else out_features, dtype=dtype)}


def _mlp_apply(params: dict[str, Any], x: Any, *, activation: Callable[[Any], Any] = nn.gelu,
               policy: Policy | None = None) -> Any:
    """down(activation(up(x)))."""
    params, x = _inputs(policy, params, x)
    if not callable(activation):
        raise InvalidArgumentTypeError(f"mlp.apply(activation={activation!r}): pass a function, e.g. nn.gelu.")
    up, down = (checks.entry("mlp", params, name) for name in ("up", "down"))
    return _output(policy, _dense(down, activation(_dense(up, x, "mlp", "params['up']")), "mlp", "params['down']"))


mlp = Layer(_mlp_init, rounded_once(_mlp_apply, trees=True))


# -- attention ---------------------------------------------------------------------------------------------
def _attention_init(key: Any, features: int, heads: int, *, dtype: Any = None) -> dict[str, Any]:
    """Multi-head self-attention: {"q", "k", "v": dense(features, features), "out": dense(features,
    features)}; ``heads`` must divide ``features`` and is given again to ``apply``."""
    if _positive(features, "attention.init: features") % _positive(heads, "attention.init: heads"):
        raise InvalidArgumentError(f"attention: heads={heads} must divide features={features}.")
    return {name: _dense_init(k, features, features, dtype=dtype)
            for name, k in zip(("q", "k", "v", "out"), _keys(key, 4), strict=True)}


def _attention_apply(params: dict[str, Any], x: Any, *, heads: int, mask: Any = None, causal: bool = False,
                     dropout_rate: float = 0.0, key: Any = None, policy: Policy | None = None) -> Any:
    """Self-attention of ``x`` (batch, sequence, features) over ``heads`` heads, then the output
    projection; ``mask``, ``causal``, ``dropout_rate`` and ``key`` as nn.dot_product_attention."""
    params, x = _inputs(policy, params, x)
    if getattr(x, "ndim", None) != 3:
        raise InvalidArgumentError(f"attention.apply: x of shape {tuple(getattr(x, 'shape', ()))} is not 3-d; pass "
                                   f"(batch, sequence, features).")
    batch, length, features = (int(n) for n in x.shape)
    heads = _positive(heads, "attention.apply: heads")
    if features % heads:
        raise InvalidArgumentError(f"attention: heads={heads} must divide the {features} features of x.")
    split = (batch, length, heads, features // heads)
    q, k, v = (reshape(_dense(checks.entry("attention", params, n), x, "attention", f"params[{n!r}]"), split)
               for n in ("q", "k", "v"))
    mixed = nn.dot_product_attention(q, k, v, mask=mask, causal=causal, dropout_rate=dropout_rate, key=key)
    out = checks.entry("attention", params, "out")
    return _output(policy, _dense(out, reshape(mixed, (batch, length, features)), "attention", "params['out']"))


attention = Layer(_attention_init, rounded_once(_attention_apply, trees=True))


# -- transformer block -------------------------------------------------------------------------------------
def _block_init(key: Any, features: int, heads: int, hidden: int | None = None, *, dtype: Any = None
                ) -> dict[str, Any]:
    """Pre-norm block: {"norm1", "attention", "norm2", "mlp"} (hidden: 4 * features by default)."""
    a, m = _keys(key, 2)
    return {"norm1": _layer_norm_init(key, features, dtype=dtype),
            "attention": _attention_init(a, features, heads, dtype=dtype),
            "norm2": _layer_norm_init(key, features, dtype=dtype),
            "mlp": _mlp_init(m, features, 4 * features if hidden is None else hidden, dtype=dtype)}


def _block_apply(params: dict[str, Any], x: Any, *, heads: int, mask: Any = None, causal: bool = True,
                 dropout_rate: float = 0.0, key: Any = None, policy: Policy | None = None) -> Any:
    """x + attention(layer_norm(x)), then + mlp(layer_norm(.)); causal by default. With dropout,
    ``key`` is split between the attention weights and the two residual branches."""
    params, x = _inputs(policy, params, x)
    norm1, attention_params, norm2, mlp_params = (checks.entry("transformer_block", params, name)
                                                  for name in ("norm1", "attention", "norm2", "mlp"))
    keys = _keys(key, 3) if dropout_rate else [None] * 3
    attended = _attention_apply(attention_params, _layer_norm_apply(norm1, x), heads=heads, mask=mask,
                                causal=causal, dropout_rate=dropout_rate, key=keys[0])
    x = add(x, nn.dropout(keys[1], attended, dropout_rate) if dropout_rate else attended)
    hidden = _mlp_apply(mlp_params, _layer_norm_apply(norm2, x))
    x = add(x, nn.dropout(keys[2], hidden, dropout_rate) if dropout_rate else hidden)
    return _output(policy, x)


transformer_block = Layer(_block_init, rounded_once(_block_apply, trees=True))

