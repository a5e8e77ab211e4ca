"""Division by a value broadcast to the quotient's shape (a Python scalar, a 0-d array, a row) gives
NumPy's quotient bit for bit on every backend. XLA rewrites ``x / broadcast(c)`` as ``x *
broadcast(1 / c)``, an ulp off in about a third of float32 values divided by 3.0; the JAX kernel
divides by the broadcast divisor behind an optimization barrier (kernels/jax/elementwise.py)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al


def bits_equal(got, expected):
    got = np.asarray(al.to_backend(got, "numpy"))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), expected.view(f"u{expected.itemsize}"))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_division_by_a_broadcast_divisor_is_numpys(backend, dtype):
    rng = np.random.default_rng(7)
    values = (rng.standard_normal((40, 50)) * 1e3).astype(dtype)
    row = (rng.standard_normal((1, 50)) + 3.0).astype(dtype)
    x = make_array(backend, dtype, values)
    for _ in range(2):  # the planning call, then the planned one
        bits_equal(al.divide(x, 3.0), values / np.asarray(3.0, dtype))
        bits_equal(al.divide(x, make_array(backend, dtype, np.asarray(0.1, dtype))), values / np.asarray(0.1, dtype))
        bits_equal(al.divide(x, make_array(backend, dtype, row)), values / row)
        bits_equal(al.divide(7.0, x), np.asarray(7.0, dtype) / values)


def test_division_by_a_broadcast_divisor_under_jit():
    jax = pytest.importorskip("jax")
    values = (np.random.default_rng(8).standard_normal(1000) * 1e3).astype("float32")
    with al.use_backend("jax"):
        quotient = jax.jit(lambda v: al.divide(v, 3.0))(jax.numpy.asarray(values))
    bits_equal(quotient, values / np.float32(3.0))
