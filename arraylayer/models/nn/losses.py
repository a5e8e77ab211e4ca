"""Losses: cross_entropy (with ignored entries, masks, label smoothing) and mse."""

from __future__ import annotations

from typing import Any

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (
    add,
    divide,
    logical_and,
    maximum,
    multiply,
    negative,
    not_equal,
    square,
    subtract,
)
from arraylayer.api.manipulation import moveaxis
from arraylayer.api.searching import where
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.runtime.registry import backend_of
from arraylayer.models.nn.common import (
    _FUSED_DTYPES, _REDUCTIONS, _floating, _in_range, _native, _reduce, rounded_once,
)
from arraylayer.models.nn.softmax_family import log_softmax, one_hot


@rounded_once
def cross_entropy(logits: Any, labels: Any, axis: int = -1, reduction: str = "mean", *,
                  ignore_index: int | None = None, mask: Any = None, label_smoothing: float = 0.0) -> Any:
    """Softmax cross-entropy from ``logits`` and integer class ``labels`` (the logits' shape without
    ``axis``): -log_softmax(logits)[label], then reduced (``reduction``: "mean", "sum", "none").

    ``label_smoothing`` e in [0, 1] takes the target (1 - e) one_hot + e / classes (torch's and
    optax's definition). Entries whose label is ``ignore_index``, or where the boolean ``mask`` (the
    labels' shape) is False, count for nothing: their loss is 0 and "mean" is over the counted
    entries only (0 when none is counted; torch gives NaN there)."""
    dtype = _floating(logits, "cross_entropy")
    axis = arguments.axis(axis, logits.ndim)
    classes = int(logits.shape[axis])
    if not (hasattr(labels, "dtype") and hasattr(labels, "shape")):
        raise InvalidArgumentTypeError(f"nn.cross_entropy: labels is {type(labels).__name__}, not an array; pass an "
                                       f"integer array of class indices, e.g. arraylayer.asarray(labels, dtype='int32').")
    if tuple(labels.shape) != tuple(logits.shape[:axis]) + tuple(logits.shape[axis + 1:]):
        raise InvalidArgumentError(f"nn.cross_entropy: labels of shape {tuple(labels.shape)} do not match logits of "
                                   f"shape {tuple(logits.shape)} without axis {axis}.")
    if reduction not in _REDUCTIONS:
        raise InvalidArgumentError(f"nn.cross_entropy(reduction={reduction!r}): choose one of {', '.join(_REDUCTIONS)}.")
    smoothing = arguments.real_float(label_smoothing, "label_smoothing")
    if not 0.0 <= smoothing <= 1.0:
        raise InvalidArgumentError(f"nn.cross_entropy(label_smoothing={label_smoothing}): it must lie in [0, 1].")
    labels, counted = _counted(labels, ignore_index, mask)
    labels = _labels_in_range(labels, classes)
    moved = moveaxis(logits, axis, -1) if axis != logits.ndim - 1 else logits
    fused = getattr(backend_of(logits).nn_kernels, "softmax_cross_entropy", None)
    if fused is not None and moved.ndim == 2 and dtype in _FUSED_DTYPES and smoothing == 0.0:  # one op
        native, rewrap = _native(moved)
        losses = rewrap(fused(native, _native(labels)[0]))
    else:
        log_p = log_softmax(moved, axis=-1)
        losses = negative(statistical.sum(multiply(log_p, one_hot(labels, classes, dtype)), axis=-1))
        if smoothing:  # (1 - e) * nll + e * the mean over classes of -log p
            uniform = negative(statistical.mean(log_p, axis=-1))
            losses = add(multiply(losses, 1.0 - smoothing), multiply(uniform, smoothing))
    if counted is None:
        return _reduce(losses, reduction, "cross_entropy")
    losses = where(counted, losses, 0.0)
    if reduction != "mean":
        return _reduce(losses, reduction, "cross_entropy")
    count = maximum(statistical.sum(astype(counted, dtype)), 1.0)
    return statistical.sum(divide(losses, count))  # a 0-d array (NumPy's divide of two 0-d arrays gives a scalar)


def _counted(labels: Any, ignore_index: Any, mask: Any) -> tuple[Any, Any]:
    """(labels with ignored entries replaced by class 0, the boolean array of counted entries or
    None when every entry counts)."""
    counted = None
    if ignore_index is not None:
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise InvalidArgumentError(f"nn.cross_entropy(ignore_index={ignore_index!r}): pass an int label "
                                       f"(e.g. -100) or None.")
        if as_dtype(labels.dtype).category not in ("int", "uint"):
            raise InvalidDtypeError(f"nn.cross_entropy takes integer class labels; got {as_dtype(labels.dtype)}.")
        counted = not_equal(labels, ignore_index)
        labels = where(counted, labels, 0)
    if mask is not None:
        if not hasattr(mask, "dtype") or as_dtype(mask.dtype).category != "bool" or tuple(mask.shape) != tuple(labels.shape):
            raise InvalidArgumentError(f"nn.cross_entropy(mask=...): the mask must be a boolean array of the labels' "
                                       f"shape {tuple(labels.shape)}; got {getattr(mask, 'dtype', type(mask))} of shape "
                                       f"{tuple(getattr(mask, 'shape', ()))}.")
        counted = mask if counted is None else logical_and(counted, mask)
    return labels, counted


def _labels_in_range(labels: Any, classes: int) -> Any:
    """``labels``, checked: InvalidDtypeError for non-integer labels; InvalidArgumentError for a
    label outside [0, classes), now where the values are known, when computed on dask (the
    returned labels raise it then), not inside a compiler's trace (a silent loss of 0 or a
    framework's own error there)."""
    kind = as_dtype(labels.dtype)
    if kind.category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.cross_entropy takes integer class labels; got {kind}.")
    return _in_range(labels, classes, _label_error)


def _label_error(bad: int, classes: int) -> InvalidArgumentError:
    return InvalidArgumentError(f"nn.cross_entropy: label {bad} is not a class of the {classes} logits "
                                f"per row; labels must lie in [0, {classes}).")


@rounded_once
def mse(predictions: Any, targets: Any, reduction: str = "mean") -> Any:
    """Mean squared error (``reduction``: "mean", "sum" or "none" for the element-wise squares)."""
    _floating(predictions, "mse")
    return _reduce(square(subtract(predictions, targets)), reduction, "mse")


