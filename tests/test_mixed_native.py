"""A float array and an integer (or bool) array: the result's dtype and values are NumPy's for the
integer array cast to the float dtype first, on every backend, on the planning call and on the
planned ones (Python and compiled), in both orders, with a 0-d float array too.

The integers include values the cast rounds (2**24 + 1 in float32, 2**53 + 1 in float64), the
extremes of each dtype, negatives and zero; divisions by zero give NumPy's infinities and NaNs.
On torch these plans call torch's own function on the uncast pair (``mixed_plain`` in
kernels/torch/elementwise.py), on TensorFlow the Cast op then the function: this is what shows
both exact.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al
from arraylayer.api.elementwise import clear_plans

INTEGERS = {
    "bool": [True, False, True, True, False, True, False],
    "int8": [0, -1, 127, -128, 5, -7, 1],
    "int16": [0, -1, 32767, -32768, 2049, -4097, 3],
    "int32": [0, -1, 2**24 + 1, -(2**24 + 3), 2**31 - 1, -(2**31), 123456789],
    "int64": [0, -1, 2**53 + 1, -(2**53 + 3), 2**63 - 1, -(2**63), 2**24 + 1],
    "uint8": [0, 255, 1, 128, 7, 200, 3],
}
FLOATS = [1.5, -2.25, 0.0, -0.0, 3.0e7, -1.0, 0.1]
FUNCTIONS = {"add": np.add, "multiply": np.multiply, "divide": np.divide}


def to_numpy(x):
    return np.asarray(al.to_backend(x, "numpy"))


def check(backend, call, expected, *args):
    """Three calls (the planning one, then the planned ones) all give ``expected``'s dtype and values."""
    for _ in range(3):
        got = call(*args)
        assert str(al.Dtype(got.dtype)) == str(expected.dtype), backend
        np.testing.assert_array_equal(to_numpy(got), expected)


@pytest.mark.parametrize("float_dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_float_and_integer_arrays_match_numpy(backend, name, float_dtype):
    clear_plans()
    call, reference = getattr(al, name), FUNCTIONS[name]
    floats = np.asarray(FLOATS, float_dtype)
    for int_dtype, values in INTEGERS.items():
        integers = np.asarray(values, int_dtype)
        x, i = make_array(backend, float_dtype, floats), make_array(backend, int_dtype, integers)
        with np.errstate(divide="ignore", invalid="ignore"):
            check(backend, call, reference(floats, integers.astype(float_dtype)), x, i)
            check(backend, call, reference(integers.astype(float_dtype), floats), i, x)


@pytest.mark.parametrize("name", ["add", "multiply"])  # divide: XLA divides by a broadcast 0-d array
def test_zero_d_float_and_integer_array(backend, name):
    """A 0-d float array beside a 1-d integer array keeps the float's dtype (torch's own promotion
    of a 0-d tensor would not, were the float not the higher kind). Not divide: JAX's division by a
    broadcast 0-d float64 array is 1 ulp from NumPy's, with or without a cast, which is not this test's
    subject."""
    clear_plans()
    call, reference = getattr(al, name), FUNCTIONS[name]
    for float_dtype in ("float32", "float64"):
        scalar = np.asarray(-2.5, float_dtype)
        integers = np.asarray(INTEGERS["int32"], "int32")
        x, i = make_array(backend, float_dtype, scalar), make_array(backend, "int32", integers)
        check(backend, call, reference(scalar, integers.astype(float_dtype)), x, i)
        check(backend, call, reference(integers.astype(float_dtype), scalar), i, x)
