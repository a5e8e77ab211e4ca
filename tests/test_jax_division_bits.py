"""The divisions inside mean, var, std, softmax and layer_norm, and divisions by a constant under
jax.jit, give NumPy's quotients bit for bit on JAX.

XLA's algebraic simplifier rewrites a division by a broadcast value or a constant (jax.numpy's
mean divides its sum by the count, a constant) as a multiplication by the reciprocal, an ulp off
in a third to a half of the quotients; the JAX kernels divide behind an optimization barrier
(``kernels/jax/_common.true_divide``). The inputs are integers whose sums are exact in any order,
so that what is compared is the division, not the order in which each backend sums.

Not compared, because those backends compute something else (benchmarks/division_bits.py
measures them): torch's var and std (Welford's algorithm: float64 results up to 20 ulps away)
and layer_norm (Welford, then a multiplication by 1 / sqrt), torch's float32 sqrt on an AVX2 CPU
(not correctly rounded in about 17% of values, which rms_norm shows), TensorFlow's float64
layer_norm, dask's var and std of an array in several chunks (the chunks' moments combined).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al

DTYPES = ("float32", "float64")


def bits_equal(got, expected):
    got = np.asarray(al.to_backend(got, "numpy"))
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    width = f"u{got.itemsize}"
    differ = got.view(width) != expected.view(width)
    assert not differ.any(), f"{differ.sum()} of {differ.size} elements differ from NumPy's bits"


def integers(dtype, seed=11, shape=(64, 1000)):
    """Integers in [-50, 50]: every sum over 1000 of them (and of their squares) is exact."""
    return np.random.default_rng(seed).integers(-50, 51, shape).astype(dtype)


def integral_means(dtype, seed=12):
    """Integers whose rows sum to multiples of 1000: the row means are integers, so the sums of
    squared deviations are exact too (var, std, layer_norm along axis 1)."""
    x = integers("int64", seed)
    rest = x[:, :-1].sum(axis=1)
    x[:, -1] = np.round(rest / 1000) * 1000 - rest
    return x.astype(dtype)


def jitted(fn):
    """``fn`` under jax.jit (its arguments JAX arrays), as a user's jitted step calls it."""
    jax = pytest.importorskip("jax")
    return jax.jit(fn)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mean_divides_the_sum_by_the_count(backend, dtype):
    values = integers(dtype)
    x = make_array(backend, dtype, values)
    for axis, keepdims in ((1, False), (1, True), (None, False), ((0, 1), True)):
        expected = np.mean(values, axis=axis, keepdims=keepdims)
        bits_equal(al.mean(x, axis=axis, keepdims=keepdims), expected)
        if backend == "jax":
            with al.use_backend("jax"):
                bits_equal(jitted(lambda v, a=axis, k=keepdims: al.mean(v, axis=a, keepdims=k))(x), expected)


@pytest.mark.parametrize("dtype", DTYPES)
def test_var_and_std_divide_by_the_count(backend, dtype):
    if backend in ("torch", "dask"):
        pytest.skip(f"{backend}'s var is another formula: Welford's algorithm (torch), moments of "
                    "chunks combined (dask); see the module docstring")
    values = integral_means(dtype)
    x = make_array(backend, dtype, values)
    for correction, keepdims in ((0, False), (1, True)):
        expected = np.var(values, axis=1, ddof=correction, keepdims=keepdims)
        bits_equal(al.var(x, axis=1, correction=correction, keepdims=keepdims), expected)
        bits_equal(al.std(x, axis=1, correction=correction, keepdims=keepdims), np.sqrt(expected))
        if backend == "jax":
            with al.use_backend("jax"):
                var = jitted(lambda v, c=correction, k=keepdims: al.var(v, axis=1, correction=c, keepdims=k))
                std = jitted(lambda v, c=correction, k=keepdims: al.std(v, axis=1, correction=c, keepdims=k))
                bits_equal(var(x), expected)
                bits_equal(std(x), np.sqrt(expected))


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_and_rms_norm_divide_on_jax(dtype):
    jnp = pytest.importorskip("jax.numpy")
    values = integral_means(dtype)
    x = make_array("jax", dtype, values)
    centred = values - np.mean(values, axis=1, keepdims=True)
    norm = centred / np.sqrt(np.mean(np.square(centred), axis=1, keepdims=True) + np.asarray(1e-5, dtype))
    rms = values / np.sqrt(np.mean(np.square(values), axis=1, keepdims=True) + np.asarray(1e-6, dtype))
    scale = {"scale": jnp.ones(1000, dtype)}
    with al.use_backend("jax"):
        bits_equal(al.nn.layer_norm(x), norm)
        bits_equal(jitted(al.nn.layer_norm)(x), norm)
        bits_equal(al.layers.rms_norm.apply(scale, x), rms)
        bits_equal(jitted(lambda v: al.layers.rms_norm.apply(scale, v))(x), rms)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_is_a_true_quotient_on_jax(dtype):
    """JAX's exp and sums are its own (an ulp from NumPy's here and there); the quotient of the two
    must be the one NumPy rounds, along either axis, eagerly and under jit. The two come from one
    jitted function, as in the kernel: XLA's exp of x - max differs in about 2% of float32 values
    between a fused computation and jnp.exp called alone."""
    jnp = pytest.importorskip("jax.numpy")
    values = (np.random.default_rng(13).standard_normal((64, 1000)) * 3).astype(dtype)
    x = make_array("jax", dtype, values)
    for axis in (-1, 0):
        def parts(v, a=axis):
            shifted = jnp.exp(v - jnp.max(v, axis=a, keepdims=True))
            return shifted, jnp.sum(shifted, axis=a, keepdims=True)

        shifted, total = jitted(parts)(x)
        expected = np.asarray(shifted) / np.asarray(total)
        with al.use_backend("jax"):
            bits_equal(al.nn.softmax(x, axis=axis), expected)
            bits_equal(jitted(lambda v, a=axis: al.nn.softmax(v, axis=a))(x), expected)


