"""``top_k`` and ``in_top_k``: the k largest entries along the last axis.

Ties go to the lower index first (jax.lax.top_k's order) on every backend: the entries are ranked by
a stable descending ``argsort``, and NaN ranks above every number, +inf included (jax.lax.top_k's order; keras' NumPy backend ranks it
last).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from arraylayer import arguments
from arraylayer.api import elementwise, indexing, manipulation, searching, sorting, statistical
from arraylayer.api.dispatch import array_input
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError

Array = Any


class TopK(NamedTuple):
    """The ``values`` and their ``indices`` (default index dtype) along the last axis."""

    values: Array
    indices: Array


def _k(k: Any, length: int, name: str) -> int:
    k = arguments.integer(k, "k")
    if not 0 <= k <= length:
        raise InvalidArgumentError(f"{name}: k={k} must lie in [0, {length}] (the length of the last axis); "
                                   f"pass a k in that range.")
    return k


def _descending(x: Array, floating: bool) -> Array:
    """The stable descending order of x along its last axis with NaN first (jax.lax.top_k's): the
    values with NaN read as +inf, then the NaNs moved to the front by a second stable sort."""
    if not floating:
        return sorting.argsort(x, axis=-1, descending=True, stable=True)
    nan = elementwise.isnan(x)
    order = sorting.argsort(searching.where(nan, math.inf, x), axis=-1, descending=True, stable=True)
    later = elementwise.logical_not(indexing.take_along_axis(nan, order, axis=-1))
    return indexing.take_along_axis(order, sorting.argsort(later, axis=-1, stable=True), axis=-1)


def top_k(x: Array, k: int, sorted: bool = True) -> TopK:  # noqa: A002 - keras' and jax's name
    """The ``k`` largest entries of x along its last axis, largest first, and their indices.

    Equal entries come lower index first. ``sorted=False`` is accepted for keras.ops' signature: the
    result is sorted either way (what jax.lax.top_k gives too). Real input only; x of rank >= 1 and
    0 <= k <= x.shape[-1].
    """
    backend, x, dtype = array_input(x)
    arguments.flag(sorted, "sorted")
    if len(x.shape) == 0:
        raise InvalidArgumentError("top_k takes an array of rank >= 1 (it works along the last axis); got a 0-d "
                                   "array.")
    if dtype.category == "complex":
        raise InvalidDtypeError(f"top_k orders real values; got {dtype}. Rank by arraylayer.abs(x) instead.")
    k = _k(k, x.shape[-1], "top_k")
    order = _descending(x, dtype.category == "float")
    indices = order[..., :k]
    return TopK(indexing.take_along_axis(x, indices, axis=-1), indices)


def in_top_k(targets: Array, predictions: Array, k: int) -> Array:
    """Whether each ``targets[i]`` is among the ``k`` largest of ``predictions[i]`` (shape (batch, classes)).

    keras.ops.in_top_k's rule: a class whose prediction ties with the k-th largest counts as in, a
    NaN prediction at the target never does, and a target outside [0, classes) is False. Bool
    result of shape (batch,).
    """
    _, targets, target_dtype = array_input(targets)
    _, predictions, dtype = array_input(predictions)
    if target_dtype.category not in ("int", "uint"):
        raise InvalidDtypeError(f"in_top_k: targets are class indices and must be integers; got {target_dtype}.")
    if dtype.category not in ("float", "int", "uint"):
        raise InvalidDtypeError(f"in_top_k: predictions must be real numbers; got {dtype}.")
    if len(predictions.shape) != 2 or tuple(targets.shape) != tuple(predictions.shape[:1]):
        raise InvalidArgumentError(f"in_top_k takes targets of shape (batch,) and predictions of shape "
                                   f"(batch, classes); got {tuple(targets.shape)} and {tuple(predictions.shape)}.")
    classes = predictions.shape[1]
    k = _k(k, classes, "in_top_k")
    valid = elementwise.logical_and(elementwise.greater_equal(targets, 0), elementwise.less(targets, classes))
    safe = searching.where(valid, targets, 0) if classes else targets
    if classes == 0:
        return valid
    at_target = indexing.take_along_axis(predictions, manipulation.expand_dims(safe, axis=-1), axis=-1)
    if dtype.category == "float":
        valid = elementwise.logical_and(valid, elementwise.logical_not(elementwise.isnan(at_target[..., 0])))
    above = statistical.sum(elementwise.greater(predictions, at_target), axis=-1)
    return elementwise.logical_and(valid, elementwise.less(above, k))


__all__ = ["top_k", "in_top_k"]
