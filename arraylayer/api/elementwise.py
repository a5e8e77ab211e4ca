"""The Array API's elementwise functions, built from one table.

The table, :data:`UNARY` / :data:`BINARY` (which dtype kinds each function takes and which
rule gives its computation dtype), lives in :mod:`arraylayer.dtypes.function_rules`, where the
support declarations read it too.

The per-call path: when a call with inputs of these classes and dtypes (or an array and a
Python scalar of this class) has already been planned, the public function is one look-up in
its plan cache and the kernel call (with a cast for mixed dtypes). First calls go through
:func:`_plan_binary`, which promotes under the active policy, casts only what differs and
stores the plan; :func:`clear_plans` says what a plan depends on and when the caches empty.

Each plan is also stored, as data, in the function's compiled dispatcher when the C extension
is active (:mod:`arraylayer.runtime.compiled_dispatch`): the public function is then the compiled one,
which replays the stored plans and calls the Python function below for everything else.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, Final

from arraylayer.runtime import compiled_dispatch
from arraylayer.context import replaying
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.dtypes import Dtype, as_dtype, iinfo
from arraylayer.errors import TypePromotionError
from arraylayer.dtypes.function_rules import BINARY, KIND_LETTER, KIND_WORDS, UNARY, Spec
from arraylayer.dtypes.promotion import current_policy, get_dtype_promotion, result_type
from arraylayer.runtime.registry import backend_of, on_registry_change
from arraylayer.arguments import broadcast_shapes
from arraylayer.api.dispatch import (
    PYTHON_SCALARS,
    SCALAR_CLASSES,
    WRAPPERS,
    as_array,
    call_wrapped_planned,
    kernel,
    low_precision_caster,
    not_defined,
    operand,
)
from arraylayer.api.scalars import scalar_converter

Array = Any

_KIND_LETTER, _KIND_WORDS = KIND_LETTER, KIND_WORDS

_BOOL: Final = Dtype("bool")
_ALL_WEAK, _ANY_WEAK = 1, 2  # the compiled plans' guards: decline when every / any array input is weak-typed
_NO_PLANS: Final[dict[Any, Any]] = {}  # read-only: the inner plan dict of a class never planned


def _takes(kinds: str) -> str:
    return " or ".join(_KIND_WORDS[k] for k in kinds) + " arrays"


def _compute_dtype(name: str, spec: Spec, dtype: Dtype, inputs: tuple[Any, ...]) -> Dtype:
    """The dtype the kernel runs in, or the error for a kind the function does not take."""
    if spec.rule == "logical":
        return _BOOL
    if _KIND_LETTER[dtype.category] not in spec.kinds:
        raise not_defined(name, _dtypes_of(*inputs), _takes(spec.kinds))
    if spec.rule == "inexact" and dtype.category in ("bool", "int", "uint"):
        # int4/int2 keep their dtype: the low-precision rule's kernel gives float32 (see lowp/compute.py)
        return dtype if dtype.is_low_precision else default_float_dtype()
    return dtype


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, PYTHON_SCALARS) and not hasattr(x, "dtype")


def _check_paddle_scope(name: str, spec: Spec, x1: Any, x2: Any, dtype: Dtype) -> None:
    """Under the "paddle" policy, tensor-tensor calls with two dtypes promote only in the
    APIs of Paddle's list (seed 002); the logic rule leaves complex out of promotion."""
    if _is_python_scalar(x1) or _is_python_scalar(x2) or x1.dtype == x2.dtype:
        return
    if spec.paddle in ("", "scalar"):
        raise _paddle_error(name, "tensor-tensor")
    if spec.paddle == "logic" and dtype.category == "complex":
        raise _paddle_error(name, "complex")


def _paddle_error(name: str, case: str) -> TypePromotionError:
    return TypePromotionError(
        f"{name} does not promote {case} inputs of different dtypes under the 'paddle' policy (it is not in "
        f"Paddle's list of promoting APIs for that case). Cast the inputs to one dtype first, or use the "
        f"'standard' policy."
    )


def _refuse_unbroadcastable(x1: Any, x2: Any) -> None:
    """After a planned kernel failed: the arraylayer error naming both shapes when they do not
    broadcast (the framework's own error otherwise propagates)."""
    if hasattr(x1, "shape") and hasattr(x2, "shape"):
        broadcast_shapes(tuple(x1.shape), tuple(x2.shape))