def test_division_under_jit_is_a_division():
    """Under jax.jit, XLA sees where a divisor comes from: a Python float is a constant (108 of
    these 200 quotients by 7.0 were an ulp off, the linear schedule's step / 7 twice in 8 steps),
    ``x / sqrt(y)`` became ``x * rsqrt(y)`` and ``x / exp(y)`` ``x * exp(-y)`` (about 40% off)."""
    jnp = pytest.importorskip("jax.numpy")
    steps = np.arange(200, dtype="float32")
    rng = np.random.default_rng(14)
    x, y = rng.standard_normal(1000).astype("float32"), rng.uniform(0.1, 3.0, 1000).astype("float32")
    with al.use_backend("jax"):
        divide = jitted(lambda c: al.divide(c, 7.0))
        warmup = jitted(lambda c: al.schedules.linear(0.0, 1.0, 7)(c))
        got = [np.asarray(divide(jnp.asarray(s))) for s in steps]
        fractions = [np.asarray(warmup(jnp.asarray(i, jnp.int32))) for i in range(8)]
        by_root = jitted(lambda a, b: al.divide(a, al.sqrt(b)))(jnp.asarray(x), jnp.asarray(y))
        by_exp = jitted(lambda a, b: al.divide(a, al.exp(b)))(jnp.asarray(x), jnp.asarray(y))
        exp_y = np.asarray(al.exp(jnp.asarray(y)))  # JAX's exp, an ulp from NumPy's here and there
    bits_equal(np.stack(got), steps / np.float32(7.0))
    bits_equal(np.stack(fractions), np.minimum(steps[:8] / np.float32(7.0), np.float32(1.0)))
    bits_equal(by_root, x / np.sqrt(y))
    bits_equal(by_exp, x / exp_y)


def test_floor_divide_by_a_constant_under_jit(x64_on):
    """floor_divide's quotient (x - fmod(x, y)) / y, rounded to an integer: under jax.jit XLA
    multiplied by 1 / 0.001, which put large quotients one off (8323806 for NumPy's 8323807). With
    jax_enable_x64 the Python float is a weak float64, which must be cast before the barrier (cast
    after it, XLA folded it into a constant again: 7900 of 64,000 one off)."""
    jnp = pytest.importorskip("jax.numpy")
    values = (np.random.default_rng(15).standard_normal(100_000) * 1e4).astype("float32")
    with al.use_backend("jax"):
        got = jitted(lambda v: al.floor_divide(v, 0.001))(jnp.asarray(values))
        scaled = jitted(lambda v: al.floor_divide(al.multiply(v, 1e3), 0.001))(jnp.asarray(values / 1e3))
    bits_equal(got, np.floor_divide(values, np.float32(0.001)))
    bits_equal(scaled, np.floor_divide((values / 1e3).astype("float32") * np.float32(1e3), np.float32(0.001)))
