"""Gradient transformations that chain: pure ``init(params) -> state`` and
``update(updates, state, params) -> (updates, state)`` pairs over parameter trees.

Each transformation turns the gradients (or the updates of the transformation before it) into
new updates; :func:`chain` runs several in order, and :func:`apply_updates` adds the final
updates to the parameters (``arraylayer.models.optim`` builds ``sgd``/``adam``/``adamw`` this way).
A state is a dict of arrays of the parameters' backend (a chain's state: a tuple of them), so a
whole training step runs under ``jax.jit``, ``tf.function`` and ``torch.compile``.

Hyper-parameters are Python floats (weak: float32 parameters stay float32) or 0-d real arrays,
traced ones included, cast to each parameter's dtype. A learning rate may also be a schedule
(``arraylayer.models.schedules``): a function of the step count, which its transformation keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from arraylayer.models import checks, leafwise
from arraylayer import arguments
from arraylayer.api import elementwise, statistical
from arraylayer.api.creation import ones_like, zeros, zeros_like
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import divide, greater, multiply, negative, sqrt, square, subtract
from arraylayer.api.searching import where
from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.api.interchange import dev
from arraylayer.runtime.registry import backend_of, use_backend
from arraylayer.models.tree import tree_columns, tree_leaves, tree_map, tree_map_with_path

__all__ = ["GradientTransformation", "chain", "apply_updates", "clip_by_global_norm", "clip_by_value",
           "add_decayed_weights", "trace", "scale_by_adam", "scale", "scale_by_learning_rate"]

Hyper = Any  # a Python float, or a 0-d real array of the parameters' backend (perhaps traced)
Schedule = Callable[[Any], Any]


class GradientTransformation(NamedTuple):
    """``init(params) -> state`` and ``update(updates, state, params) -> (updates, state)``."""

    init: Callable[[Any], Any]
    update: Callable[[Any, Any, Any], tuple[Any, Any]]


# -- hyper-parameters ---------------------------------------------------------------------------------------
_REAL_KINDS = ("int", "uint", "float")


def hyper(value: Any, parameter: str, *, low: float = 0.0, high: float = float("inf"), open_low: bool = True) -> Hyper:
    """A hyper-parameter: a Python number or NumPy scalar becomes a float checked against its bounds
    now; a 0-d real array of another backend (a ``jax.jit`` tracer, a ``tf.function`` tensor, a torch
    tensor, under ``torch.compile`` or not) is kept as it is and read at each update, so a caller
    can pass a new value per step without retracing. Its value may be unknown (traced): only its
    shape and dtype are checked."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        if tuple(value.shape) != () or Dtype(value.dtype).category not in _REAL_KINDS:
            raise InvalidArgumentError(f"{parameter}: an array hyper-parameter must be 0-d and real, got shape "
                                       f"{tuple(value.shape)} and dtype {Dtype(value.dtype)}; pass a 0-d float "
                                       f"array or a Python float.")
        if type(value).__module__ != "numpy":  # NumPy's are concrete: checked as the float they hold
            return value
    value = arguments.real_float(value, parameter)
    if not (low < value if open_low else low <= value) or not value < high:
        bounds = f"({low}, {high})" if open_low else f"[{low}, {high})"
        raise InvalidArgumentError(f"{parameter}={value!r} must lie in {bounds}.")
    return value


def is_zero(value: Hyper) -> bool:
    """Whether a hyper-parameter is the Python float 0.0 (an array never is: its value may be traced)."""
    return value.__class__ is float and value == 0.0


class In:
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
            self.cast[key] = astype(value, dtype, copy=False)
        return self.cast[key]


def _one_minus(value: Any) -> Any:
    return 1.0 - value if value.__class__ is float else subtract(1.0, value)


def _count_like(params: Any, who: str) -> Any:
    """A 0-d int32 zero on the backend and device of the first leaf of ``params``."""
    leaves = tree_leaves(params)
    if not leaves:
        raise InvalidArgumentError(f"{who}.init(params): the tree holds no arrays to optimise.")
    with use_backend(backend_of(leaves[0]).name):
        return zeros((), dtype=Dtype("int32"), device=dev(leaves[0]))


