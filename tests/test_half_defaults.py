"""bfloat16 and float16 as the default float dtype (or passed as ``dtype``) throughout
``arraylayer.models.random`` and ``arraylayer.models.initializers``: every sampler and initialiser returns the
half dtype, with the same bits on every backend. Oracle: the float32 draw (itself checked
against jax.random in tests/test_random.py), computed on NumPy, rounded to the half dtype by
ml_dtypes/NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import arraylayer as al

HALVES = ("bfloat16", "float16")
SHAPE = (4, 6)

# name -> f(key, dtype): dtype None means "the default float dtype"
SAMPLERS = {
    "uniform": lambda k, d: al.random.uniform(k, SHAPE, d),
    "uniform_range": lambda k, d: al.random.uniform(k, SHAPE, d, -3.0, 0.5),
    "normal": lambda k, d: al.random.normal(k, SHAPE, d),
    "truncated_normal": lambda k, d: al.random.truncated_normal(k, -1.5, 2.0, SHAPE, d),
    "glorot_uniform": lambda k, d: al.initializers.glorot_uniform(k, SHAPE, d),
    "he_normal": lambda k, d: al.initializers.he_normal(k, SHAPE, d),
    "normal_init": lambda k, d: al.initializers.normal(k, SHAPE, d, stddev=0.02),
    "zeros": lambda k, d: al.initializers.zeros(k, SHAPE, d),
    "ones": lambda k, d: al.initializers.ones(k, SHAPE, d),
}
# the float32 oracle of each, scaled in float64 here from the float32 unit draws
FAN_IN, FAN_OUT = SHAPE


def _oracle(name: str, half: str) -> np.ndarray:
    with al.use_backend("numpy"):
        k = al.random.key(3)
        u = np.asarray(al.random.uniform(k, SHAPE, "float32"), np.float64)
        z = np.asarray(al.random.normal(k, SHAPE, "float32"), np.float64)
        t = np.asarray(al.random.truncated_normal(k, -1.5, 2.0, SHAPE, "float32"), np.float64)
    limit = math.sqrt(6.0 / (FAN_IN + FAN_OUT))
    values = {
        "uniform": u, "uniform_range": u * 3.5 - 3.0, "normal": z, "truncated_normal": t,
        "glorot_uniform": u * 2 * limit - limit, "he_normal": z * math.sqrt(2.0 / FAN_IN),
        "normal_init": z * 0.02, "zeros": np.zeros(SHAPE), "ones": np.ones(SHAPE),
    }[name]
    native = al.get_backend("numpy").as_native_dtype(half)
    return values.astype(np.float32).astype(native).astype(np.float64)


@pytest.mark.parametrize("half", HALVES)
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_half_default_float_draws(backend, name, half):
    with al.use_backend(backend), al.use_default_float_dtype(half):
        result = SAMPLERS[name](al.random.key(3), None)
    assert str(al.Dtype(result.dtype)) == half
    got = np.asarray(al.to_backend(result, "numpy")).astype(np.float64)
    # scaling in float32 and rounding once may differ from the float64-scaled oracle by one half ulp
    np.testing.assert_allclose(got, _oracle(name, half), rtol=2.0 ** -7 if half == "bfloat16" else 2.0 ** -10)
    if name.startswith("uniform"):
        assert got.max() < (1.0 if name == "uniform" else 0.5)


@pytest.mark.parametrize("half", HALVES)
def test_half_draws_are_identical_across_backends(backend, half):
    with al.use_backend("numpy"):
        expected = {n: np.asarray(f(al.random.key(9), half)) for n, f in SAMPLERS.items()}
    with al.use_backend(backend):
        for name, f in SAMPLERS.items():
            got = np.asarray(al.to_backend(f(al.random.key(9), half), "numpy"))
            np.testing.assert_array_equal(got, expected[name], err_msg=name)


def test_uniform_in_half_precision_stays_below_maxval(backend):
    # 1 - 2**-24 and its neighbours round to 1.0 in bfloat16: clamped below maxval
    with al.use_backend(backend):
        draws = np.asarray(al.to_backend(al.random.uniform(al.random.key(0), (20000,), "bfloat16"), "numpy"))
    assert draws.astype(np.float64).max() < 1.0


def test_other_dtypes_still_raise():
    with pytest.raises(al.InvalidDtypeError, match="bfloat16 or float16"):
        al.random.normal(al.random.key(0), (2,), "int32")


def test_the_other_samplers_under_a_half_default(backend):
    """bernoulli, categorical, randint, bits and permutation do not depend on the default float dtype."""
    def draws(default):
        with al.use_backend(backend), al.use_default_float_dtype(default):
            k = al.random.key(5)
            logits = al.asarray([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]], dtype=default)
            p = al.asarray([0.2, 0.9], dtype=default)
            results = (al.random.bernoulli(k, 0.3, (7,)), al.random.bernoulli(k, p), al.random.categorical(k, logits),
                       al.random.randint(k, (5,), -3, 9), al.random.bits(k, (3,)), al.random.permutation(k, 6))
            return [np.asarray(al.to_backend(r, "numpy")) for r in results]

    for half in HALVES:
        for got, expected in zip(draws(half), draws("float32"), strict=True):
            np.testing.assert_array_equal(got, expected)
