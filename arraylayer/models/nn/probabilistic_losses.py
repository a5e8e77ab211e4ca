"""Cross-entropies from logits or from probabilities (binary, categorical, sparse categorical),
as keras.ops.nn defines them, with arraylayer's reductions ("mean", "sum", "none").

From probabilities, the probabilities are clipped to [eps, 1 - eps] (Keras' 1e-7) before the
logarithm, so a 0 or a 1 gives a large finite loss rather than inf; from logits, the stable
forms (softplus, log_softmax) are exact for logits of any size."""

from __future__ import annotations

from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.elementwise import abs as absolute
from arraylayer.api.elementwise import add, clip, divide, log, logaddexp, maximum, multiply, negative, subtract
from arraylayer.api.manipulation import moveaxis
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.nn.common import _array, _floating, _reduce, rounded_once
from arraylayer.models.nn.losses import _labels_in_range, cross_entropy
from arraylayer.models.nn.softmax_family import log_softmax, one_hot

#: Keras' epsilon: probabilities are clipped to [EPSILON, 1 - EPSILON] before the logarithm
EPSILON: Final = 1e-7


def _same_shape(function: str, predictions: Any, targets: Any) -> None:
    _array(targets, function, "targets")
    if tuple(predictions.shape) != tuple(targets.shape):
        raise InvalidArgumentError(f"nn.{function}: targets of shape {tuple(targets.shape)} do not match predictions of "
                                   f"shape {tuple(predictions.shape)}; pass targets of the predictions' shape.")


@rounded_once
def binary_cross_entropy(predictions: Any, targets: Any, from_logits: bool = False, reduction: str = "mean") -> Any:
    """-(t log p + (1 - t) log(1 - p)) element-wise, then reduced. ``predictions`` are probabilities
    (clipped to [1e-7, 1 - 1e-7]) or, with ``from_logits``, logits z: max(z, 0) - z t + log(1 + exp(-|z|))."""
    _floating(predictions, "binary_cross_entropy")
    _same_shape("binary_cross_entropy", predictions, targets)
    if arguments.flag(from_logits, "from_logits"):
        losses = add(subtract(maximum(predictions, 0.0), multiply(predictions, targets)),
                     logaddexp(negative(absolute(predictions)), 0.0))
    else:
        p = clip(predictions, EPSILON, 1.0 - EPSILON)
        losses = negative(add(multiply(targets, log(p)), multiply(subtract(1.0, targets), log(subtract(1.0, p)))))
    return _reduce(losses, reduction, "binary_cross_entropy")


@rounded_once
def categorical_cross_entropy(predictions: Any, targets: Any, from_logits: bool = False, axis: int = -1,
                              reduction: str = "mean") -> Any:
    """-sum(t log p) along ``axis`` for target distributions ``targets`` (e.g. one-hot rows).
    Probabilities are first scaled to sum to 1 along ``axis`` and clipped, as Keras does; logits
    go through log_softmax."""
    _floating(predictions, "categorical_cross_entropy")
    _same_shape("categorical_cross_entropy", predictions, targets)
    axis = arguments.axis(axis, predictions.ndim)
    if arguments.flag(from_logits, "from_logits"):
        log_p = log_softmax(predictions, axis=axis)
    else:
        scaled = divide(predictions, statistical.sum(predictions, axis=axis, keepdims=True))
        log_p = log(clip(scaled, EPSILON, 1.0 - EPSILON))
    losses = negative(statistical.sum(multiply(targets, log_p), axis=axis))
    return _reduce(losses, reduction, "categorical_cross_entropy")


@rounded_once
def sparse_categorical_cross_entropy(predictions: Any, labels: Any, from_logits: bool = False, axis: int = -1,
                                     reduction: str = "mean") -> Any:
    """categorical_cross_entropy with integer class ``labels`` (the predictions' shape without
    ``axis``) in place of distributions; from logits it is ``nn.cross_entropy``."""
    dtype = _floating(predictions, "sparse_categorical_cross_entropy")
    if arguments.flag(from_logits, "from_logits"):
        return cross_entropy(predictions, labels, axis=axis, reduction=reduction)
    axis = arguments.axis(axis, predictions.ndim)
    classes = int(predictions.shape[axis])
    targets = one_hot(cross_entropy_labels(predictions, labels, axis), classes, dtype)
    targets = moveaxis(targets, -1, axis) if axis != predictions.ndim - 1 else targets
    return categorical_cross_entropy(predictions, targets, axis=axis, reduction=reduction)


def cross_entropy_labels(predictions: Any, labels: Any, axis: int) -> Any:
    """``labels``, checked as nn.cross_entropy checks them: integers of the predictions' shape
    without ``axis``, each a class."""
    expected = tuple(predictions.shape[:axis]) + tuple(predictions.shape[axis + 1:])
    if tuple(_array(labels, "sparse_categorical_cross_entropy", "labels").shape) != expected:
        raise InvalidArgumentError(f"nn.sparse_categorical_cross_entropy: labels of shape {tuple(labels.shape)} do not "
                                   f"match predictions of shape {tuple(predictions.shape)} without axis {axis}.")
    return _labels_in_range(labels, int(predictions.shape[axis]))