#: Every elementwise function's plan cache (see :func:`_binary`), for :func:`clear_plans`.
_CACHES: Final[list[dict[type, dict[Any, Any]]]] = []
#: id(plan cache) -> its compiled dispatcher's ``store`` (when the C extension is active)
_COMPILED: Final[dict[int, compiled_dispatch.Store]] = {}


def _store(plans: dict[type, dict[Any, Any]], backend: Any, cls: type, key: Any, run: Callable[..., Any],
           replay: tuple[Any, ...]) -> None:
    """Store a plan in ``plans[cls][key]`` and, as ``replay`` (the arguments of the compiled
    dispatcher's ``store``: classes, native dtypes, policy, callable, casts, guard), in C, with
    where ``backend``'s arrays of class ``cls`` hold their dtype."""
    plans.setdefault(cls, {})[key] = run
    store = _COMPILED.get(id(plans))
    if store is not None and compiled_dispatch.hold(cls, backend.dtype_holder):
        store(*replay)


def _public(function: Callable[..., Any], plans: dict[type, dict[Any, Any]], name: str, args: str,
            arity: int) -> Callable[..., Any]:
    """The function users call: the compiled one over ``function`` when the extension is active."""
    public, store = compiled_dispatch.compiled(function, name, args, arity)
    if store is not None:
        _COMPILED[id(plans)] = store
    return public


def clear_plans() -> None:
    """Forget every stored plan: the one invalidation rule of the plan caches.

    A plan is stored only when it depends on nothing outside its key (the array class, the
    native dtypes, the policy's name, a Python scalar's class and side): never for a result
    that involves a default dtype or a weak type, never while Dynamo traces. So changing a
    setting (default dtypes, the policy in force, checked scalars) needs no invalidation: a
    new policy is a new key, and the other settings are never part of a stored plan. What
    can change under a key is what the process registers: a backend (for an array class), a
    policy table, a support declaration; whoever changes one of those calls this function.
    """
    for plans in _CACHES:
        plans.clear()
    compiled_dispatch.clear()


on_registry_change(clear_plans)  # register_backend and support.clear_caches call it


def _binary(name: str, spec: Spec) -> Callable[[Any, Any], Any]:
    """The public function for a binary row: one plan look-up, then the planning path.

    One plan cache, ``plans``: array class -> key -> ``run(x1, x2)``, filled by
    :func:`_plan_binary` (see :func:`clear_plans` for what it holds and when it is emptied).
    The key says which case a plan serves:

    * the native dtype: two arrays of one class and that dtype (also a wrapper class and its
      arraylayer dtype, stored by ``call_wrapped_planned``; ``function.plans`` is this cache);
    * ``(policy, dtype1, dtype2)``: two arrays of one class and two dtypes;
    * ``(policy, dtype, scalar class, scalar first)``: an array and a Python scalar.

    A plan whose case still needs a check (a scalar's range, JAX's weak types) does it and
    takes the planning path when it fails. The class comes first, so each inner dict holds one
    framework's dtype objects only (torch.compile must hash every key of a dict it looks into).
    """
    plans: dict[type, dict[Any, Callable[[Any, Any], Any]]] = {}
    _CACHES.append(plans)

    def planned(x1: Any, x2: Any) -> Any:
        scalar_first = type(x1) in SCALAR_CLASSES
        array = x2 if scalar_first else x1
        scalar = x1 if scalar_first else x2
        if type(scalar) in SCALAR_CLASSES:
            try:  # [], not .get(cls, ...): under torch.compile, .get on an empty dict guards on its emptiness
                run = plans[type(array)].get((get_dtype_promotion(), array.dtype, type(scalar), scalar_first))
            except (AttributeError, KeyError):  # two Python scalars, or nothing planned for the class
                run = None
            if run is not None:
                return run(x1, x2)
        if type(x1) in WRAPPERS or type(x2) in WRAPPERS:  # arraylayer.Array in, Array out
            return call_wrapped_planned(function, plans, x1, x2)
        return _plan_binary(name, spec, plans, x1, x2)

    def function(x1: Array | complex, x2: Array | complex, /) -> Array:
        cls = type(x1)
        if cls is type(x2):  # no exception raised on the planned paths: raising costs
            try:
                native = x1.dtype
                if native is x2.dtype:
                    run = plans[cls][native]
                else:  # .get: no exception where no plan can exist (JAX, weak results)
                    run = plans.get(cls, _NO_PLANS).get((get_dtype_promotion(), native, x2.dtype))
            except (AttributeError, KeyError):  # two Python scalars, or not planned yet
                run = None
            if run is not None:
                try:  # free unless raised (Python 3.11+ zero-cost exceptions)
                    return run(x1, x2)
                except Exception:
                    _refuse_unbroadcastable(x1, x2)
                    raise
        return planned(x1, x2)

    _describe(function, name, spec, "x1, x2")
    function.plans = plans  # type: ignore[attr-defined]  # for callers that unwrap first (Array operators)
    return _public(function, plans, name, "x1, x2", 2)


