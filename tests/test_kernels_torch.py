"""The torch kernels against numpy: every kernel, every dtype the api layer sends it, values and
result dtypes; the UNSUPPORTED declarations; torch.compile and autograd through kernels.

Each case is one expression written once, ``lambda xp, *arrays: xp.<kernel>(...)``, evaluated
with ``xp`` = the torch kernels and ``xp`` = numpy (numpy 2.4's functions have the Array API
signatures). numpy has no bfloat16 arithmetic of its own (ml_dtypes promotes to float32), so
for bfloat16 the numpy side computes in float32 and rounds the result to bfloat16, which is
what torch does.
"""

from __future__ import annotations

import re
import zlib
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from oracles import standard_floor_divide  # noqa: E402

from arraylayer.kernels.names import ALL_KERNEL_NAMES, KERNEL_NAMES  # noqa: E402
from arraylayer.kernels.torch import KERNELS, UNSUPPORTED  # noqa: E402
from arraylayer.runtime.registry import get_backend  # noqa: E402

B = get_backend("torch").load()
BF16 = np.dtype(ml_dtypes.bfloat16)

SIGNED = ("int8", "int16", "int32", "int64")
INTS = (*SIGNED, "uint8")
FLOATS = ("bfloat16", "float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = ("bool", *NUMERIC)
INEXACT = FLOATS + COMPLEX
GROUPS = {"bool": ("bool",), "signed": SIGNED, "unsigned": ("uint8",), "integer": INTS, "float": FLOATS,
          "complex": COMPLEX, "numeric": NUMERIC, "all": ALL}
RTOL = {"bfloat16": 1e-2, "float16": 1e-3, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}


# -- the two sides ----------------------------------------------------------------------------
def _np_function(name: str):
    """numpy's function of that name; numpy.linalg's for the linear algebra ones (their numpy.*
    namesakes, e.g. numpy.diagonal, work on other axes), numpy.fft's for the fft ones."""
    if name in KERNEL_NAMES["fft"]:
        return getattr(np.fft, name)
    if name == "floor_divide":
        return standard_floor_divide  # numpy's, but the standard's values at infinities
    linalg = name in KERNEL_NAMES["linalg"] or name in KERNEL_NAMES["linear_algebra"]
    return getattr(np.linalg, name) if linalg else getattr(np, name)


TK = SimpleNamespace(**KERNELS, dt=lambda d: B.native_dtypes[d], arr=lambda a, d: B.asarray(a, d))
NP = SimpleNamespace(**{n: _np_function(n) for n in ALL_KERNEL_NAMES},
                     dt=lambda d: np.dtype("float32" if d == "bfloat16" else d),
                     arr=lambda a, d: np.asarray(a, dtype="float32" if d == "bfloat16" else d))


def _np_sort(x, /, *, axis=-1, descending=False, stable=True):
    return np.take_along_axis(x, _np_argsort(x, axis=axis, descending=descending), axis)


def _np_argsort(x, /, *, axis=-1, descending=False, stable=True):
    """numpy has no descending sort: the stable one of the reversed array, reversed back (NaN first)."""
    if not descending:
        return np.argsort(x, axis=axis, stable=True)
    last = x.shape[axis] - 1
    return last - np.flip(np.argsort(np.flip(x, axis), axis=axis, stable=True), axis)


def _np_searchsorted(x1, x2, /, *, side="left", sorter=None):
    return np.searchsorted(x1, x2, side=side, sorter=sorter)


def _np_tril(x, /, *, k=0):
    return np.tril(x, k)


def _np_triu(x, /, *, k=0):
    return np.triu(x, k)


NP.sort, NP.argsort, NP.searchsorted, NP.tril, NP.triu = _np_sort, _np_argsort, _np_searchsorted, _np_tril, _np_triu


# -- data -------------------------------------------------------------------------------------
INT_RANGES = {"any": (-5, 5), "pos": (1, 5), "exp": (0, 3), "nonzero": (1, 5), "dup": (-2, 2), "near1": (-3, 3)}
FLOAT_RANGES = {"any": (-3, 3), "pos": (0.25, 3), "unit": (-0.9, 0.9), "ge1": (1.1, 4), "exp": (-2, 2),
                "nonzero": (0.5, 3), "near1": (0.7, 1.3), "dup": None}
SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e30]


def host(dtype: str, domain: str = "any", shape=(3, 4), special: bool = False) -> np.ndarray:
    """Deterministic numpy data of ``dtype`` in ``domain``; ``special`` puts NaN, +-inf, +-0 and
    a huge value first (floats only)."""
    rng = np.random.default_rng(zlib.crc32(f"{dtype}/{domain}/{shape}".encode()))
    npdtype = BF16 if dtype == "bfloat16" else np.dtype(dtype)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        if domain == "shift":
            return rng.integers(0, npdtype.itemsize * 8 + 2, shape).astype(npdtype)
        lo, hi = INT_RANGES[domain]
        values = rng.integers(max(lo, 0) if dtype == "uint8" else lo, hi + 1, shape)
        if domain == "nonzero" and dtype != "uint8":
            values *= rng.choice([-1, 1], shape)
        return values.astype(npdtype)
    if domain == "dup":
        values = rng.choice([-1.5, 0.0, 0.5, 2.0], shape)
    else:
        lo, hi = FLOAT_RANGES[domain]
        values = rng.uniform(lo, hi, shape)
        if domain == "nonzero":
            values *= rng.choice([-1, 1], shape)
    if dtype in COMPLEX:
        values = values + 1j * rng.uniform(*(FLOAT_RANGES[domain] or (-2, 2)), shape)
    values = values.astype(npdtype)
    if special and dtype in FLOATS:
        with np.errstate(over="ignore"):  # 1e30 is inf in float16
            values.reshape(-1)[: len(SPECIAL)] = np.array(SPECIAL).astype(npdtype)
    return values


