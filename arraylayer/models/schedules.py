"""Learning-rate schedules: functions of the step count that trace once.

A schedule maps a step count (a 0-d integer array, or a Python int, which becomes one on the
active backend) to a 0-d float32 array of the count's backend. It is written with arraylayer's
functions only, with no Python branch on the count's value, so inside ``jax.jit``,
``tf.function`` and ``torch.compile`` it is traced once and the compiled step computes each
step's rate. Pass one as the ``learning_rate`` of ``optim.sgd``/``adam``/``adamw`` or of
``transforms.scale_by_learning_rate``: the optimizer keeps the count in its state.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from arraylayer import arguments
from arraylayer.api.creation import asarray, full_like
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import add, clip, cos, divide, exp, floor, greater_equal, multiply, subtract
from arraylayer.api.searching import where
from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError

__all__ = ["Schedule", "constant", "linear", "cosine_decay", "exponential_decay", "piecewise_constant", "join",
           "warmup_cosine_decay"]

Schedule = Callable[[Any], Any]
_INT32 = Dtype("int32")
_FLOAT32 = Dtype("float32")


def _count(count: Any) -> Any:
    """The count as a 0-d integer array (a Python int becomes an int32 array on the active backend)."""
    if hasattr(count, "dtype"):
        return count
    return asarray(int(arguments.integer(count, "count")), dtype=_INT32)


def _float(count: Any) -> Any:
    return astype(count, _FLOAT32)


def _number(value: Any, parameter: str) -> float:
    value = arguments.real_float(value, parameter)
    if not math.isfinite(value):
        raise InvalidArgumentError(f"{parameter}={value!r} must be finite.")
    return value


def _steps(value: Any, parameter: str, *, allow_zero: bool = False) -> int:
    value = arguments.integer(value, parameter)
    if value < (0 if allow_zero else 1):
        raise InvalidArgumentError(f"{parameter}={value!r} must be a {'non-negative' if allow_zero else 'positive'} "
                                   f"number of steps.")
    return value


def constant(value: float) -> Schedule:
    """``value`` at every step."""
    value = _number(value, "value")
    return lambda count: full_like(_float(_count(count)), value)


def linear(start: float, end: float, steps: int) -> Schedule:
    """From ``start`` at step 0 to ``end`` at step ``steps``, linearly, then ``end``: a linear
    warm-up is ``linear(0.0, peak, steps)``."""
    start, end, steps = _number(start, "start"), _number(end, "end"), _steps(steps, "steps")

    def schedule(count: Any) -> Any:
        fraction = clip(divide(_float(_count(count)), float(steps)), 0.0, 1.0)
        return add(multiply(fraction, end - start), start)

    return schedule


def cosine_decay(init: float, steps: int, alpha: float = 0.0) -> Schedule:
    """Half a cosine from ``init`` at step 0 to ``alpha * init`` at step ``steps``, then constant:
    ``init * ((1 - alpha) * (1 + cos(pi * min(t, steps) / steps)) / 2 + alpha)``."""
    init, steps, alpha = _number(init, "init"), _steps(steps, "steps"), _number(alpha, "alpha")

    def schedule(count: Any) -> Any:
        fraction = clip(divide(_float(_count(count)), float(steps)), 0.0, 1.0)
        cosine = multiply(add(cos(multiply(fraction, math.pi)), 1.0), 0.5 * (1.0 - alpha))
        return multiply(add(cosine, alpha), init)

    return schedule


def exponential_decay(init: float, rate: float, steps: int, staircase: bool = False) -> Schedule:
    """``init * rate ** (t / steps)``; with ``staircase``, ``t / steps`` is floored (step decay:
    the value is multiplied by ``rate`` every ``steps`` steps)."""
    init, rate, steps = _number(init, "init"), _number(rate, "rate"), _steps(steps, "steps")
    staircase = arguments.flag(staircase, "staircase")
    if rate <= 0.0:
        raise InvalidArgumentError(f"rate={rate!r} must be positive.")
    log_rate = math.log(rate)

    def schedule(count: Any) -> Any:
        exponent = divide(_float(_count(count)), float(steps))
        if staircase:
            exponent = floor(exponent)
        return multiply(exp(multiply(exponent, log_rate)), init)

    return schedule


def _boundaries(boundaries: Sequence[int], expected: int, what: str) -> list[int]:
    if not isinstance(boundaries, (list, tuple)):
        raise InvalidArgumentTypeError(f"boundaries: pass a list of step counts, got {type(boundaries).__name__}.")
    bounds = [_steps(b, "boundaries", allow_zero=True) for b in boundaries]
    if len(bounds) != expected or any(b >= c for b, c in zip(bounds, bounds[1:], strict=False)):
        raise InvalidArgumentError(f"boundaries={list(boundaries)!r}: pass {expected} increasing step counts, one "
                                   f"fewer than the {what}.")
    return bounds


def piecewise_constant(boundaries: Sequence[int], values: Sequence[float]) -> Schedule:
    """``values[0]`` before ``boundaries[0]``, ``values[i]`` from ``boundaries[i - 1]`` on."""
    values = [_number(v, "values") for v in values]
    bounds = _boundaries(boundaries, len(values) - 1, "values")

    def schedule(count: Any) -> Any:
        count = _count(count)
        out = full_like(_float(count), values[0])
        for bound, value in zip(bounds, values[1:], strict=True):
            out = where(greater_equal(count, bound), value, out)
        return out

    return schedule


def join(schedules: Sequence[Schedule], boundaries: Sequence[int]) -> Schedule:
    """``schedules[0]`` before ``boundaries[0]``; from ``boundaries[i - 1]`` on, ``schedules[i]``
    evaluated at the steps since that boundary (every one is computed; ``where`` picks)."""
    schedules = list(schedules)
    for position, s in enumerate(schedules):
        if not callable(s):
            raise InvalidArgumentTypeError(f"join: schedules[{position}] is {type(s).__name__}, not a schedule; "
                                           f"pass functions of the step count such as schedules.constant(0.1).")
    bounds = _boundaries(boundaries, len(schedules) - 1, "schedules")

    def schedule(count: Any) -> Any:
        count = _count(count)
        out = schedules[0](count)
        for bound, later in zip(bounds, schedules[1:], strict=True):
            out = where(greater_equal(count, bound), later(subtract(count, bound)), out)
        return out

    return schedule


def warmup_cosine_decay(peak: float, warmup_steps: int, decay_steps: int, start: float = 0.0,
                        alpha: float = 0.0) -> Schedule:
    """A linear warm-up from ``start`` to ``peak`` over ``warmup_steps``, then a cosine decay to
    ``alpha * peak`` over ``decay_steps``."""
    warmup_steps = _steps(warmup_steps, "warmup_steps")
    return join([linear(start, peak, warmup_steps), cosine_decay(peak, decay_steps, alpha)], [warmup_steps])