def _identity(x: Any) -> Any:
    return x


def _caster(backend: Any, source: Dtype, target: Dtype) -> Callable[[Any], Any]:
    if source is target:
        return _identity
    if source.is_low_precision or target.is_low_precision:  # as as_array casts (ml_dtypes' rule)
        return low_precision_caster(backend, source, target)
    return backend.caster(target)  # type: ignore[no-any-return]


def _on_arrays(run: Callable[..., Any], native_dtype: Any) -> Callable[..., Any]:
    """What computes ``run``'s function for two arrays of ``native_dtype``: the kernel's
    ``arrays_plain`` callable where it has one (see the kernel contract), else ``run``."""
    plain = getattr(run, "arrays_plain", None)
    return (plain and plain(native_dtype)) or run


def _natively_mixed(backend: Any, run: Callable[..., Any], native1: Any, native2: Any, compute: Any
                    ) -> Callable[..., Any] | None:
    """The kernel package's ``mixed_plain`` callable for ``run`` on these native dtypes, or None."""
    plain = getattr(import_module(backend.kernel_module), "mixed_plain", None)
    return plain(run, native1, native2, compute) if plain is not None else None


def _mixed_plan(name: str, spec: Spec, plans: dict[type, dict[Any, Any]], backend: Any, direct: Callable[..., Any],
                cast1: Callable[[Any], Any], cast2: Callable[[Any], Any]) -> Callable[[Any, Any], Any]:
    """Two arrays of two dtypes: cast the one that differs (or both), run ``direct`` on the cast
    arrays; on JAX, a weak-typed input takes the planning path (its result is not the table's)."""
    if backend.weak_arrays:
        def weak_checked(x1: Any, x2: Any) -> Any:
            if x1.weak_type or x2.weak_type:
                return _plan_binary(name, spec, plans, x1, x2)
            return direct(cast1(x1), cast2(x2))
        return weak_checked
    if cast1 is _identity:
        return direct if cast2 is _identity else lambda x1, x2: direct(x1, cast2(x2))
    if cast2 is _identity:
        return lambda x1, x2: direct(cast1(x1), x2)
    return lambda x1, x2: direct(cast1(x1), cast2(x2))


def _scalar_plan(name: str, spec: Spec, plans: dict[type, dict[Any, Any]], run: Callable[..., Any],
                 python_type: Callable[[Any], Any], bounds: tuple[int | None, int | None], weak: bool,
                 scalar_first: bool) -> Callable[[Any, Any], Any]:
    """An array and a Python scalar: the scalar converted to the array's kind (half precision's
    rounding included) after a range check for integer results; the planning path (and its
    error) when it does not fit, or for a weak-typed JAX array."""
    low, high = bounds

    def checked(x1: Any, x2: Any) -> Any:
        array, scalar = (x2, x1) if scalar_first else (x1, x2)
        if (weak and array.weak_type) or (low is not None and not low <= scalar <= high):  # type: ignore[operator]
            return _plan_binary(name, spec, plans, x1, x2)
        value = python_type(scalar)
        return run(value, array) if scalar_first else run(array, value)

    return checked


