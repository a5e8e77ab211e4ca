"""Promotion of the low-precision family: the whole table against ``jax.numpy.promote_types`` (JAX 0.10
has every type but int1/uint1), under "standard" and "strict", and what "paddle" and "array_api" do."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import arraylayer as al

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

LOW = [str(d) for d in al.all_low_precision_dtypes]
STANDARD = [np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
            jnp.bfloat16, np.float16, np.float32, np.float64, np.complex64, np.complex128]
WEAK = [bool, int, float, complex]
TYPES = [getattr(jnp, name) for name in LOW] + STANDARD + WEAK
# every pair with a low-precision type in it
PAIRS = [(a, b) for a, b in itertools.product(TYPES, TYPES) if a in TYPES[: len(LOW)] or b in TYPES[: len(LOW)]]
DEFAULTS_64 = {"int": "int64", "float": "float64", "complex": "complex128"}


def _jax(a, b):
    try:
        return np.dtype(jnp.promote_types(a, b)).name
    except (TypeError, ValueError):  # jax's TypePromotionError is a ValueError
        return "raises"


def _al(a, b):
    arg = lambda t: t if t in WEAK else al.Dtype(np.dtype(t))  # noqa: E731
    try:
        return str(al.promote_types(arg(a), arg(b)))
    except al.TypePromotionError:
        return "raises"


@pytest.mark.usefixtures("x64_on")
@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_every_pair_matches_jax(mode):
    with jax.numpy_dtype_promotion(mode):
        want = {(a, b): _jax(a, b) for a, b in PAIRS}
    with al.dtype_promotion(mode), al.use_default_dtypes(**DEFAULTS_64):
        got = {(a, b): _al(a, b) for a, b in PAIRS}
    differ = {pair: (got[pair], want[pair]) for pair in PAIRS if got[pair] != want[pair]}
    assert not differ
    assert len(PAIRS) == (len(LOW) + 19) ** 2 - 19 * 19  # every pair with a low-precision side
    assert sum(v == "raises" for v in want.values()) > len(PAIRS) // 2  # the table mostly refuses


@pytest.mark.usefixtures("x64_on")
def test_arrays_with_python_scalars_match_jax():
    for name in LOW:
        x = np.zeros(2, al.Dtype(name).numpy_dtype)  # JAX on CPU cannot make float6 arrays
        for scalar in (True, 0, 1.0, 1j):  # 0: the one int every integer format holds (int1: -1..0)
            try:
                want = np.dtype(jnp.result_type(x, scalar)).name
            except (TypeError, ValueError):
                want = "raises"
            try:
                got = str(al.result_type(x, scalar))
            except al.TypePromotionError:
                got = "raises"
            assert got == want, (name, scalar)


@pytest.mark.parametrize("policy", ["standard", "strict", "paddle", "array_api"])
def test_the_refusal_names_the_cast_to_write(policy):
    with al.dtype_promotion(policy):
        with pytest.raises(al.TypePromotionError, match=r"astype\('float32'\) on the float8_e4m3fn input"):
            al.promote_types("float8_e4m3fn", "float32")
        with pytest.raises(al.TypePromotionError, match=r"astype\('int32'\) on the int4 input"):
            al.promote_types("int8", "int4")
        with pytest.raises(al.TypePromotionError, match="low-precision"):
            al.promote_types("float8_e4m3fn", "float8_e5m2")
        with pytest.raises(al.TypePromotionError, match="low-precision"):
            al.promote_types("float4_e2m1fn", complex)
        assert al.promote_types("float8_e4m3fn", "float8_e4m3fn") is al.float8_e4m3fn
        assert al.promote_types("int4", int) is al.int4
        assert al.promote_types("float8_e5m2", float) is al.float8_e5m2
        if policy in ("standard", "paddle"):  # strict, array_api: bool is a dtype of another kind
            assert al.promote_types("uint2", bool) is al.uint2


def test_policies_differ_only_where_documented():
    # standard (JAX): an integer array joins a low-precision float as a Python float would
    assert al.promote_types("int8", "float8_e4m3fn") is al.float8_e4m3fn
    assert al.promote_types("bool", "float4_e2m1fn") is al.float4_e2m1fn
    for policy in ("strict", "paddle", "array_api"):  # none of these mixes int and float arrays
        with al.dtype_promotion(policy), pytest.raises(al.TypePromotionError):
            al.promote_types("int8", "float8_e4m3fn")
    with al.dtype_promotion("array_api"):
        assert al.promote_types("float8_e4m3fn", int) is al.float8_e4m3fn
        with pytest.raises(al.TypePromotionError):
            al.promote_types("int4", float)


def test_can_cast_follows_the_lattice():
    assert al.can_cast("float8_e4m3fn", "float8_e4m3fn")
    assert not al.can_cast("float8_e4m3fn", "float32")
    assert not al.can_cast("int4", "int8")
    assert not al.can_cast("float32", "float8_e4m3fn")
