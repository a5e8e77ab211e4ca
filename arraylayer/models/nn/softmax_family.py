"""The softmax family: logsumexp, log_softmax, softmax, and one_hot, multi_hot."""

from __future__ import annotations

from typing import Any

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.creation import arange
from arraylayer.api.data_types import astype
from arraylayer.api.dispatch import refuse_without_zero
from arraylayer.api.elementwise import add, divide, equal, exp, isfinite, log, subtract
from arraylayer.api.manipulation import expand_dims, moveaxis, squeeze
from arraylayer.api.searching import where
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError
from arraylayer.models.nn.common import _array, _creating_on, _device, _floating, _fused_along, _native, rounded_once


@rounded_once
def logsumexp(x: Any, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) over ``axis``, shifted by the maximum: finite for logits of any size
    (an all -inf slice gives -inf, a +inf gives +inf)."""
    _floating(x, "logsumexp")
    peak = statistical.max(x, axis=axis, keepdims=True)
    shift = where(isfinite(peak), peak, 0.0)
    total = log(statistical.sum(exp(subtract(x, shift)), axis=axis, keepdims=True))
    result = add(total, shift)
    return result if keepdims else squeeze(result, axis=_axes(axis, result.ndim))


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


@rounded_once
def log_softmax(x: Any, axis: int = -1) -> Any:
    """(x - max) - log(sum(exp(x - max))) along ``axis``: log-probabilities, stable for logits of any
    size. Not x - logsumexp(x): logsumexp rounded in the input's dtype loses the small log-sum when
    the logits are large (bfloat16 rounds 100 + log 2 to 100.5, which would make log(1/2) -0.5)."""
    dtype = _floating(x, "log_softmax")
    result = _fused_along(x, dtype, "log_softmax", axis)
    if result is not None:
        return result
    peak = statistical.max(x, axis=axis, keepdims=True)
    shifted = subtract(x, where(isfinite(peak), peak, 0.0))
    return subtract(shifted, log(statistical.sum(exp(shifted), axis=axis, keepdims=True)))


@rounded_once
def softmax(x: Any, axis: int = -1) -> Any:
    """exp(x) / sum(exp(x)) along ``axis``, shifted by the maximum (no overflow at logits of 100)."""
    dtype = _floating(x, "softmax")
    result = _fused_along(x, dtype, "softmax", axis)
    if result is not None:
        return result
    shifted = exp(subtract(x, statistical.max(x, axis=axis, keepdims=True)))
    return divide(shifted, statistical.sum(shifted, axis=axis, keepdims=True))


def one_hot(labels: Any, num_classes: int, dtype: Any = None) -> Any:
    """A trailing axis of ``num_classes`` with 1 at each label (integer labels; others get all 0).
    ``dtype``: None is the default float dtype."""
    kind = as_dtype(_array(labels, "one_hot", "labels").dtype)
    if kind.category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.one_hot takes integer labels; got {kind}.")
    count = arguments.count(num_classes, "num_classes")
    if count == 0:
        raise InvalidArgumentError("nn.one_hot(num_classes=0): there must be at least one class.")
    target = default_float_dtype() if dtype is None else as_dtype(dtype)
    refuse_without_zero("nn.one_hot", target)  # its 0s would be NaN
    native, rewrap = _native(labels)
    with _creating_on(native):
        classes = arange(count, dtype=kind, device=_device(native))
    hits = equal(expand_dims(native, axis=-1), classes)
    return rewrap(astype(hits, target))




def multi_hot(labels: Any, num_classes: int, axis: int = -1, dtype: Any = None) -> Any:
    """1 at every class that occurs along ``axis`` of integer ``labels`` (that axis is replaced by one
    of ``num_classes``): one_hot's rows combined by maximum. ``dtype``: None is the default float dtype."""
    if not hasattr(labels, "ndim") or labels.ndim < 1:
        raise InvalidArgumentError("nn.multi_hot takes labels with at least one axis (the labels of each entry).")
    axis = arguments.axis(axis, labels.ndim)
    hits = one_hot(labels, num_classes, dtype)
    combined = statistical.max(hits, axis=axis)  # the class axis is last
    return combined if axis == labels.ndim - 1 else moveaxis(combined, -1, axis)
