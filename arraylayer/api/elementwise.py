"""The Array API's elementwise functions, built from one table.

Each row of :data:`UNARY` / :data:`BINARY` says which dtype kinds a function takes and
which rule gives its computation dtype:

* ``same``: the inputs' promoted dtype (``add``, ``floor``, ``maximum`` ...);
* ``inexact``: the promoted dtype, with bool and integers raised to the default float
  (seed 002's divide rule: ``int8 / int8`` is never narrower than the default float;
  ``sqrt(int32)`` is the default float on every backend);
* ``bool``: compare in the promoted dtype, return bool (comparisons, ``isnan`` ...);
* ``real``: the real dtype of a complex input (``abs``, ``real``, ``imag``);
* ``logical``: inputs as bool (``logical_and`` ...).

The per-call path: when both inputs are arrays of one class and one dtype, and a call with
them has already been planned, the public function is a dict look-up and the kernel call.
Everything else (Python scalars, mixed dtypes, first calls) goes through :func:`_plan_binary`,
which promotes under the active policy and casts only what differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from ..context import replaying
from ..defaults import default_float_dtype
from ..dtypes import Dtype, as_dtype, iinfo
from ..errors import TypePromotionError
from ..promotion import current_policy, get_dtype_promotion, result_type
from ..registry import backend_of
from .arguments import broadcast_shapes
from .dispatch import (
    PYTHON_SCALARS,
    SCALAR_CLASSES,
    WRAPPERS,
    as_array,
    call_wrapped_planned,
    kernel,
    not_defined,
    operand,
)
from .scalars import scalar_converter

Array = Any

_KIND_LETTER: Final = {"bool": "b", "int": "i", "uint": "u", "float": "f", "complex": "c"}
_KIND_WORDS: Final = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "real floating-point",
                      "c": "complex"}


class Spec(NamedTuple):
    """One elementwise function: accepted kinds (letters b i u f c), rule, Paddle scope, summary."""

    kinds: str
    rule: str
    paddle: str  # "common", "divide", "logic", "scalar" (tensor-scalar only) or "" (not in Paddle's list)
    summary: str


UNARY: Final[dict[str, Spec]] = {
    "abs": Spec("iufc", "real", "", "Absolute value; the real dtype for complex input."),
    "acos": Spec("biufc", "inexact", "", "Inverse cosine."),
    "acosh": Spec("biufc", "inexact", "", "Inverse hyperbolic cosine."),
    "asin": Spec("biufc", "inexact", "", "Inverse sine."),
    "asinh": Spec("biufc", "inexact", "", "Inverse hyperbolic sine."),
    "atan": Spec("biufc", "inexact", "", "Inverse tangent."),
    "atanh": Spec("biufc", "inexact", "", "Inverse hyperbolic tangent."),
    "bitwise_invert": Spec("biu", "same", "", "Bitwise NOT (logical NOT for bool)."),
    "ceil": Spec("iuf", "same", "", "Smallest integer value not less than x, in x's dtype."),
    "conj": Spec("iufc", "same", "", "Complex conjugate (x itself for real input)."),
    "cos": Spec("biufc", "inexact", "", "Cosine."),
    "cosh": Spec("biufc", "inexact", "", "Hyperbolic cosine."),
    "exp": Spec("biufc", "inexact", "", "Exponential."),
    "expm1": Spec("biufc", "inexact", "", "exp(x) - 1, accurate near 0."),
    "floor": Spec("iuf", "same", "", "Largest integer value not greater than x, in x's dtype."),
    "imag": Spec("iufc", "real", "", "Imaginary part (zeros of x's dtype for real input)."),
    "isfinite": Spec("biufc", "bool", "", "True where x is finite."),
    "isinf": Spec("biufc", "bool", "", "True where x is infinite."),
    "isnan": Spec("biufc", "bool", "", "True where x is NaN."),
    "log": Spec("biufc", "inexact", "", "Natural logarithm."),
    "log1p": Spec("biufc", "inexact", "", "log(1 + x), accurate near 0."),
    "log2": Spec("biufc", "inexact", "", "Base-2 logarithm."),
    "log10": Spec("biufc", "inexact", "", "Base-10 logarithm."),
    "logical_not": Spec("biufc", "logical", "", "Logical NOT (input read as bool)."),
    "negative": Spec("iufc", "same", "", "-x."),
    "positive": Spec("iufc", "same", "", "+x."),
    "real": Spec("iufc", "real", "", "Real part (x itself for real input)."),
    "reciprocal": Spec("biufc", "inexact", "", "1 / x."),
    "round": Spec("iufc", "same", "", "Round to the nearest integer, halves to even, in x's dtype."),
    "sign": Spec("iufc", "same", "", "Sign of x (x / |x| for complex, 0 at 0)."),
    "signbit": Spec("f", "bool", "", "True where the sign bit is set (also for -0.0 and -NaN)."),
    "sin": Spec("biufc", "inexact", "", "Sine."),
    "sinh": Spec("biufc", "inexact", "", "Hyperbolic sine."),
    "sqrt": Spec("biufc", "inexact", "", "Square root."),
    "square": Spec("iufc", "same", "", "x * x."),
    "tan": Spec("biufc", "inexact", "", "Tangent."),
    "tanh": Spec("biufc", "inexact", "", "Hyperbolic tangent."),
    "trunc": Spec("iuf", "same", "", "Round toward zero, in x's dtype."),
}

BINARY: Final[dict[str, Spec]] = {
    "add": Spec("biufc", "same", "common", "x1 + x2 (logical OR for bool)."),
    "atan2": Spec("biuf", "inexact", "common", "Angle of the point (x2, x1), quadrant-aware."),
    "bitwise_and": Spec("biu", "same", "scalar", "Bitwise AND."),
    "bitwise_left_shift": Spec("iu", "same", "", "x1 shifted left by x2 bits."),
    "bitwise_or": Spec("biu", "same", "scalar", "Bitwise OR."),
    "bitwise_right_shift": Spec("iu", "same", "", "x1 shifted right by x2 bits (arithmetic for signed)."),
    "bitwise_xor": Spec("biu", "same", "scalar", "Bitwise XOR."),
    "copysign": Spec("biuf", "inexact", "", "|x1| with the sign of x2."),
    "divide": Spec("biufc", "inexact", "divide", "True division; integers give the default float."),
    "equal": Spec("biufc", "bool", "logic", "x1 == x2."),
    "floor_divide": Spec("iuf", "same", "common", "Floor of x1 / x2 (Python's //; at infinities the floor of the true quotient, as the standard says)."),
    "greater": Spec("biuf", "bool", "logic", "x1 > x2."),
    "greater_equal": Spec("biuf", "bool", "logic", "x1 >= x2."),
    "hypot": Spec("biuf", "inexact", "", "sqrt(x1**2 + x2**2) without overflow."),
    "less": Spec("biuf", "bool", "logic", "x1 < x2."),
    "less_equal": Spec("biuf", "bool", "logic", "x1 <= x2."),
    "logaddexp": Spec("biuf", "inexact", "common", "log(exp(x1) + exp(x2)) without overflow."),
    "logical_and": Spec("biufc", "logical", "logic", "Logical AND (inputs read as bool)."),
    "logical_or": Spec("biufc", "logical", "logic", "Logical OR (inputs read as bool)."),
    "logical_xor": Spec("biufc", "logical", "logic", "Logical XOR (inputs read as bool)."),
    "maximum": Spec("biuf", "same", "common", "Elementwise maximum; NaN propagates."),
    "minimum": Spec("biuf", "same", "common", "Elementwise minimum; NaN propagates."),
    "multiply": Spec("biufc", "same", "common", "x1 * x2 (logical AND for bool)."),
    "nextafter": Spec("biuf", "inexact", "common", "The next representable value after x1 toward x2."),
    "not_equal": Spec("biufc", "bool", "logic", "x1 != x2."),
    "pow": Spec("iufc", "same", "common", "x1 ** x2."),
    "remainder": Spec("iuf", "same", "common", "x1 mod x2 with the sign of x2 (Python's %)."),
    "subtract": Spec("iufc", "same", "common", "x1 - x2."),
}

_BOOL: Final = Dtype("bool")
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
        return default_float_dtype()
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


def _binary(name: str, spec: Spec) -> Callable[[Any, Any], Any]:
    """The public function for a binary row: fast paths, then the planning path.

    Two plan caches, filled by :func:`_plan_binary` only with context-independent plans:
    ``same`` for two arrays of one class and dtype, ``with_scalar`` for an array and a
    Python scalar under a given policy (the scalar becomes the array's dtype unchanged).
    Both are keyed by array class first, so each inner dict holds one framework's dtype
    objects only (torch.compile must hash every key of a dict it looks into).
    """
    same: dict[type, dict[Any, Callable[[Any, Any], Any]]] = {}
    with_scalar: dict[type, dict[tuple[Any, ...], ScalarPlan]] = {}
    mixed: dict[type, dict[tuple[Any, ...], MixedPlan]] = {}  # two arrays of one class, two dtypes
    # the plans that need no check: the kernel (with a cast, for mixed) called on the arguments as given
    scalar_runs: dict[type, dict[tuple[Any, ...], Callable[[Any, Any], Any]]] = {}
    mixed_runs: dict[type, dict[tuple[Any, ...], Callable[[Any, Any], Any]]] = {}
    caches = Plans(same, with_scalar, mixed, scalar_runs, mixed_runs)

    def planned(x1: Any, x2: Any) -> Any:
        scalar_first = type(x1) in SCALAR_CLASSES
        array, scalar = (x2, x1) if scalar_first else (x1, x2)
        if type(scalar) in SCALAR_CLASSES:
            try:
                key = (get_dtype_promotion(), array.dtype, type(scalar), scalar_first)
                run = scalar_runs[type(array)].get(key)
                plan = with_scalar[type(array)].get(key) if run is None else None
            except (AttributeError, KeyError):
                run = plan = None
            if run is not None:
                return run(x1, x2)
            if plan is not None and plan.admits(array, scalar):
                value = plan.python_type(scalar)
                return plan.run(value, array) if scalar_first else plan.run(array, value)
        elif type(x1) is type(x2):
            try:
                mix = mixed[type(x1)][get_dtype_promotion(), x1.dtype, x2.dtype]
            except (AttributeError, KeyError):
                mix = None
            if mix is not None and not (mix.weak_guard and (x1.weak_type or x2.weak_type)):
                try:
                    return mix.run(mix.cast1(x1), mix.cast2(x2))
                except Exception:
                    _refuse_unbroadcastable(x1, x2)
                    raise
        if type(x1) in WRAPPERS or type(x2) in WRAPPERS:  # arraylayer.Array in, Array out
            return call_wrapped_planned(function, same, x1, x2)
        return _plan_binary(name, spec, caches, x1, x2)

    def function(x1: Array | complex, x2: Array | complex, /) -> Array:
        cls = type(x1)
        if cls is type(x2):  # no exception raised on the planned paths: raising costs
            try:
                native = x1.dtype
                if native is x2.dtype:
                    run = same[cls][native]
                else:  # .get: no exception where no plan can exist (JAX, weak results)
                    run = mixed_runs.get(cls, _NO_PLANS).get((get_dtype_promotion(), native, x2.dtype))
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
    function.plans = same  # type: ignore[attr-defined]  # for callers that unwrap first (see Plans.same)
    return function


class ScalarPlan(NamedTuple):
    """How to run a binary kernel on an array of a dtype and a Python scalar of a class."""

    run: Callable[[Any, Any], Any]
    python_type: Callable[[Any], Any]  # the Python type of the kind, or half precision's rounding
    low: int | None  # integer results: the range a Python int must fit
    high: int | None
    weak_guard: bool  # JAX: a weak-typed array takes the planning path

    def admits(self, array: Any, scalar: Any) -> bool:
        if self.weak_guard and array.weak_type:
            return False
        return self.low is None or self.low <= scalar <= self.high  # type: ignore[operator]


class Plans(NamedTuple):
    """The plan caches of one binary function (see :func:`_binary`)."""

    same: dict[type, dict[Any, Any]]  # also ``function.plans``: class -> dtype -> run(x1, x2)
    with_scalar: dict[type, dict[Any, Any]]
    mixed: dict[type, dict[Any, Any]]
    scalar_runs: dict[type, dict[Any, Any]]
    mixed_runs: dict[type, dict[Any, Any]]


class MixedPlan(NamedTuple):
    """Two arrays of two dtypes: cast each (identity when it already has the computation dtype), run."""

    run: Callable[[Any, Any], Any]
    cast1: Callable[[Any], Any]
    cast2: Callable[[Any], Any]
    weak_guard: bool  # JAX: a weak-typed input takes the planning path


def _identity(x: Any) -> Any:
    return x


def _caster(backend: Any, source: Dtype, target: Dtype) -> Callable[[Any], Any]:
    if source is target:
        return _identity
    return lambda x: backend.astype(x, target)


def _plan_binary(name: str, spec: Spec, caches: Plans, x1: Any, x2: Any) -> Any:
    same, with_scalar = caches.same, caches.with_scalar
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
        direct = getattr(run, "arrays_only", run)  # see the kernel contract
        same.setdefault(type(x1), {})[x1.dtype] = (
            direct if not backend.weak_arrays else _strong_only(direct, name, spec, caches)
        )
    elif (first_is_array and isinstance(x2, arrays) and type(x1) is type(x2) and compute is dtype
          and not (backend.weak_arrays and (x1.weak_type or x2.weak_type))):  # a weak input's result is not the table's
        d1, d2 = backend.dtype_of(x1), backend.dtype_of(x2)
        if type(policy.table[d1][d2]) is Dtype:  # a strong result: no default dtype involved
            key = (policy.name, x1.dtype, x2.dtype)
            caches.mixed.setdefault(type(x1), {})[key] = MixedPlan(
                run, _caster(backend, d1, compute), _caster(backend, d2, compute), backend.weak_arrays
            )
            if not backend.weak_arrays and (d1 is compute) is not (d2 is compute):
                direct, cast = getattr(run, "arrays_only", run), backend.caster(compute)
                caches.mixed_runs.setdefault(type(x1), {})[key] = (
                    (lambda x1, x2: direct(cast(x1), x2)) if d2 is compute else (lambda x1, x2: direct(x1, cast(x2)))
                )
    elif (first_is_array and a1 is x1 and type(x2) in SCALAR_CLASSES) or (
        a2 is x2 and type(x1) in SCALAR_CLASSES and isinstance(x2, arrays)
    ):
        array, scalar = (x1, x2) if first_is_array else (x2, x1)
        if backend.dtype_of(array) is compute and not (backend.weak_arrays and array.weak_type):
            bounds = (None, None)
            if compute.is_integer and type(scalar) is int:
                info = iinfo(compute)
                bounds = (info.min, info.max)
            key = (policy.name, array.dtype, type(scalar), not first_is_array)
            python_type = scalar_converter(compute)
            runs, plans = caches.scalar_runs.setdefault(type(array), {}), with_scalar.setdefault(type(array), {})
            if bounds == (None, None) and python_type is type(scalar) and not backend.weak_arrays:
                runs[key] = run  # nothing to check, nothing to convert
            else:
                plans[key] = ScalarPlan(run, python_type, *bounds, backend.weak_arrays)
    return result


def _strong_only(run: Callable[[Any, Any], Any], name: str, spec: Spec, caches: Plans) -> Callable[[Any, Any], Any]:
    """A fast path for JAX: two weak-typed inputs make a weak result, which only the planning
    path materialises to the default dtype; everything else runs the kernel directly."""

    def guarded(x1: Any, x2: Any) -> Any:
        if x1.weak_type and x2.weak_type:
            return _plan_binary(name, spec, caches, x1, x2)
        return run(x1, x2)

    return guarded


def _dtypes_of(*xs: Any) -> tuple[str, ...]:
    """How the inputs read in an error message: arraylayer dtype names, or Python type names."""
    return tuple(type(x).__name__ if _is_python_scalar(x) or not hasattr(x, "dtype") else str(as_dtype(x.dtype))
                 for x in xs)


def _unary(name: str, spec: Spec) -> Callable[[Any], Any]:
    """The public function for a unary row: fast path, then the planning path."""
    fast: dict[type, dict[Any, Callable[[Any], Any]]] = {}  # array class -> native dtype -> kernel

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
    return function


def _plan_unary(name: str, spec: Spec, fast: dict[type, dict[Any, Any]], x: Any) -> Any:
    backend = backend_of(x)
    if not isinstance(x, backend.array_types):  # a Python scalar: an array of its default dtype
        x = backend.asarray(x, result_type(x))
    dtype = backend.dtype_of(x)
    compute = _compute_dtype(name, spec, dtype, (x,))
    run = kernel(backend, name, compute)
    if compute is dtype:
        if not replaying():
            fast.setdefault(type(x), {})[x.dtype] = run
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
