"""Optimizers as pure functions over parameter trees: ``state = opt.init(params)``, then
``params, state = opt.update(grads, state, params)`` each step.

The state is a tree of arrays of the parameters' backend (the step count included), so a whole
training step (loss, ``arraylayer.value_and_grad``, update) runs under ``jax.jit``,
``tf.function`` and ``torch.compile``. Every update is written with arraylayer's functions and
Python-float hyper-parameters, which are weak: float32 parameters stay float32. A hyper-parameter
may also be a 0-d array, traced or not (a schedule's rate passed to the compiled step each
call): it is cast to each parameter's dtype, so it too leaves the parameters' dtype alone.
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


Hyper = Any  # a Python float, or a 0-d real array of the parameters' backend (perhaps traced)


def _rate(value: Any, parameter: str, *, low: float = 0.0, high: float = float("inf"), open_low: bool = True) -> Hyper:
    """A hyper-parameter: a Python number or NumPy scalar becomes a float checked against its bounds
    now; a 0-d real array of another backend (a ``jax.jit`` tracer, a ``tf.function`` tensor, a torch
    tensor, under ``torch.compile`` or not) is kept as it is and read at each update, so a schedule
    can pass a new value per step without retracing. Its value may be unknown (traced): only its
    shape and dtype are checked."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if tuple(value.shape) != () or al.Dtype(value.dtype).category not in _REAL_KINDS:
            raise InvalidArgumentError(f"{parameter}: an array hyper-parameter must be 0-d and real, got shape "
                                       f"{tuple(value.shape)} and dtype {al.Dtype(value.dtype)}; pass a 0-d float "
                                       f"array or a Python float.")
        if type(value).__module__ != "numpy":  # NumPy's are concrete: checked as the float they hold
            return value
    value = float(arguments.real_scalar(value, parameter))
    if not (low < value if open_low else low <= value) or not value < high:
        bounds = f"({low}, {high})" if open_low else f"[{low}, {high})"
        raise InvalidArgumentError(f"{parameter}={value!r} must lie in {bounds}.")
    return value


_REAL_KINDS = ("int", "uint", "float")


def _is_zero(value: Hyper) -> bool:
    """Whether a hyper-parameter is the Python float 0.0 (an array never is: its value may be traced)."""
    return value.__class__ is float and value == 0.0


class _In:
    """The hyper-parameters in one dtype, cast once per dtype and update: a float stays a weak
    Python float, an array is cast to the parameters' dtype (a float32 rate leaves float16
    parameters float16, as a Python float does). Keyed by name, never by id(): torch.compile
    would guard on the identity of the rate tensor and recompile for the next one."""

    __slots__ = ("values", "cast")

    def __init__(self, **values: Hyper) -> None:
        self.values = values
        self.cast: dict[tuple[str, Any], Any] = {}

    def __call__(self, name: str, dtype: Any) -> Any:
        value = self.values[name]
        if value.__class__ is float:
            return value
        key = (name, dtype)
        if key not in self.cast:
            self.cast[key] = al.astype(value, dtype, copy=False)
        return self.cast[key]


def _one_minus(value: Any) -> Any:
    return 1.0 - value if value.__class__ is float else al.subtract(1.0, value)


def _times(a: Any, b: Any) -> Any:
    return a * b if a.__class__ is float and b.__class__ is float else al.multiply(a, b)


