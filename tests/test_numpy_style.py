"""NumPy's functions of arraylayer/api/numpy_style.py and numpy_stats.py against NumPy on every backend:
the same values, NumPy's result dtype read through arraylayer's defaults (NumPy's float64 of a
32-bit or integer input is the default float; its int64 counts and indices are the index dtype),
NaN and inf cases, and arraylayer's errors for bad arguments."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_array
from oracles import dtype_name, to_numpy

import arraylayer as al

X = np.array([[-1.5, 0.0, 2.0, np.nan], [1.0, -np.inf, 3.0, np.inf]], np.float32)
Y = np.array([[2.0, np.nan, -1.0, np.nan], [1.0, -np.inf, 0.0, np.inf]], np.float32)
F = np.array([[-1.5, 0.25, 2.0, 4.0], [1.0, -3.0, 3.0, 0.5]], np.float32)
I = np.array([[3, 1, 0, 7], [2, 2, 5, 1]], np.int32)
B = np.array([[True, False, True, True], [False, False, True, False]])
H = np.array([1.5, -0.5, 2.0, 0.25, 3.0, 2.0], np.float16)
V = np.array([1.0, 2.5, -1.0, 4.0, 0.5], np.float32)
W = np.array([0.5, 1.0, 2.0, 1.0, 3.0], np.float32)
N = np.array([[np.nan, 1.0, 2.0, 4.0], [np.nan, np.nan, np.nan, np.nan], [3.0, np.inf, np.nan, -1.0]], np.float32)
C = np.array([1 + 2j, -1j, 3.0, 0.5 - 0.5j], np.complex64)

#: (function, the host arguments (arrays become arrays of the backend), keywords)
CASES = [
    ("isclose", (X, Y), {}), ("isclose", (X, Y), {"equal_nan": True}), ("isclose", (F, F + 1e-6), {}),
    ("isclose", (I, I + 1), {"atol": 1}), ("isclose", (B, B), {}), ("isclose", (C, C * (1 + 1e-7)), {}),
    ("allclose", (X, X), {}), ("allclose", (X, X), {"equal_nan": True}), ("allclose", (F, F + 1e-3), {}),
    ("nan_to_num", (X,), {}), ("nan_to_num", (X,), {"nan": -1.0, "posinf": 9.0}), ("nan_to_num", (I,), {}),
    ("nan_to_num", (H,), {}), ("nan_to_num", (np.array([np.nan + 1j * np.inf], np.complex64),), {}),
    ("diag", (V,), {}), ("diag", (V,), {"k": 2}), ("diag", (I,), {"k": -1}), ("diag", (B,), {"k": 1}),
    ("diagflat", (I,), {}), ("diagflat", (B,), {"k": -2}), ("diagflat", (H,), {"k": 1}),
    ("diagonal", (np.arange(24, dtype=np.int32).reshape(2, 3, 4),), {"offset": 1, "axis1": 2, "axis2": 0}),
    ("trace", (np.arange(24, dtype=np.float32).reshape(2, 3, 4),), {"offset": -1}), ("trace", (I,), {}),
    ("outer", (V, I), {}), ("outer", (B, B), {}), ("inner", (F, F), {}), ("inner", (I, I), {}),
    ("kron", (I, F[:, :2]), {}), ("kron", (B, B[0]), {}),
    ("vdot", (V, W), {}), ("vdot", (I, I), {}), ("vdot", (B, B), {}), ("vdot", (C, C[::-1]), {}),
    ("median", (F,), {}), ("median", (I,), {"axis": 1}), ("median", (X,), {"axis": 0, "keepdims": True}),
    ("percentile", (F, [10, 50, 100]), {"axis": 1}), ("percentile", (I, 30), {}),
    ("nanmedian", (N,), {"axis": 1}), ("nanmedian", (N,), {}), ("nanmedian", (I,), {"axis": 0}),
    ("nanpercentile", (N, [0, 25, 90]), {"axis": 1}), ("nanpercentile", (N, 50), {"axis": 0, "keepdims": True}),
    ("average", (F,), {}), ("average", (I,), {"axis": 1}), ("average", (F,), {"axis": 0, "weights": F[::-1] ** 2}),
    ("average", (F,), {"axis": 1, "weights": W[:4], "returned": True}), ("average", (B,), {"axis": 1}),
    ("average", (I,), {"weights": I + 1, "returned": True}), ("average", (X,), {"axis": 1, "keepdims": True}),
    ("average", (X,), {"axis": 0, "returned": True}),
    ("bincount", (I.ravel(),), {}), ("bincount", (I.ravel(),), {"minlength": 12}),
    ("bincount", (I.ravel(),), {"weights": np.linspace(-1, 2, 8).astype(np.float32)}),
    ("bincount", (B.ravel(),), {}), ("bincount", (np.array([], np.int32),), {}),
    ("histogram", (V,), {}), ("histogram", (V,), {"bins": 3}), ("histogram", (F,), {"bins": 4, "range": (-1, 3)}),
    ("histogram", (V,), {"bins": [-1, 0.5, 2.5, 4]}), ("histogram", (I,), {"bins": 4}),
    ("histogram", (V,), {"bins": 3, "weights": W}), ("histogram", (V,), {"bins": 4, "density": True}),
    ("histogram", (np.array([2.0, 2.0], np.float32),), {"bins": 2}), ("histogram", (H,), {"bins": 5}),
    ("histogram", (X,), {"bins": 3, "range": (-2, 3)}),
    ("digitize", (V, [-1.0, 0.5, 2.5]), {}), ("digitize", (V, [2.5, 0.5, -1.0]), {}),
    ("digitize", (V, [-1.0, 0.5, 2.5]), {"right": True}), ("digitize", (X, [4.0, 2.0, 0.0]), {"right": True}),
    ("digitize", (I, [0, 2, 5]), {}),
    ("corrcoef", (F,), {}), ("corrcoef", (I,), {}), ("corrcoef", (V,), {}), ("corrcoef", (V, W), {}),
    ("corrcoef", (F,), {"rowvar": False}), ("corrcoef", (F, I), {}),
    ("correlate", (V, W[:3]), {}), ("correlate", (V, W[:2]), {"mode": "same"}),
    ("correlate", (W[:2], V), {"mode": "same"}), ("correlate", (W[:3], V), {"mode": "valid"}),
    ("correlate", (I[0], I[1]), {"mode": "full"}), ("correlate", (V, W[:4]), {"mode": "same"}),
    ("correlate", (B[0], B[1]), {"mode": "full"}), ("correlate", (C, C[:2]), {"mode": "full"}),
]

#: NumPy's dtype where arraylayer's rule differs beyond the defaults: (function, input dtype) -> ours
OURS = {("corrcoef", "float32"): "float32", ("histogram-edges", "float32"): "float32",
        ("bincount-weights", "float32"): "float32"}


#: NumPy warns on these cases too (inf - inf interpolating next to an infinity, inf + -inf in a sum)
NUMPY_WARNS = frozenset({"nanpercentile", "average"})


def _native(backend, value):
    return make_array(backend, str(value.dtype), value) if isinstance(value, np.ndarray) else value


def _ours(name: str, want: np.ndarray, source: str) -> str:
    """NumPy's result dtype as arraylayer gives it."""
    if (name, source) in OURS:
        return OURS[(name, source)]
    return {"float64": str(al.default_float_dtype()), "int64": str(al.default_int_dtype())}.get(str(want.dtype),
                                                                                                 str(want.dtype))