#: The dtype sums of squares and Adam's bias corrections are computed in, per dtype (float32 otherwise).
WIDE = {Dtype("float64"): Dtype("float64")}


def _wide(dtype: Any) -> Dtype:
    return WIDE.get(Dtype(dtype), Dtype("float32"))


# -- combinators ----------------------------------------------------------------------------------------------
def chain(*transforms: GradientTransformation) -> GradientTransformation:
    """The transformations applied in order; the state is the tuple of their states."""
    for position, t in enumerate(transforms):
        if not isinstance(t, GradientTransformation):
            raise InvalidArgumentTypeError(f"chain: argument {position} is {type(t).__name__}, not a "
                                           f"GradientTransformation; pass transformations such as "
                                           f"arraylayer.models.transforms.clip_by_global_norm(1.0).")

    def init(params: Any) -> Any:
        return tuple(t.init(params) for t in transforms)

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        if not isinstance(state, tuple) or len(state) != len(transforms):
            raise InvalidArgumentError(f"chain.update: the state is {type(state).__name__} "
                                       f"{'of ' + str(len(state)) if isinstance(state, tuple) else ''}, not the tuple "
                                       f"of {len(transforms)} states this chain's init(params) makes; pass that state.")
        new = []
        for t, s in zip(transforms, state, strict=True):
            updates, s = t.update(updates, s, params)
            new.append(s)
        return updates, tuple(new)

    return GradientTransformation(init, update)


def apply_updates(params: Any, updates: Any) -> Any:
    """``params + updates``, leaf by leaf (each in its parameter's dtype); each update must have
    its parameter's shape (InvalidArgumentError naming its path otherwise)."""
    (p, u), rebuild = checks.columns("apply_updates", ("parameters", "updates"), params, updates)
    checks.same_shapes("apply_updates", ("parameter", "update"), params, p, u)
    return rebuild(leafwise.ops(p, u).add(p, u))


def _stateless(f: Callable[[Any, Any], Any]) -> GradientTransformation:
    """A transformation without state: ``f(updates, params) -> updates``."""
    return GradientTransformation(lambda params: {}, lambda updates, state, params: (f(updates, params), {}))


# -- clipping -------------------------------------------------------------------------------------------------
def clip_by_global_norm(max_norm: Hyper) -> GradientTransformation:
    """Scale all updates by ``max_norm / norm`` when their global norm (the 2-norm of all leaves
    together, summed in float32, float64 for float64 leaves) exceeds ``max_norm``."""
    limit = hyper(max_norm, "max_norm")

    def clip(updates: Any, params: Any) -> Any:
        leaves = tree_leaves(updates)
        total = None
        try:
            for leaf in leaves:
                squares = statistical.sum(square(astype(leaf, _wide(leaf.dtype), copy=False)))
                total = squares if total is None else elementwise.add(total, squares)
        except AttributeError:  # a leaf that is no array
            checks.arrays("clip_by_global_norm", updates, leaves, "update")
            raise
        if total is None:
            return updates
        norm = sqrt(total)
        bound = limit if limit.__class__ is float else astype(limit, norm.dtype)
        factor = where(greater(norm, bound), divide(bound, norm), ones_like(norm))
        return tree_map(lambda u: multiply(u, astype(factor, u.dtype, copy=False)), updates)

    return _stateless(clip)


def clip_by_value(low: float, high: float) -> GradientTransformation:
    """Clip every update to ``[low, high]``."""
    low, high = (arguments.real_float(v, name) for v, name in ((low, "low"), (high, "high")))
    if not low <= high:
        raise InvalidArgumentError(f"clip_by_value: low={low!r} must not exceed high={high!r}.")
    return _stateless(lambda updates, params: tree_map(lambda u: elementwise.clip(u, low, high), updates))


# -- weight decay ---------------------------------------------------------------------------------------------
Mask = Any  # None (every leaf), a tree of bools shaped like the parameters, or a predicate f(path, leaf) -> bool


def _mask_tree(mask: Mask, params: Any) -> Any:
    if mask is None:
        return tree_map(lambda p: True, params)
    if callable(mask):
        return tree_map_with_path(lambda path, p: bool(mask(path, p)), params)
    return tree_map(lambda p, m: _flag(m), params, mask)


