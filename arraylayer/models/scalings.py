"""More gradient scalings, shaped like ``transforms``' (``init(params) -> state``,
``update(updates, state, params) -> (updates, state)``): RMSprop's, Adagrad's, Lion's, Adafactor's
and LAMB's trust ratio. ``arraylayer.models.optim`` chains them into ``rmsprop``, ``adagrad``,
``lion``, ``adafactor`` and ``lamb``.

Each state is a dict of arrays of the parameters' backend with keys no other optimizer uses, so
another optimizer's state is refused by name; every update is one arraylayer call per leaf (the
same values on every backend, traced under ``jax.jit``, ``tf.function`` and ``torch.compile``).
"""

from __future__ import annotations

from typing import Any

from arraylayer.api import elementwise, statistical
from arraylayer.api.creation import full_like, zeros_like
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (divide, greater, logical_and, maximum, minimum, multiply, sign, sqrt, square,
                                        subtract)
from arraylayer.api.linear_algebra import matmul
from arraylayer.api.searching import where
from arraylayer.dtypes import finfo
from arraylayer.models import checks
from arraylayer.models.transforms import GradientTransformation, Hyper, In, _count_like, _one_minus, hyper
from arraylayer.models.tree import tree_map

__all__ = ["scale_by_rms", "scale_by_adagrad", "scale_by_lion", "scale_by_adafactor", "scale_by_trust_ratio"]


def _columns(who: str, state: Any, keys: tuple[str, ...], updates: Any) -> tuple[list[list[Any]], Any]:
    """The state's trees ``keys`` and the updates as columns, checked: same paths, same shapes."""
    checks.own_state(who, state, keys)
    first = state[keys[0]]
    names = tuple(f"state's {k}" for k in keys) + ("updates",)
    cols, rebuild = checks.columns(who, names, first, *(state[k] for k in keys[1:]), updates)
    checks.same_shapes(who, (f"state's {keys[0]}", "update"), first, cols[0], cols[-1])
    return cols, rebuild


def _lerp(old: Any, new: Any, keep: Any) -> Any:
    """``keep * old + (1 - keep) * new``."""
    return elementwise.add(multiply(old, keep), multiply(new, _one_minus(keep)))


def scale_by_rms(decay: Hyper = 0.99, eps: Hyper = 1e-8, centered: bool = False) -> GradientTransformation:
    """RMSprop's scaling (Hinton; torch.optim.RMSprop's form): ``s = decay * s + (1 - decay) * u**2``,
    the update ``u / (sqrt(s) + eps)``; ``centered`` subtracts the squared running mean ``m`` of
    the updates first (``sqrt(s - m**2)``). State: ``{"square_avg"}`` (and ``"grad_avg"``)."""
    decay = hyper(decay, "decay", high=1.0, open_low=False)
    eps = hyper(eps, "eps", open_low=False)
    if centered is not True and centered is not False:
        raise checks.InvalidArgumentTypeError(f"centered: pass True or False, got {type(centered).__name__}.")
    keys = ("square_avg", "grad_avg") if centered else ("square_avg",)

    def init(params: Any) -> Any:
        return {k: tree_map(zeros_like, params) for k in keys}

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        cols, rebuild = _columns("scale_by_rms.update", state, keys, updates)
        h = In(decay=decay, eps=eps)
        s = [_lerp(a, square(g), h("decay", g.dtype)) for a, g in zip(cols[0], cols[-1])]
        new = {"square_avg": rebuild(s)}
        spread = s
        if centered:
            m = [_lerp(a, g, h("decay", g.dtype)) for a, g in zip(cols[1], cols[-1])]
            new["grad_avg"] = rebuild(m)
            spread = [subtract(a, square(b)) for a, b in zip(s, m)]
        out = [divide(g, elementwise.add(sqrt(v), h("eps", g.dtype))) for g, v in zip(cols[-1], spread)]
        return rebuild(out), new

    return GradientTransformation(init, update)


