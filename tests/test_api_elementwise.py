"""The elementwise functions as a matrix: function x dtype (pair) x backend.

For every pair of dtypes valid on a backend, the result dtype must be JAX's promotion (the
standard policy's oracle, x64 on) turned by the function's rule (divide and the other
float-valued functions: integers give the default float; comparisons: bool), the same on
every backend; values must match NumPy's on the same data within the dtype's tolerance.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from conftest import make_array
from oracles import assert_close, dtype_name, jax_promote, numpy_dtype, to_numpy, valid_dtypes

import arraylayer as al
from arraylayer.api.elementwise import BINARY, UNARY

pytest.importorskip("jax")

INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# What each function is defined for, read from the Array API standard (independently of the
# api layer's table): "real" excludes complex, "int" means bool and integers only.
NOT_FOR_COMPLEX = {"atan2", "copysign", "floor_divide", "greater", "greater_equal", "hypot", "less", "less_equal",
                   "logaddexp", "maximum", "minimum", "nextafter", "remainder", "ceil", "floor", "trunc",
                   "signbit"}
INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert"}
SHIFTS = {"bitwise_left_shift", "bitwise_right_shift"}
NOT_FOR_BOOL = {"subtract", "negative", "positive", "abs", "square", "sign", "pow", "floor_divide", "remainder",
                "ceil", "floor", "trunc", "round", "conj", "signbit"} | SHIFTS
FLOAT_VALUED = {"acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log", "log1p",
                "log2", "log10", "reciprocal", "sin", "sinh", "sqrt", "tan", "tanh", "divide", "atan2",
                "copysign", "hypot", "logaddexp", "nextafter"}
BOOL_VALUED = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isfinite", "isinf",
               "isnan", "signbit", "logical_and", "logical_or", "logical_xor", "logical_not"}
REAL_OF_COMPLEX = {"abs", "real", "imag"}

X1 = (1, 2, 3, 4, 0)
X2 = (2, 1, 3, 1, 1)
BOOL1 = (True, False, True, True, False)
BOOL2 = (True, True, False, True, False)
# Values inside the domain of every unary function, for every dtype (after the cast).
UNARY_VALUES = {"acos": (0, 0.5, 1), "asin": (0, 0.5, 1), "atanh": (0, 0.5, -0.25), "acosh": (1, 2, 3),
                "log": (1, 2, 3), "log2": (1, 2, 4), "log10": (1, 10, 3), "log1p": (0, 1, 2), "sqrt": (0, 1, 4),
                "reciprocal": (1, 2, 4), "round": (0.5, 1.5, 2.5)}


def defined(name: str, dtype: str) -> bool:
    if name.startswith("logical_") or name in ("equal", "not_equal", "isnan", "isinf", "isfinite"):
        return True
    if dtype.startswith("complex") and name in NOT_FOR_COMPLEX | INTEGER_ONLY | SHIFTS:
        return False
    if dtype == "bool" and name in NOT_FOR_BOOL:
        return False
    if name in INTEGER_ONLY and dtype.startswith(("float", "bfloat")):
        return False
    if name in SHIFTS and dtype not in INTEGERS:
        return False
    if name == "signbit" and dtype in INTEGERS:
        return False
    return True


def expected_dtype(name: str, promoted: str) -> str:
    if name in BOOL_VALUED:
        return "bool"
    if name in FLOAT_VALUED and (promoted == "bool" or promoted in INTEGERS):
        return str(al.default_float_dtype())
    if name in REAL_OF_COMPLEX and promoted.startswith("complex"):
        return {"complex64": "float32", "complex128": "float64"}[promoted]
    return promoted


def reference(name: str, dtype: str, *arrays: np.ndarray) -> np.ndarray:
    """NumPy's answer on the inputs converted to the dtype the function computes in."""
    function = {"bitwise_invert": np.invert, "pow": np.power, "acos": np.arccos, "asin": np.arcsin,
                "atan": np.arctan, "acosh": np.arccosh, "asinh": np.arcsinh, "atanh": np.arctanh,
                "atan2": np.arctan2}.get(name) or getattr(np, name)
    if name.startswith("logical_"):
        dtype = "bool"
    elif name in FLOAT_VALUED and (dtype == "bool" or dtype in INTEGERS):
        dtype = str(al.default_float_dtype())
    host = [a.astype(numpy_dtype(dtype)) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dtype == "bfloat16":  # compute in float32, round once
            result = function(*(h.astype(np.float32) for h in host))
            return result.astype(numpy_dtype("bfloat16")) if result.dtype.kind == "f" else result
        return function(*host)


def values(dtype: str, base):
    if dtype == "bool":
        return tuple(bool(v) for v in base)
    if dtype in INTEGERS:
        return tuple(int(v) for v in base)
    return base


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matrix(backend, name):
    function = getattr(al, name)
    failures = []
    dtypes = valid_dtypes(backend)
    for a, b in itertools.product(dtypes, dtypes):
        x1 = make_array(backend, a, BOOL1 if a == "bool" else X1)
        x2 = make_array(backend, b, BOOL2 if b == "bool" else X2)
        promoted = jax_promote(a, b)
        if not name.startswith("logical_") and not defined(name, promoted):
            with pytest.raises(al.UnsupportedDtypeError):
                function(x1, x2)
            continue
        expected = expected_dtype(name, promoted)
        if expected not in dtypes:  # e.g. a promotion torch cannot hold
            continue
        try:
            result = function(x1, x2)
        except al.UnsupportedDtypeError as error:  # declared missing kernel: named and explained
            assert name in str(error) and backend in str(error)
            continue
        got = dtype_name(backend, result)
        if got != expected:
            failures.append(f"{a},{b}: dtype {got}, expected {expected}")
            continue
        want = reference(name, promoted, to_numpy(backend, x1), to_numpy(backend, x2))
        try:
            assert_close(to_numpy(backend, result), want, expected, f"{name}({a}, {b})")
        except AssertionError as error:
            failures.append(str(error).splitlines()[0] + f" [{a},{b}]")
    assert not failures, f"{name} on {backend}:\n" + "\n".join(failures[:20])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matrix(backend, name):
    function = getattr(al, name)
    failures = []
    for dtype in valid_dtypes(backend):
        base = UNARY_VALUES.get(name, (1.5, -2, 3) if dtype not in ("bool", *INTEGERS) else (1, 0, 3))
        if dtype.startswith("uint") or dtype == "bool":
            base = tuple(abs(v) for v in base)
        x = make_array(backend, dtype, values(dtype, base))
        if not defined(name, dtype):
            with pytest.raises(al.UnsupportedDtypeError):
                function(x)
            continue
        expected = expected_dtype(name, dtype)
        try:
            result = function(x)
        except al.UnsupportedDtypeError as error:
            assert name in str(error) and backend in str(error)
            continue
        got = dtype_name(backend, result)
        if got != expected:
            failures.append(f"{dtype}: dtype {got}, expected {expected}")
            continue
        try:
            assert_close(to_numpy(backend, result), reference(name, dtype, to_numpy(backend, x)), expected,
                         f"{name}({dtype})")
        except AssertionError as error:
            failures.append(str(error).splitlines()[0] + f" [{dtype}]")
    assert not failures, f"{name} on {backend}:\n" + "\n".join(failures[:20])


SCALARS = (True, 3, 2.5, 1 + 2j)


@pytest.mark.parametrize("name", ["add", "multiply", "subtract", "divide", "maximum", "less", "equal", "pow"])
def test_python_scalars_are_weak_on_every_backend(backend, name):
    """array (+) Python scalar: the dtype JAX gives with a weak scalar (weak results: the
    default dtype of their kind), on every backend, either operand order."""
    import jax.numpy as jnp
    from jax._src import dtypes as jax_dtypes

    function = getattr(al, name)
    for dtype in valid_dtypes(backend):
        x = make_array(backend, dtype, BOOL1 if dtype == "bool" else X1)
        for scalar in SCALARS:
            promoted, weak = jax_dtypes.result_type(jnp.zeros(1, numpy_dtype(dtype)), scalar,
                                                    return_weak_type_flag=True)
            promoted = np.dtype(promoted).name
            if weak:
                promoted = str(al.infer_dtype(None, scalar))  # the default dtype of its kind
            if not defined(name, promoted) or expected_dtype(name, promoted) not in valid_dtypes(backend):
                continue
            expected = expected_dtype(name, promoted)
            for args in ((x, scalar), (scalar, x)):
                try:
                    result = function(*args)
                except al.UnsupportedDtypeError:
                    continue
                assert dtype_name(backend, result) == expected, (name, dtype, scalar, args[0] is scalar)


def test_integer_scalar_overflow_raises_on_every_backend(backend):
    x = make_array(backend, "int8", X1)
    with pytest.raises(OverflowError):
        al.add(x, 1000)
    with pytest.raises(OverflowError):
        al.multiply(300, x)
    u = make_array(backend, "uint8", X1)
    with pytest.raises(OverflowError):
        al.subtract(u, -1)


def test_divide_of_integers_is_never_narrower_than_the_default_float(backend):
    x = make_array(backend, "int8", X1)
    assert dtype_name(backend, al.divide(x, x)) == str(al.default_float_dtype())
    assert dtype_name(backend, al.divide(x, 2)) == str(al.default_float_dtype())
    with al.use_default_float_dtype("float16"):
        assert dtype_name(backend, al.divide(x, x)) == "float16"


def test_functions_outside_their_kinds_raise_clearly(backend):
    f = make_array(backend, "float32", X1)
    with pytest.raises(al.UnsupportedDtypeError, match="bitwise_and is not defined for float32"):
        al.bitwise_and(f, f)
    c = make_array(backend, "complex64", X1)
    with pytest.raises(TypeError, match="less"):
        al.less(c, c)


def test_paddle_policy_promotes_only_its_listed_apis(backend):
    x32 = make_array(backend, "float32", X1)
    x16 = make_array(backend, "float16", X1)
    with al.dtype_promotion("paddle"):
        assert dtype_name(backend, al.add(x32, x16)) == "float32"
        assert dtype_name(backend, al.less(x32, x16)) == "bool"
        with pytest.raises(al.TypePromotionError, match="paddle"):
            al.hypot(x32, x16)  # not in Paddle's list of promoting APIs
        i32 = make_array(backend, "int32", X1)
        with pytest.raises(al.TypePromotionError):
            al.add(x32, i32)  # Paddle does not promote int with float tensors
        assert dtype_name(backend, al.divide(i32, 2)) == "float32"  # the divide rule


def test_clip_keeps_the_dtype_and_refuses_bounds_that_would_change_it(backend):
    x = make_array(backend, "int16", (-5, 0, 5, 10))
    result = al.clip(x, 0, 6)
    assert dtype_name(backend, result) == "int16"
    np.testing.assert_array_equal(to_numpy(backend, result), [0, 0, 5, 6])
    with pytest.raises(al.TypePromotionError):
        al.clip(x, 0.5, None)
    f = make_array(backend, "float32", (-1.5, 0.5, 2.5))
    np.testing.assert_allclose(to_numpy(backend, al.clip(f, max=1.0)), [-1.5, 0.5, 1.0])


def test_planned_calls_follow_the_policy_and_defaults_in_force(backend):
    """The cached plans (same dtype, mixed dtypes, array with scalar) never outlive the context
    they were planned in: a later policy or default change gives that context's answer."""
    f32 = make_array(backend, "float32", X1)
    i32 = make_array(backend, "int32", X1)
    i8 = make_array(backend, "int8", X1)
    for _ in range(2):  # the second round runs from the plan caches
        assert dtype_name(backend, al.add(f32, i32)) == "float32"
        assert dtype_name(backend, al.add(i8, 2)) == "int8"
        assert dtype_name(backend, al.divide(i8, i8)) == "float32"
    with al.dtype_promotion("strict"):
        with pytest.raises(al.TypePromotionError):
            al.add(f32, i32)
    with al.use_default_float_dtype("float16"):
        assert dtype_name(backend, al.divide(i8, i8)) == "float16"
        assert dtype_name(backend, al.add(i8, 2.5)) == "float16"
    with pytest.raises(OverflowError):
        al.add(i8, 200)  # the int8 + Python int plan still checks the range


def planned(function) -> bool:
    """Whether a plan is stored for ``function``: in its plan cache (the Python function's, behind
    a compiled one) or in its compiled dispatcher (arraylayer.runtime.compiled_dispatch)."""
    from arraylayer.runtime.compiled_dispatch import python_function

    python = python_function(function)
    return any(python.plans.values()) or (python is not function and function.__self__.size() > 0)


def test_clear_plans_empties_every_cache_and_changes_no_result(backend):
    """One plan cache per function, one invalidation rule: ``clear_plans`` forgets every plan
    (same dtype, mixed dtypes, array with scalar, unary), and the calls that follow plan again
    and give NumPy's values and dtypes."""
    from arraylayer.api.elementwise import clear_plans

    f32, i8 = make_array(backend, "float32", X1), make_array(backend, "int8", X1)
    calls = {"same": lambda: al.add(f32, f32), "mixed": lambda: al.add(f32, i8),
             "scalar": lambda: al.add(i8, 3), "unary": lambda: al.negative(f32)}
    expected = {"same": np.add(np.float32(X1), np.float32(X1)), "mixed": np.add(np.float32(X1), np.int8(X1)),
                "scalar": np.add(np.int8(X1), np.int8(3)), "unary": np.negative(np.float32(X1))}
    for _ in range(2):  # planned, then from the caches
        for name, call in calls.items():
            result = call()
            assert_close(to_numpy(backend, result), expected[name], dtype_name(backend, result), name)
    assert planned(al.add) and planned(al.negative)
    clear_plans()
    assert not planned(al.add) and not planned(al.negative)
    for name, call in calls.items():
        result = call()
        assert dtype_name(backend, result) == str(expected[name].dtype)
        assert_close(to_numpy(backend, result), expected[name], str(expected[name].dtype), name)


def test_registering_a_backend_or_clearing_support_forgets_the_plans(backend):
    """The invalidation rule is wired: ``register_backend`` and ``support.clear_caches`` (what a
    change of declarations calls) empty the plan caches, and the next call plans again."""
    from arraylayer.runtime.registry import _REGISTERED, register_backend
    from arraylayer.support import clear_caches

    f32 = make_array(backend, "float32", X1)
    al.add(f32, f32)
    al.add(f32, f32)
    assert planned(al.add)
    register_backend("replanned_backend_for_test", "arraylayer.backends.numpy:NumpyBackend")
    try:
        assert not planned(al.add)
    finally:
        _REGISTERED.pop("replanned_backend_for_test")
    al.add(f32, f32)
    assert planned(al.add)
    clear_caches()
    assert not planned(al.add)
    assert_close(to_numpy(backend, al.add(f32, f32)), np.add(np.float32(X1), np.float32(X1)), "float32", "add")