def _flag(value: Any) -> bool:
    if value is not True and value is not False:  # see arguments.flag
        raise InvalidArgumentTypeError(f"mask: a mask tree holds Python bools, got {type(value).__name__}; pass "
                                       f"True/False per parameter or a predicate f(path, leaf) -> bool.")
    return value


def _check_mask(mask: Mask, who: str) -> None:
    """``mask`` is None, a tree of bools (a dict, list or tuple) or a predicate; InvalidArgumentTypeError
    otherwise (also where no weight decay uses it: a mistake shows at once)."""
    if mask is not None and not callable(mask) and not isinstance(mask, (dict, list, tuple)):
        raise InvalidArgumentTypeError(f"{who}: mask is {type(mask).__name__}; pass a tree of bools "
                                       f"shaped like the parameters or a predicate f(path, leaf) -> bool.")


def add_decayed_weights(weight_decay: Hyper, mask: Mask = None) -> GradientTransformation:
    """``updates + weight_decay * params`` on the leaves ``mask`` selects: every leaf (None), a
    tree of bools shaped like the parameters, or a predicate ``f(path, leaf) -> bool`` (e.g.
    ``lambda path, p: p.ndim > 1``: matrices only, no biases or normalisation scales)."""
    decay = hyper(weight_decay, "weight_decay", open_low=False)
    _check_mask(mask, "add_decayed_weights")

    def add(updates: Any, params: Any) -> Any:
        h = In(decay=decay)
        who = "add_decayed_weights.update"
        (p, u), rebuild = checks.columns(who, ("parameters", "updates"), params, updates)
        checks.same_shapes(who, ("parameter", "update"), params, p, u)
        flags = tree_leaves(_mask_tree(mask, params))
        return rebuild([elementwise.add(b, multiply(a, h("decay", a.dtype))) if m else b
                        for a, b, m in zip(p, u, flags)])

    return _stateless(add)


# -- momentum and Adam ----------------------------------------------------------------------------------------
_TRACE = "trace.update (momentum)"
_VELOCITY = ("velocity",)
_ADAM = ("count", "mu", "nu")
_SCHEDULE = ("schedule_count",)


def trace(decay: Hyper, nesterov: bool = False) -> GradientTransformation:
    """Momentum: ``v = decay * v + u``; the update is ``v``, or with ``nesterov`` ``u + decay * v``.
    State: ``{"velocity": tree}``."""
    mu = hyper(decay, "momentum", high=1.0, open_low=False)
    nesterov = arguments.flag(nesterov, "nesterov")

    def init(params: Any) -> Any:
        return {"velocity": tree_map(zeros_like, params)}

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        checks.own_state(_TRACE, state, _VELOCITY)
        h = In(mu=mu)
        (v, g), rebuild = checks.columns(_TRACE, ("state's velocities", "updates"), state["velocity"], updates)
        checks.same_shapes(_TRACE, ("state's velocity", "update"), updates, v, g)
        v = [elementwise.add(multiply(a, h("mu", a.dtype)), b) for a, b in zip(v, g)]
        velocity = rebuild(v)
        if nesterov:
            return rebuild([elementwise.add(b, multiply(a, h("mu", a.dtype))) for a, b in zip(v, g)]), {"velocity": velocity}
        return velocity, {"velocity": velocity}

    return GradientTransformation(init, update)