def _plan_binary(name: str, spec: Spec, plans: dict[type, dict[Any, Any]], x1: Any, x2: Any) -> Any:
    backend = backend_of(x1, x2)
    dtype = _BOOL if spec.rule == "logical" else result_type(x1, x2)
    policy = current_policy()
    if policy.name == "paddle":
        _check_paddle_scope(name, spec, x1, x2, dtype)
    compute = _compute_dtype(name, spec, dtype, (x1, x2))
    run = kernel(backend, name, compute)
    arrays = backend.array_types
    first_is_array = isinstance(x1, arrays)
    a1 = operand(backend, x1, compute, scalar_ok=isinstance(x2, arrays))
    a2 = operand(backend, x2, compute, scalar_ok=True) if first_is_array else as_array(backend, x2, compute)
    if hasattr(a1, "shape") and hasattr(a2, "shape"):  # planning path only: one error naming both shapes
        broadcast_shapes(tuple(a1.shape), tuple(a2.shape))
    result = run(a1, a2)
    if replaying():  # traced by Dynamo: a stored plan would be a side effect, and the next call a recompile
        return result
    if a1 is x1 and a2 is x2 and type(x1) is type(x2) and backend.dtype_of(x1) is compute:
        direct = _on_arrays(run, x1.dtype)
        weak = backend.weak_arrays
        _store(plans, backend, type(x1), x1.dtype, _strong_only(direct, name, spec, plans) if weak else direct,
               (type(x1), x1.dtype, type(x2), x2.dtype, None, direct, None, None, _ALL_WEAK if weak else 0))
    elif (first_is_array and isinstance(x2, arrays) and type(x1) is type(x2) and compute is dtype
          and not (backend.weak_arrays and (x1.weak_type or x2.weak_type))):  # a weak input's result is not the table's
        d1, d2 = backend.dtype_of(x1), backend.dtype_of(x2)
        if type(policy.table[d1][d2]) is Dtype:  # a strong result: no default dtype involved
            cast1, cast2 = _caster(backend, d1, compute), _caster(backend, d2, compute)
            weak, direct = backend.weak_arrays, _on_arrays(run, a1.dtype)
            native = _natively_mixed(backend, run, x1.dtype, x2.dtype, a1.dtype)
            if native is not None:  # the framework's promotion of the pair is the cast's (see the kernel contract)
                cast1 = cast2 = _identity
                direct = native
            _store(plans, backend, type(x1), (policy.name, x1.dtype, x2.dtype),
                   _mixed_plan(name, spec, plans, backend, direct, cast1, cast2),
                   (type(x1), x1.dtype, type(x2), x2.dtype, policy.name,
                    direct, None if cast1 is _identity else cast1,
                    None if cast2 is _identity else cast2, _ANY_WEAK if weak else 0))
    elif (first_is_array and a1 is x1 and type(x2) in SCALAR_CLASSES) or (
        a2 is x2 and type(x1) in SCALAR_CLASSES and isinstance(x2, arrays)
    ):
        array, scalar = (x1, x2) if first_is_array else (x2, x1)
        if backend.dtype_of(array) is compute and not (backend.weak_arrays and array.weak_type):
            bounds: tuple[int | None, int | None] = (None, None)
            if compute.is_integer and type(scalar) is int:
                info = iinfo(compute)
                bounds = (info.min, info.max)
            python_type = scalar_converter(compute)
            weak = backend.weak_arrays
            if bounds == (None, None) and python_type is type(scalar):  # the scalar enters as it is
                plain = getattr(run, "scalar_plain", None)  # see the kernel contract
                direct = (plain and plain(array.dtype, type(scalar))) or run
                plan = _scalar_plan(name, spec, plans, direct, python_type, bounds, weak,
                                    not first_is_array) if weak else direct
                replay = (direct, _ANY_WEAK if weak else 0)  # the compiled guard: a weak JAX array declines
            else:
                plan = _scalar_plan(name, spec, plans, run, python_type, bounds, weak, not first_is_array)
                replay = (plan, 0)
            _store(plans, backend, type(array), (policy.name, array.dtype, type(scalar), not first_is_array), plan,
                   (type(x1), x1.dtype if first_is_array else None, type(x2),
                    None if first_is_array else x2.dtype, policy.name, replay[0], None, None, replay[1]))
    return result