def py_scalar(a: np.ndarray):
    """The first element as the Python scalar of its kind."""
    value = a.reshape(-1)[0]
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex, "V": float}[a.dtype.kind](value)


# -- comparison -------------------------------------------------------------------------------
def run(expr, dtype: str, *hosts, **options):
    """``expr`` on the torch kernels and on numpy with the same data; asserts equal results
    (``options``: see :func:`check`)."""
    with np.errstate(all="ignore"):
        want = expr(NP, *(NP.arr(h, str(h.dtype)) for h in hosts))
    got = expr(TK, *(TK.arr(h, str(h.dtype)) for h in hosts))
    check(got, want, dtype, **options)


def check(got, want, dtype: str, *, index: bool = False, rtol: float | None = None, scaled: bool = False,
          zero_sign: bool = True) -> None:
    """Same dtype (``index``: integer results may have any integer dtype), shape and values: exact for
    bool and integers, else within ``rtol`` (default: by dtype) relatively and absolutely (``scaled``:
    absolutely relative to the largest value), NaN where numpy has NaN and (``zero_sign``) the sign of
    zeros too."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want, strict=True):
            check(g, w, dtype, index=index, rtol=rtol, scaled=scaled, zero_sign=zero_sign)
        return
    assert isinstance(got, (torch.Tensor, np.ndarray)), type(got)
    got = B.to_numpy(got) if isinstance(got, torch.Tensor) else got
    want = np.asarray(want)
    if dtype == "bfloat16" and want.dtype == np.float32:
        want = want.astype(BF16)  # the numpy side computed bfloat16 in float32
    if not (index and got.dtype.kind in "iu" and want.dtype.kind in "iu"):
        assert got.dtype == want.dtype, f"dtype {got.dtype}, numpy {want.dtype}"
    assert got.shape == want.shape, f"shape {got.shape}, numpy {want.shape}"
    if got.dtype.kind not in "fcV":
        np.testing.assert_array_equal(got, want)
        return
    tol = rtol or RTOL["bfloat16" if got.dtype == BF16 else str(got.dtype)]
    wide = np.complex128 if got.dtype.kind == "c" else np.float64
    got, want = got.astype(wide), want.astype(wide)
    finite = np.abs(want[np.isfinite(want)])
    atol = tol * (max(1.0, finite.max()) if scaled and finite.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=atol, equal_nan=True)
    if zero_sign and wide is np.float64:
        zero = want == 0
        np.testing.assert_array_equal(np.signbit(got)[zero], np.signbit(want)[zero], err_msg="sign of zero")


def cases(table):
    """pytest params (case, dtype) for a table of (id, dtypes, ...) rows."""
    return [pytest.param(row, d, id=f"{row[0]}-{d}") for row in table for d in row[1]]


# -- the kernel set and the declarations -----------------------------------------------------
def test_kernel_names():
    assert set(KERNELS) == set(ALL_KERNEL_NAMES)
    assert B.kernels == KERNELS and B.unsupported == UNSUPPORTED
    assert all(callable(f) for f in KERNELS.values())


def _version_in(version: str, spec: str) -> bool:
    def key(v: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", v)[:2])

    ops = {">=": lambda a, b: a >= b, "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b}
    clauses = [re.fullmatch(r"(>=|<=|<|>)(\d+\.\d+)", c.strip()) for c in spec.split(",")]
    return all(m is not None and ops[m[1]](key(version), key(m[2])) for m in clauses)


def _unsupported_cases():
    for name, ranges in UNSUPPORTED.items():
        for spec, dtypes in ranges.items():
            for dtype in sorted({d for g in dtypes for d in GROUPS.get(g, (g,))}):
                yield pytest.param(name, spec, dtype, id=f"{name}-{dtype}")


PROBE_ARGS = {"solve": lambda m: (m, m)}
# the fft kernels take their options by keyword, as the api layer passes them
PROBE_KWARGS = {**{n: {"n": None, "axis": 1, "norm": "backward"} for n in ("fft", "ifft", "rfft", "irfft", "hfft",
                                                                        "ihfft")},
                **{n: {"s": None, "axes": (0, 1), "norm": "backward"} for n in ("fftn", "ifftn", "rfftn", "irfftn")}}


@pytest.mark.parametrize(("name", "spec", "dtype"), list(_unsupported_cases()))
def test_declared_unsupported_really_is(name, spec, dtype):
    assert name in KERNELS and dtype in ALL
    assert _version_in(torch.__version__, spec), f"{spec} does not hold torch {torch.__version__}"
    matrix = (np.eye(3) * 2 + 0.1).astype("float32")
    args = PROBE_ARGS.get(name, lambda m: (m,))
    kwargs = PROBE_KWARGS.get(name, {})
    valid = "complex64" if name in ("irfft", "hfft", "irfftn") else "float32"
    KERNELS[name](*args(B.asarray(matrix, valid)), **kwargs)  # the probe itself is valid
    with pytest.raises((RuntimeError, TypeError, NotImplementedError)):
        KERNELS[name](*args(B.asarray(matrix, dtype)), **kwargs)


# -- elementwise ------------------------------------------------------------------------------
# (name, dtypes, domain, special values)
UNARY = [
    ("abs", NUMERIC, "any", True), ("acos", INEXACT, "unit", True), ("acosh", INEXACT, "ge1", True),
    ("asin", INEXACT, "unit", True), ("asinh", INEXACT, "any", True), ("atan", INEXACT, "any", True),
    ("atanh", INEXACT, "unit", True), ("bitwise_invert", ("bool", *INTS), "any", False),
    ("ceil", REAL, "any", True), ("conj", NUMERIC, "any", False), ("cos", INEXACT, "any", True),
    ("cosh", INEXACT, "any", True), ("exp", INEXACT, "any", True), ("expm1", INEXACT, "any", True),
    ("floor", REAL, "any", True), ("imag", NUMERIC, "any", False), ("isfinite", ALL, "any", True),
    ("isinf", ALL, "any", True), ("isnan", ALL, "any", True), ("log", INEXACT, "pos", True),
    ("log1p", INEXACT, "pos", True), ("log2", INEXACT, "pos", True), ("log10", INEXACT, "pos", True),
    ("logical_not", ("bool",), "any", False), ("negative", NUMERIC, "any", True),
    ("positive", NUMERIC, "any", True), ("real", NUMERIC, "any", False), ("reciprocal", INEXACT, "nonzero", True),
    ("round", NUMERIC, "any", True), ("sign", NUMERIC, "any", True), ("signbit", FLOATS, "any", True),
    ("sin", INEXACT, "any", True), ("sinh", INEXACT, "any", True), ("sqrt", INEXACT, "pos", True),
    ("square", NUMERIC, "any", True), ("tan", INEXACT, "unit", True), ("tanh", INEXACT, "any", True),
    ("trunc", REAL, "any", True),
]


@pytest.mark.parametrize(("row", "dtype"), cases(UNARY))
def test_unary(row, dtype):
    name, _, domain, special = row
    run(lambda xp, x: getattr(xp, name)(x), dtype, host(dtype, domain, special=special))


def test_unary_specifics():
    halves = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.5])
    for d in FLOATS:
        run(lambda xp, x: xp.round(x), d, halves.astype(BF16 if d == "bfloat16" else d))  # half to even
    run(lambda xp, x: xp.round(x), "complex128", np.array([0.5 + 2.5j, -1.5 - 0.5j]))
    run(lambda xp, x: xp.sign(x), "complex64", np.array([3 + 4j, 0j, complex(np.nan, 1)], dtype="complex64"))


# (name, dtypes, domain of x1, domain of x2, special values)
BINARY = [
    ("add", ALL, "any", "any", True), ("subtract", NUMERIC, "any", "any", True),
    ("multiply", ALL, "any", "any", True), ("divide", INEXACT, "any", "nonzero", True),
    ("pow", INTS, "pos", "exp", False), ("pow", INEXACT, "pos", "exp", True),
    ("maximum", ("bool", *REAL), "any", "any", True), ("minimum", ("bool", *REAL), "any", "any", True),
    ("floor_divide", REAL, "any", "nonzero", True), ("remainder", REAL, "any", "nonzero", True),
    ("atan2", FLOATS, "any", "any", True), ("hypot", FLOATS, "any", "any", True),
    ("copysign", FLOATS, "any", "any", True), ("logaddexp", FLOATS, "any", "any", True),
    ("nextafter", ("float16", "float32", "float64"), "any", "any", True),  # bfloat16: below
    ("equal", ALL, "dup", "dup", True), ("not_equal", ALL, "dup", "dup", True),
    ("less", REAL, "dup", "dup", True), ("less_equal", REAL, "dup", "dup", True),
    ("greater", REAL, "dup", "dup", True), ("greater_equal", REAL, "dup", "dup", True),
    ("logical_and", ("bool",), "any", "any", False), ("logical_or", ("bool",), "any", "any", False),
    ("logical_xor", ("bool",), "any", "any", False),
    ("bitwise_and", ("bool", *INTS), "any", "any", False), ("bitwise_or", ("bool", *INTS), "any", "any", False),
    ("bitwise_xor", ("bool", *INTS), "any", "any", False),
    ("bitwise_left_shift", INTS, "any", "shift", False), ("bitwise_right_shift", INTS, "any", "shift", False),
]


@pytest.mark.parametrize("form", ["arrays", "scalar2", "scalar1"])
@pytest.mark.parametrize(("row", "dtype"), cases(BINARY))
def test_binary(row, dtype, form):
    """Two arrays (also broadcast), then a Python scalar as x2, then as x1. The special values of
    x1 come first, those of x2 last, so that they meet ordinary values."""
    name, _, domain1, domain2, special = row
    a = host(dtype, domain1, special=special)
    b = host(dtype, domain2, special=special)[::-1, ::-1].copy()
    f = lambda xp, *args: getattr(xp, name)(*args)  # noqa: E731
    if form == "arrays":
        run(f, dtype, a, b)
        run(f, dtype, a, b[0])
    elif form == "scalar2":
        s = py_scalar(b)  # an ordinary value
        run(lambda xp, x: f(xp, x, s), dtype, a)
    else:
        s = py_scalar(a[2])  # an ordinary value
        run(lambda xp, y: f(xp, s, y), dtype, b)


def test_nextafter_bfloat16():
    """Computing in float32 is no reference for nextafter: ml_dtypes has a bfloat16 nextafter."""
    a, b = host("bfloat16", special=True), host("bfloat16", special=True)[::-1, ::-1].copy()
    s, t = py_scalar(b), py_scalar(a[2])
    k = KERNELS["nextafter"]
    for got, want in [(k(TK.arr(a, "bfloat16"), TK.arr(b, "bfloat16")), np.nextafter(a, b)),
                      (k(TK.arr(a, "bfloat16"), s), np.nextafter(a, np.full_like(a, s))),
                      (k(t, TK.arr(b, "bfloat16")), np.nextafter(np.full_like(b, t), b))]:
        check(got, want, "bfloat16")


def test_binary_specifics():
    # a bool scalar in a subtraction is 0 or 1 of the array's dtype
    run(lambda xp, x: xp.subtract(x, True), "int8", host("int8"))
    run(lambda xp, x: xp.subtract(True, x), "float32", host("float32"))
    # remainder with a huge quotient, and the sign of zero results
    a, b = np.array([1e300, -0.0, 0.0, 6.0, -6.0, 5.5]), np.array([1e-300, 3.0, -3.0, -3.0, 3.0, np.inf])
    run(lambda xp, x, y: xp.remainder(x, y), "float64", a, b)
    run(lambda xp, x, y: xp.floor_divide(x, y), "float64", a, b)
    # integer division by zero gives 0 (numpy), where torch raises
    for d in INTS:
        x, y = host(d), host(d, "dup")
        for name in ("floor_divide", "remainder"):
            run(lambda xp, u, v, name=name: getattr(xp, name)(u, v), d, x, y)
            run(lambda xp, u, name=name: getattr(xp, name)(u, 0), d, x)
    # complex 0 ** 0 is 1
    for d in COMPLEX:
        zeros = np.array([0, 1j, 2, 0], dtype=d)
        run(lambda xp, u, v: xp.pow(u, v), d, zeros, zeros[::-1].copy())
        run(lambda xp, v: xp.pow(0j, v), d, zeros)


# clip: (id, min, max) as functions of the array x
CLIPS = [("scalars", lambda xp, x, s: (s(1), s(3))), ("min", lambda xp, x, s: (s(0), None)),
         ("max", lambda xp, x, s: (None, s(1))), ("none", lambda xp, x, s: (None, None)),
         ("arrays", lambda xp, x, s: (xp.flip(x), xp.flip(x) + s(1))),
         ("mixed", lambda xp, x, s: (xp.flip(x), s(2))), ("mixed-max", lambda xp, x, s: (s(2), xp.flip(x))),
         ("inverted", lambda xp, x, s: (s(3), s(1)))]


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize(("label", "bounds"), CLIPS, ids=[c[0] for c in CLIPS])
def test_clip(label, bounds, dtype):
    kind = float if dtype in FLOATS else int
    x = host(dtype, "any", (6,), special=True)

    def expr(xp, a):
        lo, hi = bounds(xp, a, kind)
        return xp.clip(a, min=lo, max=hi)

    run(expr, dtype, x, zero_sign=False)  # numpy's clip(-0.0, min=0.0) is 0.0, torch's -0.0


# -- reductions and statistics ---------------------------------------------------------------
AXES = [None, 0, -1, (0, 2), ()]
ACCUMULATORS = {"bool": ["int64", "bool"], "int8": ["int8", "int64"], "uint8": ["uint8", "int64"],
                "float16": ["float16"], "complex64": ["complex64", "complex128"]}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("name", ["sum", "prod"])
@pytest.mark.parametrize("dtype", ALL)
def test_sum_prod(name, dtype, axis, keepdims):
    x = host(dtype, "any" if name == "sum" else "near1", (2, 3, 4))
    for acc in ACCUMULATORS.get(dtype, [dtype]):
        run(lambda xp, a, acc=acc: getattr(xp, name)(a, axis=axis, dtype=xp.dt(acc), keepdims=keepdims), dtype, x)
        if axis is not None:  # an empty input: the empty sum is 0, the empty product 1
            run(lambda xp, a, acc=acc: getattr(xp, name)(a[:, :0], axis=axis, dtype=xp.dt(acc), keepdims=keepdims),
                dtype, x)


# (name, dtypes, kwargs, index-valued, special values)
REDUCTIONS = [
    ("max", ("bool", *REAL), {}, False, True), ("min", ("bool", *REAL), {}, False, True),
    ("mean", INEXACT, {}, False, True), ("std", FLOATS, {"correction": 1}, False, False),
    ("var", FLOATS, {"correction": 0}, False, False), ("all", ALL, {}, False, True),
    ("any", ALL, {}, False, True), ("count_nonzero", ALL, {}, True, True),
]


@pytest.mark.filterwarnings("ignore:.*[Dd]egrees of freedom")  # correction 1 over one element: NaN
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize(("row", "dtype"), cases(REDUCTIONS))
def test_reductions(row, dtype, axis, keepdims):
    name, _, kwargs, index, special = row
    x = host(dtype, "dup" if dtype in ("bool", *INTS) else "any", (2, 3, 4), special=special)
    if dtype in ("bool", "uint8") or name in ("all", "any"):
        x.reshape(-1)[::5] = 0  # some zeros / False
    run(lambda xp, a: getattr(xp, name)(a, axis=axis, keepdims=keepdims, **kwargs), dtype, x, index=index)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", ("bool", *REAL))
def test_argmax_argmin(name, dtype, axis, keepdims):
    x = host(dtype, "dup", (3, 5), special=True)  # ties: the first one wins; NaN wins
    run(lambda xp, a: getattr(xp, name)(a, axis=axis, keepdims=keepdims), dtype, x, index=True)


@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("dtype", ALL)
def test_cumulative(name, dtype, include_initial):
    x = host(dtype, "any" if name == "cumulative_sum" else "near1", (3, 4))
    for acc in ACCUMULATORS.get(dtype, [dtype]):
        kw = {"include_initial": include_initial}
        run(lambda xp, a, acc=acc, kw=kw: getattr(xp, name)(a, axis=1, dtype=xp.dt(acc), **kw), dtype, x)
        run(lambda xp, a, acc=acc, kw=kw: getattr(xp, name)(a[0], dtype=xp.dt(acc), **kw), dtype, x)


@pytest.mark.parametrize("dtype", ALL)
def test_diff(dtype):
    x = host(dtype, "any", (3, 4))
    run(lambda xp, a: xp.diff(a), dtype, x)
    run(lambda xp, a: xp.diff(a, axis=0, n=2), dtype, x)
    run(lambda xp, a: xp.diff(a, axis=1, n=0), dtype, x)
    run(lambda xp, a: xp.diff(a, axis=-1, prepend=a[:, :1], append=a[:, -2:]), dtype, x)


# -- searching, sorting, sets ----------------------------------------------------------------
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", ("bool", *REAL))
def test_sort_argsort(dtype, descending):
    x = host(dtype, "dup", (4, 6), special=True)
    for axis in (-1, 0):
        kw = {"axis": axis, "descending": descending, "stable": True}
        run(lambda xp, a, kw=kw: xp.sort(a, **kw), dtype, x)
        run(lambda xp, a, kw=kw: xp.argsort(a, **kw), dtype, x, index=True)


def sorted_(a: np.ndarray) -> np.ndarray:
    """numpy's order (NaN last), also for bfloat16 (whose ml_dtypes sort does not put NaN last)."""
    return np.sort(a.astype(np.float64)).astype(a.dtype) if a.dtype.kind in "fV" else np.sort(a)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("dtype", ("bool", *REAL))
