"""What every layer is made of: the :class:`Layer` pair, and the checks and casts each ``apply``
shares (the policy's casts, key splitting, positive sizes, feature axes, weight entries).

Its own module so that the layer modules (``layers``, ``recurrent``) import it, not each other.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from arraylayer import arguments
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models import checks, random
from arraylayer.models.mixed_precision import Policy

__all__ = ["Layer"]


class Layer(NamedTuple):
    """``init(key, ...) -> params`` and ``apply(params, x, ...) -> y``."""

    init: Callable[..., dict[str, Any]]
    apply: Callable[..., Any]


def _inputs(policy: Policy | None, params: Any, x: Any) -> tuple[Any, Any]:
    if policy is None:
        return params, x
    if not isinstance(policy, Policy):
        raise InvalidArgumentTypeError(f"policy={policy!r} ({type(policy).__name__}) is not a Policy; pass "
                                       f"arraylayer.mixed_precision.policy('compute=bfloat16') or None.")
    return policy.cast_to_compute(params), policy.cast_to_compute(x)


def _output(policy: Policy | None, y: Any) -> Any:
    return y if policy is None else policy.cast_to_output(y)


def _keys(key: Any, count: int) -> list[Any]:
    keys = random.split(key, count)
    return [keys[i] for i in range(count)]


def _positive(value: Any, parameter: str) -> int:
    """A size: a positive int (NumPy's ints too; not a bool, a float or a string)."""
    n = arguments.integer(value, parameter)
    if n <= 0:
        raise InvalidArgumentError(f"{parameter}={value!r}: pass a positive int.")
    return n


def _features(layer: str, x: Any, expected: Any, what: str, axis: int = -1) -> tuple[int, ...]:
    """x's shape, whose ``axis`` (the features) must have the length of the weights' ``expected``
    (lengths unknown until run, TensorFlow's None and dask's nan, are not compared)."""
    if not hasattr(x, "shape"):
        raise InvalidArgumentTypeError(f"{layer}.apply: x is {type(x).__name__}, not an array; pass an array, e.g. "
                                       f"arraylayer.asarray(x, dtype='float32').")
    shape = tuple(x.shape)
    if len(shape) < (-axis if axis < 0 else axis + 1):
        raise InvalidArgumentError(f"{layer}.apply: x of shape {shape} has no feature axis {axis}; pass an array "
                                   f"of features on that axis.")
    length = shape[axis]
    if length is not None and length == length and expected is not None and int(length) != int(expected):
        raise InvalidArgumentError(f"{layer}.apply: x has {int(length)} features (axis {axis} of shape {shape}) but "
                                   f"{what} takes {int(expected)}; pass x with {int(expected)} features there, or "
                                   f"init the layer for {int(length)}.")
    return shape


def _weight(layer: str, params: Any, name: str, ndim: int, at: str = "params") -> Any:
    """params[name], an array of ``ndim`` axes (checks.entry names what is missing)."""
    w = checks.entry(layer, params, name, at)
    if getattr(w, "ndim", None) != ndim:
        raise InvalidArgumentError(f"{layer}.apply: {at}[{name!r}] has shape {tuple(getattr(w, 'shape', ()))}, "
                                   f"not {ndim}-d; pass the parameters {layer}.init(key, ...) made.")
    return w