def _strong_only(run: Callable[[Any, Any], Any], name: str, spec: Spec, plans: dict[type, dict[Any, Any]]
                 ) -> Callable[[Any, Any], Any]:
    """A fast path for JAX: two weak-typed inputs make a weak result, which only the planning
    path materialises to the default dtype; everything else runs the kernel directly."""

    def guarded(x1: Any, x2: Any) -> Any:
        if x1.weak_type and x2.weak_type:
            return _plan_binary(name, spec, plans, x1, x2)
        return run(x1, x2)

    return guarded


def _dtypes_of(*xs: Any) -> tuple[str, ...]:
    """How the inputs read in an error message: arraylayer dtype names, or Python type names."""
    return tuple(type(x).__name__ if _is_python_scalar(x) or not hasattr(x, "dtype") else str(as_dtype(x.dtype))
                 for x in xs)


def _unary(name: str, spec: Spec) -> Callable[[Any], Any]:
    """The public function for a unary row: fast path, then the planning path."""
    fast: dict[type, dict[Any, Callable[[Any], Any]]] = {}  # array class -> native dtype -> kernel
    _CACHES.append(fast)

    def function(x: Array, /) -> Array:
        try:
            run = fast[type(x)][x.dtype]
        except (AttributeError, KeyError):  # not planned yet, a Python scalar, or an arraylayer.Array
            if type(x) in WRAPPERS:
                return call_wrapped_planned(function, fast, x)
            return _plan_unary(name, spec, fast, x)
        return run(x)

    _describe(function, name, spec, "x")
    function.plans = fast  # type: ignore[attr-defined]  # for callers that unwrap first
    return _public(function, fast, name, "x", 1)


def _plan_unary(name: str, spec: Spec, fast: dict[type, dict[Any, Any]], x: Any) -> Any:
    backend = backend_of(x)
    if not isinstance(x, backend.array_types):  # a Python scalar: an array of its default dtype
        x = backend.asarray(x, result_type(x))
    dtype = backend.dtype_of(x)
    compute = _compute_dtype(name, spec, dtype, (x,))
    run = kernel(backend, name, compute)
    if compute is dtype:
        if not replaying():
            _store(fast, backend, type(x), x.dtype, run, (type(x), x.dtype, None, None, None, run, None, None, 0))
        return run(x)
    return run(backend.astype(x, compute))


_RULE_NOTES: Final = {
    "same": "The result has the inputs' promoted dtype.",
    "inexact": "The result has the inputs' promoted dtype; bool and integer inputs give the default float dtype.",
    "bool": "The result is bool; inputs are compared in their promoted dtype.",
    "real": "The result has the input's dtype, or its real counterpart for complex input.",
    "logical": "The result is bool; inputs are read as bool (non-zero is True).",
}


def _describe(function: Callable[..., Any], name: str, spec: Spec, args: str) -> None:
    function.accepts_wrapped = True  # type: ignore[attr-defined]  # checked in the planning path
    function.__name__ = function.__qualname__ = name
    function.__module__ = __name__
    function.__doc__ = (
        f"{spec.summary}\n\nTakes {_takes(spec.kinds)} (Python scalars too, as weak values). "
        f"{_RULE_NOTES[spec.rule]} Same dtype and values on every backend; see the Array API "
        f"standard's ``{name}({args})``."
    )


def clip(x: Array, /, min: Array | float | None = None, max: Array | float | None = None) -> Array:  # noqa: A002
    """x limited to [min, max], in x's dtype.

    ``min``/``max`` are None, Python scalars or arrays; each must convert to x's dtype
    without changing it (``result_type(x, bound) == x.dtype``), else TypePromotionError.
    """
    backend = backend_of(x, *(b for b in (min, max) if b is not None))
    x = x if isinstance(x, backend.array_types) else backend.asarray(x, result_type(x))
    dtype = backend.dtype_of(x)
    _compute_dtype("clip", _CLIP, dtype, (x,))
    bounds = []
    for bound in (min, max):
        if bound is not None:
            if result_type(x, bound) is not dtype:
                raise TypePromotionError(
                    f"clip keeps x's dtype ({dtype}); a bound of {_dtypes_of(bound)[0]} would change it. "
                    f"Cast the bound to {dtype} first."
                )
            bound = operand(backend, bound, dtype, scalar_ok=True)
        bounds.append(bound)
    return kernel(backend, "clip", dtype)(x, *bounds)


