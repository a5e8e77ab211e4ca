"""The low-precision rule through the model toolkit (issue 40): float8/6/4 inputs to convolution,
pooling, activations, losses, normalisation, layers and optimizer steps compute in float32 and round
once to the input's format (arraylayer/models/lowp_rule.py), with the same bits on every backend that
stores the format, or refuse with the same arraylayer error everywhere; half precision too where a
framework had no kernel (torch's CPU avg_pool3d) or summed in its own dtype (XLA's reduce_window).

Oracles: torch.nn.functional / NumPy in float32 on the inputs' exact float32 values, rounded once with
ml_dtypes (a NaN as the format's positive NaN); for the sweep over every function
(tests/lowp_nn_cases.py), the function's float32 computation on NumPy rounded once. CI takes a sample
of formats; ``AL_LOWP_EXHAUSTIVE=1`` (``nox -s lowp``) every one.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import arraylayer as al
from arraylayer import lowp
from arraylayer.errors import InvalidDtypeError, TypePromotionError
from tests import lowp_nn_cases as cases
from tests.lowp_support import EXHAUSTIVE

BACKENDS = ("numpy", "jax", "torch", "tensorflow", "dask")
SAMPLE = ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn")
FORMATS = cases.LOW_FLOATS if EXHAUSTIVE else SAMPLE
SWEEP = cases.LOW_FLOATS if EXHAUSTIVE else ("float8_e4m3fn",)
RNG = np.random.default_rng(40)


def _holds(backend, name):
    return lowp.STATUS[backend][name] in ("computed", "stored")


def _skip_unless_held(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} does not store {name} (docs/low_precision.rst, the storage table)")


def values(name, *shape, low=-2.0, high=2.0):
    """Random values of the format (cast with ml_dtypes), as an ml_dtypes array."""
    x = RNG.uniform(low, high, shape).astype(np.float32)
    if name == "float8_e8m0fnu":
        x = np.abs(x) + np.float32(0.25)
    return x.astype(getattr(ml_dtypes, name))


def native(backend, host):
    if backend == "dask":
        import dask.array as da

        return da.from_array(host, chunks=(1, *host.shape[1:]))  # one image per block
    return cases.on_backend(backend, host)


def rounded(y32, name):
    """The oracle's float32 result rounded once to the format, as float64 values."""
    y32 = np.where(np.isnan(y32), np.float32(np.nan), np.asarray(y32, np.float32))
    return y32.astype(getattr(ml_dtypes, name)).astype(np.float64)


def assert_bits(got, want, name):
    assert al.as_dtype(got.dtype).name == name
    have = cases._values(got)
    assert have.shape == want.shape
    np.testing.assert_array_equal(have, want)  # NaN equals NaN
    assert (np.signbit(have) == np.signbit(want))[~np.isnan(want)].all()


def t(host):
    return torch.from_numpy(host.astype(np.float32))


def channels_last(x):
    return np.moveaxis(x, 1, -1)


def kernel_last(w):
    return np.moveaxis(np.moveaxis(w, 0, -1), 0, -2)  # (out, in, *window) -> (*window, in, out)


# -- convolution, against torch.nn.functional in float32 ---------------------------------------------

@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_conv_computes_in_float32_and_rounds_once(backend, name, n):
    _skip_unless_held(backend, name)
    x, w = values(name, 2, 3, *[5] * n), values(name, 4, 3, *[3] * n, low=-1, high=1)
    want = rounded(getattr(F, f"conv{n}d")(t(x), t(w), padding=1).numpy(), name)
    got = getattr(al.nn, f"conv{n}d")(native(backend, channels_last(x)), native(backend, kernel_last(w)), padding=1)
    assert_bits(got, channels_last(want), name)


