"""Optimizers as pure functions over parameter trees: ``state = opt.init(params)``, then
``params, state = opt.update(grads, state, params)`` each step.

Each optimizer is a chain of gradient transformations (``arraylayer.models.transforms``) whose updates
are added to the parameters. The state is one dict of arrays of the parameters' backend (Adam's:
``{"count", "mu", "nu"}``), so a whole training step (loss, ``arraylayer.value_and_grad``,
update) runs under ``jax.jit``, ``tf.function`` and ``torch.compile``. Python-float
hyper-parameters are weak: float32 parameters stay float32. A hyper-parameter may also be a 0-d
array, traced or not: it is cast to each parameter's dtype, so it too leaves the parameters'
dtype alone. A learning rate may be a schedule (``arraylayer.models.schedules``): a function of the
step count, kept in the state as ``"schedule_count"``. Where every floating leaf of the parameters,
gradients and state has one float8/6/4 dtype, the update runs in float32 (all widened exactly) and
the new parameters and state are rounded once (``models/lowp_rule.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from arraylayer.models import scalings, transforms as tx
from arraylayer.dtypes import as_dtype
from arraylayer.errors import UnsupportedDtypeError
from arraylayer.models.lowp_rule import rounded_once
from arraylayer.models.tree import tree_leaves
from arraylayer import arguments
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidDtypeError
from arraylayer.models.tree import tree_leaves
from arraylayer.models.transforms import GradientTransformation, Hyper, Mask, Schedule

__all__ = ["Optimizer", "sgd", "adam", "adamw", "rmsprop", "adagrad", "lion", "lamb", "adafactor", "from_transforms"]


class Optimizer(NamedTuple):
    """An optimizer: ``init(params) -> state`` and ``update(grads, state, params) -> (params, state)``."""

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any], tuple[Any, Any]]


def _zero_holding(init: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``init``, refusing parameters of a dtype without a zero (float8_e8m0fnu): every optimizer's state
    starts at zero, which would be NaN there."""

    def checked(params: Any) -> Any:
        for leaf in tree_leaves(params):
            dtype = getattr(leaf, "dtype", None)
            if dtype is not None and as_dtype(dtype).name == "float8_e8m0fnu":
                raise UnsupportedDtypeError(
                    "optimizer.init: float8_e8m0fnu has no zero, and an optimizer's state starts at zero (it "
                    "would be NaN); keep such parameters in float32 (arraylayer.astype(p, 'float32')).")
        return init(params)

    return checked


def from_transforms(*transforms: GradientTransformation) -> Optimizer:
    """An optimizer that runs ``transforms`` in order on the gradients and adds the result to the
    parameters. Its state is a tuple of the transformations' states (``transforms.chain``)."""
    chained = tx.chain(*transforms)

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        updates, state = chained.update(grads, state, params)
        return tx.apply_updates(params, updates), state

    return Optimizer(_zero_holding(chained.init), rounded_once(update, trees=True))


#: The parameter kinds an optimizer takes: floating (its updates are float: integer or bool parameters
#: would come back float, a silent change of their dtype); lamb's trust ratio and adafactor's RMS are
#: real, so those two take real floating parameters only. arraylayer/support/model_table.py says the same.
_FLOATING: Final = ("float", "complex")
_REAL_FLOATING: Final = ("float",)
_KIND_WORDS: Final = {"float": "real floating", "complex": "complex"}


def _takes(*kinds: str) -> Callable[[Callable[..., Optimizer]], Callable[..., Optimizer]]:
    """A factory whose optimizer's ``init`` refuses parameter leaves of other kinds than ``kinds``
    (InvalidDtypeError naming the fix), before any state is made."""

    def wrap(factory: Callable[..., Optimizer]) -> Callable[..., Optimizer]:
        @functools.wraps(factory)
        def make(*args: Any, **kwargs: Any) -> Optimizer:
            optimizer = factory(*args, **kwargs)

            def init(params: Any) -> Any:
                for leaf in tree_leaves(params):
                    dtype = getattr(leaf, "dtype", None)
                    if dtype is not None and as_dtype(dtype).category not in kinds:
                        takes = " or ".join(_KIND_WORDS[k] for k in kinds)
                        raise InvalidDtypeError(
                            f"optim.{factory.__name__} updates {takes} parameters; got a {as_dtype(dtype)} leaf. "
                            f"Cast the parameters first, e.g. arraylayer.tree_map(lambda p: "
                            f"arraylayer.astype(p, 'float32'), params).")
                return optimizer.init(params)

            return Optimizer(init, optimizer.update)

        return make

    return wrap


