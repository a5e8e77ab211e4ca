"""The TensorFlow kernels, called directly, against NumPy on the same data.

Every kernel runs on every dtype the api layer may send it; the result dtype must be the
Array API's and the values NumPy's (float results: NumPy computed in float64/complex128 on
the same values, rounded to the dtype, within the dtype's tolerance; everything else exact).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracles import standard_floor_divide

import arraylayer as al
from arraylayer.kernels.names import ALL_KERNEL_NAMES

tf = pytest.importorskip("tensorflow")
ml_dtypes = pytest.importorskip("ml_dtypes")

BACKEND = al.get_backend("tensorflow").load()
K = BACKEND.kernels

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
INTEGER = SIGNED + UNSIGNED
FLOAT = ("bfloat16", "float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
REAL = INTEGER + FLOAT
NUMERIC = REAL + COMPLEX
ALL = ("bool", *NUMERIC)
INEXACT = FLOAT + COMPLEX
TOL = {"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5,
       "complex128": 1e-12}
REAL_OF = {"complex64": "float32", "complex128": "float64"}
ACCUMULATOR = {"bool": "int64", **dict.fromkeys(SIGNED, "int64"), **dict.fromkeys(UNSIGNED, "uint64")}


# -- data and comparison ---------------------------------------------------------------------
def np_dtype(dtype: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)


def wide(dtype: str) -> str:
    """The dtype NumPy computes references in: float64/complex128 for inexact dtypes."""
    return "complex128" if dtype in COMPLEX else "float64" if dtype in FLOAT else dtype


def tensor(values, dtype: str):
    host = values.astype(np_dtype(dtype)) if isinstance(values, np.ndarray) else np.asarray(values, np_dtype(dtype))
    return tf.constant(host, getattr(tf, dtype))


_FLOAT_DOMAINS = {  # domain -> (fixed values, low, high): 15 values in all
    "any": ([math.nan, math.inf, -math.inf, -0.0, 0.0, 0.5, -0.5, 1.5, -2.5, 2.5], -6.0, 6.0),
    "small": ([math.nan, -0.0, 0.0], -3.0, 3.0),
    "unit": ([math.nan, -0.0, 0.0, 0.5, -0.5], -0.99, 0.99),
    "positive": ([math.nan, math.inf, 1.0, 0.5], 0.01, 20.0),
    "ge1": ([math.nan, math.inf, 1.0], 1.0, 20.0),
    "ties": ([math.nan, 1.0, -0.0, 0.0, 1.0, math.nan, -1.0, math.inf, -math.inf, 2.0], -2.0, 2.0),
}


def values(dtype: str, domain: str = "any", seed: int = 0, size: int = 15) -> np.ndarray:
    """``size`` values of ``dtype`` (float64/complex128/int64 on the host) drawn from ``domain``."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(size) < 0.5
    if dtype in COMPLEX:
        random = rng.uniform(-2, 2, size) + 1j * rng.uniform(-2, 2, size)
        if domain == "any":
            specials = [0j, complex(math.nan, 0.0), 1j, -1 + 0j][:size]
            random[:len(specials)] = specials
        return rng.permutation(random)
    if dtype in FLOAT:
        fixed, low, high = _FLOAT_DOMAINS[domain]
        drawn = rng.uniform(low, high, max(size - len(fixed), size // 2))
        if domain == "ties":
            drawn = np.round(drawn)
        return rng.permutation(np.concatenate([fixed, drawn]))[:size]  # each seed pairs specials differently
    info = np.iinfo(dtype)
    if domain == "small":
        return rng.integers(-3 if dtype in SIGNED else 0, 6, size)
    if domain == "exponent":
        return rng.integers(0, 6, size)
    if domain == "shift":
        return rng.integers(0, info.bits + 3, size)
    if domain == "ties":
        return rng.integers(0, 4, size)
    drawn = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    drawn[:3] = [info.min, info.max, 1][:size]
    return rng.permutation(drawn)


def data(dtype: str, domain: str = "any", seed: int = 0, shape: tuple[int, ...] = (3, 5)):
    return tensor(values(dtype, domain, seed, math.prod(shape)).reshape(shape), dtype)


def ref(x) -> np.ndarray:
    """A tensor's values in the dtype NumPy's reference computes in."""
    host = x.numpy()
    return host.astype(wide(x.dtype.name))


def check(result, expected, dtype: str) -> None:
    """``result`` has ``dtype`` and the values of ``expected`` (NaNs equal, floats within tolerance)."""
    assert result.dtype.name == dtype, (result.dtype.name, dtype)
    got, expected = result.numpy(), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if dtype in TOL:
        got, expected = got.astype(wide(dtype)), expected.astype(np_dtype(dtype)).astype(wide(dtype))
        for part in (np.real, np.imag) if dtype in COMPLEX else (np.asarray,):  # NumPy calls inf+nanj NaN
            np.testing.assert_allclose(part(got), part(expected), rtol=TOL[dtype], atol=TOL[dtype], equal_nan=True)
    else:
        np.testing.assert_array_equal(got, expected.astype(np_dtype(dtype)))


def check_exact(result, expected, dtype: str) -> None:
    """Data movement: the same bits' values (NaNs equal), whatever the dtype."""
    assert result.dtype.name == dtype, (result.dtype.name, dtype)
    got, expected = result.numpy(), np.asarray(expected)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_array_equal(got.astype(wide(dtype)), expected.astype(wide(dtype)))


def check_index(result, expected) -> None:
    """Index results may use any integer dtype."""
    assert result.dtype.is_integer, result.dtype
    np.testing.assert_array_equal(result.numpy(), np.asarray(expected))


def result_dtype(dtype: str, rule: str | None) -> str:
    return {None: dtype, "bool": "bool", "real": REAL_OF.get(dtype, dtype)}[rule]


def cases(table: dict) -> list[tuple[str, str]]:
    return [(name, dtype) for name, spec in table.items() for dtype in spec[1]]


# -- the kernel set and its declarations -----------------------------------------------------
def test_every_kernel_name_is_provided():
    assert set(K) == set(ALL_KERNEL_NAMES)
    assert all(callable(f) for f in K.values())


GROUPS = {"bool": ("bool",), "signed": SIGNED, "unsigned": UNSIGNED, "integer": INTEGER, "float": FLOAT,
          "complex": COMPLEX, "numeric": NUMERIC, "all": ALL}


def _in_range(version: str, spec: str) -> bool:
    have = tuple(int(p) for p in version.split(".")[:2])
    for clause in spec.split(","):
        op, bound = (clause[:2], clause[2:]) if clause[:2] in (">=", "<=") else (clause[:1], clause[1:])
        want = tuple(int(p) for p in bound.split("."))
        if not {">=": have >= want, "<": have < want, "<=": have <= want, ">": have > want}[op]:
            return False
    return True


def test_unsupported_declarations_are_real():
    """Each declared dtype is a valid dtype of the backend, and the kernel raises on it."""
    from arraylayer.kernels import tensorflow as package

    valid = {str(d) for d in BACKEND.valid_dtypes()}
    for name, ranges in package.UNSUPPORTED.items():
        assert name in K
        for spec, dtypes in ranges.items():
            if not _in_range(tf.__version__, spec):
                continue
            for dtype in (d for group in dtypes for d in GROUPS.get(group, (group,))):
                assert dtype in valid
                with pytest.raises(Exception):  # noqa: B017 - any framework error counts
                    K[name](data(dtype))


# -- elementwise -----------------------------------------------------------------------------
UNARY = {  # name: (NumPy function, dtypes, input domain, result dtype rule)
    "abs": (np.abs, NUMERIC, "any", "real"),
    "acos": (np.arccos, INEXACT, "unit", None),
    "acosh": (np.arccosh, INEXACT, "ge1", None),
    "asin": (np.arcsin, INEXACT, "unit", None),
    "asinh": (np.arcsinh, INEXACT, "small", None),
    "atan": (np.arctan, INEXACT, "any", None),
    "atanh": (np.arctanh, INEXACT, "unit", None),
    "bitwise_invert": (np.invert, ("bool", *INTEGER), "any", None),
    "ceil": (np.ceil, REAL, "any", None),
    "conj": (np.conj, NUMERIC, "any", None),
    "cos": (np.cos, INEXACT, "small", None),
    "cosh": (np.cosh, INEXACT, "small", None),
    "exp": (np.exp, INEXACT, "small", None),
    "expm1": (np.expm1, INEXACT, "small", None),
    "floor": (np.floor, REAL, "any", None),
    "imag": (np.imag, NUMERIC, "any", "real"),
    "isfinite": (np.isfinite, ALL, "any", "bool"),
    "isinf": (np.isinf, ALL, "any", "bool"),
    "isnan": (np.isnan, ALL, "any", "bool"),
    "log": (np.log, INEXACT, "positive", None),
    "log1p": (np.log1p, INEXACT, "positive", None),
    "log2": (np.log2, INEXACT, "positive", None),
    "log10": (np.log10, INEXACT, "positive", None),
    "logical_not": (np.logical_not, ("bool",), "any", None),
    "negative": (np.negative, NUMERIC, "any", None),
    "positive": (np.positive, NUMERIC, "any", None),
    "real": (np.real, NUMERIC, "any", "real"),
    "reciprocal": (np.reciprocal, INEXACT, "any", None),
    "round": (np.round, NUMERIC, "any", None),
    "sign": (np.sign, NUMERIC, "any", None),
    "signbit": (np.signbit, FLOAT, "any", "bool"),
    "sin": (np.sin, INEXACT, "small", None),
    "sinh": (np.sinh, INEXACT, "small", None),
    "sqrt": (np.sqrt, INEXACT, "positive", None),
    "square": (np.square, NUMERIC, "any", None),
    "tan": (np.tan, INEXACT, "unit", None),
    "tanh": (np.tanh, INEXACT, "small", None),
    "trunc": (np.trunc, REAL, "any", None),
}


@pytest.mark.parametrize(("name", "dtype"), cases(UNARY))
def test_unary(name, dtype):
    reference, _, domain, rule = UNARY[name]
    x = data(dtype, domain)
    with np.errstate(all="ignore"):
        expected = reference(ref(x))
    check(K[name](x), expected, result_dtype(dtype, rule))


BINARY = {  # name: (NumPy function, dtypes, x1 domain, x2 domain, result dtype rule)
    "add": (np.add, ALL, "any", "any", None),
    "atan2": (np.arctan2, FLOAT, "any", "any", None),
    "bitwise_and": (np.bitwise_and, ("bool", *INTEGER), "any", "any", None),
    "bitwise_left_shift": (np.left_shift, INTEGER, "any", "shift", None),
    "bitwise_or": (np.bitwise_or, ("bool", *INTEGER), "any", "any", None),
    "bitwise_right_shift": (np.right_shift, INTEGER, "any", "shift", None),
    "bitwise_xor": (np.bitwise_xor, ("bool", *INTEGER), "any", "any", None),
    "copysign": (np.copysign, FLOAT, "any", "any", None),
    "divide": (np.divide, INEXACT, "any", "any", None),
    "equal": (np.equal, ALL, "ties", "ties", "bool"),
    "floor_divide": (standard_floor_divide, REAL, "any", "any", None),
    "greater": (np.greater, ("bool", *REAL), "ties", "ties", "bool"),
    "greater_equal": (np.greater_equal, ("bool", *REAL), "ties", "ties", "bool"),
    "hypot": (np.hypot, FLOAT, "any", "any", None),
    "less": (np.less, ("bool", *REAL), "ties", "ties", "bool"),
    "less_equal": (np.less_equal, ("bool", *REAL), "ties", "ties", "bool"),
    "logaddexp": (np.logaddexp, FLOAT, "any", "any", None),
    "logical_and": (np.logical_and, ("bool",), "any", "any", None),
    "logical_or": (np.logical_or, ("bool",), "any", "any", None),
    "logical_xor": (np.logical_xor, ("bool",), "any", "any", None),
    "maximum": (np.maximum, ("bool", *REAL), "any", "any", None),
    "minimum": (np.minimum, ("bool", *REAL), "any", "any", None),
    "multiply": (np.multiply, ALL, "any", "any", None),
    "nextafter": (np.nextafter, FLOAT, "any", "any", None),
    "not_equal": (np.not_equal, ALL, "ties", "ties", "bool"),
    "pow": (np.power, NUMERIC, "small", "exponent", None),
    "remainder": (np.remainder, REAL, "any", "any", None),
    "subtract": (np.subtract, NUMERIC, "any", "any", None),
}
NATIVE = {"nextafter"}  # references computed in the dtype itself, not in float64


def domains(name: str, dtype: str) -> tuple[str, str]:
    """The input domains of a binary function; float powers take positive bases, real exponents."""
    if name == "pow" and dtype in INEXACT:
        return "positive", "small"
    return BINARY[name][2], BINARY[name][3]


@pytest.mark.parametrize(("name", "dtype"), cases(BINARY))
def test_binary(name, dtype):
    reference, rule = BINARY[name][0], BINARY[name][4]
    domain1, domain2 = domains(name, dtype)
    x1, x2 = data(dtype, domain1, seed=1), data(dtype, domain2, seed=2)
    host = (x1.numpy(), x2.numpy()) if name in NATIVE else (ref(x1), ref(x2))
    with np.errstate(all="ignore"):
        expected = reference(*host)
    check(K[name](x1, x2), expected, result_dtype(dtype, rule))


SCALAR_FOR = {"bool": True, **dict.fromkeys(INTEGER, 3), **dict.fromkeys(FLOAT, 2.5),
              **dict.fromkeys(COMPLEX, 1.5 - 2j)}


@pytest.mark.parametrize(("name", "dtype"), cases(BINARY))
@pytest.mark.parametrize("scalar_first", [False, True])
def test_binary_with_python_scalar(name, dtype, scalar_first):
    """A Python scalar on either side takes the array's dtype (never changing the result's)."""
    reference, rule = BINARY[name][0], BINARY[name][4]
    domain1, domain2 = domains(name, dtype)
    x = data(dtype, domain2 if scalar_first else domain1, seed=1)
    value = 2 if name in ("pow", "bitwise_left_shift", "bitwise_right_shift") else SCALAR_FOR[dtype]
    args = (value, x) if scalar_first else (x, value)
    host = [np.asarray(a.numpy() if a is x else a).astype(np_dtype(dtype)) for a in args]
    if name not in NATIVE:
        host = [h.astype(wide(dtype)) for h in host]
    with np.errstate(all="ignore"):
        expected = reference(*host)
    check(K[name](*args), expected, result_dtype(dtype, rule))


@pytest.mark.parametrize("dtype", NUMERIC)
@pytest.mark.parametrize("name", ["add", "multiply", "equal", "subtract", "where"])
def test_bool_scalar_with_numeric_array(name, dtype):
    """``True`` is 1 of the array's dtype (TF itself cannot convert it to a number)."""
    x = data(dtype, "small")
    one = np.ones((), np_dtype(dtype))
    if name == "where":
        condition = np.array([True, False] * 7 + [True]).reshape(3, 5)
        check_exact(K["where"](tensor(condition, "bool"), True, x), np.where(condition, one, x.numpy()), dtype)
        return
    reference = {"add": np.add, "multiply": np.multiply, "equal": np.equal, "subtract": np.subtract}[name]
    expected = reference(one.astype(wide(dtype)), ref(x))
    check(K[name](True, x), expected, "bool" if name == "equal" else dtype)


@pytest.mark.parametrize("dtype", INTEGER)
@pytest.mark.parametrize("name", ["floor_divide", "remainder"])
def test_integer_division_by_zero_gives_zero(name, dtype):
    """As in NumPy (TF raises on the CPU); in graphs too."""
    x1, x2 = data(dtype, seed=1, shape=(6,)), tensor([0, 1, 0, 3, 0, 0], dtype)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(x1.numpy(), x2.numpy())
        expected_with_scalar = getattr(np, name)(np.asarray(7, np_dtype(dtype)), x2.numpy())
    check(K[name](x1, x2), expected, dtype)
    check(K[name](7, x2), expected_with_scalar, dtype)
    traced = tf.function(K[name], autograph=False)
    check(traced(x1, x2), expected, dtype)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_division_by_zero(dtype):
    x1 = tensor([1.5 - 2j, -1 + 1j, 2 + 0j, 3j, 0j, complex(math.nan, 1.0), 1 + 1j], dtype)
    x2 = tensor([0j, complex(0.0, -0.0), 0j, 0j, 0j, 0j, 2j], dtype)
    with np.errstate(all="ignore"):
        check(K["divide"](x1, x2), ref(x1) / ref(x2), dtype)
        check(K["divide"](x1, 0j), ref(x1) / 0j, dtype)


@pytest.mark.parametrize("dtype", FLOAT)
def test_float_special_cases(dtype):
    """The cases where TF's own op differs from NumPy, one assertion each."""
    nan, inf = math.nan, math.inf

    def run(name, *args):
        return K[name](*(tensor(a, dtype) for a in args)).numpy().astype("float64").tolist()

    assert run("round", [0.5, 1.5, 2.5, -0.5, -2.5]) == [0, 2, 2, 0, -2]
    assert np.isnan(run("maximum", [nan, 1.0], [1.0, nan])).all()
    assert np.isnan(run("minimum", [nan, 1.0], [1.0, nan])).all()
    # -5 // inf: -0.0 as the standard says (Python's // gives -1)
    assert run("floor_divide", [1.0, -5.0, 7.0, -7.0], [0.125, inf, -3.0, 3.0]) == [8, -0.0, -3, -3]
    assert np.signbit(run("floor_divide", [-5.0, inf], [inf, 2.0])).tolist() == [True, False]
    assert run("remainder", [-7.0, 7.0, -5.0], [3.0, -3.0, inf]) == [2, -2, inf]
    assert run("hypot", [inf, nan, -inf], [nan, inf, 3.0]) == [inf, inf, inf]
    assert run("logaddexp", [inf, -inf], [inf, -inf]) == [inf, -inf]
    assert run("signbit", [-0.0, 0.0, -nan, nan, -1.0]) == [True, False, True, False, True]
    assert np.signbit(run("copysign", [1.0, 0.0, 2.0], [-0.0, -1.0, -nan])).tolist() == [True, True, True]
    assert run("trunc", [-0.5, 0.5, -inf]) == [0, 0, -inf] and np.signbit(run("trunc", [-0.5]))[0]
    smallest = float(ml_dtypes.finfo(np_dtype(dtype)).smallest_subnormal)
    assert run("nextafter", [0.0, -0.0, 1.0], [1.0, -1.0, 1.0]) == [smallest, -smallest, 1.0]


def test_float_floor_divide_floors_the_exact_quotient():
    """``1 // 0.1`` is 9 (0.1 is slightly above 1/10), as in Python; ``floor(1 / 0.1)`` is 10."""
    assert K["floor_divide"](tensor([1.0], "float64"), tensor([0.1], "float64")).numpy().tolist() == [9.0]
    assert K["floor_divide"](tensor([1.0], "float64"), 0.1).numpy().tolist() == [9.0]


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_special_cases(dtype):
    x = tensor([0j, 3 + 4j, 2.5 - 1.5j], dtype)
    check(K["sign"](x), [0j, 0.6 + 0.8j, (2.5 - 1.5j) / abs(2.5 - 1.5j)], dtype)
    check(K["round"](x), [0j, 3 + 4j, 2 - 2j], dtype)
    with np.errstate(all="ignore"):
        check(K["log2"](x), np.log2(ref(x)), dtype)  # -inf + 0j at 0, not NaNs
        check(K["log10"](x), np.log10(ref(x)), dtype)
    base = tensor([0j, 2 + 0j, complex(math.nan, 0.0), 1 + 1j, 0j, 0j], dtype)
    exponent = tensor([0j, 0j, 0j, 0j, 1 + 0j, 2 + 1j], dtype)
    check(K["pow"](base, exponent), np.power(ref(base), ref(exponent)), dtype)  # x ** 0 is 1, even 0 ** 0
    check(K["pow"](base, 0j), np.ones(6), dtype)


def test_unsigned_pow_with_huge_exponents():
    """uint64 exponents at and above 2**63 (negative as int64) still give NumPy's values."""
    base = tensor([3, 2, 5, 7], "uint64")
    exponent = tensor([2**63 + 5, 64, 2**64 - 1, 2**62], "uint64")
    check(K["pow"](base, exponent), np.power(base.numpy(), exponent.numpy()), "uint64")


@pytest.mark.parametrize("dtype", INTEGER)
def test_clip_with_bounds_outside_the_dtype(dtype):
    x = data(dtype)
    info = np.iinfo(dtype)
    check(K["clip"](x, info.min - 1, info.max + 1), x.numpy(), dtype)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("bounds", ["scalars", "arrays", "min_only", "max_only"])
def test_clip(dtype, bounds):
    x = data(dtype, "small")
    low, high = (-1, 2) if dtype not in UNSIGNED else (1, 3)
    if bounds == "arrays":
        low, high = tensor(np.full((3, 5), low), dtype), tensor(np.full((5,), high), dtype)
    elif bounds == "min_only":
        high = None
    elif bounds == "max_only":
        low = None
    expected = np.clip(ref(x), None if low is None else np.asarray(low, dtype="float64"),
                       None if high is None else np.asarray(high, dtype="float64"))
    check(K["clip"](x, low, high), expected, dtype)


def test_clip_propagates_nan():
    result = K["clip"](tensor([math.nan, 5.0, -5.0], "float32"), -1.0, 1.0)
    assert np.isnan(result.numpy()[0]) and result.numpy()[1:].tolist() == [1.0, -1.0]


# -- statistical and utility -----------------------------------------------------------------
AXES = [(None, False), (1, False), (0, True), ((0, 1), True)]


@pytest.mark.parametrize("dtype", ("bool", *NUMERIC))
@pytest.mark.parametrize(("name", "reference"), [("sum", np.sum), ("prod", np.prod)])
@pytest.mark.parametrize(("axis", "keepdims"), AXES)
def test_sum_prod(name, reference, dtype, axis, keepdims):
    x = data(dtype, "small")
    accumulator = ACCUMULATOR.get(dtype, dtype)
    expected = reference(ref(x).astype(wide(accumulator)), axis=axis, keepdims=keepdims)
    check(K[name](x, axis=axis, dtype=getattr(tf, accumulator), keepdims=keepdims), expected, accumulator)


@pytest.mark.parametrize("dtype", ("bool", *REAL))
@pytest.mark.parametrize(("name", "reference"), [("max", np.max), ("min", np.min)])
@pytest.mark.parametrize(("axis", "keepdims"), AXES)
def test_max_min(name, reference, dtype, axis, keepdims):
    x = data(dtype)
    with np.errstate(all="ignore"):
        expected = reference(ref(x), axis=axis, keepdims=keepdims)
    check(K[name](x, axis=axis, keepdims=keepdims), expected, dtype)


@pytest.mark.parametrize("dtype", INEXACT)
@pytest.mark.parametrize(("axis", "keepdims"), AXES)
def test_mean(dtype, axis, keepdims):
    x = data(dtype, "small")
    check(K["mean"](x, axis=axis, keepdims=keepdims), np.mean(ref(x), axis=axis, keepdims=keepdims), dtype)


@pytest.mark.parametrize("dtype", FLOAT)
@pytest.mark.parametrize(("name", "reference"), [("std", np.std), ("var", np.var)])
@pytest.mark.parametrize(("axis", "keepdims"), AXES)
@pytest.mark.parametrize("correction", [0, 1.0])
def test_std_var(name, reference, dtype, axis, keepdims, correction):
    x = data(dtype, "small", seed=3)
    x = K["where"](K["isnan"](x), tensor(0.25, dtype), x)  # finite data: the deviation is what is tested
    expected = reference(ref(x), axis=axis, keepdims=keepdims, ddof=correction)
    check(K[name](x, axis=axis, correction=correction, keepdims=keepdims), expected, dtype)


@pytest.mark.parametrize("dtype", ("bool", *NUMERIC))
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative(name, dtype, axis, include_initial):
    x = data(dtype, "small")
    accumulator = ACCUMULATOR.get(dtype, dtype)
    reference = getattr(np, name)
    expected = reference(ref(x).astype(wide(accumulator)), axis=axis, include_initial=include_initial)
    result = K[name](x, axis=axis, dtype=getattr(tf, accumulator), include_initial=include_initial)
    check(result, expected, accumulator)


@pytest.mark.parametrize("name", ["sum", "prod", "cumulative_sum", "cumulative_prod", "trace"])
def test_bool_accumulator(name):
    """A bool accumulator: sums are logical or, products logical and (NumPy's ``dtype=bool``)."""
    x = data("bool", shape=(4, 4))
    reference = {"trace": np.linalg.trace}.get(name) or getattr(np, name)
    options = {"axis": 1} if name.startswith("cumulative") else {}
    check(K[name](x, dtype=tf.bool, **options), reference(x.numpy(), dtype=bool, **options), "bool")


def test_cumulative_of_1d_with_axis_none():
    x = tensor([1, 2, 3], "uint8")
    check(K["cumulative_sum"](x, dtype=tf.uint64, include_initial=True), [0, 1, 3, 6], "uint64")
    check(K["cumulative_prod"](x, axis=None, dtype=tf.uint8), [1, 2, 6], "uint8")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(("name", "reference"), [("all", np.all), ("any", np.any)])
@pytest.mark.parametrize(("axis", "keepdims"), AXES)
def test_all_any(name, reference, dtype, axis, keepdims):
    x = data(dtype, "ties")
    check(K[name](x, axis=axis, keepdims=keepdims), reference(x.numpy().astype(wide(dtype)) != 0, axis=axis,
                                                               keepdims=keepdims), "bool")


def test_any_reads_complex_imaginary_parts():
    """TF casts complex to bool by the real part alone; ``any(1j)`` must be True."""
    assert K["any"](tensor([1j, 0j], "complex64")).numpy()
    assert not K["all"](tensor([1j, 0j], "complex64")).numpy()


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(("axis", "keepdims"), AXES)
def test_count_nonzero(dtype, axis, keepdims):
    x = data(dtype, "ties")
    check_index(K["count_nonzero"](x, axis=axis, keepdims=keepdims),
                np.count_nonzero(x.numpy().astype(wide(dtype)), axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", [1, 2])
@pytest.mark.parametrize("edges", [False, True])
def test_diff(dtype, n, edges):
    x = data(dtype, "small")
    host = x.numpy()
    options, np_options = {}, {}
    if edges:
        before, after = data(dtype, "small", seed=5, shape=(3, 1)), data(dtype, "small", seed=6, shape=(3, 2))
        options, np_options = {"prepend": before, "append": after}, {"prepend": before.numpy(),
                                                                     "append": after.numpy()}
    expected = np.diff(host.astype(wide(dtype)), n=n, axis=-1, **{k: v.astype(wide(dtype))
                                                                   for k, v in np_options.items()})
    if dtype == "bool":
        expected = np.diff(host, n=n, axis=-1, **np_options)
    check(K["diff"](x, n=n, **options), expected, dtype)
    check(K["diff"](x, axis=0), np.diff(host.astype(wide(dtype)), axis=0) if dtype != "bool"
          else np.diff(host, axis=0), dtype)


# -- searching, sorting, sets ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", ("bool", *REAL))
@pytest.mark.parametrize(("name", "reference"), [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (None, True), (1, False), (0, True)])
def test_argmax_argmin(name, reference, dtype, axis, keepdims):
    x = data(dtype, "ties", seed=4)
    check_index(K[name](x, axis=axis, keepdims=keepdims), reference(ref(x), axis=axis, keepdims=keepdims))


def test_argmax_argmin_treat_signed_zeros_as_equal_and_find_the_first_nan():
    x = tensor([-0.0, 0.0, -1.0, math.nan, 2.0, math.nan], "float32")
    assert K["argmax"](x).numpy() == 3 and K["argmin"](x).numpy() == 3
    y = tensor([-0.0, 0.0, -1.0], "float16")
    assert K["argmax"](y).numpy() == 0


def np_argsort(host: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """Stable argsort; descending keeps equal elements in their original order (NaN first)."""
    if not descending:
        return np.argsort(host, axis=axis, stable=True)
    order = np.flip(np.argsort(np.flip(host, axis), axis=axis, stable=True), axis)
    return host.shape[axis] - 1 - order


@pytest.mark.parametrize("dtype", ("bool", *REAL))
@pytest.mark.parametrize("axis", [-1, 0])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_argsort(dtype, axis, descending):
    x = data(dtype, "ties", seed=7)
    host = ref(x)
    order = np_argsort(host, axis, descending)
    check_index(K["argsort"](x, axis=axis, descending=descending), order)
    check_exact(K["sort"](x, axis=axis, descending=descending), np.take_along_axis(x.numpy(), order, axis), dtype)


@pytest.mark.parametrize("dtype", ["uint64", "int64", "int8", "uint8"])
def test_sort_extreme_integers(dtype):
    """TF sorts ascending through negation; the extremes of each integer dtype stay in order."""
    info = np.iinfo(dtype)
    x = tensor([info.max, info.min, 0, info.max, info.min + 1, 1], dtype)
    check_index(K["argsort"](x), np.argsort(x.numpy(), stable=True))
    check_index(K["argsort"](x, descending=True), np_argsort(x.numpy(), 0, True))
    check(K["sort"](x), np.sort(x.numpy()), dtype)


@pytest.mark.parametrize("dtype", ("bool", *REAL))
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("with_sorter", [False, True])
def test_searchsorted(dtype, side, with_sorter):
    x1 = data(dtype, "ties", seed=8, shape=(15,))
    x2 = data(dtype, "ties", seed=9, shape=(3, 5))
    sorter = K["argsort"](x1)
    if not with_sorter:
        x1, sorter = K["sort"](x1), None
    host1 = ref(x1)
    expected = np.searchsorted(host1, ref(x2), side=side, sorter=None if sorter is None else sorter.numpy())
    check_index(K["searchsorted"](x1, x2, side=side, sorter=sorter), expected)


@pytest.mark.parametrize("dtype", ALL)
def test_nonzero(dtype):
    x = data(dtype, "ties")
    result = K["nonzero"](x)
    expected = np.nonzero(x.numpy().astype(wide(dtype)))
    assert isinstance(result, tuple) and len(result) == len(expected)
    for got, want in zip(result, expected, strict=True):
        check_index(got, want)


@pytest.mark.parametrize("dtype", ALL)
def test_where(dtype):
    condition = tensor(np.random.default_rng(3).random((3, 5)) < 0.5, "bool")
    x1, x2 = data(dtype, seed=1), data(dtype, seed=2, shape=(5,))
    check_exact(K["where"](condition, x1, x2), np.where(condition.numpy(), x1.numpy(), x2.numpy()), dtype)
    check_exact(K["where"](condition, SCALAR_FOR[dtype], x2),
                np.where(condition.numpy(), np.asarray(SCALAR_FOR[dtype]).astype(np_dtype(dtype)), x2.numpy()),
                dtype)


@pytest.mark.parametrize("dtype", ("bool", *REAL))
def test_unique(dtype):
    x = data(dtype, "ties", seed=10, shape=(3, 5))
    host = ref(x)
    # NumPy's own unique_* are unordered from 2.3 on; np.unique sorts (NaNs distinct, last).
    values, indices, inverse, counts = np.unique(host, return_index=True, return_inverse=True,
                                                 return_counts=True, equal_nan=False)
    inverse = inverse.reshape(host.shape)
    got = K["unique_all"](x)
    assert len(got) == 4
    check(got[0], values, dtype)
    check_index(got[1], indices)
    check_index(got[2], inverse)
    check_index(got[3], counts)
    check(K["unique_values"](x), values, dtype)
    got_values, got_counts = K["unique_counts"](x)
    check(got_values, values, dtype)
    check_index(got_counts, counts)
    got_values, got_inverse = K["unique_inverse"](x)
    check(got_values, values, dtype)
    check_index(got_inverse, inverse)


# -- indexing --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("index_dtype", ["int64", "int32", "int8", "uint8"])
def test_take(dtype, index_dtype):
    x = data(dtype)
    indices = [2, 0, 1, 2] if index_dtype == "uint8" else [-1, 0, 2, -3]
    check_exact(K["take"](x, tensor(indices, index_dtype), axis=1), np.take(x.numpy(), indices, axis=1), dtype)
    check_exact(K["take"](x, tensor(indices[:2], index_dtype), axis=-2),
                np.take(x.numpy(), indices[:2], axis=-2), dtype)
    flat = K["reshape"](x, (-1,))
    check_exact(K["take"](flat, tensor(indices, index_dtype)), np.take(flat.numpy(), indices), dtype)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis(dtype, axis):
    x = data(dtype, shape=(3, 4, 5))
    rng = np.random.default_rng(11)
    size = x.shape[axis]
    shape = [3, 4, 5]
    shape[axis] = 6
    indices = rng.integers(-size, size, shape)
    check_exact(K["take_along_axis"](x, tensor(indices, "int64"), axis=axis),
                np.take_along_axis(x.numpy(), indices, axis), dtype)


def test_take_along_axis_broadcasts_the_other_axes():
    x = data("float32", shape=(3, 4))
    indices = np.array([[0, -1, 2]])
    check_exact(K["take_along_axis"](x, tensor(indices, "int32"), axis=1), np.take_along_axis(x.numpy(), indices, 1),
                "float32")


# -- manipulation ----------------------------------------------------------------------------
MANIPULATION = {  # name: (kernel call, NumPy call) on x of shape (2, 3, 4)
    "broadcast_to": (lambda x: K["broadcast_to"](x[:, :1], (5, 2, 3, 4)),
                     lambda h: np.broadcast_to(h[:, :1], (5, 2, 3, 4))),
    "concat": (lambda x: K["concat"]([x, x[:1]], axis=0), lambda h: np.concat([h, h[:1]], axis=0)),
    "concat_last": (lambda x: K["concat"]((x, x[..., :2]), axis=-1), lambda h: np.concat([h, h[..., :2]], -1)),
    "concat_none": (lambda x: K["concat"]([x, x[0]], axis=None), lambda h: np.concat([h, h[0]], axis=None)),
    "expand_dims": (lambda x: K["expand_dims"](x, -2), lambda h: np.expand_dims(h, -2)),
    "flip": (lambda x: K["flip"](x), lambda h: np.flip(h)),
    "flip_axes": (lambda x: K["flip"](x, axis=(0, -1)), lambda h: np.flip(h, (0, -1))),
    "moveaxis": (lambda x: K["moveaxis"](x, 0, -1), lambda h: np.moveaxis(h, 0, -1)),
    "moveaxis_many": (lambda x: K["moveaxis"](x, (0, 1), (2, 0)), lambda h: np.moveaxis(h, (0, 1), (2, 0))),
    "permute_dims": (lambda x: K["permute_dims"](x, (2, 0, 1)), lambda h: np.permute_dims(h, (2, 0, 1))),
    "repeat": (lambda x: K["repeat"](x, 2), lambda h: np.repeat(h, 2)),
    "repeat_axis": (lambda x: K["repeat"](x, tensor([1, 0, 3], "int64"), axis=1),
                    lambda h: np.repeat(h, [1, 0, 3], axis=1)),
    "reshape": (lambda x: K["reshape"](x, (4, -1)), lambda h: np.reshape(h, (4, -1))),
    "roll": (lambda x: K["roll"](x, 5), lambda h: np.roll(h, 5)),
    "roll_axes": (lambda x: K["roll"](x, (1, -2), axis=(0, 2)), lambda h: np.roll(h, (1, -2), axis=(0, 2))),
    "squeeze": (lambda x: K["squeeze"](x[:, :1, :1], axis=(1, 2)), lambda h: np.squeeze(h[:, :1, :1], (1, 2))),
    "stack": (lambda x: K["stack"]([x, x], axis=1), lambda h: np.stack([h, h], axis=1)),
    "tile": (lambda x: K["tile"](x, (2, 1, 3)), lambda h: np.tile(h, (2, 1, 3))),
    "tile_longer": (lambda x: K["tile"](x, (2, 1, 1, 2)), lambda h: np.tile(h, (2, 1, 1, 2))),
    "tile_shorter": (lambda x: K["tile"](x, (2,)), lambda h: np.tile(h, (2,))),
    "matrix_transpose": (lambda x: K["matrix_transpose"](x), lambda h: np.matrix_transpose(h)),
    "diagonal": (lambda x: K["diagonal"](x, offset=1), lambda h: np.linalg.diagonal(h, offset=1)),
    "diagonal_below": (lambda x: K["diagonal"](x, offset=-1), lambda h: np.linalg.diagonal(h, offset=-1)),
    "tril": (lambda x: K["tril"](x, k=-1), lambda h: np.tril(h, -1)),
    "triu": (lambda x: K["triu"](x, k=1), lambda h: np.triu(h, 1)),
    "triu_neg": (lambda x: K["triu"](x, k=-1), lambda h: np.triu(h, -1)),
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", MANIPULATION)
def test_manipulation(name, dtype):
    call, reference = MANIPULATION[name]
    x = data(dtype, shape=(2, 3, 4))
    check_exact(call(x), reference(x.numpy()), dtype)


@pytest.mark.parametrize("dtype", ALL)
def test_multi_output_manipulation(dtype):
    x = data(dtype, shape=(2, 3, 4))
    host = x.numpy()
    pieces = K["unstack"](x, axis=1)
    assert isinstance(pieces, tuple) and len(pieces) == 3
    for got, want in zip(pieces, np.unstack(host, axis=1), strict=True):
        check_exact(got, want, dtype)
    arrays = K["broadcast_arrays"](x[:1], x[:, :1, :1])
    for got, want in zip(arrays, np.broadcast_arrays(host[:1], host[:, :1, :1]), strict=True):
        check_exact(got, want, dtype)


# -- creation --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL)
def test_filled(dtype):
    native = getattr(tf, dtype)
    check_exact(K["zeros"]((2, 3), dtype=native), np.zeros((2, 3)), dtype)
    check_exact(K["ones"]((4,), dtype=native), np.ones(4), dtype)
    check_exact(K["empty"]((0, 2), dtype=native, device=None), np.zeros((0, 2)), dtype)
    value = SCALAR_FOR[dtype]
    check_exact(K["full"]((2, 2), value, dtype=native), np.full((2, 2), value).astype(np_dtype(dtype)), dtype)
    check_exact(K["full"]((), True, dtype=native), np.ones(()), dtype)
    check_exact(K["eye"](3, dtype=native), np.eye(3), dtype)
    check_exact(K["eye"](3, 5, k=2, dtype=native), np.eye(3, 5, k=2), dtype)
    check_exact(K["eye"](4, 2, k=-1, dtype=native), np.eye(4, 2, k=-1), dtype)


def test_creation_on_a_device():
    result = K["zeros"]((2,), dtype=tf.float32, device="/CPU:0")
    assert result.device.endswith("CPU:0")
    result = K["arange"](5, dtype=tf.int8, device="/CPU:0")
    assert result.device.endswith("CPU:0") and result.numpy().tolist() == [0, 1, 2, 3, 4]


ARANGES = [(10,), (2, 11, 3), (10, 2, -3), (5, 5), (0, 1), (-4, 3, 2)]
FLOAT_ARANGES = [(0.5, 4.0, 0.75), (3.0, -1.0, -0.5), (0, 1, 0.1), (-1, 1.0, 0.25)]


def _arange_cases() -> list[tuple[str, tuple]]:
    """Integer bounds for every real dtype (non-negative ones for unsigned), float bounds for floats."""
    ints = [(d, a) for d in REAL for a in ARANGES if d not in UNSIGNED or (np.arange(*a) >= 0).all()]
    return ints + [(d, a) for d in FLOAT for a in FLOAT_ARANGES]


@pytest.mark.parametrize(("dtype", "args"), _arange_cases())
def test_arange(dtype, args):
    check(K["arange"](*args, dtype=getattr(tf, dtype)), np.arange(*args, dtype="float64"), dtype)


def test_arange_beyond_int64():
    start = 2**64 - 5
    check(K["arange"](start, 2**64, 2, dtype=tf.uint64), np.arange(start, 2**64, 2, dtype="uint64"), "uint64")
    check(K["arange"](2**64 - 1, 2**63, -2**62, dtype=tf.uint64),
          np.array([2**64 - 1, 2**64 - 1 - 2**62], dtype="uint64"), "uint64")


@pytest.mark.parametrize("dtype", INEXACT)
@pytest.mark.parametrize(("start", "stop", "num", "endpoint"),
                         [(0, 1, 5, True), (2.5, -1.0, 7, False), (1, 1, 1, True), (0, 1, 0, True), (-3, 3, 13, True)])
def test_linspace(dtype, start, stop, num, endpoint):
    check(K["linspace"](start, stop, num, dtype=getattr(tf, dtype), endpoint=endpoint),
          np.linspace(start, stop, num, endpoint=endpoint), dtype)


def test_complex_linspace():
    check(K["linspace"](0, 1 + 2j, 5, dtype=tf.complex64), np.linspace(0, 1 + 2j, 5), "complex64")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_meshgrid(dtype, indexing, count):
    arrays = [data(dtype, seed=i, shape=(i + 2,)) for i in range(count)]
    result = K["meshgrid"](*arrays, indexing=indexing)
    expected = np.meshgrid(*(a.numpy() for a in arrays), indexing=indexing)
    assert len(result) == count
    for got, want in zip(result, expected, strict=True):
        check_exact(got, want, dtype)


# -- linear algebra --------------------------------------------------------------------------
LINALG = INEXACT  # norms: float16/bfloat16 accumulate in float32 and round once
DECOMPOSABLE = tuple(d for d in INEXACT if d not in ("float16", "bfloat16"))  # TF has no half decompositions


def matrices(dtype: str, shape=(2, 3, 3), kind: str = "general", seed: int = 12):
    """Well-conditioned test matrices: general (diagonally dominant), hermitian or positive definite."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, shape)
    if dtype in COMPLEX:
        a = a + 1j * rng.uniform(-1, 1, shape)
    n = shape[-1]
    if kind == "hermitian":
        a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    elif kind == "positive":
        a = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    elif shape[-1] == shape[-2]:
        a = a + n * np.eye(n)
    return tensor(a, dtype)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_decompositions_raise_as_declared(dtype):
    import arraylayer.kernels.tensorflow as kernels

    x = matrices(dtype)
    for name, ranges in kernels.UNSUPPORTED.items():
        assert dtype in next(iter(ranges.values()))
        with pytest.raises(TypeError):
            K[name](x, x) if name == "solve" else K[name](x)


@pytest.mark.parametrize("dtype", DECOMPOSABLE)
def test_linalg_values(dtype):
    real = REAL_OF.get(dtype, dtype)
    x, h, p = matrices(dtype), matrices(dtype, kind="hermitian"), matrices(dtype, kind="positive")
    rect = matrices(dtype, (2, 4, 3))
    hx, hh, hp, hr = ref(x), ref(h), ref(p), ref(rect)
    check(K["det"](x), np.linalg.det(hx), dtype)
    check(K["inv"](x), np.linalg.inv(hx), dtype)
    sign, logabs = K["slogdet"](x)
    expected = np.linalg.slogdet(hx)
    check(sign, expected.sign, dtype)
    check(logabs, expected.logabsdet, real)
    check(K["cholesky"](p), np.linalg.cholesky(hp), dtype)
    check(K["cholesky"](p, upper=True), np.linalg.cholesky(hp, upper=True), dtype)
    check(K["eigvalsh"](h), np.linalg.eigvalsh(hh), real)
    check(K["svdvals"](rect), np.linalg.svdvals(hr), real)
    check(K["pinv"](rect), np.linalg.pinv(hr, rtol=None), dtype)
    check(K["solve"](x, rect[:, :3, :]), np.linalg.solve(hx, hr[:, :3, :]), dtype)
    b = tensor(np.arange(3.0), dtype)
    check(K["solve"](x, b), np.linalg.solve(hx, ref(b)), dtype)
    check(K["solve"](x[0], rect[:, :3, :]), np.linalg.solve(hx[0], hr[:, :3, :]), dtype)
    for n in (0, 1, 2, 3, -1, -2):
        check(K["matrix_power"](x, n), np.linalg.matrix_power(hx, n), dtype)
    check(K["trace"](x, offset=1, dtype=x.dtype), np.linalg.trace(hx, offset=1), dtype)


@pytest.mark.parametrize("dtype", DECOMPOSABLE)
def test_decompositions_reconstruct(dtype):
    """Eigenvectors, Q/R and U/Vh are unique only up to signs: check what defines them."""
    real = REAL_OF.get(dtype, dtype)
    h, rect = matrices(dtype, kind="hermitian"), matrices(dtype, (2, 4, 3))
    hh, hr = ref(h), ref(rect)
    values, vectors = K["eigh"](h)
    check(values, np.linalg.eigvalsh(hh), real)
    assert vectors.dtype.name == dtype
    v = ref(vectors)
    np.testing.assert_allclose(hh @ v, v * ref(values)[..., None, :], rtol=TOL[dtype] * 20, atol=TOL[dtype] * 20)
    for mode, rows in (("reduced", 3), ("complete", 4)):
        q, r = K["qr"](rect, mode=mode)
        assert q.shape == (2, 4, rows) and r.shape == (2, rows, 3)
        check(K["matmul"](q, r), hr, dtype)
        check(r, np.triu(ref(r)), dtype)
    for full, rows in ((True, 4), (False, 3)):
        u, s, vh = K["svd"](rect, full_matrices=full)
        assert u.shape == (2, 4, rows) and vh.shape == (2, 3, 3) and s.dtype.name == real
        assert u.dtype.name == vh.dtype.name == dtype
        check(s, np.linalg.svdvals(hr), real)
        reconstructed = (ref(u)[..., :3] * ref(s)[..., None, :]) @ ref(vh)
        np.testing.assert_allclose(reconstructed, hr, rtol=TOL[dtype] * 20, atol=TOL[dtype] * 20)


@pytest.mark.parametrize("dtype", DECOMPOSABLE)
def test_matrix_rank_and_rtol(dtype):
    x = tensor(np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]), dtype)
    check_index(K["matrix_rank"](x), 2)
    check_index(K["matrix_rank"](x, rtol=0.9), 1)
    stacked = K["stack"]([x, K["eye"](3, dtype=x.dtype)])
    check_index(K["matrix_rank"](stacked, rtol=tensor([0.9, 0.5], REAL_OF.get(dtype, dtype))), [1, 3])


@pytest.mark.parametrize("dtype", LINALG)
@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(dtype, ord, keepdims):
    x = matrices(dtype, (2, 4, 3))
    check(K["matrix_norm"](x, ord=ord, keepdims=keepdims),
          np.linalg.matrix_norm(ref(x), ord=ord, keepdims=keepdims), REAL_OF.get(dtype, dtype))


@pytest.mark.parametrize("dtype", LINALG)
@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, -1])
@pytest.mark.parametrize(("axis", "keepdims"), [(None, False), (None, True), (1, False), ((0, 2), True)])
def test_vector_norm(dtype, ord, axis, keepdims):
    x = matrices(dtype, (2, 4, 3))
    check(K["vector_norm"](x, axis=axis, keepdims=keepdims, ord=ord),
          np.linalg.vector_norm(ref(x), axis=axis, keepdims=keepdims, ord=ord), REAL_OF.get(dtype, dtype))


PRODUCTS = {  # name: (kernel call, NumPy call)
    "matmul": (lambda a, b: K["matmul"](a, b[0]), lambda a, b: np.matmul(a, b[0])),
    "matmul_batch": (lambda a, b: K["matmul"](a[:1], b), lambda a, b: np.matmul(a[:1], b)),
    "matmul_vector": (lambda a, b: K["matmul"](a, b[0, :, 0]), lambda a, b: np.matmul(a, b[0, :, 0])),
    "matmul_vectors": (lambda a, b: K["matmul"](a[0, 0], b[0, :, 0]), lambda a, b: np.matmul(a[0, 0], b[0, :, 0])),
    "matmul_row": (lambda a, b: K["matmul"](a[0, 0], b), lambda a, b: np.matmul(a[0, 0], b)),
    "tensordot": (lambda a, b: K["tensordot"](a, b[0], axes=1), lambda a, b: np.tensordot(a, b[0], axes=1)),
    "tensordot_pairs": (lambda a, b: K["tensordot"](a, b, axes=([0, 2], [0, 1])),
                        lambda a, b: np.tensordot(a, b, axes=([0, 2], [0, 1]))),
    "vecdot": (lambda a, b: K["vecdot"](a, b[0, :, 0]), lambda a, b: np.vecdot(a, b[0, :, 0])),
    "vecdot_axis": (lambda a, b: K["vecdot"](a[..., :2], b[:, :3], axis=1),
                    lambda a, b: np.vecdot(a[..., :2], b[:, :3], axis=1)),
    "outer": (lambda a, b: K["outer"](a[0, 0], b[0, 0]), lambda a, b: np.outer(a[0, 0], b[0, 0])),
}


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", PRODUCTS)
def test_products(name, dtype):
    """Integer products wrap as NumPy's do (TF has no matmul for bool, int8, int16, unsigned)."""
    call, reference = PRODUCTS[name]
    domain = "any" if dtype in INTEGER else "small"
    a, b = data(dtype, domain, seed=1, shape=(2, 3, 4)), data(dtype, domain, seed=2, shape=(2, 4, 2))
    if dtype in INEXACT:
        a, b = matrices(dtype, (2, 3, 4), seed=1), matrices(dtype, (2, 4, 2), seed=2)
    with np.errstate(all="ignore"):
        expected = reference(a.numpy().astype(wide(dtype)), b.numpy().astype(wide(dtype)))
    check(call(a, b), expected, dtype)


@pytest.mark.parametrize("dtype", (*INTEGER, *INEXACT))
def test_cross(dtype):
    a, b = data(dtype, "small", seed=1, shape=(2, 3)), data(dtype, "small", seed=2, shape=(4, 1, 3))
    with np.errstate(all="ignore"):
        expected = np.linalg.cross(ref(a), ref(b))
    check(K["cross"](a, b), expected, dtype)
    a, b = data(dtype, "small", seed=3, shape=(3, 4)), data(dtype, "small", seed=4, shape=(3, 4))
    with np.errstate(all="ignore"):
        expected = np.linalg.cross(ref(a), ref(b), axis=0)
    check(K["cross"](a, b, axis=0), expected, dtype)


@pytest.mark.parametrize("offset", [-4, -3, 3, 5])
def test_diagonal_outside_the_matrix_is_empty(offset):
    x = data("uint16", shape=(2, 3, 4))
    check_exact(K["diagonal"](x, offset=offset), np.linalg.diagonal(x.numpy(), offset=offset), "uint16")


@pytest.mark.parametrize("dtype", ("bool", *NUMERIC))
def test_trace_accumulates(dtype):
    x = data(dtype, "any", shape=(2, 4, 4))
    accumulator = ACCUMULATOR.get(dtype, dtype)
    expected = np.linalg.trace(ref(x).astype(wide(accumulator)), offset=-1)
    check(K["trace"](x, offset=-1, dtype=getattr(tf, accumulator)), expected, accumulator)


# -- tf.function and gradients ---------------------------------------------------------------
def _square(dtype: str, kind: str = "general"):
    return matrices(dtype, (3, 3), kind)


GRAPH_CASES = {  # name: (call on one array, that array); every kernel but unstack (its length must be static)
    "add": (lambda x: K["add"](x, 1), data("int8", "small", shape=(5,))),
    "floor_divide": (lambda x: K["floor_divide"](x, 0.75), data("float32", "ties", shape=(6,))),
    "arange": (lambda x: K["arange"](1, 9, 3, dtype=tf.uint16) * x[:3], data("uint16", shape=(5,))),
    "linspace": (lambda x: K["linspace"](0, 1, 5, dtype=x.dtype) + x, data("float16", shape=(5,))),
    "zeros_ones_empty_full_eye": (lambda x: [K["zeros"]((2,), dtype=x.dtype), K["ones"]((2,), dtype=x.dtype),
                                             K["empty"]((2,), dtype=x.dtype), K["full"]((2,), 3, dtype=x.dtype),
                                             K["eye"](2, 3, k=1, dtype=x.dtype)], data("uint8", shape=(5,))),
    "tril_triu": (lambda m: [K["tril"](m, k=-1), K["triu"](m, k=1)], data("uint16", shape=(3, 4))),
    "meshgrid": (lambda x: K["meshgrid"](x, x[:2]), data("bool", shape=(5,))),
    "broadcast": (lambda m: [K["broadcast_to"](m[:1], (2, 3, 4)), *K["broadcast_arrays"](m, m[:, :1])],
                  data("int8", shape=(3, 4))),
    "shapes": (lambda m: [K["concat"]([m, m], axis=None), K["expand_dims"](m, -1), K["flip"](m),
                          K["moveaxis"](m, 0, 1), K["permute_dims"](m, (1, 0)), K["repeat"](m, 2, axis=1),
                          K["reshape"](m, (-1,)), K["roll"](m, 2), K["squeeze"](m[:1], axis=0),
                          K["stack"]([m, m], axis=-1), K["tile"](m, (2, 1, 2))], data("uint16", shape=(3, 4))),
    "search": (lambda x: [K["argmax"](x), K["argmin"](x), K["count_nonzero"](x), *K["nonzero"](x),
                          K["searchsorted"](K["sort"](x), x), K["where"](x > 0, x, 0.5)],
               data("bfloat16", "ties", shape=(9,))),
    "sets": (lambda x: [*K["unique_all"](x), *K["unique_counts"](x), *K["unique_inverse"](x), K["unique_values"](x)],
             data("float16", "ties", shape=(3, 4))),
    "sorting": (lambda x: [K["argsort"](x, descending=True), K["sort"](x, axis=0)], data("float64", "ties",
                                                                                           shape=(3, 4))),
    "statistics": (lambda x: [K["cumulative_prod"](x, axis=1, dtype=x.dtype), K["max"](x), K["mean"](x, axis=0),
                              K["min"](x, axis=1), K["prod"](x, dtype=x.dtype), K["std"](x, correction=1),
                              K["sum"](x, dtype=tf.float64), K["var"](x, axis=0),
                              K["cumulative_sum"](x, axis=0, dtype=x.dtype, include_initial=True)],
                   data("float32", "small", shape=(3, 4))),
    "utility": (lambda x: [K["all"](x, axis=0), K["any"](x), K["diff"](x, n=2, axis=0)], data("bool", shape=(4, 3))),
    "indexing": (lambda m: [K["take"](m, tf.constant([-1, 0]), axis=1),
                            K["take_along_axis"](m, K["argsort"](m, axis=0), axis=0)], data("int16", shape=(3, 4))),
    "products": (lambda m: [K["matmul"](m, m), K["matrix_transpose"](m), K["tensordot"](m, m, axes=1),
                            K["vecdot"](m, m), K["outer"](m[0], m[1]), K["matrix_power"](m, 3), K["trace"](
                                m, dtype=tf.int64), K["diagonal"](m, offset=1)], data("int8", "small", shape=(3, 3))),
    "decompositions": (lambda m: [K["det"](m), K["inv"](m), *K["slogdet"](m), *K["qr"](m), *K["svd"](m),
                                  K["svdvals"](m), K["pinv"](m), K["matrix_rank"](m), K["solve"](m, m[0]),
                                  K["matrix_norm"](m, ord="nuc"), K["vector_norm"](m, axis=1, ord=3),
                                  K["cross"](m, m[::-1])], _square("float32")),
    "hermitian": (lambda m: [*K["eigh"](m), K["eigvalsh"](m), K["cholesky"](K["matmul"](m, K["conj"](
        K["matrix_transpose"](m))) + K["eye"](3, dtype=m.dtype))], _square("complex64", "hermitian")),
}


def test_kernels_trace_in_tf_function_with_unknown_shapes():
    """No Python branching on values or on unknown sizes: one graph calls every kernel on
    arrays of unknown shape (only the rank is known) and matches eager execution."""
    names = list(GRAPH_CASES)
    inputs = [GRAPH_CASES[n][1] for n in names]

    def everything(*arrays):
        return [GRAPH_CASES[n][0](a) for n, a in zip(names, arrays, strict=True)]

    specs = [tf.TensorSpec([None] * a.shape.rank, a.dtype) for a in inputs]
    traced = tf.function(everything, input_signature=specs, autograph=False)  # AutoGraph: see below
    graph, eager = traced(*inputs), everything(*inputs)
    for name, in_graph, in_eager in zip(names, graph, eager, strict=True):
        for got, want in zip(tf.nest.flatten(in_graph), tf.nest.flatten(in_eager), strict=True):
            kind = want.dtype.name  # graph rewrites may round inexact results differently by an ulp
            np.testing.assert_allclose(got.numpy().astype(wide(kind)), want.numpy().astype(wide(kind)),
                                       rtol=TOL.get(kind, 0) * 10, equal_nan=True, err_msg=name)


def test_every_elementwise_kernel_traces_in_tf_function():
    """All unary and binary kernels on every dtype they take, in one graph with unknown shapes."""
    calls, inputs = [], []
    for dtype in ALL:
        x1 = data(dtype, "small", seed=1, shape=(7,))
        x2 = K["clip"](data(dtype, "exponent", seed=2, shape=(7,)), 0, 3) if dtype in INTEGER else \
            data(dtype, "small", seed=2, shape=(7,))
        one = dtype == "bool" or 1
        inputs += [x1, x2]
        position = len(inputs) - 2
        calls += [(f"{n}[{dtype}]", lambda a, n=n, i=position: K[n](a[i])) for n, spec in UNARY.items()
                  if dtype in spec[1]]
        for n, spec in BINARY.items():
            if dtype in spec[1]:
                calls.append((f"{n}[{dtype}]", lambda a, n=n, i=position: K[n](a[i], a[i + 1])))
                calls.append((f"{n}[{dtype}] with a scalar", lambda a, n=n, i=position, s=one: K[n](a[i], s)))

    def everything(*arrays):
        return [call(arrays) for _, call in calls]

    specs = [tf.TensorSpec([None], a.dtype) for a in inputs]
    graph = tf.function(everything, input_signature=specs, autograph=False)(*inputs)
    eager = everything(*inputs)
    for (name, _), in_graph, in_eager in zip(calls, graph, eager, strict=True):
        kind = in_eager.dtype.name
        np.testing.assert_allclose(in_graph.numpy().astype(wide(kind)), in_eager.numpy().astype(wide(kind)),
                                   rtol=TOL.get(kind, 0), equal_nan=True, err_msg=name)


def test_kernels_work_under_autograph():
    """tf.function's default AutoGraph rewrites the kernels' Python (the loop of matrix_power,
    the dtype branches); converting them is slow to trace, so the graphs above skip it."""
    def some(m, x):
        return [K["matrix_power"](m, 5), K["maximum"](x, True), K["sort"](K["cumulative_sum"](m, axis=0, dtype=m.dtype))]

    m, x = data("uint8", "small", shape=(3, 3)), data("bool", shape=(4,))
    traced = tf.function(some, input_signature=[tf.TensorSpec([None, None], tf.uint8), tf.TensorSpec([None], tf.bool)])
    for got, want in zip(traced(m, x), some(m, x), strict=True):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


GRADIENT_CASES = {  # name: function of one float64 array of shape (2, 3)
    "multiply": lambda x: K["multiply"](x, x),
    "maximum": lambda x: K["maximum"](x, 0.3),
    "hypot": lambda x: K["hypot"](x, 2.0),
    "logaddexp": lambda x: K["logaddexp"](x, K["flip"](x)),
    "copysign": lambda x: K["copysign"](x, -1.0),
    "divide": lambda x: K["divide"](x, K["add"](K["square"](x), 1.0)),
    "sort": lambda x: K["sort"](x, axis=1),
    "take_along_axis": lambda x: K["take_along_axis"](x, K["argsort"](x, axis=0), axis=0),
    "std": lambda x: K["std"](x, axis=1, correction=1),
    "vector_norm": lambda x: K["vector_norm"](x, axis=1, ord=3),
    "matrix_norm": lambda x: K["matrix_norm"](K["matmul"](x, K["matrix_transpose"](x))),
    "det": lambda x: K["det"](K["add"](K["matmul"](x, K["matrix_transpose"](x)), K["eye"](2, dtype=tf.float64))),
    "where": lambda x: K["where"](K["greater"](x, 0.0), x, K["square"](x)),
    "clip": lambda x: K["clip"](x, -0.5, 0.5),
    "cumulative_prod": lambda x: K["cumulative_prod"](x, axis=1, dtype=tf.float64, include_initial=True),
    "sum": lambda x: K["sum"](K["exp"](x), axis=0, dtype=tf.float64),
    "remainder": lambda x: K["remainder"](x, 0.75),
    "take": lambda x: K["take"](x, tf.constant([-1, 0, 0]), axis=1),
    "solve_inv": lambda x: K["solve"](_gram(x), K["inv"](_gram(x) + 1.0)),
    "eigvalsh": lambda x: K["eigvalsh"](_gram(x)),
    "pinv": lambda x: K["pinv"](x),
}


def _gram(x):
    return K["add"](K["matmul"](x, K["matrix_transpose"](x)), K["eye"](2, dtype=x.dtype))


@pytest.mark.parametrize("name", GRADIENT_CASES)
def test_gradients_match_finite_differences(name):
    """Kernels built from several TF ops stay differentiable (no bitcasts on the value path)."""
    x = tf.constant([[0.7, -1.3, 2.1], [-0.4, 1.1, 0.35]], tf.float64)
    theoretical, numerical = tf.test.compute_gradient(GRADIENT_CASES[name], [x])
    np.testing.assert_allclose(theoretical[0], numerical[0], rtol=1e-5, atol=1e-6)


def test_gradient_tape_through_a_kernel():
    x = tf.Variable([3.0, -4.0])
    with tf.GradientTape() as tape:
        y = K["vector_norm"](x)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [0.6, -0.8])