def test_searchsorted(dtype, side):
    x1 = sorted_(host(dtype, "dup", (9,), special=True))
    x2 = np.concatenate([host(dtype, "dup", (8,)), host(dtype, "any", (6,), special=True)])
    run(lambda xp, a, v: xp.searchsorted(a, v, side=side), dtype, x1, x2, index=True)
    run(lambda xp, a, v: xp.searchsorted(a, v.reshape(2, 7)[:, :3], side=side), dtype, x1, x2, index=True)
    run(lambda xp, a, v: xp.searchsorted(a, v[3], side=side), dtype, x1, x2, index=True)
    shuffled = x1[::-1].copy()
    order = np.argsort(shuffled.astype(np.float64), stable=True)
    run(lambda xp, a, v, o: xp.searchsorted(a, v, side=side, sorter=o), dtype, shuffled, x2, order, index=True)
    order32 = order.astype(np.int32)
    run(lambda xp, a, v, o: xp.searchsorted(a, v, side=side, sorter=o), dtype, shuffled, x2, order32, index=True)


def in_one_order(name: str, result):
    """A unique_* result as numpy arrays in one order (the standard leaves it open; numpy 2.4 does
    not sort): by value, NaNs last and among themselves by first index; inverse indices replaced
    by the values they pick."""
    result = [B.to_numpy(r) if isinstance(r, torch.Tensor) else np.asarray(r) for r in (
        (result,) if name == "unique_values" else result)]
    values = result[0]
    key = values.astype(np.float64)
    order = np.lexsort((result[1], key)) if name == "unique_all" else np.argsort(key, stable=True)
    if name == "unique_inverse":
        return values[order], values[result[1]]
    if name == "unique_all":
        return values[order], result[1][order], values[result[2]], result[3][order]
    return tuple(r[order] for r in result)


