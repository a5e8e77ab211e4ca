"""arraylayer's "standard" and "strict" policies against real JAX, for all 18x18 seed-000 types.

JAX is run with ``jax_enable_x64`` on (as seed 000's table was generated), and arraylayer with
64-bit defaults, so weak results materialise the same way on both sides. The x64 flag is
restored after every test.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
from jax._src import dtypes as jax_dtypes  # noqa: E402

import arraylayer as al  # noqa: E402

# jax 0.10 calls it lattice_result_type; older releases (and seed 000's generator) _lattice_result_type.
jax_lattice_result_type = getattr(jax_dtypes, "lattice_result_type", None) or jax_dtypes._lattice_result_type

# Seed 000's types, in its order (its generator's list).
TYPES = [np.bool_, np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64,
         jnp.bfloat16, np.float16, np.float32, np.float64, np.complex64, np.complex128, int, float, complex]
WEAK = (int, float, complex)
PAIRS = list(itertools.product(TYPES, TYPES))
IDS = [f"{getattr(a, '__name__', a)}+{getattr(b, '__name__', b)}" for a, b in PAIRS]
DEFAULTS_64 = {"int": "int64", "float": "float64", "complex": "complex128"}
JAX_ERRORS = (TypeError, ValueError)  # jax's TypePromotionError is a ValueError


def al_arg(t):
    """The arraylayer spelling of a JAX type: a Python type stays itself (weak)."""
    return t if t in WEAK else al.Dtype(np.dtype(t))


def jax_outcome(call):
    try:
        dtype = call()
    except JAX_ERRORS:
        return "raises"
    if isinstance(dtype, tuple):
        return (np.dtype(dtype[0]).name, bool(dtype[1]))
    return np.dtype(dtype).name


def al_outcome(call):
    try:
        result = call()
    except al.TypePromotionError:
        return "raises"
    if isinstance(result, tuple):
        return (str(result[0]), result[1])
    return str(result)


def jax_value(t):
    """A JAX value of type t: a weak-typed JAX array for int/float/complex, else a strong one."""
    if t in WEAK:
        value = jnp.asarray(t(1))
        assert value.weak_type
        return value
    value = jnp.ones((), dtype=t)
    assert not value.weak_type
    return value


@pytest.mark.usefixtures("x64_on")
@pytest.mark.parametrize("mode", ["standard", "strict"])
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=IDS)
def test_promote_types_matches_jax(mode, a, b):
    with jax.numpy_dtype_promotion(mode):
        want = jax_outcome(lambda: jnp.promote_types(a, b))
    with al.dtype_promotion(mode), al.use_default_dtypes(**DEFAULTS_64):
        got = al_outcome(lambda: al.promote_types(al_arg(a), al_arg(b)))
    assert got == want
    if mode == "standard":
        assert want != "raises"  # the standard lattice promotes every pair


@pytest.mark.usefixtures("x64_on")
@pytest.mark.parametrize("mode", ["standard", "strict"])
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=IDS)
def test_lattice_result_type_matches_jax(mode, a, b):
    """Types, including the Python types int/float/complex as weak types (seed 000's generator)."""
    with jax.numpy_dtype_promotion(mode):
        want = jax_outcome(lambda: jax_lattice_result_type(a, b))
    with al.dtype_promotion(mode), al.use_default_dtypes(**DEFAULTS_64):
        got = al_outcome(lambda: al.lattice_result_type(al_arg(a), al_arg(b)))
    assert got == want


@pytest.mark.usefixtures("x64_on")
@pytest.mark.parametrize("mode", ["standard", "strict"])
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=IDS)
def test_result_type_of_jax_values_matches_jax(mode, a, b):
    """JAX arrays, weak-typed ones (jnp.asarray(1)) standing for the weak types."""
    va, vb = jax_value(a), jax_value(b)
    with jax.numpy_dtype_promotion(mode):
        want = jax_outcome(lambda: jnp.result_type(va, vb))
        want_lattice = jax_outcome(lambda: jax_lattice_result_type(va, vb))
    with al.dtype_promotion(mode), al.use_default_dtypes(**DEFAULTS_64):
        got = al_outcome(lambda: al.result_type(va, vb))
        got_lattice = al_outcome(lambda: al.lattice_result_type(va, vb))
    assert got == want
    assert got_lattice == want_lattice