def scale_by_adagrad(initial_accumulator_value: Hyper = 0.0, eps: Hyper = 1e-10) -> GradientTransformation:
    """Adagrad's scaling (Duchi et al.; torch.optim.Adagrad's form): ``s = s + u**2`` from
    ``initial_accumulator_value``, the update ``u / (sqrt(s) + eps)``. State: ``{"sum_of_squares"}``."""
    start = hyper(initial_accumulator_value, "initial_accumulator_value", open_low=False)
    eps = hyper(eps, "eps", open_low=False)
    if start.__class__ is not float:
        raise checks.InvalidArgumentTypeError("initial_accumulator_value: pass a Python float (it fills the state "
                                              "once, at init).")

    def init(params: Any) -> Any:
        return {"sum_of_squares": tree_map(lambda p: full_like(p, start), params)}

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        cols, rebuild = _columns("scale_by_adagrad.update", state, ("sum_of_squares",), updates)
        h = In(eps=eps)
        s = [elementwise.add(a, square(g)) for a, g in zip(*cols)]
        out = [divide(g, elementwise.add(sqrt(v), h("eps", g.dtype))) for g, v in zip(cols[-1], s)]
        return rebuild(out), {"sum_of_squares": rebuild(s)}

    return GradientTransformation(init, update)


def scale_by_lion(b1: Hyper = 0.9, b2: Hyper = 0.99) -> GradientTransformation:
    """Lion's scaling (Chen et al., 2023): the update ``sign(b1 * m + (1 - b1) * u)``, then the
    momentum ``m = b2 * m + (1 - b2) * u``. State: ``{"lion_momentum"}``."""
    b1 = hyper(b1, "b1", high=1.0, open_low=False)
    b2 = hyper(b2, "b2", high=1.0, open_low=False)

    def init(params: Any) -> Any:
        return {"lion_momentum": tree_map(zeros_like, params)}

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        (m, g), rebuild = _columns("scale_by_lion.update", state, ("lion_momentum",), updates)
        h = In(b1=b1, b2=b2)
        out = [sign(_lerp(a, b, h("b1", b.dtype))) for a, b in zip(m, g)]
        m = [_lerp(a, b, h("b2", b.dtype)) for a, b in zip(m, g)]
        return rebuild(out), {"lion_momentum": rebuild(m)}

    return GradientTransformation(init, update)




def _norm(x: Any) -> Any:
    """The 2-norm of a whole leaf, in the leaf's dtype."""
    return sqrt(statistical.sum(square(x)))


def scale_by_trust_ratio(min_norm: float = 0.0) -> GradientTransformation:
    """LAMB's layer-wise trust ratio (You et al., 2020): each leaf's update times
    ``||p|| / ||u||``, or times 1 where either norm is not above ``min_norm``. Stateless."""
    floor = hyper(min_norm, "min_norm", open_low=False)

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        who = "scale_by_trust_ratio.update"
        (p, u), rebuild = checks.columns(who, ("parameters", "updates"), params, updates)
        checks.same_shapes(who, ("parameter", "update"), params, p, u)
        out = []
        for a, b in zip(p, u):
            pn, un = _norm(a), _norm(b)
            ok = logical_and(greater(pn, floor), greater(un, floor))
            ratio = where(ok, divide(pn, where(ok, un, 1.0)), 1.0)
            out.append(multiply(b, ratio))
        return rebuild(out), {}

    return GradientTransformation(lambda params: {}, update)


