"""Optimizers as pure functions over parameter trees: ``state = opt.init(params)``, then
``params, state = opt.update(grads, state, params)`` each step.

The state is a tree of arrays of the parameters' backend (the step count included), so a whole
training step (loss, ``arraylayer.value_and_grad``, update) runs under ``jax.jit``,
``tf.function`` and ``torch.compile``. Every update is written with arraylayer's functions and
Python-float hyper-parameters, which are weak: float32 parameters stay float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import arraylayer as al

from .api import arguments
from .dtypes import Dtype
from .errors import InvalidArgumentError
from .tree import tree_leaves, tree_map

__all__ = ["Optimizer", "sgd", "adam", "adamw"]


class Optimizer(NamedTuple):
    """An optimizer: ``init(params) -> state`` and ``update(grads, state, params) -> (params, state)``."""

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any], tuple[Any, Any]]


def _rate(value: Any, parameter: str, *, low: float = 0.0, high: float = float("inf"), open_low: bool = True) -> float:
    value = float(arguments.real_scalar(value, parameter))
    if not (low < value if open_low else low <= value) or not value < high:
        bounds = f"({low}, {high})" if open_low else f"[{low}, {high})"
        raise InvalidArgumentError(f"{parameter}={value!r} must lie in {bounds}.")
    return value


def sgd(learning_rate: float, momentum: float = 0.0, nesterov: bool = False) -> Optimizer:
    """Gradient descent, with heavy-ball ``momentum`` (v = momentum * v + g; p -= lr * v) or, with
    ``nesterov``, the Nesterov form (p -= lr * (g + momentum * v))."""
    lr = _rate(learning_rate, "learning_rate")
    mu = _rate(momentum, "momentum", high=1.0, open_low=False)
    nesterov = arguments.flag(nesterov, "nesterov")

    def init(params: Any) -> Any:
        return {"velocity": tree_map(al.zeros_like, params)} if mu else {}

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        if not mu:
            return tree_map(lambda p, g: al.subtract(p, al.multiply(g, lr)), params, grads), state
        velocity = tree_map(lambda v, g: al.add(al.multiply(v, mu), g), state["velocity"], grads)
        step = tree_map(lambda v, g: al.add(g, al.multiply(v, mu)), velocity, grads) if nesterov else velocity
        return tree_map(lambda p, s: al.subtract(p, al.multiply(s, lr)), params, step), {"velocity": velocity}

    return Optimizer(init, update)


def adam(learning_rate: float = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma and Ba): bias-corrected first and second moment estimates."""
    return _adam(learning_rate, b1, b2, eps, 0.0)


def adamw(learning_rate: float = 1e-3, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
          weight_decay: float = 1e-2) -> Optimizer:
    """AdamW (Loshchilov and Hutter): Adam with decoupled weight decay, p -= lr * weight_decay * p."""
    return _adam(learning_rate, b1, b2, eps, weight_decay)


#: The dtype Adam's bias corrections are computed in, per parameter dtype (float32 otherwise).
_CORRECTION_DTYPE = {Dtype("float64"): Dtype("float64")}


def _adam(learning_rate: float, b1: float, b2: float, eps: float, weight_decay: float) -> Optimizer:
    lr = _rate(learning_rate, "learning_rate")
    b1 = _rate(b1, "b1", high=1.0, open_low=False)
    b2 = _rate(b2, "b2", high=1.0, open_low=False)
    eps = _rate(eps, "eps", open_low=False)
    decay = _rate(weight_decay, "weight_decay", open_low=False)

    def init(params: Any) -> Any:
        leaves = tree_leaves(params)
        if not leaves:
            raise InvalidArgumentError("adam.init(params): the tree holds no arrays to optimise.")
        zeros = tree_map(al.zeros_like, params)
        with al.use_backend(al.backend_of(leaves[0]).name):
            count = al.zeros((), dtype=al.int32, device=al.dev(leaves[0]))
        return {"count": count, "mu": zeros, "nu": tree_map(al.zeros_like, params)}

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        count = al.add(state["count"], 1)
        corrections: dict[Any, tuple[Any, Any]] = {}

        def corrected_for(dtype: Any) -> tuple[Any, Any]:
            """The bias corrections 1 - b1**t and 1 - b2**t in ``dtype``, computed in float64 for
            float64 parameters and in float32 otherwise (float16's 0.999 would be too coarse)."""
            if dtype not in corrections:
                t = al.astype(count, _CORRECTION_DTYPE.get(al.Dtype(dtype), Dtype("float32")))
                pair = al.subtract(1.0, al.pow(b1, t)), al.subtract(1.0, al.pow(b2, t))
                corrections[dtype] = tuple(al.astype(c, dtype, copy=False) for c in pair)
            return corrections[dtype]

        mu = tree_map(lambda m, g: al.add(al.multiply(m, b1), al.multiply(g, 1.0 - b1)), state["mu"], grads)
        nu = tree_map(lambda v, g: al.add(al.multiply(v, b2), al.multiply(al.square(g), 1.0 - b2)), state["nu"], grads)

        def step(p: Any, m: Any, v: Any) -> Any:
            first, second = corrected_for(p.dtype)
            scale = al.add(al.sqrt(al.divide(v, second)), eps)
            moved = al.subtract(p, al.multiply(al.divide(al.divide(m, first), scale), lr))
            return al.subtract(moved, al.multiply(p, lr * decay)) if decay else moved

        return tree_map(step, params, mu, nu), {"count": count, "mu": mu, "nu": nu}

    return Optimizer(init, update)
