"""Mixed precision as a policy, and dynamic loss scaling for float16, as pure functions.

A :class:`Policy` names three floating dtypes: ``param_dtype`` (the stored, updated weights),
``compute_dtype`` (what the layers compute in: the weights and inputs are cast to it) and
``output_dtype`` (what a layer returns). ``arraylayer.models.layers`` take ``policy=``; the loss is
computed in float32 (:meth:`Policy.cast_for_loss`).

Loss scaling keeps float16 gradients out of the subnormals: multiply the loss by ``scale``,
divide the gradients by it, and skip the step (halving the scale) when a gradient is not finite;
after ``period`` finite steps in a row the scale doubles, up to ``max_scale`` (by default
:data:`MAX_SCALE`, 2**127, the largest power of two float32 holds: the scale never reaches inf,
so a run that overflows always recovers). The state is a :class:`LossScale` of two 0-d arrays,
so the decisions trace under every compiler and are the same on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from typing import Any, Final, NamedTuple

from arraylayer import arguments
from arraylayer.api import utility
from arraylayer.api.creation import asarray
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import add, divide, greater_equal, isfinite, logical_and, logical_not, maximum, minimum, multiply
from arraylayer.api.manipulation import stack
from arraylayer.api.searching import where
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.tree import tree_leaves, tree_map

__all__ = ["Policy", "policy", "LossScale", "loss_scale", "scale_loss", "unscale", "all_finite", "adjust",
           "select", "MAX_SCALE"]

_FLOATING: Final = tuple(Dtype(name) for name in ("float16", "bfloat16", "float32", "float64"))
_FIELDS: Final = {"params": "param_dtype", "compute": "compute_dtype", "output": "output_dtype"}
_FLOAT32: Final = Dtype("float32")


def _floating_dtype(value: Any, parameter: str) -> Dtype:
    try:
        dtype = as_dtype(value)
    except Exception:  # noqa: BLE001 - any unknown name
        dtype = None
    if dtype not in _FLOATING:
        raise InvalidArgumentError(f"Policy({parameter}={value!r}): choose one of "
                                   f"{', '.join(str(d) for d in _FLOATING)}.")
    return dtype  # type: ignore[return-value]


def _cast(tree: Any, dtype: Dtype) -> Any:
    """Every floating leaf of ``tree`` as ``dtype`` (integer and bool leaves as they are)."""
    def cast(x: Any) -> Any:
        if not hasattr(x, "dtype") or as_dtype(x.dtype).category != "float" or as_dtype(x.dtype) == dtype:
            return x
        return astype(x, dtype)

    return tree_map(cast, tree)


@dataclass(frozen=True)
class Policy:
    """The dtypes of parameters, computation and outputs (float16, bfloat16, float32 or float64)."""

    param_dtype: Any = _FLOAT32
    compute_dtype: Any = _FLOAT32
    output_dtype: Any = _FLOAT32

    def __post_init__(self) -> None:
        for name in ("param_dtype", "compute_dtype", "output_dtype"):
            object.__setattr__(self, name, _floating_dtype(getattr(self, name), name))

    def cast_to_param(self, tree: Any) -> Any:
        return _cast(tree, self.param_dtype)

    def cast_to_compute(self, tree: Any) -> Any:
        return _cast(tree, self.compute_dtype)

    def cast_to_output(self, tree: Any) -> Any:
        return _cast(tree, self.output_dtype)

    def cast_for_loss(self, tree: Any) -> Any:
        """The loss's inputs in float32 (or float64 when that is the output dtype)."""
        return _cast(tree, self.output_dtype if self.output_dtype == Dtype("float64") else _FLOAT32)


def policy(spec: str) -> Policy:
    """A policy from ``"params=float32,compute=bfloat16,output=float32"`` (fields left out are
    float32) or from one dtype name for all three."""
    if not isinstance(spec, str):
        raise InvalidArgumentTypeError(f"policy(spec={spec!r}): pass a string such as 'compute=bfloat16' or 'float32'.")
    if "=" not in spec:
        return Policy(spec, spec, spec)
    fields = {}
    for part in spec.split(","):
        name, _, value = part.partition("=")
        if name.strip() not in _FIELDS:
            raise InvalidArgumentError(f"policy({spec!r}): {name.strip()!r} is not a field; use "
                                       f"{', '.join(_FIELDS)} (e.g. 'params=float32,compute=bfloat16').")
        fields[_FIELDS[name.strip()]] = value.strip()
    return Policy(**fields)