@pytest.mark.parametrize("dtype", ("bool", *REAL))
def test_sets(dtype):
    x = host(dtype, "dup", (3, 5), special=True)
    if dtype in FLOATS:
        x.reshape(-1)[5:7] = np.nan  # three NaNs: three distinct values
    for h in (x, x[:0]):
        for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
            got = in_one_order(name, KERNELS[name](TK.arr(h, dtype)))
            with np.errstate(all="ignore"):
                want = in_one_order(name, getattr(np, name)(NP.arr(h, dtype)))
            check(got, want, dtype, index=True, zero_sign=False)  # which zero stands for +-0 is open


def test_sets_index_dtypes():
    """Values keep the input dtype (run() checks only integer kinds with index=True)."""
    for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all"):
        result = KERNELS[name](B.asarray(host("int16", "dup"), "int16"))
        values = result if name == "unique_values" else result[0]
        assert values.dtype == torch.int16


@pytest.mark.parametrize("dtype", ALL)
def test_where_nonzero(dtype):
    x, y = host(dtype, "dup", (3, 4)), host(dtype, "any", (4,))
    c = host("bool", "any", (3, 4))
    s = py_scalar(y)
    run(lambda xp, m, a, b: xp.where(m, a, b), dtype, c, x, y)
    run(lambda xp, m, a: xp.where(m, a, s), dtype, c, x)
    run(lambda xp, m, a: xp.where(m, s, a), dtype, c, x)
    run(lambda xp, a: xp.nonzero(a), dtype, x, index=True)