@pytest.mark.parametrize("name", FORMATS)
def test_conv_transpose_and_separable(backend, name):
    _skip_unless_held(backend, name)
    x, w = values(name, 1, 2, 4, 4), values(name, 2, 3, 3, 3, low=-1, high=1)  # torch's (in, out, kh, kw)
    want = rounded(F.conv_transpose2d(t(x), t(w), stride=2).numpy(), name)
    got = al.nn.conv_transpose(native(backend, x), native(backend, w), stride=2, data_format="NCHW")
    assert_bits(got, want, name)
    depthwise, pointwise = values(name, 2, 1, 3, 3, low=-1, high=1), values(name, 3, 2, 1, 1, low=-1, high=1)
    middle = F.conv2d(t(x), t(depthwise), groups=2)  # float32 throughout: one rounding at the end
    want = rounded(F.conv2d(middle, t(pointwise)).numpy(), name)
    got = al.nn.separable_conv(native(backend, x), native(backend, depthwise), native(backend, pointwise),
                               data_format="NCHW")
    assert_bits(got, want, name)


# -- pooling -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_pooling_computes_in_float32_and_rounds_once(backend, name, n):
    _skip_unless_held(backend, name)
    x = values(name, 2, 2, *[4] * n)
    for pool, oracle in ((f"max_pool{n}d", getattr(F, f"max_pool{n}d")), (f"avg_pool{n}d", getattr(F, f"avg_pool{n}d"))):
        want = rounded(oracle(t(x), 2).numpy(), name)
        got = getattr(al.nn, pool)(native(backend, x), 2, data_format=cases_first(n))
        assert_bits(got, want, name)


def cases_first(n):
    return {1: "NCW", 2: "NCHW", 3: "NCDHW"}[n]


@pytest.mark.parametrize("name", FORMATS)
def test_avg_pool_same_padding_counts_the_inside(backend, name):
    _skip_unless_held(backend, name)
    x = values(name, 1, 5, 5, 2)
    x32 = np.pad(x.astype(np.float32), ((0, 0), (0, 1), (0, 1), (0, 0)))  # SAME: 5 -> 3 windows, one after
    inside = np.pad(np.ones((5, 5), np.float32), ((0, 1), (0, 1)))
    sums = x32.reshape(1, 3, 2, 3, 2, 2).sum(axis=(2, 4))
    want = rounded(sums / inside.reshape(3, 2, 3, 2).sum(axis=(1, 3))[None, :, :, None], name)
    assert_bits(al.nn.avg_pool2d(native(backend, x), 2, padding="SAME"), want, name)


# -- activations -------------------------------------------------------------------------------------

def _gelu(x, approximate):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf = np.vectorize(math.erf)(x.astype(np.float64) / math.sqrt(2.0))
    return x * 0.5 * (1 + erf)


ACTIVATIONS = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x.astype(np.float64))),
    "gelu": lambda x: _gelu(x, False),
    "silu": lambda x: x / (1 + np.exp(-x.astype(np.float64))),
}


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("function", sorted(ACTIVATIONS))
def test_activations_round_once(backend, name, function):
    _skip_unless_held(backend, name)
    # float64 oracle values rounded to float32 first: a float8 rounding boundary is far from any
    # float32 ulp for these inputs (none lies within 1e-6 relative of a midpoint of the format)
    x = values(name, 64, low=-4, high=4)
    y32 = ACTIVATIONS[function](x.astype(np.float32)).astype(np.float32)
    assert_bits(getattr(al.nn, function)(native(backend, x)), rounded(y32, name), name)


@pytest.mark.parametrize("name", FORMATS)
def test_gelu_tanh_form_rounds_once(backend, name):
    _skip_unless_held(backend, name)
    x = values(name, 64, low=-4, high=4)
    y32 = _gelu(x.astype(np.float64), True).astype(np.float32)
    assert_bits(al.nn.gelu(native(backend, x), approximate=True), rounded(y32, name), name)


# -- what does not compute ---------------------------------------------------------------------------

@pytest.mark.parametrize("backend_name", ["numpy", "jax", "torch", "tensorflow"])
def test_float8_beside_float32_is_a_promotion_error(backend_name):
    x = native(backend_name, values("float8_e4m3fn", 1, 4, 4, 2))
    w = native(backend_name, np.ones((3, 3, 2, 2), np.float32))
    with pytest.raises(TypePromotionError, match="float8_e4m3fn"):
        al.nn.conv2d(x, w)


@pytest.mark.parametrize("backend_name", ["numpy", "jax"])
def test_integer_formats_are_refused_as_int8_is(backend_name):
    x = native(backend_name, np.array([[1, -2, 3, 4]], np.int32).astype(ml_dtypes.int4))
    with pytest.raises(InvalidDtypeError, match="real floating"):
        al.nn.gelu(x)


