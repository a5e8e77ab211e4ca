"""One rule for out-of-range float -> small integer casts, the same bits on every backend
(docs/low_precision.rst, "Out of range"): truncate toward zero and keep the low bits; NaN, the
infinities and values beyond int32 give 0. The oracle is NumPy's own cast (x86) for the 8- and
16-bit integers and ml_dtypes' (the version constraints.txt pins) for int4/uint4/int2/uint2 and for
float8 sources; XLA, which saturates, is brought to the rule."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al

VALUES = [-1.5, -200.0, 300.0, 7.9, -7.9, 127.5, 128.0, -129.0, 255.9, 256.0, 1e10, -1e10, float("nan"),
          float("inf"), -float("inf"), 70000.5, -40000.0, 2.5e9, -2.5e9, 2.0**31, -(2.0**31) + 128]


def oracle(values: np.ndarray, target) -> np.ndarray:
    with np.errstate(invalid="ignore", over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return values.astype(target)


def on(backend: str, values, dtype: str):
    with al.use_backend(backend):
        return al.asarray(values, dtype=dtype)


def host(backend: str, x) -> np.ndarray:
    return np.asarray(al.get_backend(backend).to_numpy(x))


@pytest.mark.parametrize("source", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("into", ["int8", "uint8", "int16", "uint16"])
def test_float_to_narrow_int_wraps_on_every_backend(backend, source, into):
    target = into
    adapter = al.get_backend(backend)
    if al.Dtype(target) not in adapter.valid_dtypes() or al.Dtype(source) not in adapter.valid_dtypes():
        pytest.skip(f"{backend} has no {target if al.Dtype(target) not in adapter.valid_dtypes() else source}")
    wide = np.array(VALUES, np.float64)
    values = oracle(wide, ml_dtypes.bfloat16 if source == "bfloat16" else source)
    want = oracle(oracle(values, np.float64), target)  # NumPy's float64 -> int cast: the rule on x86
    got = host(backend, al.astype(on(backend, values.astype(np.float64).tolist(), source), target))
    assert got.dtype == np.dtype(target)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("into", ["uint8", "int8"])
def test_negative_and_large_float8_to_uint8_as_ml_dtypes(backend, into):
    target = into
    codes = np.arange(256, dtype=np.uint8)
    values = codes.view(ml_dtypes.float8_e4m3fn)
    want = oracle(values, target)  # ml_dtypes' own float8 -> integer cast
    with al.use_backend(backend):
        x = al.astype(al.asarray(values.astype(np.float32).tolist(), dtype="float32"), "float8_e4m3fn")
        got = host(backend, al.astype(x, target))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("format", ["int4", "uint4", "int2", "uint2"])
def test_float_to_int4_beyond_range_as_ml_dtypes(backend, format):
    values = np.array(VALUES, np.float32)
    want = oracle(values, getattr(ml_dtypes, format)).view(np.uint8) & ((1 << int(format[-1])) - 1)
    with al.use_backend(backend):
        codes = al.lowp.encode(al.asarray(VALUES, dtype="float32"), format)
    np.testing.assert_array_equal(host(backend, codes), want)


def test_the_rule_holds_under_jax_jit():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    values = jnp.asarray(VALUES, jnp.float32)
    jitted = jax.jit(lambda x: al.astype(x, "uint8"))(values)
    np.testing.assert_array_equal(np.asarray(jitted), oracle(np.array(VALUES, np.float32).astype(np.float64), np.uint8))