# -- manipulation and indexing ---------------------------------------------------------------
MANIPULATIONS = [
    ("broadcast_arrays", lambda xp, x: xp.broadcast_arrays(x, x[:1], x[0, 0])),
    ("broadcast_to", lambda xp, x: xp.broadcast_to(x[:1], (2, 3, 4))),
    ("concat", lambda xp, x: xp.concat([x, x[:1]], axis=0)),
    ("concat-1", lambda xp, x: xp.concat([x, x[:, :2]], axis=-1)),
    ("concat-None", lambda xp, x: xp.concat([x, x[0]], axis=None)),
    ("expand_dims", lambda xp, x: xp.expand_dims(x, axis=1)),
    ("expand_dims-neg", lambda xp, x: xp.expand_dims(x, axis=-1)),
    ("expand_dims-tuple", lambda xp, x: xp.expand_dims(x, axis=(0, -1))),
    ("flip", lambda xp, x: xp.flip(x)), ("flip-0", lambda xp, x: xp.flip(x, axis=0)),
    ("flip-tuple", lambda xp, x: xp.flip(x, axis=(0, 1))),
    ("moveaxis", lambda xp, x: xp.moveaxis(x[None], 0, -1)),
    ("moveaxis-tuple", lambda xp, x: xp.moveaxis(x[None], (0, 1), (2, 0))),
    ("permute_dims", lambda xp, x: xp.permute_dims(x[None], axes=(2, 0, 1))),
    ("repeat", lambda xp, x: xp.repeat(x, 2)), ("repeat-axis", lambda xp, x: xp.repeat(x, 2, axis=1)),
    ("reshape", lambda xp, x: xp.reshape(x, shape=(2, -1))),
    ("reshape-copy", lambda xp, x: xp.reshape(x, (4, 3), copy=True)),
    ("reshape-view", lambda xp, x: xp.reshape(x, (12,), copy=False)),
    ("roll", lambda xp, x: xp.roll(x, 5)), ("roll-axis", lambda xp, x: xp.roll(x, -1, axis=1)),
    ("roll-tuple", lambda xp, x: xp.roll(x, (1, 2), axis=(0, 1))),
    ("roll-int-tuple", lambda xp, x: xp.roll(x, 1, axis=(0, 1))),
    ("squeeze", lambda xp, x: xp.squeeze(x[:, None, :1], axis=1)),
    ("squeeze-tuple", lambda xp, x: xp.squeeze(x[:, None, :1], axis=(1, 2))),
    ("stack", lambda xp, x: xp.stack([x, x], axis=1)), ("stack-neg", lambda xp, x: xp.stack([x, x], axis=-1)),
    ("tile", lambda xp, x: xp.tile(x, (2, 1, 2))),
    ("unstack", lambda xp, x: xp.unstack(x)), ("unstack-axis", lambda xp, x: xp.unstack(x, axis=1)),
    ("matrix_transpose", lambda xp, x: xp.matrix_transpose(xp.stack([x, x]))),
    ("tril", lambda xp, x: xp.tril(x)), ("tril-k", lambda xp, x: xp.tril(x, k=1)),
    ("triu", lambda xp, x: xp.triu(x)), ("triu-k", lambda xp, x: xp.triu(x, k=-1)),
    ("diagonal", lambda xp, x: xp.diagonal(x)), ("diagonal-offset", lambda xp, x: xp.diagonal(x, offset=1)),
]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(("label", "expr"), MANIPULATIONS, ids=[m[0] for m in MANIPULATIONS])
def test_manipulation(label, expr, dtype):
    run(expr, dtype, host(dtype, "any", (3, 4)))


