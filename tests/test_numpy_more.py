"""keras.ops' small NumPy names (arraylayer/api/numpy_more.py) against NumPy on every backend: the same
values and the same result dtype, and arraylayer's errors for bad arguments."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array
from oracles import dtype_name, to_numpy

import arraylayer as al

X = np.array([[-1.5, 0.0, 2.0, np.nan], [1.0, -np.inf, 3.0, np.inf]])
Y = np.array([[2.0, np.nan, -1.0, np.nan], [0.0, 5.0, 0.0, 1.0]])
I = np.array([[3, -1, 0, 7], [2, 2, -5, 1]])

#: (function, NumPy's function, the host arguments, extra keywords)
CASES = [
    ("exp2", np.exp2, (X,), {}),
    ("exp2", np.exp2, (I,), {}),
    ("deg2rad", np.deg2rad, (X,), {}),
    ("rad2deg", np.rad2deg, (X,), {}),
    ("fmax", np.fmax, (X, Y), {}),
    ("fmin", np.fmin, (X, Y), {}),
    ("heaviside", np.heaviside, (X, Y), {}),
    ("isposinf", np.isposinf, (X,), {}),
    ("isneginf", np.isneginf, (X,), {}),
    ("isreal", np.isreal, (X,), {}),
    ("logaddexp2", np.logaddexp2, (X, Y), {}),
    ("flipud", np.flipud, (X,), {}),
    ("fliplr", np.fliplr, (X,), {}),
    ("rot90", np.rot90, (I,), {}),
    ("rot90", np.rot90, (I,), {"k": 3}),
    ("rot90", np.rot90, (I,), {"k": -2, "axes": (1, 0)}),
    ("ravel", np.ravel, (I,), {}),
    ("swapaxes", np.swapaxes, (I, 0, 1), {}),
    ("ptp", np.ptp, (I,), {"axis": 1}),
    ("ptp", np.ptp, (I,), {"axis": 0, "keepdims": True}),
]

#: the stack functions: (function, NumPy's, the host arrays)
STACKS = [
    ("hstack", np.hstack, (X, Y)), ("hstack", np.hstack, (X[0], Y[0])),
    ("vstack", np.vstack, (X, Y)), ("vstack", np.vstack, (X[0], Y[0])),
    ("dstack", np.dstack, (X, Y)), ("dstack", np.dstack, (X[0], Y[0])),
]


def _dtype(host):
    return "float32" if host.dtype.kind == "f" else "int32"



@pytest.mark.parametrize(("name", "reference", "hosts", "keywords"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_and_dtype_are_numpys(backend, name, reference, hosts, keywords):
    arrays = [make_array(backend, _dtype(h), h) for h in hosts[:1]] + [
        make_array(backend, _dtype(h), h) if isinstance(h, np.ndarray) else h for h in hosts[1:]]
    got = getattr(al, name)(*arrays, **keywords)
    # NumPy on the same dtypes (float32, int32): its result dtype is the one arraylayer promises here
    want = reference(*[h.astype(_dtype(h)) if isinstance(h, np.ndarray) else h for h in hosts], **keywords)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(to_numpy(backend, got), want, rtol=2e-6, equal_nan=True, err_msg=name)
    assert dtype_name(backend, got) == str(want.dtype) or (name == "exp2" and want.dtype == np.float64
                                                           and dtype_name(backend, got) == str(al.default_float_dtype()))


@pytest.mark.parametrize(("name", "reference", "hosts"), STACKS, ids=[f"{c[0]}-{c[2][0].ndim}d" for c in STACKS])
def test_stacks_are_numpys(backend, name, reference, hosts):
    got = getattr(al, name)([make_array(backend, "float32", h) for h in hosts])
    want = reference([h.astype(np.float32) for h in hosts])
    assert tuple(got.shape) == want.shape and dtype_name(backend, got) == "float32"
    np.testing.assert_array_equal(to_numpy(backend, got), want)


def test_divide_no_nan_is_zero_where_the_divisor_is_zero(backend):
    x = make_array(backend, "float32", [1.0, 0.0, -3.0, 6.0])
    y = make_array(backend, "float32", [0.0, 0.0, 2.0, -3.0])
    got = al.divide_no_nan(x, y)
    np.testing.assert_array_equal(to_numpy(backend, got), np.array([0.0, 0.0, -1.5, -2.0], np.float32))
    assert dtype_name(backend, got) == "float32"


def test_creation_functions_are_numpys(backend):
    with al.use_backend(backend):
        cases = [(al.identity(3, dtype=al.float32), np.identity(3, np.float32)),
                 (al.tri(3, 4, k=1, dtype=al.int32), np.tri(3, 4, k=1, dtype=np.int32)),
                 (al.tri(2, dtype=al.float32), np.tri(2, dtype=np.float32)),
                 (al.logspace(0.0, 2.0, 3, dtype=al.float32), np.logspace(0.0, 2.0, 3, dtype=np.float32)),
                 (al.logspace(1.0, 3.0, 3, base=2.0, endpoint=False, dtype=al.float32),
                  np.logspace(1.0, 3.0, 3, base=2.0, endpoint=False, dtype=np.float32))]
        for got, want in cases:
            assert dtype_name(backend, got) == str(want.dtype)
            np.testing.assert_allclose(to_numpy(backend, got), want, rtol=1e-6)


@pytest.mark.parametrize(("call", "error"), [
    (lambda x: al.rot90(x, axes=(0, 0)), al.InvalidArgumentError),
    (lambda x: al.rot90(x, axes=(0, 5)), al.AxisError),
    (lambda x: al.rot90(x, k=1.5), al.InvalidArgumentTypeError),
    (lambda x: al.rot90(x[0]), al.InvalidArgumentError),
    (lambda x: al.fliplr(x[0]), al.InvalidArgumentError),
    (lambda x: al.swapaxes(x, 0, 2), al.AxisError),
    (lambda x: al.hstack([]), al.InvalidArgumentError),
    (lambda x: al.vstack(x), al.InvalidArgumentError),
])
def test_bad_arguments_raise_arraylayers_errors(backend, call, error):
    with pytest.raises(error):
        call(make_array(backend, "float32", X))