_CLIP: Final = Spec("iuf", "same", "", "")

# The functions, one per table row.
abs = _unary("abs", UNARY["abs"])
acos = _unary("acos", UNARY["acos"])
acosh = _unary("acosh", UNARY["acosh"])
asin = _unary("asin", UNARY["asin"])
asinh = _unary("asinh", UNARY["asinh"])
atan = _unary("atan", UNARY["atan"])
atanh = _unary("atanh", UNARY["atanh"])
bitwise_invert = _unary("bitwise_invert", UNARY["bitwise_invert"])
ceil = _unary("ceil", UNARY["ceil"])
conj = _unary("conj", UNARY["conj"])
cos = _unary("cos", UNARY["cos"])
cosh = _unary("cosh", UNARY["cosh"])
exp = _unary("exp", UNARY["exp"])
expm1 = _unary("expm1", UNARY["expm1"])
floor = _unary("floor", UNARY["floor"])
imag = _unary("imag", UNARY["imag"])
isfinite = _unary("isfinite", UNARY["isfinite"])
isinf = _unary("isinf", UNARY["isinf"])
isnan = _unary("isnan", UNARY["isnan"])
log = _unary("log", UNARY["log"])
log1p = _unary("log1p", UNARY["log1p"])
log2 = _unary("log2", UNARY["log2"])
log10 = _unary("log10", UNARY["log10"])
logical_not = _unary("logical_not", UNARY["logical_not"])
negative = _unary("negative", UNARY["negative"])
positive = _unary("positive", UNARY["positive"])
real = _unary("real", UNARY["real"])
reciprocal = _unary("reciprocal", UNARY["reciprocal"])
round = _unary("round", UNARY["round"])
sign = _unary("sign", UNARY["sign"])
signbit = _unary("signbit", UNARY["signbit"])
sin = _unary("sin", UNARY["sin"])
sinh = _unary("sinh", UNARY["sinh"])
sqrt = _unary("sqrt", UNARY["sqrt"])
square = _unary("square", UNARY["square"])
tan = _unary("tan", UNARY["tan"])
tanh = _unary("tanh", UNARY["tanh"])
trunc = _unary("trunc", UNARY["trunc"])
add = _binary("add", BINARY["add"])
atan2 = _binary("atan2", BINARY["atan2"])
bitwise_and = _binary("bitwise_and", BINARY["bitwise_and"])
bitwise_left_shift = _binary("bitwise_left_shift", BINARY["bitwise_left_shift"])
bitwise_or = _binary("bitwise_or", BINARY["bitwise_or"])
bitwise_right_shift = _binary("bitwise_right_shift", BINARY["bitwise_right_shift"])
bitwise_xor = _binary("bitwise_xor", BINARY["bitwise_xor"])
copysign = _binary("copysign", BINARY["copysign"])
divide = _binary("divide", BINARY["divide"])
equal = _binary("equal", BINARY["equal"])
floor_divide = _binary("floor_divide", BINARY["floor_divide"])
greater = _binary("greater", BINARY["greater"])
greater_equal = _binary("greater_equal", BINARY["greater_equal"])
hypot = _binary("hypot", BINARY["hypot"])
less = _binary("less", BINARY["less"])
less_equal = _binary("less_equal", BINARY["less_equal"])
logaddexp = _binary("logaddexp", BINARY["logaddexp"])
logical_and = _binary("logical_and", BINARY["logical_and"])
logical_or = _binary("logical_or", BINARY["logical_or"])
logical_xor = _binary("logical_xor", BINARY["logical_xor"])
maximum = _binary("maximum", BINARY["maximum"])
minimum = _binary("minimum", BINARY["minimum"])
multiply = _binary("multiply", BINARY["multiply"])
nextafter = _binary("nextafter", BINARY["nextafter"])
not_equal = _binary("not_equal", BINARY["not_equal"])
pow = _binary("pow", BINARY["pow"])
remainder = _binary("remainder", BINARY["remainder"])
subtract = _binary("subtract", BINARY["subtract"])

__all__ = sorted([*UNARY, *BINARY, "clip"])
