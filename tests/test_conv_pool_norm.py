"""Convolution in 1 to 3 spatial dimensions (grouped, depthwise, separable, transposed), pooling in
1 to 3 dimensions and adaptive pooling, batch/group/instance norm, and their layers, against
torch.nn.functional (and jax.lax.conv_general_dilated) on every backend, both data formats."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import make_array

import arraylayer as al
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError

nn = al.nn
RNG = np.random.default_rng(40)
FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}
CONV = {1: nn.conv1d, 2: nn.conv2d, 3: nn.conv3d}
TOL = {"rtol": 2e-5, "atol": 2e-5}


def arr(backend: str, values: Any, dtype: str = "float32") -> Any:
    return make_array(backend, dtype, np.asarray(values).tolist())


def to_np(x: Any) -> np.ndarray:
    return np.asarray(al.get_backend(al.backend_of(x).name).to_numpy(x))


def t(a: np.ndarray) -> Any:
    return torch.tensor(np.asarray(a, np.float32))


def random(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def last(x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, 1, -1)


def kernel_last(w: np.ndarray) -> np.ndarray:
    """(out, in, *window) -> (*window, in, out)."""
    return np.moveaxis(np.moveaxis(w, 0, -1), 0, -2)


# -- convolution -------------------------------------------------------------------------------------
CONV_CASES = {
    "plain": {},
    "stride 2, padding 1": {"stride": 2, "padding": 1},
    "dilation 2, groups 2": {"dilation": 2, "groups": 2, "padding": 2},
}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv_against_torch(backend, n, case):
    options = CONV_CASES[case]
    x, w = random(2, 4, *[6] * n), random(6, 4 // options.get("groups", 1), *[3] * n)
    expected = getattr(F, f"conv{n}d")(t(x), t(w), **options).numpy()
    got = CONV[n](arr(backend, x), arr(backend, w), data_format=FIRST[n], **options)
    assert al.as_dtype(got.dtype) == al.float32
    np.testing.assert_allclose(to_np(got), expected, **TOL)
    got = CONV[n](arr(backend, last(x)), arr(backend, kernel_last(w)), data_format=LAST[n], **options)
    np.testing.assert_allclose(to_np(got), last(expected), **TOL)


def test_conv_same_padding_against_lax(backend):
    jax = pytest.importorskip("jax")
    x, w = random(2, 7, 3), random(3, 3, 4)  # NWC, WIO
    expected = np.asarray(jax.lax.conv_general_dilated(x, w, (2,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"),
                                                       precision=jax.lax.Precision.HIGHEST))
    np.testing.assert_allclose(to_np(nn.conv1d(arr(backend, x), arr(backend, w), stride=2, padding="SAME")), expected,
                               **TOL)


TRANSPOSE_CASES = {
    "stride 2, output_padding 1, groups 2": {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2},
    "stride 3, dilation 2, padding wider than the kernel": {"stride": 3, "padding": 3, "dilation": 2},
    "plain": {},
}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("case", sorted(TRANSPOSE_CASES))
def test_conv_transpose_against_torch(backend, n, case):
    options = TRANSPOSE_CASES[case]
    x, w = random(2, 4, *[4] * n), random(4, 3, *[3] * n)  # torch's (in, out/groups, *window)
    expected = getattr(F, f"conv_transpose{n}d")(t(x), t(w), **options).numpy()
    got = nn.conv_transpose(arr(backend, x), arr(backend, w), data_format=FIRST[n], **options)
    np.testing.assert_allclose(to_np(got), expected, **TOL)
    got = nn.conv_transpose(arr(backend, last(x)), arr(backend, kernel_last(w)), data_format=LAST[n], **options)
    np.testing.assert_allclose(to_np(got), last(expected), **TOL)


@pytest.mark.parametrize("n", [1, 2])
def test_depthwise_and_separable_against_torch(backend, n):
    x, depth, point = random(2, 3, *[5] * n), random(3, 2, *[3] * n), random(4, 6, *[1] * n)  # multiplier 2
    torch_depth = t(depth.reshape(6, 1, *[3] * n))  # output channel c * multiplier + m
    conv = getattr(F, f"conv{n}d")
    expected = conv(t(x), torch_depth, groups=3, padding=1).numpy()
    got = nn.depthwise_conv(arr(backend, x), arr(backend, depth.reshape(6, 1, *[3] * n)), padding=1,
                            data_format=FIRST[n])
    np.testing.assert_allclose(to_np(got), expected, **TOL)
    channels_last_depth = np.moveaxis(depth, (0, 1), (-2, -1))  # (*window, channels, multiplier)
    got = nn.depthwise_conv(arr(backend, last(x)), arr(backend, channels_last_depth), padding=1, data_format=LAST[n])
    np.testing.assert_allclose(to_np(got), last(expected), **TOL)
    expected = conv(conv(t(x), torch_depth, groups=3), t(point)).numpy()
    got = nn.separable_conv(arr(backend, last(x)), arr(backend, channels_last_depth), arr(backend, kernel_last(point)),
                            data_format=LAST[n])
    np.testing.assert_allclose(to_np(got), last(expected), **TOL)


# -- pooling -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pools_against_torch(backend, n, kind):
    x = random(2, 3, *[5] * n)
    pool = getattr(nn, f"{kind}_pool{n}d")
    expected = getattr(F, f"{kind}_pool{n}d")(t(x), 2, stride=1).numpy()
    np.testing.assert_allclose(to_np(pool(arr(backend, x), 2, stride=1, data_format=FIRST[n])), expected, **TOL)
    np.testing.assert_allclose(to_np(pool(arr(backend, last(x)), 2, 1)), last(expected), **TOL)
    padded = getattr(F, f"{kind}_pool{n}d")(t(x), 3, stride=2, padding=1,
                                            **({} if kind == "max" else {"count_include_pad": False})).numpy()
    got = pool(arr(backend, x), 3, 2, padding=1, data_format=FIRST[n])
    np.testing.assert_allclose(to_np(got), padded, **TOL)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pools_against_torch(backend, n, kind):
    x = random(2, 3, *[7, 5, 6][:n])
    sizes = (3, 2, 4)[:n]  # bins that overlap (7 -> 3) and that do not divide evenly
    expected = getattr(F, f"adaptive_{kind}_pool{n}d")(t(x), sizes).numpy()
    function = getattr(nn, f"adaptive_{kind}_pool")
    np.testing.assert_allclose(to_np(function(arr(backend, x), sizes, data_format=FIRST[n])), expected, **TOL)
    np.testing.assert_allclose(to_np(function(arr(backend, last(x)), sizes)), last(expected), **TOL)


# -- normalisation -----------------------------------------------------------------------------------
def test_batch_norm_against_torch(backend):
    x, mean, var, scale, offset = random(2, 4, 3, 3), random(4), RNG.uniform(0.5, 2, 4), random(4), random(4)
    expected = F.batch_norm(t(x), t(mean), t(var), t(scale), t(offset), eps=1e-3).numpy()
    got = nn.batch_norm(arr(backend, x), arr(backend, mean), arr(backend, var), arr(backend, scale),
                        arr(backend, offset), eps=1e-3, axis=1)
    np.testing.assert_allclose(to_np(got), expected, **TOL)
    got = nn.batch_norm(arr(backend, last(x)), arr(backend, mean), arr(backend, var), arr(backend, scale),
                        arr(backend, offset), eps=1e-3)
    np.testing.assert_allclose(to_np(got), last(expected), **TOL)


def test_group_and_instance_norm_against_torch(backend):
    x, scale, offset = random(2, 6, 3, 4), random(6), random(6)
    expected = F.group_norm(t(x), 3, t(scale), t(offset)).numpy()
    got = nn.group_norm(arr(backend, x), 3, arr(backend, scale), arr(backend, offset), axis=1)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-4, atol=1e-5)
    got = nn.group_norm(arr(backend, last(x)), 3, arr(backend, scale), arr(backend, offset))
    np.testing.assert_allclose(to_np(got), last(expected), rtol=1e-4, atol=1e-5)
    expected = F.instance_norm(t(x), weight=t(scale), bias=t(offset)).numpy()
    got = nn.instance_norm(arr(backend, x), arr(backend, scale), arr(backend, offset), axis=1)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-4, atol=1e-5)


# -- layers ------------------------------------------------------------------------------------------
def test_batch_norm_layer_running_statistics(backend):
    """Keras' momentum convention; torch's BatchNorm with momentum 1 - m gives the same mean."""
    x = random(4, 3, 3, 2)
    with al.use_backend(backend):
        key = al.random.key(0)
        params, state = al.layers.batch_norm.init(key, 2), al.layers.batch_norm.init_state(key, 2)
    y, state = al.layers.batch_norm.apply(params, state, arr(backend, x), training=True, momentum=0.9, eps=1e-3)
    reference = torch.nn.BatchNorm2d(2, eps=1e-3, momentum=0.1)
    expected = reference(t(x).permute(0, 3, 1, 2)).detach().permute(0, 2, 3, 1).numpy()
    np.testing.assert_allclose(to_np(y), expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(to_np(state["mean"]), reference.running_mean.numpy(), **TOL)
    np.testing.assert_allclose(to_np(state["var"]), 0.9 + 0.1 * x.reshape(-1, 2).var(0), **TOL)  # population variance
    y, kept = al.layers.batch_norm.apply(params, state, arr(backend, x), eps=1e-3)  # inference: running statistics
    assert kept is state
    expected = (x - to_np(state["mean"])) / np.sqrt(to_np(state["var"]) + 1e-3)
    np.testing.assert_allclose(to_np(y), expected, rtol=1e-4, atol=1e-5)


def test_layers_match_their_functions(backend):
    x = random(2, 5, 5, 4)
    L = al.layers
    with al.use_backend(backend):
        key = al.random.key(3)
        cases = {
            "conv1d": (L.conv1d, L.conv1d.init(key, 4, 6, 3, groups=2), x[:, 0], {},
                       lambda p, v: nn.conv1d(v, p["w"], padding="SAME", groups=2)),
            "conv3d": (L.conv3d, L.conv3d.init(key, 4, 3, 2, bias=False), x[:, None], {},
                       lambda p, v: nn.conv3d(v, p["w"], padding="SAME")),
            "conv_transpose": (L.conv_transpose, L.conv_transpose.init(key, 4, 2, bias=False), x, {"stride": 2},
                               lambda p, v: nn.conv_transpose(v, p["w"], 2)),
            "depthwise_conv": (L.depthwise_conv, L.depthwise_conv.init(key, 4, multiplier=2, bias=False), x, {},
                               lambda p, v: nn.depthwise_conv(v, p["w"], padding="SAME")),
            "separable_conv": (L.separable_conv, L.separable_conv.init(key, 4, 3, bias=False), x, {},
                               lambda p, v: nn.separable_conv(v, p["depthwise"], p["pointwise"], padding="SAME")),
            "group_norm": (L.group_norm, L.group_norm.init(key, 4), x, {"groups": 2},
                           lambda p, v: nn.group_norm(v, 2, p["scale"], p["offset"])),
            "max_pool": (L.max_pool, L.max_pool.init(key), x, {"window": 2}, lambda p, v: nn.max_pool2d(v, 2)),
            "avg_pool": (L.avg_pool, {}, x[:, 0], {"window": 2}, lambda p, v: nn.avg_pool1d(v, 2)),
            "adaptive_max_pool": (L.adaptive_max_pool, {}, x, {"output_size": 2},
                                  lambda p, v: nn.adaptive_max_pool(v, 2)),
        }
    for name, (layer, params, values, options, function) in cases.items():
        v = arr(backend, values)
        np.testing.assert_allclose(to_np(layer.apply(params, v, **options)), to_np(function(params, v)), **TOL,
                                   err_msg=name)
    assert tuple(cases["conv_transpose"][1]["w"].shape) == (3, 3, 2, 4)


# -- errors, dtypes, compilers -----------------------------------------------------------------------
def test_bad_arguments_raise_arraylayer_errors(backend):
    x, w = arr(backend, random(1, 6, 4)), arr(backend, random(3, 4, 2))
    for call in (lambda: nn.conv1d(x, w, stride=0), lambda: nn.conv1d(x, w, stride=1.5),
                 lambda: nn.conv1d(x, w, data_format="NHWC"), lambda: nn.conv1d(x, w, groups=3),
                 lambda: nn.conv1d(x, w, dilation=True), lambda: nn.conv3d(x, w),
                 lambda: nn.conv_transpose(x, arr(backend, random(3, 2, 4)), stride=2, output_padding=2),
                 lambda: nn.max_pool1d(x, 7), lambda: nn.adaptive_avg_pool(x, 7), lambda: nn.group_norm(x, 3),
                 lambda: nn.depthwise_conv(x, arr(backend, random(3, 4, 1)), data_format="NDHWC")):
        with pytest.raises(InvalidArgumentError):
            call()
    with pytest.raises(InvalidDtypeError):
        nn.conv1d(arr(backend, np.ones((1, 6, 4)), "int32"), arr(backend, np.ones((3, 4, 2)), "int32"))


def test_result_dtype_follows_promotion(backend):
    x, w = random(1, 6, 2), random(3, 2, 2)
    got = nn.conv1d(arr(backend, x, "float16"), arr(backend, w, "float16"))
    assert al.as_dtype(got.dtype) == al.float16
    got = nn.conv_transpose(arr(backend, x, "float16"), arr(backend, w, "float32"))
    assert al.as_dtype(got.dtype) == al.float32


def test_under_jax_jit_and_tf_function():
    jax = pytest.importorskip("jax")
    tf = pytest.importorskip("tensorflow")
    x, w = random(2, 6, 3), random(3, 2, 3)  # w: the transposed convolution's (window, out, in)

    def model(v, k):
        return nn.adaptive_avg_pool(nn.max_pool1d(nn.conv_transpose(v, k, stride=2), 2), 2)

    expected = to_np(model(x, w))
    np.testing.assert_allclose(np.asarray(jax.jit(model)(x, w)), expected, **TOL)
    np.testing.assert_allclose(tf.function(model)(tf.constant(x), tf.constant(w)).numpy(), expected, **TOL)