@pytest.mark.parametrize(("name", "hosts", "keywords"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_and_dtype_are_numpys(backend, name, hosts, keywords):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's all-NaN and zero-variance warnings
        want = getattr(np, name)(*hosts, **keywords)
    if name == "bincount" and backend == "dask":
        keywords = {**keywords, "length": len(want)}  # dask's values are unknown until computed
    with warnings.catch_warnings():
        if name not in NUMPY_WARNS:  # no warning from arraylayer's arithmetic where NumPy gives none
            warnings.simplefilter("error", RuntimeWarning)
        got = getattr(al, name)(*[_native(backend, h) for h in hosts],
                                **{k: _native(backend, v) for k, v in keywords.items()})
    pairs = list(zip(got, want, strict=True)) if isinstance(want, tuple) else [(got, want)]
    source = str(hosts[0].dtype)
    for part, (g, w) in enumerate(pairs):
        w = np.asarray(w)
        label = f"{name}-edges" if name == "histogram" and part == 1 else name
        label = "bincount-weights" if name == "bincount" and "weights" in keywords else label
        value = to_numpy(backend, g)
        assert value.shape == w.shape, (name, value.shape, w.shape)
        assert dtype_name(backend, g) == _ours(label, w, source), (name, part, dtype_name(backend, g), w.dtype)
        if w.dtype.kind in "biu":
            np.testing.assert_array_equal(value, w, err_msg=name)
        else:
            rtol = 2e-3 if value.dtype == np.float16 else 2e-6
            np.testing.assert_allclose(value, w, rtol=rtol, atol=1e-6, equal_nan=True, err_msg=name)


def test_isclose_of_infinities_warns_nowhere(backend):
    a = make_array(backend, "float32", [np.inf, -np.inf, np.inf, np.nan, 1.0])
    b = make_array(backend, "float32", [np.inf, np.inf, 1.0, np.nan, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = to_numpy(backend, al.isclose(a, b))
    np.testing.assert_array_equal(got, [True, False, False, False, False])


def test_bincount_needs_length_where_values_are_unknown(backend):
    import jax

    x = I.ravel()
    want = np.bincount(x, minlength=10)[:6]
    if backend == "dask":
        with pytest.raises(al.InvalidArgumentError, match="length="):
            al.bincount(make_array(backend, "int32", x))
    got = al.bincount(make_array(backend, "int32", x), length=6)
    np.testing.assert_array_equal(to_numpy(backend, got), want)
    if backend == "jax":
        with pytest.raises(al.InvalidArgumentError, match="length="):
            jax.jit(al.bincount)(make_array(backend, "int32", x))
        jitted = jax.jit(lambda v: al.bincount(v, length=6))(make_array(backend, "int32", x))
        np.testing.assert_array_equal(np.asarray(jitted), want)


def test_linalg_keeps_the_standards_diagonal_trace_and_outer(backend):
    m = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = make_array(backend, "float32", m)
    np.testing.assert_array_equal(to_numpy(backend, al.linalg.diagonal(x)), np.diagonal(m, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(to_numpy(backend, al.linalg.trace(x)), np.trace(m, axis1=-2, axis2=-1))
    np.testing.assert_array_equal(to_numpy(backend, al.diagonal(x)), np.diagonal(m))
    np.testing.assert_array_equal(to_numpy(backend, al.trace(x)), np.trace(m))


@pytest.mark.parametrize(("call", "error"), [
    (lambda x: al.isclose(x, x, rtol=-1.0), al.InvalidArgumentError),
    (lambda x: al.isclose(x, x, equal_nan=1), al.InvalidArgumentTypeError),
    (lambda x: al.diagonal(x, axis1=1, axis2=1), al.InvalidArgumentError),
    (lambda x: al.diagonal(x[0]), al.InvalidArgumentError),
    (lambda x: al.inner(x, x[:, :2]), al.InvalidArgumentError),
    (lambda x: al.vdot(x, x[0]), al.InvalidArgumentError),
    (lambda x: al.percentile(x, 101), al.InvalidArgumentError),
    (lambda x: al.nanpercentile(x, [[10]]), al.InvalidArgumentError),
    (lambda x: al.nanmedian(x, axis=3), al.AxisError),
    (lambda x: al.average(x, axis=0, weights=x[0]), al.InvalidArgumentError),
    (lambda x: al.average(x, returned=1), al.InvalidArgumentTypeError),
    (lambda x: al.bincount(x[0]), al.UnsupportedDtypeError),
    (lambda x: al.histogram(x, bins=0), al.InvalidArgumentError),
    (lambda x: al.histogram(x, bins=[3.0, 1.0]), al.InvalidArgumentError),
    (lambda x: al.histogram(x, range=(2.0, 1.0)), al.InvalidArgumentError),
    (lambda x: al.histogram(x, bins="auto"), al.InvalidArgumentTypeError),
    (lambda x: al.histogram(x, weights=x[0]), al.InvalidArgumentError),
    (lambda x: al.digitize(x, [1.0, 0.0, 2.0]), al.InvalidArgumentError),
    (lambda x: al.digitize(x, x), al.InvalidArgumentError),
    (lambda x: al.corrcoef(x, x[:, :2]), al.InvalidArgumentError),
    (lambda x: al.corrcoef(x[None]), al.InvalidArgumentError),
    (lambda x: al.correlate(x[0], x[1], mode="circular"), al.InvalidArgumentError),
    (lambda x: al.correlate(x, x[0]), al.InvalidArgumentError),
])
def test_bad_arguments_raise_arraylayers_errors(backend, call, error):
    with pytest.raises(error):
        call(make_array(backend, "float32", F))


@pytest.mark.parametrize(("call", "error"), [
    (lambda i: al.bincount(i), al.InvalidArgumentError),
    (lambda i: al.bincount(i[0], minlength=-1), al.InvalidArgumentError),
    (lambda i: al.bincount(i[0], weights=i[1][:2]), al.InvalidArgumentError),
    (lambda i: al.bincount(al.multiply(i[0], -1), length=None), al.InvalidArgumentError),
])
def test_bincount_refusals(backend, call, error):
    with pytest.raises(error):
        call(make_array(backend, "int32", I))