def scale_by_adam(b1: Hyper = 0.9, b2: Hyper = 0.999, eps: Hyper = 1e-8) -> GradientTransformation:
    """Adam's scaling (Kingma and Ba): bias-corrected first moment over the square root of the
    bias-corrected second, plus ``eps``. State: ``{"count", "mu", "nu"}``. The corrections
    1 - b**t are computed in float32 (float64 for float64 parameters)."""
    b1 = hyper(b1, "b1", high=1.0, open_low=False)
    b2 = hyper(b2, "b2", high=1.0, open_low=False)
    eps = hyper(eps, "eps", open_low=False)

    def init(params: Any) -> Any:
        count = _count_like(params, "adam")
        return {"count": count, "mu": tree_map(zeros_like, params), "nu": tree_map(zeros_like, params)}

    def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
        checks.own_state("scale_by_adam.update", state, _ADAM)
        count = elementwise.add(state["count"], 1)
        h = In(b1=b1, b2=b2, eps=eps)
        corrections: dict[Any, tuple[Any, Any]] = {}

        def corrected_for(dtype: Any) -> tuple[Any, Any]:
            if dtype not in corrections:
                wide = _wide(dtype)
                t = astype(count, wide)
                pair = (subtract(1.0, elementwise.pow(h(b, wide), t)) for b in ("b1", "b2"))
                corrections[dtype] = tuple(astype(c, dtype, copy=False) for c in pair)
            return corrections[dtype]

        who = "scale_by_adam.update"
        (mu, g, nu), rebuild = checks.columns(who, ("state's moments", "updates", "state's second moments"),
                                              state["mu"], updates, state["nu"])
        checks.same_shapes(who, ("state's moment", "update"), state["mu"], mu, g)
        checks.same_shapes(who, ("state's moment", "second moment"), state["mu"], mu, nu)
        do = leafwise.ops(mu, g, nu)  # the same operations leaf by leaf, or column by column
        # the ``_`` forms write into columns made here (fewer allocations); the bits are the same
        mu = do.add_(do.multiply(mu, lambda d: h("b1", d)), do.multiply(g, lambda d: _one_minus(h("b1", d))))
        nu = do.add_(do.multiply(nu, lambda d: h("b2", d)),
                     do.multiply_(do.square(g), lambda d: _one_minus(h("b2", d))))
        first = do.divide(mu, lambda d: corrected_for(d)[0])
        second = do.add_(do.sqrt_(do.divide(nu, lambda d: corrected_for(d)[1])), lambda d: h("eps", d))
        return rebuild(do.divide_(first, second)), {"count": count, "mu": rebuild(mu), "nu": rebuild(nu)}

    return GradientTransformation(init, update)


# -- scaling --------------------------------------------------------------------------------------------------
def scale(factor: Hyper) -> GradientTransformation:
    """Every update times ``factor`` (a Python float or a 0-d array)."""
    factor = hyper(factor, "factor", low=-float("inf"))
    return _stateless(lambda updates, params: _times(updates, In(f=factor), "f"))


def _times(updates: Any, h: In, name: str, negate: bool = False) -> Any:
    """Every update times hyper-parameter ``name`` (its negation with ``negate``: one product,
    the same bits as negating the product, since rounding is symmetric about zero)."""
    (u,), rebuild = tree_columns(updates)
    factors: dict[Any, Any] = {}

    def factor(dtype: Any) -> Any:
        if dtype not in factors:
            value = h(name, dtype)
            factors[dtype] = value if not negate else -value if value.__class__ is float else negative(value)
        return factors[dtype]

    try:
        return rebuild(leafwise.ops(u).multiply(u, factor))
    except AttributeError:  # a leaf that is no array
        checks.arrays("scale", updates, u, "update")
        raise


def scale_by_learning_rate(learning_rate: Hyper | Schedule) -> GradientTransformation:
    """Every update times ``-learning_rate`` (descent). A schedule (a function of the step count,
    ``arraylayer.models.schedules``) is evaluated at the count this transformation keeps (state
    ``{"schedule_count"}``, starting at 0); a float or 0-d array gives an empty state."""
    if callable(learning_rate) and not hasattr(learning_rate, "dtype"):
        schedule = learning_rate

        def init(params: Any) -> Any:
            return {"schedule_count": _count_like(params, "scale_by_learning_rate")}

        def update(updates: Any, state: Any, params: Any) -> tuple[Any, Any]:
            checks.own_state("scale_by_learning_rate.update", state, _SCHEDULE)
            count = state["schedule_count"]
            rate = hyper(schedule(count), "learning_rate (the schedule's value)")
            return _times(updates, In(lr=rate), "lr", negate=True), {"schedule_count": elementwise.add(count, 1)}

        return GradientTransformation(init, update)
    lr = hyper(learning_rate, "learning_rate")
    return _stateless(lambda updates, params: _times(updates, In(lr=lr), "lr", negate=True))