@pytest.mark.parametrize("index_dtype", ["int64", "int32", "int16", "uint8"])
@pytest.mark.parametrize("dtype", ALL)
def test_take(dtype, index_dtype):
    x = host(dtype, "any", (3, 4))
    idx = np.array([2, 0, 1, 2], dtype=index_dtype)
    run(lambda xp, a, i: xp.take(a, i, axis=1), dtype, x, idx)
    run(lambda xp, a, i: xp.take(a, i[:3], axis=0), dtype, x, idx)
    run(lambda xp, a, i: xp.take(a[0], i), dtype, x, idx)
    run(lambda xp, a, i: xp.take(a, i, axis=-1), dtype, x, idx)
    along = np.array([[3, 0, 1, 2], [1, 1, 0, 3], [2, 3, 3, 0]], dtype=index_dtype)
    run(lambda xp, a, i: xp.take_along_axis(a, i, axis=1), dtype, x, along)
    run(lambda xp, a, i: xp.take_along_axis(a, i[:, :1], axis=-1), dtype, x, along)
    if index_dtype in SIGNED:
        negative = np.array([[-1], [0], [-4]], dtype=index_dtype)
        run(lambda xp, a, i: xp.take(a, i.reshape(-1), axis=1), dtype, x, negative)
        run(lambda xp, a, i: xp.take_along_axis(a, i, axis=1), dtype, x, negative)


def test_manipulation_errors_and_copies():
    x = torch.arange(12).reshape(3, 4)
    with pytest.raises(ValueError):
        KERNELS["squeeze"](x[:, None], axis=2)  # torch would silently keep the axis
    with pytest.raises(ValueError):
        KERNELS["reshape"](x.mT, (12,), copy=False)
    copied = KERNELS["reshape"](x, (12,), copy=True)
    assert copied.data_ptr() != x.data_ptr() and copied.tolist() == list(range(12))
    assert KERNELS["reshape"](x, (2, 6), copy=False).data_ptr() == x.data_ptr()
    assert isinstance(KERNELS["unstack"](x), tuple) and isinstance(KERNELS["nonzero"](x), tuple)


# -- creation ---------------------------------------------------------------------------------
CREATIONS = [
    ("arange", REAL, lambda xp, d: xp.arange(7, dtype=xp.dt(d), device=None)),
    ("arange-step", REAL, lambda xp, d: xp.arange(1, 10, 3, dtype=xp.dt(d), device=None)),
    ("arange-neg", SIGNED + FLOATS, lambda xp, d: xp.arange(4, -5, -2, dtype=xp.dt(d), device=None)),
    ("arange-float", INEXACT, lambda xp, d: xp.arange(0.5, 3, 0.25, dtype=xp.dt(d), device=None)),
    ("arange-complex", COMPLEX, lambda xp, d: xp.arange(7, dtype=xp.dt(d), device=None)),
    ("arange-bool", ("bool",), lambda xp, d: xp.arange(2, dtype=xp.dt(d), device=None)),
    ("arange-bool-1", ("bool",), lambda xp, d: xp.arange(1, 3, 1, dtype=xp.dt(d), device=None)),
    ("arange-bool-float", ("bool",), lambda xp, d: xp.arange(-0.5, 1, 1, dtype=xp.dt(d), device=None)),
    ("ones", ALL, lambda xp, d: xp.ones((2, 3), dtype=xp.dt(d), device=None)),
    ("zeros", ALL, lambda xp, d: xp.zeros((2, 0, 3), dtype=xp.dt(d), device=None)),
    ("zeros-int", ALL, lambda xp, d: xp.zeros(4, dtype=xp.dt(d), device=None)),
    ("full", ALL, lambda xp, d: xp.full((2, 3), FILL[d], dtype=xp.dt(d), device=None)),
    ("full-0d", ALL, lambda xp, d: xp.full((), FILL[d], dtype=xp.dt(d), device=None)),
    ("eye", ALL, lambda xp, d: xp.eye(3, dtype=xp.dt(d), device=None)),
    ("eye-rect", ALL, lambda xp, d: xp.eye(3, 5, k=2, dtype=xp.dt(d), device=None)),
    ("eye-neg", ALL, lambda xp, d: xp.eye(4, 2, k=-1, dtype=xp.dt(d), device=None)),
    ("eye-far", ALL, lambda xp, d: xp.eye(2, 2, k=5, dtype=xp.dt(d), device=None)),
    ("linspace", INEXACT, lambda xp, d: xp.linspace(-1, 2, 7, dtype=xp.dt(d), device=None)),
    ("linspace-open", INEXACT, lambda xp, d: xp.linspace(-1, 2, 6, dtype=xp.dt(d), device=None, endpoint=False)),
    ("linspace-one", INEXACT, lambda xp, d: xp.linspace(3, 4, 1, dtype=xp.dt(d), device=None, endpoint=False)),
    ("linspace-empty", INEXACT, lambda xp, d: xp.linspace(3, 4, 0, dtype=xp.dt(d), device=None)),
    ("linspace-complex", COMPLEX, lambda xp, d: xp.linspace(1 + 1j, 2 - 1j, 5, dtype=xp.dt(d), device=None)),
]
FILL = {"bool": True, "complex64": 1 - 2j, "complex128": 2.5j, **{d: 3 for d in INTS}, **{d: -1.5 for d in FLOATS}}


