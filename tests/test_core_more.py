"""keras.ops' core names ``is_tensor``, ``saturate_cast`` and ``slice`` (arraylayer/models/mathops/core.py)
on every backend, against TensorFlow's saturate_cast and jax.lax.dynamic_slice."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array
from oracles import dtype_name, to_numpy

import arraylayer as al


def test_is_tensor_is_true_for_arrays_only(backend):
    x = make_array(backend, "float32", [1.0, 2.0])
    assert al.is_tensor(x) is True
    assert al.is_tensor(al.Array(x)) is True
    assert not al.is_tensor(1.0) and not al.is_tensor([1.0, 2.0]) and not al.is_tensor("x")


SATURATIONS = [  # (source, target, values): TensorFlow's saturate_cast is the oracle
    ("float32", "int32", [1e10, -1e10, 3.7, -3.7, np.inf, -np.inf, 2.0**31, -(2.0**31)]),
    ("float64", "float32", [1e300, -1e300, 1.5, np.inf, -np.inf]),
    ("int32", "uint8", [300, -300, 5, 255, 0]),
    ("float32", "uint8", [300.0, -3.0, 5.5, 255.9]),
    ("float16", "int8", [300.0, -300.0, 5.0, -128.5]),
    ("int64", "float16", [100000, -100000, -5]),
    ("int32", "int16", [2**20, -(2**20), 7]),
    ("float32", "float16", [1e6, -1e6, 0.5]),
    ("uint8", "int8", [200, 100, 0]),
]


@pytest.mark.parametrize(("source", "goal", "values"), SATURATIONS, ids=[f"{s}-{t}" for s, t, _ in SATURATIONS])
def test_saturate_cast_is_tensorflows(backend, source, goal, values):
    import tensorflow as tf

    if backend == "torch" and "uint16" in (source, goal):
        pytest.skip("torch stores uint16 only")
    host = np.asarray(values, dtype=source)
    got = al.saturate_cast(make_array(backend, source, host), goal)
    want = tf.dtypes.saturate_cast(tf.constant(host), goal).numpy()
    assert dtype_name(backend, got) == goal
    np.testing.assert_array_equal(to_numpy(backend, got), want)


def test_saturate_cast_of_float64_to_int64_stops_at_the_largest_float_below_2_63(backend):
    # TensorFlow's own cast overflows here: the limit is checked directly
    got = to_numpy(backend, al.saturate_cast(make_array(backend, "float64", [1e30, -1e30, 3.0]), "int64"))
    assert got.tolist() == [int(np.nextafter(2.0**63, 0)), -(2**63), 3]


def test_saturate_cast_sends_nan_to_zero_and_refuses_complex(backend):
    got = al.saturate_cast(make_array(backend, "float32", [np.nan, 1.0]), "int32")
    assert to_numpy(backend, got).tolist() == [0, 1]
    with pytest.raises(al.InvalidDtypeError):
        al.saturate_cast(make_array(backend, "complex64", [1j]), "float32")


SLICES = [((1, 2), (2, 3)), ((-1, -2), (2, 2)), ((3, 5), (2, 3)), ((0, 0), (4, 6)), ((2, 1), (0, 2))]


@pytest.mark.parametrize(("starts", "sizes"), SLICES, ids=[str(s) for s in SLICES])
def test_slice_is_lax_dynamic_slice(backend, starts, sizes):
    import jax

    host = np.arange(24, dtype=np.int32).reshape(4, 6)
    got = al.slice(make_array(backend, "int32", host), starts, sizes)
    want = np.asarray(jax.lax.dynamic_slice(host, starts, sizes))
    assert dtype_name(backend, got) == "int32" and tuple(got.shape) == want.shape
    np.testing.assert_array_equal(to_numpy(backend, got), want)


def test_slice_takes_0d_integer_array_starts(backend):
    import jax

    host = np.arange(24.0, dtype=np.float32).reshape(4, 6)
    start = make_array(backend, "int32", np.int32(3))
    got = al.slice(make_array(backend, "float32", host), (start, -4), (2, 3))
    np.testing.assert_array_equal(to_numpy(backend, got), np.asarray(jax.lax.dynamic_slice(host, (3, -4), (2, 3))))


@pytest.mark.parametrize(("starts", "sizes"), [((0,), (2, 2)), ((0, 0), (5, 1)), ((0, 0), (2,))])
def test_slice_refuses_mismatched_starts_and_sizes(backend, starts, sizes):
    with pytest.raises(al.InvalidArgumentError):
        al.slice(make_array(backend, "float32", np.ones((4, 6))), starts, sizes)