@pytest.mark.usefixtures("x64_on")
@pytest.mark.parametrize("mode", ["standard", "strict"])
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=IDS)
def test_result_type_of_numpy_arrays_and_python_scalars_matches_jax(mode, a, b):
    """NumPy arrays (strong) and Python scalar values (weak): 1, 1.0, 1j."""

    def value(t):
        return t(1) if t in WEAK else np.ones(2, dtype=t)

    va, vb = value(a), value(b)
    with jax.numpy_dtype_promotion(mode):
        want = jax_outcome(lambda: jnp.result_type(va, vb))
    with al.dtype_promotion(mode), al.use_default_dtypes(**DEFAULTS_64):
        got = al_outcome(lambda: al.result_type(va, vb))
    assert got == want


@pytest.mark.usefixtures("x64_on")
def test_weak_typed_jax_arrays_are_weak():
    weak_int, weak_float, weak_complex = jnp.asarray(2), jnp.asarray(2.0), jnp.asarray(2j)
    assert weak_int.weak_type and weak_float.weak_type and weak_complex.weak_type
    with al.use_default_dtypes(**DEFAULTS_64):
        assert al.result_type(np.ones(3, np.int8), weak_int) is al.int8
        assert al.result_type(jnp.ones(3, jnp.uint16), weak_int) is al.uint16
        assert al.result_type(jnp.ones(3, jnp.bfloat16), weak_float) is al.bfloat16
        assert al.result_type(np.ones(3, np.float16), weak_complex) is al.complex64
        assert al.lattice_result_type(weak_int) == (al.int64, True)
        assert al.lattice_result_type(weak_int, weak_float) == (al.float64, True)
        # an explicit dtype makes the array strong
        assert al.result_type(np.ones(3, np.int8), jnp.asarray(2, dtype=jnp.int64)) is al.int64


@pytest.mark.usefixtures("x64_off")
@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_weak_typed_jax_arrays_without_x64_match_jax_with_32bit_defaults(mode):
    """With x64 off jnp.asarray(2) is a weak int32, and JAX materialises weak results to 32 bits,
    as arraylayer's out-of-the-box defaults do. (JAX's x32 lattice differs from seed 000 only in
    uint32 + signed int, which it sends to int32 instead of int64, and has no 64-bit arrays: those
    are left out.)"""
    strong = [np.bool_, np.uint8, np.uint16, np.uint32, np.int8, np.int16, np.int32,
              jnp.bfloat16, np.float16, np.float32, np.complex64]
    values = [jnp.ones((), dtype=t) for t in strong] + [jnp.asarray(1), jnp.asarray(1.0), jnp.asarray(1j)]
    assert [v.dtype for v in values[-3:]] == [jnp.int32, jnp.float32, jnp.complex64]
    assert all(v.weak_type for v in values[-3:])
    checked = 0
    for va, vb in itertools.product(values, values):
        kinds = {(v.dtype.kind, v.dtype.itemsize, v.weak_type) for v in (va, vb)}
        if ("u", 4, False) in kinds and any(k == "i" and not weak for k, _, weak in kinds):
            continue
        with jax.numpy_dtype_promotion(mode):
            want = jax_outcome(lambda: jnp.result_type(va, vb))  # noqa: B023
        with al.dtype_promotion(mode):
            got = al_outcome(lambda: al.result_type(va, vb))  # noqa: B023
        assert got == want, (va.dtype, va.weak_type, vb.dtype, vb.weak_type)
        checked += 1
    assert checked > 150


@pytest.mark.usefixtures("x64_on")
def test_strict_mode_documented_examples_match_jax():
    """Seed 000's strict-mode examples: float32 + int32 raises, float32 + 1 is float32."""
    x, y = jnp.float32(1), jnp.int32(1)
    with jax.numpy_dtype_promotion("strict"):
        with pytest.raises(JAX_ERRORS):
            jnp.result_type(x, y)
        assert jnp.result_type(x, 1) == jnp.float32
    with al.dtype_promotion("strict"):
        with pytest.raises(al.TypePromotionError):
            al.result_type(x, y)
        assert al.result_type(x, 1) is al.float32
        assert al.result_type(jnp.ones(2, jnp.float32), jnp.asarray(1)) is al.float32