@pytest.mark.parametrize(("row", "dtype"), cases(CREATIONS))
def test_creation(row, dtype):
    run(lambda xp: row[2](xp, dtype), dtype)


@pytest.mark.parametrize("dtype", ALL)
def test_empty_and_meshgrid(dtype):
    e = KERNELS["empty"]((2, 3), dtype=B.native_dtypes[dtype], device=None)
    assert e.shape == (2, 3) and e.dtype == B.native_dtypes[dtype]
    a, b = host(dtype, "any", (3,)), host(dtype, "any", (2,))
    for indexing in ("xy", "ij"):
        run(lambda xp, u, v, ix=indexing: xp.meshgrid(u, v, indexing=ix), dtype, a, b)
    assert KERNELS["meshgrid"]() == ()


# -- linear algebra ---------------------------------------------------------------------------
def square(dtype: str, n: int = 4, batch=(), kind: str = "general") -> np.ndarray:
    """Well-conditioned matrices: general (diagonally dominant) or Hermitian positive definite."""
    m = host(dtype, "any", (*batch, n, n))
    if kind == "hpd":
        m = m @ np.swapaxes(m.conj(), -1, -2)
    return (m + n * np.eye(n)).astype(m.dtype)


LINALG_FLOAT = ("float32", "float64", *COMPLEX)
PRODUCTS = [
    ("matmul", lambda xp, a, b: xp.matmul(a, b)), ("matmul-vec", lambda xp, a, b: xp.matmul(a, b[0])),
    ("matmul-vecmat", lambda xp, a, b: xp.matmul(a[0], b)), ("matmul-dot", lambda xp, a, b: xp.matmul(a[0], b[0])),
    ("matmul-batch", lambda xp, a, b: xp.matmul(xp.stack([a, a]), b)),
    ("tensordot", lambda xp, a, b: xp.tensordot(a, b)), ("tensordot-1", lambda xp, a, b: xp.tensordot(a, b, axes=1)),
    ("tensordot-pairs", lambda xp, a, b: xp.tensordot(a, b, axes=([1, 0], [0, 1]))),
    ("vecdot", lambda xp, a, b: xp.vecdot(a, b)), ("vecdot-0", lambda xp, a, b: xp.vecdot(a, b, axis=-2)),
    ("vecdot-broadcast", lambda xp, a, b: xp.vecdot(a, b[1])),
    ("outer", lambda xp, a, b: xp.outer(a[0], b[1])),
]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize(("label", "expr"), PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_products(label, expr, dtype):
    rtol = {"bfloat16": 3e-2, "float16": 3e-3}.get(dtype)  # sums of 4 products
    run(expr, dtype, host(dtype, "any", (4, 4)), host(dtype, "dup", (4, 4)), rtol=rtol, scaled=True, zero_sign=False)


@pytest.mark.parametrize("dtype", NUMERIC)
def test_cross_trace(dtype):
    a, b = host(dtype, "any", (2, 3)), host(dtype, "any", (3,))
    run(lambda xp, u, v: xp.cross(u, v), dtype, a, b)
    run(lambda xp, u, v: xp.cross(u.T, v[:, None], axis=0), dtype, a, b)
    m = host(dtype, "any", (2, 3, 4))
    acc = "int64" if dtype in INTS else dtype
    for offset in (0, 1, -2, 5):
        run(lambda xp, x, offset=offset: xp.trace(x, offset=offset, dtype=xp.dt(acc)), dtype, m)


LINALG = [  # (id, dtypes, expr, matrix kind)
    ("cholesky", LINALG_FLOAT, lambda xp, m: xp.cholesky(m), "hpd"),
    ("cholesky-upper", LINALG_FLOAT, lambda xp, m: xp.cholesky(m, upper=True), "hpd"),
    ("det", LINALG_FLOAT, lambda xp, m: xp.det(m), "general"),
    ("eigvalsh", LINALG_FLOAT, lambda xp, m: xp.eigvalsh(m), "hpd"),
    ("inv", LINALG_FLOAT, lambda xp, m: xp.inv(m), "general"),
    ("matrix_power", INEXACT, lambda xp, m: xp.matrix_power(m, 3), "general"),
    ("matrix_power-0", INEXACT, lambda xp, m: xp.matrix_power(m, 0), "general"),
    ("matrix_power-neg", LINALG_FLOAT, lambda xp, m: xp.matrix_power(m, -2), "general"),
    ("matrix_rank", LINALG_FLOAT, lambda xp, m: xp.matrix_rank(m), "general"),
    ("matrix_rank-low", LINALG_FLOAT, lambda xp, m: xp.matrix_rank(xp.matmul(m[..., :2], m[..., :2, :])), "general"),
    ("matrix_rank-rtol", LINALG_FLOAT, lambda xp, m: xp.matrix_rank(m, rtol=0.5), "general"),
    ("pinv", LINALG_FLOAT, lambda xp, m: xp.pinv(m), "general"),
    ("pinv-rect", LINALG_FLOAT, lambda xp, m: xp.pinv(m[..., :3]), "general"),
    ("pinv-rtol", LINALG_FLOAT, lambda xp, m: xp.pinv(m, rtol=0.5), "general"),
    ("slogdet", LINALG_FLOAT, lambda xp, m: xp.slogdet(m), "general"),
    ("solve", LINALG_FLOAT, lambda xp, m: xp.solve(m, xp.flip(m, axis=-1)), "general"),
    ("solve-vector", LINALG_FLOAT, lambda xp, m: xp.solve(m[0], m[0, 0]), "general"),
    ("solve-broadcast", LINALG_FLOAT, lambda xp, m: xp.solve(m, m[0, :, :2]), "general"),
    # x2 of shape x1.shape[:-1] is a matrix (torch alone would read it as a stack of vectors)
    ("solve-matrix", LINALG_FLOAT, lambda xp, m: xp.solve(xp.stack([m[0]] * 4), m[1]), "general"),
    ("svdvals", LINALG_FLOAT, lambda xp, m: xp.svdvals(m), "general"),
    ("matrix_norm", INEXACT, lambda xp, m: xp.matrix_norm(m), "general"),
    ("matrix_norm-keep", INEXACT, lambda xp, m: xp.matrix_norm(m, keepdims=True, ord=1), "general"),
    ("matrix_norm-inf", INEXACT, lambda xp, m: xp.matrix_norm(m, ord=-np.inf), "general"),
    ("matrix_norm-2", LINALG_FLOAT, lambda xp, m: xp.matrix_norm(m, ord=2), "general"),
    ("matrix_norm-nuc", LINALG_FLOAT, lambda xp, m: xp.matrix_norm(m, ord="nuc"), "general"),
    ("vector_norm", INEXACT, lambda xp, m: xp.vector_norm(m), "general"),
    ("vector_norm-axis", INEXACT, lambda xp, m: xp.vector_norm(m, axis=-1, keepdims=True, ord=1), "general"),
    ("vector_norm-axes", INEXACT, lambda xp, m: xp.vector_norm(m, axis=(0, 2), ord=np.inf), "general"),
    ("vector_norm-0", INEXACT, lambda xp, m: xp.vector_norm(m, axis=1, ord=0), "general"),
    ("vector_norm-3", INEXACT, lambda xp, m: xp.vector_norm(m, axis=None, keepdims=True, ord=3), "general"),
    ("vector_norm-none", INEXACT, lambda xp, m: xp.vector_norm(m, axis=()), "general"),
]


@pytest.mark.parametrize(("row", "dtype"), cases(LINALG))
def test_linalg(row, dtype):
    label, _, expr, kind = row
    rtol = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-10, "complex128": 1e-10}.get(dtype, 3e-2)
    run(expr, dtype, square(dtype, 4, (2,), kind), rtol=rtol, scaled=True, zero_sign=False)


