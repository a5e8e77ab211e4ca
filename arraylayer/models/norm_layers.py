"""Normalisation layers over channels-last input: group_norm (a :class:`Layer` pair) and
batch_norm, a :class:`StatefulLayer` whose running statistics are explicit state.

batch_norm's momentum is Keras' convention: ``new = momentum * running + (1 - momentum) *
batch`` (momentum 0.99 by default; torch's ``momentum=m`` is ours ``1 - m``), with the batch's
population variance (divided by the count, as Keras; torch's running variance uses the unbiased
one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from arraylayer import arguments
from arraylayer.api.elementwise import add, multiply
from arraylayer.errors import InvalidArgumentError
from arraylayer.models import checks, initializers, nn
from arraylayer.models.layer_base import Layer, _features, _inputs, _output, _positive, _weight
from arraylayer.models.mixed_precision import Policy
from arraylayer.models.lowp_rule import rounded_once
from arraylayer.models.random.samplers import _float_dtype

__all__ = ["StatefulLayer", "batch_norm", "group_norm"]


class StatefulLayer(NamedTuple):
    """``init(key, ...) -> params``, ``init_state(...) -> state`` and
    ``apply(params, state, x, training) -> (y, new_state)``."""

    init: Callable[..., dict[str, Any]]
    init_state: Callable[..., dict[str, Any]]
    apply: Callable[..., tuple[Any, dict[str, Any]]]


def _affine_init(layer: str) -> Callable[..., dict[str, Any]]:
    def init(key: Any, channels: int, *, dtype: Any = None) -> dict[str, Any]:
        """{"scale": ones, "offset": zeros} of (channels,)."""
        shape = (_positive(channels, f"{layer}.init: channels"),)
        dtype = _float_dtype(dtype, f"layers.{layer}.init")[1]  # floating parameters, as every layer's
        return {"scale": initializers.ones(key, shape, dtype), "offset": initializers.zeros(key, shape, dtype)}
    return init


# -- group_norm --------------------------------------------------------------------------------------------
def _group_norm_apply(params: dict[str, Any], x: Any, *, groups: int, eps: float = 1e-5,
                      policy: Policy | None = None) -> Any:
    """nn.group_norm of channels-last ``x`` with the scale and offset."""
    params, x = _inputs(policy, params, x)
    scale = _weight("group_norm", params, "scale", 1)
    _features("group_norm", x, scale.shape[0], "params['scale']")
    y = nn.group_norm(x, groups, scale, _weight("group_norm", params, "offset", 1), eps)
    return _output(policy, y)


group_norm = Layer(_affine_init("group_norm"), rounded_once(_group_norm_apply, trees=True))


# -- batch_norm --------------------------------------------------------------------------------------------
def _batch_norm_state(key: Any, channels: int, *, dtype: Any = None) -> dict[str, Any]:
    """{"mean": zeros, "var": ones} of (channels,): the running statistics."""
    shape = (_positive(channels, "batch_norm.init_state: channels"),)
    dtype = _float_dtype(dtype, "layers.batch_norm.init_state")[1]
    return {"mean": initializers.zeros(key, shape, dtype), "var": initializers.ones(key, shape, dtype)}


def _batch_norm_apply(params: dict[str, Any], state: dict[str, Any], x: Any, training: bool = False, *,
                      momentum: float = 0.99, eps: float = 1e-3, policy: Policy | None = None
                      ) -> tuple[Any, dict[str, Any]]:
    """Training: normalise by the batch's statistics over every axis but the last, and return the
    running statistics moved towards them; otherwise normalise by the running ones (state
    returned as it is)."""
    params, x = _inputs(policy, params, x)
    scale, offset = (_weight("batch_norm", params, name, 1) for name in ("scale", "offset"))
    running_mean, running_var = (checks.entry("batch_norm", state, name, "state") for name in ("mean", "var"))
    _features("batch_norm", x, scale.shape[0], "params['scale']")
    rate = arguments.real_float(momentum, "momentum")
    if not 0.0 <= rate <= 1.0:
        raise InvalidArgumentError(f"batch_norm.apply(momentum={momentum}): pass a momentum in [0, 1].")
    if not arguments.flag(training, "training"):
        return _output(policy, nn.batch_norm(x, running_mean, running_var, scale, offset, eps)), state
    mean, var = nn.moments(x, axes=tuple(range(x.ndim - 1)))
    y = nn.batch_norm(x, mean, var, scale, offset, eps)
    moved = {"mean": add(multiply(running_mean, rate), multiply(mean, 1.0 - rate)),
             "var": add(multiply(running_var, rate), multiply(var, 1.0 - rate))}
    return _output(policy, y), moved


batch_norm = StatefulLayer(_affine_init("batch_norm"), _batch_norm_state,
                           rounded_once(_batch_norm_apply, trees=True))