# -- half precision where a framework had no kernel or summed in its own dtype -----------------------

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_avg_pool3d_half_precision_sums_in_float32(backend, dtype):
    host = RNG.uniform(-2, 2, (1, 4, 4, 4, 2)).astype(np.float32).astype(cases._ml(dtype))
    sums = host.astype(np.float32).reshape(1, 2, 2, 2, 2, 2, 2, 2).sum(axis=(2, 4, 6))
    want = (sums / np.float32(8)).astype(cases._ml(dtype)).astype(np.float64)  # sum once, divide once
    got = al.nn.avg_pool3d(native(backend, host), 2)
    assert al.as_dtype(got.dtype).name == dtype
    np.testing.assert_array_equal(cases._values(got), want)


# -- the rest: optimizers, scalars, transforms -------------------------------------------------------

def test_adafactor_eps_is_the_leaf_dtypes():
    """A zero gradient leaves float16 parameters as they are: eps1 defaults to finfo(float16).eps, whose
    square float16 holds (float32's 2**-23 squared is 0 there, and 0 / sqrt(0) is NaN)."""
    opt = al.optim.adafactor(0.1)
    params = {"v": np.array([1.0, -2.0, 0.5], np.float16), "m": np.ones((2, 3), np.float16)}
    grads = {k: np.zeros_like(v) for k, v in params.items()}
    new, _ = opt.update(grads, opt.init(params), params)
    for k in params:
        assert new[k].dtype == np.float16
        np.testing.assert_array_equal(new[k], params[k])


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("optimizer", ["adafactor", "lamb"])
def test_adafactor_and_lamb_step_float8_parameters(backend, name, optimizer):
    _skip_unless_held(backend, name)
    if backend == "dask":
        pytest.skip("the sweep's optimizer cases run on numpy, jax, torch and tensorflow")
    # float8_e8m0fnu has no zero for the state to start at: refused on every backend
    assert cases.outcome(f"optim.{optimizer}", backend, name) == ("U" if name == "float8_e8m0fnu" else "=")


def test_ml_dtypes_scalars_are_numpy_values():
    scalar = np.ones(3, ml_dtypes.float8_e4m3fn)[0]
    assert type(scalar).__module__ == "ml_dtypes"
    assert lowp.format_of(scalar) == "float8_e4m3fn"
    assert float(lowp.decode(scalar)) == 1.0
    counts, _ = al.histogram(np.asarray([0.5, 1.0, 1.5, 2.0], ml_dtypes.float8_e4m3fn), bins=2)
    assert np.asarray(counts).tolist() == [2, 2]


def test_torch_vmap_of_the_rule():
    x = values("float8_e4m3fn", 3, 4)
    got = al.vmap(lambda v: al.multiply(v, v))(cases.on_backend("torch", x))
    want = rounded(x.astype(np.float32) ** 2, "float8_e4m3fn")
    assert_bits(got, want, "float8_e4m3fn")


def test_scan_rounds_each_step_as_its_body_does():
    """Control flow does no arithmetic of its own: a scan's body of float8 adds rounds each step."""
    init, xs = values("float8_e4m3fn", 3), values("float8_e4m3fn", 5, 3)
    h = init
    for x in xs:
        h = (h.astype(np.float32) + x.astype(np.float32)).astype(ml_dtypes.float8_e4m3fn)
    for b in ("numpy", "jax", "torch", "tensorflow"):
        carry, _ = al.scan(lambda c, x: (al.add(c, x), c), cases.on_backend(b, init), cases.on_backend(b, xs))
        assert_bits(carry, h.astype(np.float64), "float8_e4m3fn")


# -- the sweep over every function issue 40 added ----------------------------------------------------

REFUSALS = {"U", "I"}


@pytest.mark.parametrize("name", SWEEP)
@pytest.mark.parametrize("case", sorted(cases.CASES))
def test_every_function_follows_the_rule_or_refuses_alike(case, name):
    outcomes = {b: cases.outcome(case, b, name) for b in cases.BACKENDS if cases.holds(b, name)}
    assert all(o == "=" for o in outcomes.values()) or (
        len(set(outcomes.values())) == 1 and next(iter(outcomes.values())) in REFUSALS), outcomes