@pytest.mark.parametrize("dtype", LINALG_FLOAT)
def test_factorizations(dtype):
    """eigh, qr and svd are unique only up to signs/phases: compare what is unique."""
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    m = square(dtype, 4, (2,), "hpd")
    t = B.asarray(m, dtype)
    w, v = KERNELS["eigh"](t)
    np.testing.assert_allclose(B.to_numpy(w), np.linalg.eigvalsh(m), rtol=tol)
    np.testing.assert_allclose(B.to_numpy(v @ torch.diag_embed(w.to(v.dtype)) @ v.mH), m, rtol=tol, atol=tol * 10)
    for mode in ("reduced", "complete"):
        q, r = KERNELS["qr"](B.asarray(m[..., :3], dtype), mode=mode)
        nq, nr = np.linalg.qr(m[..., :3], mode=mode)
        assert (q.shape, r.shape) == (nq.shape, nr.shape)
        np.testing.assert_allclose(B.to_numpy(q @ r), m[..., :3], rtol=tol, atol=tol * 10)
        np.testing.assert_allclose(np.abs(B.to_numpy(r)), np.abs(nr), rtol=tol, atol=tol * 10)
    for full in (True, False):
        u, s, vh = KERNELS["svd"](B.asarray(m[..., :3], dtype), full_matrices=full)
        nu, ns, nvh = np.linalg.svd(m[..., :3], full_matrices=full)
        assert (u.shape, s.shape, vh.shape) == (nu.shape, ns.shape, nvh.shape)
        np.testing.assert_allclose(B.to_numpy(s), ns, rtol=tol)
        k = s.shape[-1]
        rebuilt = u[..., :k] @ torch.diag_embed(s.to(u.dtype)) @ vh[..., :k, :]
        np.testing.assert_allclose(B.to_numpy(rebuilt), m[..., :3], rtol=tol, atol=tol * 10)
    for result in (KERNELS["eigh"](t), KERNELS["qr"](t), KERNELS["svd"](t), KERNELS["slogdet"](t)):
        assert type(result) is tuple


# -- torch.compile and autograd ---------------------------------------------------------------
def test_compiles_without_graph_breaks():
    k = KERNELS

    def f(x, y):
        z = k["maximum"](k["add"](x, 1.5), 0.0)  # Python scalars, one of them wrapped in a tensor
        z = k["subtract"](2, k["multiply"](z, k["minimum"](0.5, y)))
        return k["sum"](k["matmul"](z, y), axis=0, dtype=torch.float32), k["less"](0.25, z)

    x, y = torch.randn(3, 3), torch.randn(3, 3)
    compiled = torch.compile(f, backend="eager", fullgraph=True)
    for got, want in zip(compiled(x, y), f(x, y), strict=True):
        torch.testing.assert_close(got, want)


def test_autograd_through_kernels():
    k = KERNELS
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64, requires_grad=True)
    y = k["sum"](k["multiply"](k["sin"](x), k["maximum"](x, 0.0)), dtype=torch.float64)
    y = y + k["vector_norm"](k["matmul"](x, x))
    y.backward()
    xd = x.detach()
    relu, step = xd.clamp(min=0), (xd > 0).double()
    p = xd @ xd
    norm_grad = (p / p.norm()) @ xd.T + xd.T @ (p / p.norm())
    torch.testing.assert_close(x.grad, torch.cos(xd) * relu + torch.sin(xd) * step + norm_grad)
