"""Keyed dropout: the same key drops the same elements on every backend."""

from __future__ import annotations

import math
from typing import Any

from arraylayer.models import dropout_masks, random
from arraylayer import arguments
from arraylayer.api.creation import full
from arraylayer.api.elementwise import divide
from arraylayer.api.searching import where
from arraylayer.errors import InvalidArgumentError
from arraylayer.runtime.registry import backend_of
from arraylayer.models.nn.common import _creating_on, _device, _floating, _native, rounded_once


@rounded_once
def dropout(key: Any, x: Any, rate: float, training: bool = True) -> Any:
    """Inverted dropout: each element zeroed with probability ``rate`` (drawn from ``key``, so the same
    key drops the same elements on every backend), the others divided by 1 - rate. Identity when
    ``training`` is False or ``rate`` is 0. One division by a mask of 1 - rate and inf, on every
    backend: a dropped element becomes a zero of its sign (NaN where it was inf or NaN, as in
    torch.nn.functional.dropout), its gradient likewise."""
    _floating(x, "dropout")
    rate = arguments.real_scalar(rate, "rate")
    if not 0.0 <= rate < 1.0:
        raise InvalidArgumentError(f"nn.dropout(rate={rate}): the rate must lie in [0, 1).")
    if not arguments.flag(training, "training") or rate == 0.0:
        return x
    native, rewrap = _native(x)
    q = 1.0 - rate
    divisor = dropout_masks.divisor(backend_of(native).name, _native(key)[0], native, q)
    if divisor is None:  # the same divisor through arraylayer: traced code, other backends and devices
        with _creating_on(native):
            keep = random.bernoulli(key, q, tuple(native.shape), device=_device(native))  # beside x
            kept = full((), q, dtype=native.dtype, device=_device(native))
        divisor = where(keep, kept, math.inf)
    return rewrap(divide(native, divisor))