# -- dynamic loss scaling ----------------------------------------------------------------------------------
class LossScale(NamedTuple):
    """The loss scale (float32, 0-d) and the count of finite steps since it last changed (int32, 0-d)."""

    scale: Any
    good_steps: Any


#: The largest loss scale: 2**127, the largest power of two float32 holds (2**128 is inf there).
MAX_SCALE: Final = 2.0**127


def _scale_value(value: Any, call: str, parameter: str) -> float:
    """A scale-like Python number: finite, > 0 and at most MAX_SCALE (InvalidArgumentError otherwise)."""
    number = arguments.real_float(value, parameter)
    if not (math.isfinite(number) and 0 < number <= MAX_SCALE):
        raise InvalidArgumentError(f"{call}({parameter}={value!r}): the scale must be finite, > 0 and at most "
                                   f"MAX_SCALE (2**127, float32's largest power of two); pass e.g. 2.0**15.")
    return number


def _checked(state: Any, call: str) -> LossScale:
    if not isinstance(state, tuple) or not hasattr(state, "scale") or not hasattr(state, "good_steps"):
        raise InvalidArgumentTypeError(f"{call}: state is {type(state).__name__}, not a LossScale; pass the state "
                                       f"loss_scale() made (or the one adjust() returned).")
    return state  # type: ignore[return-value]


def loss_scale(initial: float = 2.0**15, *, device: Any = None) -> LossScale:
    """The starting state, on the active backend; ``initial`` must be finite, > 0 and at most
    :data:`MAX_SCALE`."""
    value = _scale_value(initial, "loss_scale", "initial")
    return LossScale(asarray(value, dtype=_FLOAT32, device=device), asarray(0, dtype=Dtype("int32"), device=device))


def scale_loss(state: LossScale, loss: Any) -> Any:
    """loss * scale, in float32 (differentiate this one)."""
    return multiply(astype(loss, _FLOAT32), _checked(state, "scale_loss").scale)


def unscale(state: LossScale, grads: Any) -> Any:
    """Every gradient divided by the scale, in float32."""
    scale = _checked(state, "unscale").scale
    return tree_map(lambda g: divide(astype(g, _FLOAT32), scale), grads)


def all_finite(grads: Any) -> Any:
    """A 0-d bool: no gradient holds an inf or a NaN."""
    flags = [utility.all(isfinite(g)) for g in tree_leaves(grads)]
    return utility.all(stack(flags)) if flags else True


def adjust(state: LossScale, finite: Any, *, period: int = 2000, factor: float = 2.0,
           min_scale: float = 1.0, max_scale: float = MAX_SCALE) -> LossScale:
    """The next state: on a non-finite step the scale shrinks by ``factor`` (not below ``min_scale``)
    and the count restarts; after ``period`` finite steps in a row it grows by ``factor`` (not
    above ``max_scale``, at most :data:`MAX_SCALE`: it never becomes inf)."""
    state = _checked(state, "adjust")
    growth = arguments.real_float(factor, "factor")
    if (period.__class__ is not int or period <= 0 or not 1 < growth < math.inf
            or _scale_value(min_scale, "adjust", "min_scale") > _scale_value(max_scale, "adjust", "max_scale")):
        raise InvalidArgumentError(f"adjust(period={period!r}, factor={factor!r}, min_scale={min_scale!r}, "
                                   f"max_scale={max_scale!r}): need a positive int period, a finite factor > 1 "
                                   f"and min_scale <= max_scale.")
    counted = add(state.good_steps, 1)
    grow = greater_equal(counted, period)
    scale = where(finite, where(grow, minimum(multiply(state.scale, growth), max_scale), state.scale),
                  maximum(divide(state.scale, growth), min_scale))
    good = where(logical_and(finite, logical_not(grow)), counted, 0)
    return LossScale(scale, astype(good, Dtype("int32")))


def select(finite: Any, new: Any, old: Any) -> Any:
    """``new`` where the step was finite, else ``old`` (leaf by leaf): how a step is skipped."""
    return tree_map(lambda n, o: where(finite, n, o), new, old)