def _merged(*transforms: GradientTransformation) -> Optimizer:
    """An optimizer from transformations whose dict states have distinct keys: its state is one
    dict (each transformation reads its own keys of it), as ``sgd`` and ``adam`` always had."""

    def init(params: Any) -> Any:
        state: dict[str, Any] = {}
        for t in transforms:
            state.update(t.init(params))
        return state

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        new: dict[str, Any] = {}
        updates = grads
        for t in transforms:
            updates, own = t.update(updates, state, params)
            new.update(own)
        return tx.apply_updates(params, updates), new

    return Optimizer(_zero_holding(init), rounded_once(update, trees=True))


@_takes(*_FLOATING)
def sgd(learning_rate: Hyper | Schedule, momentum: Hyper = 0.0, nesterov: bool = False) -> Optimizer:
    """Gradient descent, with heavy-ball ``momentum`` (v = momentum * v + g; p -= lr * v) or, with
    ``nesterov``, the Nesterov form (p -= lr * (g + momentum * v)). Hyper-parameters: Python floats
    or 0-d arrays (traced ones included); the learning rate may be a schedule."""
    rate = tx.scale_by_learning_rate(learning_rate)
    mu = tx.hyper(momentum, "momentum", high=1.0, open_low=False)
    nesterov = arguments.flag(nesterov, "nesterov")
    return _merged(rate) if tx.is_zero(mu) else _merged(tx.trace(mu, nesterov), rate)


@_takes(*_FLOATING)
def adam(learning_rate: Hyper | Schedule = 1e-3, b1: Hyper = 0.9, b2: Hyper = 0.999, eps: Hyper = 1e-8) -> Optimizer:
    """Adam (Kingma and Ba): bias-corrected first and second moment estimates. Hyper-parameters:
    Python floats or 0-d arrays (traced ones included); the learning rate may be a schedule."""
    return _merged(tx.scale_by_adam(b1, b2, eps), tx.scale_by_learning_rate(learning_rate))


@_takes(*_FLOATING)
def adamw(learning_rate: Hyper | Schedule = 1e-3, b1: Hyper = 0.9, b2: Hyper = 0.999, eps: Hyper = 1e-8,
          weight_decay: Hyper = 1e-2, mask: Mask = None) -> Optimizer:
    """AdamW (Loshchilov and Hutter): Adam with decoupled weight decay, p -= lr * (adam + weight_decay * p),
    on the parameters ``mask`` selects (all by default; a tree of bools or a predicate
    ``f(path, leaf) -> bool``, e.g. ``lambda path, p: p.ndim > 1`` to spare biases and norm scales)."""
    adam_scaling, rate = tx.scale_by_adam(b1, b2, eps), tx.scale_by_learning_rate(learning_rate)
    decay = tx.hyper(weight_decay, "weight_decay", open_low=False)
    if tx.is_zero(decay):
        return _merged(adam_scaling, rate)
    return _merged(adam_scaling, tx.add_decayed_weights(decay, mask), rate)


def _flagged(value: Any, name: str) -> bool:
    return arguments.flag(value, name)


@_takes(*_FLOATING)
def rmsprop(learning_rate: Hyper | Schedule = 1e-2, decay: Hyper = 0.99, eps: Hyper = 1e-8, momentum: Hyper = 0.0,
            centered: bool = False, weight_decay: Hyper = 0.0) -> Optimizer:
    """RMSprop as torch.optim.RMSprop computes it: ``s = decay * s + (1 - decay) * g**2``,
    ``g / (sqrt(s) + eps)`` (``centered``: ``sqrt(s - mean(g)**2)``), then heavy-ball ``momentum``;
    ``weight_decay`` adds ``weight_decay * p`` to the gradient first (coupled, as torch's)."""
    pieces = [scalings.scale_by_rms(decay, eps, _flagged(centered, "centered"))]
    mu = tx.hyper(momentum, "momentum", high=1.0, open_low=False)
    if not tx.is_zero(mu):
        pieces.append(tx.trace(mu))
    return _coupled(weight_decay, pieces, learning_rate)