def sgd(learning_rate: Hyper, momentum: Hyper = 0.0, nesterov: bool = False) -> Optimizer:
    """Gradient descent, with heavy-ball ``momentum`` (v = momentum * v + g; p -= lr * v) or, with
    ``nesterov``, the Nesterov form (p -= lr * (g + momentum * v)). Hyper-parameters: Python floats
    or 0-d arrays (traced ones included)."""
    lr = _rate(learning_rate, "learning_rate")
    mu = _rate(momentum, "momentum", high=1.0, open_low=False)
    nesterov = arguments.flag(nesterov, "nesterov")
    plain = _is_zero(mu)

    def init(params: Any) -> Any:
        return {} if plain else {"velocity": tree_map(al.zeros_like, params)}

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        h = _In(lr=lr, mu=mu)
        if plain:
            return tree_map(lambda p, g: al.subtract(p, al.multiply(g, h("lr", p.dtype))), params, grads), state
        velocity = tree_map(lambda v, g: al.add(al.multiply(v, h("mu", v.dtype)), g), state["velocity"], grads)
        if nesterov:
            step = tree_map(lambda v, g: al.add(g, al.multiply(v, h("mu", v.dtype))), velocity, grads)
        else:
            step = velocity
        new = tree_map(lambda p, s: al.subtract(p, al.multiply(s, h("lr", p.dtype))), params, step)
        return new, {"velocity": velocity}

    return Optimizer(init, update)


def adam(learning_rate: Hyper = 1e-3, b1: Hyper = 0.9, b2: Hyper = 0.999, eps: Hyper = 1e-8) -> Optimizer:
    """Adam (Kingma and Ba): bias-corrected first and second moment estimates. Hyper-parameters:
    Python floats or 0-d arrays (traced ones included)."""
    return _adam(learning_rate, b1, b2, eps, 0.0)


def adamw(learning_rate: Hyper = 1e-3, b1: Hyper = 0.9, b2: Hyper = 0.999, eps: Hyper = 1e-8,
          weight_decay: Hyper = 1e-2) -> Optimizer:
    """AdamW (Loshchilov and Hutter): Adam with decoupled weight decay, p -= lr * weight_decay * p."""
    return _adam(learning_rate, b1, b2, eps, weight_decay)


#: The dtype Adam's bias corrections are computed in, per parameter dtype (float32 otherwise).
_CORRECTION_DTYPE = {Dtype("float64"): Dtype("float64")}


def _adam(learning_rate: Hyper, b1: Hyper, b2: Hyper, eps: Hyper, weight_decay: Hyper) -> Optimizer:
    lr = _rate(learning_rate, "learning_rate")
    b1 = _rate(b1, "b1", high=1.0, open_low=False)
    b2 = _rate(b2, "b2", high=1.0, open_low=False)
    eps = _rate(eps, "eps", open_low=False)
    decay = _rate(weight_decay, "weight_decay", open_low=False)
    decays = not _is_zero(decay)

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
        h = _In(lr=lr, b1=b1, b2=b2, eps=eps, decay=decay)
        corrections: dict[Any, tuple[Any, Any]] = {}

        def corrected_for(dtype: Any) -> tuple[Any, Any]:
            """The bias corrections 1 - b1**t and 1 - b2**t in ``dtype``, computed in float64 for
            float64 parameters and in float32 otherwise (float16's 0.999 would be too coarse)."""
            if dtype not in corrections:
                wide = _CORRECTION_DTYPE.get(al.Dtype(dtype), Dtype("float32"))
                t = al.astype(count, wide)
                pair = (al.subtract(1.0, al.pow(h(b, wide), t)) for b in ("b1", "b2"))
                corrections[dtype] = tuple(al.astype(c, dtype, copy=False) for c in pair)
            return corrections[dtype]

        mu = tree_map(lambda m, g: al.add(al.multiply(m, h("b1", m.dtype)), al.multiply(g, _one_minus(h("b1", g.dtype)))),
                      state["mu"], grads)
        nu = tree_map(lambda v, g: al.add(al.multiply(v, h("b2", v.dtype)),
                                          al.multiply(al.square(g), _one_minus(h("b2", g.dtype)))), state["nu"], grads)

        def step(p: Any, m: Any, v: Any) -> Any:
            first, second = corrected_for(p.dtype)
            rate = h("lr", p.dtype)
            scale = al.add(al.sqrt(al.divide(v, second)), h("eps", p.dtype))
            moved = al.subtract(p, al.multiply(al.divide(al.divide(m, first), scale), rate))
            return al.subtract(moved, al.multiply(p, _times(rate, h("decay", p.dtype)))) if decays else moved

        return tree_map(step, params, mu, nu), {"count": count, "mu": mu, "nu": nu}

    return Optimizer(init, update)