def scale_by_adafactor(learning_rate: Hyper = 1e-2, decay_rate: Hyper = -0.8, eps1: float | None = None,
                       eps2: Hyper = 1e-3, clipping_threshold: Hyper = 1.0) -> GradientTransformation:
    """Adafactor (Shazeer and Stern, 2018) in torch.optim.Adafactor's variant, whole step but the
    sign: a leaf of rank >= 2 keeps the running means of the squared update over its last axis
    (``"adafactor_row"``) and over its second-to-last (``"adafactor_col"``), their outer product
    over the row means' mean estimating the second moment; a vector keeps it whole
    (``"adafactor_v"``). At step ``t``: ``1 - beta2_t = t**decay_rate``; the relative step
    ``min(learning_rate, 1/sqrt(t))`` times ``max(eps2, rms(param))``; the scaled update ``u /
    sqrt(max(v, eps1**2))`` divided by ``max(1, rms(update) / clipping_threshold)``. ``eps1``
    defaults to the leaf dtype's machine epsilon (``finfo(dtype).eps``, float8's included). No first
    moment (torch's has none)."""
    rate = hyper(learning_rate, "learning_rate")
    decay = hyper(decay_rate, "decay_rate", low=-float("inf"), high=0.0, open_low=True)
    tiny = None if eps1 is None else hyper(eps1, "eps1")
    eps2 = hyper(eps2, "eps2", open_low=False)
    clip = hyper(clipping_threshold, "clipping_threshold")
    keys = ("adafactor_count", "adafactor_row", "adafactor_col", "adafactor_v")

    def init(params: Any) -> Any:
        def row(p: Any) -> Any:  # a 0-d placeholder where the leaf keeps its second moment whole
            return zeros_like(p[..., :1]) if p.ndim >= 2 else zeros_like(statistical.sum(p))

        def col(p: Any) -> Any:
            return zeros_like(p[..., :1, :]) if p.ndim >= 2 else zeros_like(statistical.sum(p))

        def whole(p: Any) -> Any:
            return zeros_like(p) if p.ndim < 2 else zeros_like(statistical.sum(p))

        return {"adafactor_count": _count_like(params, "adafactor"), "adafactor_row": tree_map(row, params),
                "adafactor_col": tree_map(col, params), "adafactor_v": tree_map(whole, params)}

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        who = "scale_by_adafactor.update"
        checks.own_state(who, state, keys)
        count = elementwise.add(state["adafactor_count"], 1)
        (p, g, rows, cols, whole), rebuild = checks.columns(
            who, ("parameters", "updates", "state's row means", "state's column means", "state's second moments"),
            params, updates, state["adafactor_row"], state["adafactor_col"], state["adafactor_v"])
        checks.same_shapes(who, ("parameter", "update"), params, p, g)
        h = In(rate=rate, decay=decay, eps2=eps2, clip=clip)
        out, new_rows, new_cols, new_whole = [], [], [], []
        for a, u, r, c, v in zip(p, g, rows, cols, whole):
            dtype = u.dtype
            t = astype(count, dtype)
            fresh = elementwise.pow(t, h("decay", dtype))  # 1 - beta2_t
            keep = subtract(1.0, fresh)
            eps = finfo(dtype).eps if tiny is None else tiny  # float8's too: float32's 2**-23 squared is 0 there
            step = minimum(divide(1.0, sqrt(t)), h("rate", dtype))
            scale = multiply(maximum(sqrt(statistical.mean(square(a))), h("eps2", dtype)), step)
            squares = square(u)
            if u.ndim >= 2:
                r = elementwise.add(multiply(r, keep), multiply(statistical.mean(squares, axis=-1, keepdims=True),
                                                                fresh))
                c = elementwise.add(multiply(c, keep), multiply(statistical.mean(squares, axis=-2, keepdims=True),
                                                                fresh))
                estimate = divide(matmul(r, c), maximum(statistical.mean(r, axis=-2, keepdims=True), eps))
            else:
                v = estimate = elementwise.add(multiply(v, keep), multiply(squares, fresh))
            scaled = divide(u, sqrt(maximum(estimate, eps * eps)))
            denominator = maximum(divide(sqrt(statistical.mean(square(scaled))), h("clip", dtype)), 1.0)
            out.append(multiply(scaled, divide(scale, denominator)))
            new_rows.append(r)
            new_cols.append(c)
            new_whole.append(v)
        return rebuild(out), {"adafactor_count": count, "adafactor_row": rebuild(new_rows),
                              "adafactor_col": rebuild(new_cols), "adafactor_v": rebuild(new_whole)}

    return GradientTransformation(init, update)

