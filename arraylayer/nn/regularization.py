"""Keyed dropout: the same key drops the same elements on every backend."""

from __future__ import annotations

from typing import Any

from .. import dropout_masks, random
from ..api import arguments
from ..api.elementwise import divide
from ..api.searching import where
from ..errors import InvalidArgumentError
from ..registry import backend_of
from .common import _creating_on, _floating, _native


def dropout(key: Any, x: Any, rate: float, training: bool = True) -> Any:
    """Inverted dropout: each element zeroed with probability ``rate`` (drawn from ``key``, so the same
    key drops the same elements on every backend), the others scaled by 1 / (1 - rate). Identity when
    ``training`` is False or ``rate`` is 0."""
    _floating(x, "dropout")
    rate = arguments.real_scalar(rate, "rate")
    if not 0.0 <= rate < 1.0:
        raise InvalidArgumentError(f"nn.dropout(rate={rate}): the rate must lie in [0, 1).")
    if not arguments.flag(training, "training") or rate == 0.0:
        return x
    native, rewrap = _native(x)
    keep = dropout_masks.keep(backend_of(native).name, _native(key)[0], native, 1.0 - rate)
    if keep is None:
        with _creating_on(native):
            keep = random.bernoulli(key, 1.0 - rate, tuple(native.shape))
    return rewrap(where(keep, divide(native, 1.0 - rate), 0.0))


