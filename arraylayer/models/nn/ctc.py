"""Connectionist temporal classification loss (Graves et al. 2006): the negative log-likelihood of
label sequences under per-frame class logits, summed over every alignment.

Composed of arraylayer's functions (so it runs, and differentiates, on every backend alike): the
forward recursion over the extended label sequence (blank, l1, blank, l2, ..., blank) in log space,
one step per frame in a Python loop (the frame count is static). Log-probabilities of impossible
paths are a large negative number rather than -inf, so no NaN reaches a gradient."""

from __future__ import annotations

from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.creation import arange, full
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import add, equal, greater, less, logaddexp, logical_and, logical_or, multiply, negative, not_equal
from arraylayer.api.linear_algebra import matmul, matrix_transpose
from arraylayer.api.manipulation import concat, expand_dims, reshape, stack
from arraylayer.api.searching import where
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError
from arraylayer.dtypes import as_dtype
from arraylayer.models.nn.common import _creating_on, _device, _floating, _native, _reduce, rounded_once
from arraylayer.models.nn.softmax_family import log_softmax, logsumexp, one_hot

#: the log-probability of an impossible path: finite, so that gradients stay finite
_IMPOSSIBLE: Final = -1e30


def _integers(x: Any, name: str) -> None:
    if not hasattr(x, "dtype") or as_dtype(x.dtype).category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.ctc_loss takes integer {name}; got {getattr(x, 'dtype', type(x).__name__)}.")


@rounded_once
def ctc_loss(labels: Any, logits: Any, label_lengths: Any, logit_lengths: Any, blank_index: int = 0,
             reduction: str = "none") -> Any:
    """-log p(labels | logits) per sequence. ``labels``: (batch, max_label_length) integer classes,
    padded past each ``label_lengths`` entry; ``logits``: (batch, frames, classes), of which the first
    ``logit_lengths`` frames count; ``blank_index``: the blank class. "none" (Keras' and optax's
    default) gives the (batch,) losses; "mean" and "sum" reduce them. A sequence that no alignment
    can produce (too few frames) has a loss near 1e30."""
    dtype = _floating(logits, "ctc_loss")
    for x, name in ((labels, "labels"), (label_lengths, "label_lengths"), (logit_lengths, "logit_lengths")):
        _integers(x, name)
    if logits.ndim != 3 or labels.ndim != 2 or int(labels.shape[0]) != int(logits.shape[0]):
        raise InvalidArgumentError(f"nn.ctc_loss: pass logits of shape (batch, frames, classes) and labels of shape "
                                   f"(batch, max_label_length); got {tuple(logits.shape)} and {tuple(labels.shape)}.")
    batch, frames, classes = (int(n) for n in logits.shape)
    blank = arguments.integer(blank_index, "blank_index")
    if not 0 <= blank < classes:
        raise InvalidArgumentError(f"nn.ctc_loss(blank_index={blank_index}): the blank must be one of the {classes} "
                                   f"classes.")
    for x, name in ((label_lengths, "label_lengths"), (logit_lengths, "logit_lengths")):
        if tuple(x.shape) != (batch,):
            raise InvalidArgumentError(f"nn.ctc_loss: {name} must have shape ({batch},); got {tuple(x.shape)}.")
    width = 2 * int(labels.shape[1]) + 1
    native, rewrap = _native(logits)
    with _creating_on(native):
        positions = arange(width, dtype="int32", device=_device(native))
        blanks = full((batch, int(labels.shape[1])), blank, dtype=labels.dtype, device=_device(native))
    extended = concat([reshape(stack([blanks, labels], axis=-1), (batch, -1)), blanks[:, :1]], axis=1)
    # (batch, frames, width): the log-probability of each extended label at each frame
    log_p = matmul(log_softmax(native, axis=-1), matrix_transpose(one_hot(extended, classes, dtype)))
    label_lengths = astype(label_lengths, "int32")
    frames_used = astype(logit_lengths, "int32")
    # a skip from s - 2 is allowed onto a label that differs from the label two places back
    previous = concat([extended[:, :2], extended[:, :-2]], axis=1)
    skip = logical_and(not_equal(extended, blank), not_equal(extended, previous))
    skip = logical_and(skip, greater(positions, 1))
    start = less(positions, 2)
    alpha = where(start, log_p[:, 0, :], _IMPOSSIBLE)
    impossible = add(multiply(alpha[:, :2], 0.0), _IMPOSSIBLE)  # two columns of it
    for t in range(1, frames):
        one_back = concat([impossible[:, :1], alpha[:, :-1]], axis=1)
        two_back = where(skip, concat([impossible, alpha[:, :-2]], axis=1), _IMPOSSIBLE)
        step = add(logaddexp(logaddexp(alpha, one_back), two_back), log_p[:, t, :])
        alpha = where(expand_dims(less(t, frames_used), -1), step, alpha)  # past a sequence's end: kept
    ends = expand_dims(multiply(label_lengths, 2), -1)
    last = logical_or(equal(positions, ends), equal(positions, add(ends, -1)))
    losses = negative(logsumexp(where(last, alpha, _IMPOSSIBLE), axis=-1))
    return rewrap(_reduce(losses, reduction, "ctc_loss"))