def _coupled(weight_decay: Hyper, pieces: list[GradientTransformation], learning_rate: Any) -> Optimizer:
    decay = tx.hyper(weight_decay, "weight_decay", open_low=False)
    first = [] if tx.is_zero(decay) else [tx.add_decayed_weights(decay)]
    return _merged(*first, *pieces, tx.scale_by_learning_rate(learning_rate))


@_takes(*_FLOATING)
def adagrad(learning_rate: Hyper | Schedule = 1e-2, initial_accumulator_value: Hyper = 0.0, eps: Hyper = 1e-10,
            weight_decay: Hyper = 0.0) -> Optimizer:
    """Adagrad (Duchi et al.) as torch.optim.Adagrad computes it: ``s += g**2`` from
    ``initial_accumulator_value``, ``p -= lr * g / (sqrt(s) + eps)``; coupled ``weight_decay``.
    (torch's ``lr_decay`` is a schedule here: ``lambda t: lr / (1 + t * lr_decay)``.)"""
    return _coupled(weight_decay, [scalings.scale_by_adagrad(initial_accumulator_value, eps)], learning_rate)


@_takes(*_FLOATING)
def lion(learning_rate: Hyper | Schedule = 1e-4, b1: Hyper = 0.9, b2: Hyper = 0.99, weight_decay: Hyper = 0.0,
         mask: Mask = None) -> Optimizer:
    """Lion (Chen et al., 2023): ``p -= lr * (sign(b1 * m + (1 - b1) * g) + weight_decay * p)``,
    then ``m = b2 * m + (1 - b2) * g`` (decoupled weight decay on the leaves ``mask`` selects)."""
    pieces = [scalings.scale_by_lion(b1, b2)]
    decay = tx.hyper(weight_decay, "weight_decay", open_low=False)
    tx._check_mask(mask, "lion")
    if not tx.is_zero(decay):
        pieces.append(tx.add_decayed_weights(decay, mask))
    return _merged(*pieces, tx.scale_by_learning_rate(learning_rate))


@_takes(*_REAL_FLOATING)
def lamb(learning_rate: Hyper | Schedule = 1e-3, b1: Hyper = 0.9, b2: Hyper = 0.999, eps: Hyper = 1e-6,
         weight_decay: Hyper = 0.0, mask: Mask = None) -> Optimizer:
    """LAMB (You et al., 2020): Adam's bias-corrected step plus ``weight_decay * p``, times each
    leaf's trust ratio ``||p|| / ||step||`` (1 where either norm is zero), times ``-lr``."""
    pieces = [tx.scale_by_adam(b1, b2, eps)]
    decay = tx.hyper(weight_decay, "weight_decay", open_low=False)
    tx._check_mask(mask, "lamb")
    if not tx.is_zero(decay):
        pieces.append(tx.add_decayed_weights(decay, mask))
    return _merged(*pieces, scalings.scale_by_trust_ratio(), tx.scale_by_learning_rate(learning_rate))


@_takes(*_REAL_FLOATING)
def adafactor(learning_rate: Hyper = 1e-2, decay_rate: Hyper = -0.8, eps1: float | None = None, eps2: Hyper = 1e-3,
              clipping_threshold: Hyper = 1.0) -> Optimizer:
    """Adafactor (Shazeer and Stern) in torch.optim.Adafactor's variant (``scalings.scale_by_adafactor``):
    factored second moments for leaves of rank >= 2, the relative step ``min(learning_rate,
    1/sqrt(t)) * max(eps2, rms(p))``, update clipping at ``clipping_threshold``, ``1 - beta2_t =
    t**decay_rate``; no first moment and no weight decay. ``learning_rate`` is a float or 0-d array."""
    return _merged(scalings.scale_by_adafactor(learning_rate, decay_rate, eps1, eps2, clipping_threshold),
                   tx.scale(-1.0))
