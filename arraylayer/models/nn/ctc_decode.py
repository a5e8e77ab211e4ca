"""Greedy CTC decoding, keras.ops.nn.ctc_decode's ``strategy="greedy"``: the most likely class of
each frame, repeats merged, blanks dropped and the rest moved to the front (a stable sort of the
positions, so no data-dependent shape), padded with -1.

Composed of ``argmax``, ``max``, ``where``, ``argsort`` and ``take_along_axis``, so every backend
gives the same labels and scores (dask lazily). Beam search is not implemented: it raises."""

from __future__ import annotations

from typing import Any

from arraylayer.api import statistical
from arraylayer.api.creation import arange
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import equal, greater_equal, negative
from arraylayer.api.extensions import pad
from arraylayer.api.indexing import take_along_axis
from arraylayer.api.manipulation import expand_dims, reshape
from arraylayer.api.searching import argmax, where
from arraylayer.api.sorting import argsort
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError, UnsupportedOperationError
from arraylayer.models.nn.common import _creating_on, _device, _floating, rounded_once


@rounded_once
def ctc_decode(inputs: Any, sequence_lengths: Any, strategy: str = "greedy", beam_width: int = 100, top_paths: int = 1,
               merge_repeated: bool = True, mask_index: int | None = 0) -> tuple[Any, Any]:
    """(labels, scores) of the best path of ``inputs`` (``(batch, frames, classes)`` logits or
    log-probabilities), each sequence ``sequence_lengths[b]`` frames long: labels ``(1, batch,
    frames)`` int32, the decoded classes first and -1 after; scores ``(batch, 1)``, minus the sum
    of each frame's largest input. ``mask_index`` is the blank (None: the last class)."""
    _floating(inputs, "ctc_decode")
    if strategy != "greedy":
        if strategy == "beam_search":
            raise UnsupportedOperationError("nn.ctc_decode(strategy='beam_search') is not implemented; use "
                                            "strategy='greedy'.")
        raise InvalidArgumentError(f"nn.ctc_decode(strategy={strategy!r}): choose 'greedy'.")
    if len(inputs.shape) != 3:
        raise InvalidArgumentError(f"nn.ctc_decode: inputs must be (batch, frames, classes); got shape "
                                   f"{tuple(inputs.shape)}.")
    if not hasattr(sequence_lengths, "dtype") or as_dtype(sequence_lengths.dtype).category not in ("int", "uint"):
        raise InvalidDtypeError("nn.ctc_decode: sequence_lengths must be an integer array of one length per sequence.")
    if tuple(sequence_lengths.shape) != (inputs.shape[0],):
        raise InvalidArgumentError(f"nn.ctc_decode: {tuple(sequence_lengths.shape)} sequence_lengths for "
                                   f"{inputs.shape[0]} sequences.")
    batch, frames, classes = inputs.shape
    blank = classes - 1 if mask_index is None else mask_index
    if not isinstance(blank, int) or isinstance(blank, bool) or not 0 <= blank < classes:
        raise InvalidArgumentError(f"nn.ctc_decode(mask_index={mask_index!r}): give a class in [0, {classes}) or None.")
    labels = astype(argmax(inputs, axis=-1), "int32")
    best = statistical.max(inputs, axis=-1)
    with _creating_on(inputs):
        steps = arange(frames, dtype="int32", device=_device(inputs))
    beyond = greater_equal(reshape(steps, (1, frames)), expand_dims(astype(sequence_lengths, "int32"), axis=1))
    labels = where(beyond, blank, labels)
    best = where(beyond, 0.0, best)
    if merge_repeated and frames > 1:
        # each frame against the one before it (-1 before the first: no class); ints padded, not bools
        repeated = equal(labels, pad(labels[:, :-1], ((0, 0), (1, 0)), constant_values=-1))
        labels = where(repeated, blank, labels)
    dropped = equal(labels, blank)
    labels = where(dropped, -1, labels)
    order = argsort(where(dropped, frames, reshape(steps, (1, frames))), axis=-1, stable=True)
    labels = take_along_axis(labels, order, axis=-1)
    return expand_dims(labels, axis=0), negative(statistical.sum(best, axis=1, keepdims=True))
