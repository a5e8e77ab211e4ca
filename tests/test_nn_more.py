"""depth_to_space, space_to_depth, unfold, fold, rms_normalization, psnr and polar against their
oracles on every backend: keras.ops on Keras' NumPy backend, tf.nn.depth_to_space/space_to_depth
(channels last), torch's pixel_shuffle/pixel_unshuffle (channels first), unfold, fold, rms_norm
and polar; the same dtype and values everywhere, arraylayer's errors on bad input, and the
gradients against finite differences of the oracles on jax, torch and tensorflow."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import arr
from conftest import parametrize_ad_backend as pytest_generate_tests  # noqa: F401 - pytest's hook: ad_backend
from test_gradients_agree import assert_gradients, backend_gradient, finite_difference

import arraylayer as al

os.environ.setdefault("KERAS_BACKEND", "numpy")  # Keras reads it once, at its first import
nn = al.nn
RNG = np.random.default_rng(52)
X = RNG.standard_normal((2, 4, 8, 16)).astype(np.float32)
IMAGES = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
#: (kernel_size, dilation, padding, stride) of unfold/fold, torch's arguments
WINDOWS = [((2, 3), (2, 1), (1, 0), (2, 1)), (3, 1, 1, 2), ((1, 2), 1, (0, 2), (3, 2))]


def to_np(x: Any) -> np.ndarray:
    return np.asarray(al.get_backend(al.backend_of(x).name).to_numpy(x))


def dtype(x: Any) -> str:
    return str(al.as_arraylayer_dtype(x.dtype))


@pytest.fixture(scope="module")
def keras_ops():
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "numpy":
        pytest.skip("Keras was imported with another backend first")
    return keras.ops


# -- depth_to_space / space_to_depth ---------------------------------------------------------------
@pytest.mark.parametrize("data_format", ["channels_last", "NCHW"])
@pytest.mark.parametrize("block", [2, 4])
def test_depth_and_space_against_keras(backend, keras_ops, data_format, block):
    keras_format = {"NHWC": "channels_last", "NCHW": "channels_first"}.get(data_format, data_format)
    x = X if keras_format == "channels_last" else X.transpose(0, 3, 1, 2)
    deep = nn.depth_to_space(arr(backend, x), block, data_format)
    np.testing.assert_array_equal(to_np(deep), keras_ops.nn.depth_to_space(x, block, keras_format))
    back = nn.space_to_depth(deep, block, data_format)
    np.testing.assert_array_equal(to_np(back), keras_ops.nn.space_to_depth(to_np(deep), block, keras_format))
    np.testing.assert_array_equal(to_np(back), x)
    assert dtype(deep) == dtype(back) == "float32"


def test_depth_and_space_against_tensorflow_and_torch(backend):
    tf = pytest.importorskip("tensorflow")
    ints = np.arange(2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(np.int32)
    x = arr(backend, ints, "int32")
    np.testing.assert_array_equal(to_np(nn.space_to_depth(x, 2)), tf.nn.space_to_depth(ints, 2).numpy())
    deep = np.arange(2 * 3 * 2 * 8).reshape(2, 3, 2, 8).astype(np.int32)
    got = nn.depth_to_space(arr(backend, deep, "int32"), 2)
    assert dtype(got) == "int32"
    np.testing.assert_array_equal(to_np(got), tf.nn.depth_to_space(deep, 2).numpy())
    first = ints.transpose(0, 3, 1, 2)
    np.testing.assert_array_equal(to_np(nn.space_to_depth(arr(backend, first, "int32"), 2, "channels_first")),
                                  F.pixel_unshuffle(torch.tensor(first), 2).numpy())
    np.testing.assert_array_equal(to_np(nn.depth_to_space(arr(backend, deep.transpose(0, 3, 1, 2), "int32"), 2,
                                                          "channels_first")),
                                  F.pixel_shuffle(torch.tensor(deep.transpose(0, 3, 1, 2)), 2).numpy())


# -- unfold / fold ---------------------------------------------------------------------------------
@pytest.mark.parametrize("window", range(len(WINDOWS)))
def test_unfold_and_fold_against_torch(backend, window):
    kernel, dilation, padding, stride = WINDOWS[window]
    options = {"dilation": dilation, "padding": padding, "stride": stride}
    expected = F.unfold(torch.tensor(IMAGES), kernel, **options).numpy()
    got = nn.unfold(arr(backend, IMAGES), kernel, **options)
    assert dtype(got) == "float32" and tuple(got.shape) == expected.shape
    np.testing.assert_array_equal(to_np(got), expected)
    folded = F.fold(torch.tensor(expected), (7, 6), kernel, **options).numpy()
    np.testing.assert_allclose(to_np(nn.fold(arr(backend, expected), (7, 6), kernel, **options)), folded,
                               rtol=1e-6, atol=1e-6)


def test_unfold_and_fold_of_one_image_and_against_keras(backend, keras_ops):
    one = IMAGES[0]
    expected = F.unfold(torch.tensor(one), (2, 3), stride=2).numpy()
    np.testing.assert_array_equal(to_np(nn.unfold(arr(backend, one), (2, 3), stride=2)), expected)
    np.testing.assert_allclose(to_np(nn.fold(arr(backend, expected), (7, 6), (2, 3), stride=2)),
                               F.fold(torch.tensor(expected), (7, 6), (2, 3), stride=2).numpy(), rtol=1e-6)
    columns = keras_ops.unfold(IMAGES, 3, padding=1)
    np.testing.assert_array_equal(to_np(nn.unfold(arr(backend, IMAGES), 3, padding=1)), columns)
    np.testing.assert_allclose(to_np(nn.fold(arr(backend, columns), (7, 6), 3, padding=1)),
                               keras_ops.fold(columns, (7, 6), 3, padding=1), rtol=1e-6, atol=1e-6)


def test_unfold_and_fold_keep_integers(backend):
    ints = np.arange(2 * 1 * 4 * 4).reshape(2, 1, 4, 4).astype(np.int32)
    columns = nn.unfold(arr(backend, ints, "int32"), 2, stride=1)
    assert dtype(columns) == "int32"
    folded = nn.fold(columns, 4, 2, stride=1)
    assert dtype(folded) == "int32"
    counts = F.fold(F.unfold(torch.ones(1, 1, 4, 4), 2), 4, 2).numpy().astype(np.int64)  # how often each pixel is read
    np.testing.assert_array_equal(to_np(folded), ints * counts)


# -- rms_normalization, psnr, polar ----------------------------------------------------------------
@pytest.mark.parametrize("axis", [-1, (1, 2), 0])
def test_rms_normalization_against_keras_and_torch(backend, keras_ops, axis):
    scale = RNG.uniform(0.5, 1.5, 16).astype(np.float32) if axis == -1 else None
    expected = keras_ops.rms_normalization(X, scale, axis, 1e-6)
    got = nn.rms_normalization(arr(backend, X), None if scale is None else arr(backend, scale), axis, 1e-6)
    assert dtype(got) == "float32"
    np.testing.assert_allclose(to_np(got), expected, rtol=2e-6, atol=2e-6)
    if axis == -1:
        torch_result = F.rms_norm(torch.tensor(X), (16,), torch.tensor(scale), 1e-6).numpy()
        np.testing.assert_allclose(to_np(got), torch_result, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_rms_normalization_computes_half_precision_in_float32(backend, keras_ops, half):
    got = nn.rms_normalization(arr(backend, X, half))
    assert dtype(got) == half
    narrow = to_np(arr("numpy", X, half)).astype(np.float32)
    expected = keras_ops.rms_normalization(narrow)  # float32 in, the same arithmetic
    np.testing.assert_allclose(to_np(got).astype(np.float32), expected, rtol=1e-2, atol=1e-2)


def test_psnr_against_keras(backend, keras_ops):
    noisy = (X + 0.1 * RNG.standard_normal(X.shape)).astype(np.float32)
    got = nn.psnr(arr(backend, X), arr(backend, noisy), 4.0)
    assert dtype(got) == "float32" and tuple(got.shape) == ()
    np.testing.assert_allclose(float(to_np(got)), float(keras_ops.psnr(X, noisy, 4.0)), rtol=1e-6)
    assert float(to_np(nn.psnr(arr(backend, X), arr(backend, X), 1.0))) == np.inf


@pytest.mark.parametrize("width", ["float32", "float64"])
def test_polar_against_torch(backend, width, x64_on):
    magnitude, angle = np.abs(X[0, 0]).astype(width), X[1, 0].astype(width)
    got = nn.polar(arr(backend, magnitude, width), arr(backend, angle, width))
    assert dtype(got) == {"float32": "complex64", "float64": "complex128"}[width]
    expected = torch.polar(torch.tensor(magnitude), torch.tensor(angle)).numpy()
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-6, atol=1e-6)


def test_polar_of_half_precision_is_complex64(backend, keras_ops):
    got = nn.polar(arr(backend, X[0, 0], "float16"), arr(backend, X[1, 0], "float16"))
    assert dtype(got) == "complex64"
    np.testing.assert_allclose(to_np(got), keras_ops.nn.polar(X[0, 0].astype(np.float16), X[1, 0].astype(np.float16)),
                               rtol=2e-3, atol=2e-3)


# -- ctc_decode (greedy) ---------------------------------------------------------------------------
_CTC = RNG.standard_normal((3, 7, 4)).astype(np.float32)
_CTC[0, 1:3] = _CTC[0, 0]  # a repeated best class
_CTC_LENGTHS = np.array([7, 4, 0], np.int32)


@pytest.mark.parametrize("merge_repeated", [True, False])
@pytest.mark.parametrize("mask_index", [0, None, 2])
def test_ctc_decode_greedy_against_keras(backend, keras_ops, merge_repeated, mask_index):
    labels, scores = keras_ops.nn.ctc_decode(_CTC, _CTC_LENGTHS, merge_repeated=merge_repeated, mask_index=mask_index)
    got_labels, got_scores = nn.ctc_decode(arr(backend, _CTC), arr(backend, _CTC_LENGTHS, "int32"),
                                           merge_repeated=merge_repeated, mask_index=mask_index)
    assert dtype(got_labels) == "int32" and dtype(got_scores) == "float32"
    np.testing.assert_array_equal(to_np(got_labels), labels)
    np.testing.assert_allclose(to_np(got_scores), scores, rtol=1e-6)


# -- errors ----------------------------------------------------------------------------------------
BAD_CALLS = {
    "depth_to_space channels": (al.InvalidArgumentError, lambda b: nn.depth_to_space(arr(b, X[..., :6]), 2)),
    "depth_to_space rank": (al.InvalidArgumentError, lambda b: nn.depth_to_space(arr(b, X[0]), 2)),
    "depth_to_space block": (al.InvalidArgumentError, lambda b: nn.depth_to_space(arr(b, X), 1)),
    "space_to_depth size": (al.InvalidArgumentError, lambda b: nn.space_to_depth(arr(b, X), 3)),
    "space_to_depth format": (al.InvalidArgumentError, lambda b: nn.space_to_depth(arr(b, X), 2, "NWHC")),
    "space_to_depth list": (al.InvalidArgumentTypeError, lambda b: nn.space_to_depth(X.tolist(), 2)),
    "unfold too big": (al.InvalidArgumentError, lambda b: nn.unfold(arr(b, IMAGES), 8)),
    "unfold stride": (al.InvalidArgumentError, lambda b: nn.unfold(arr(b, IMAGES), 2, stride=0)),
    "unfold rank": (al.InvalidArgumentError, lambda b: nn.unfold(arr(b, IMAGES[0, 0]), 2)),
    "fold blocks": (al.InvalidArgumentError, lambda b: nn.fold(arr(b, np.zeros((1, 4, 5))), (4, 4), 2)),
    "fold rows": (al.InvalidArgumentError, lambda b: nn.fold(arr(b, np.zeros((1, 5, 9))), (4, 4), 2)),
    "rms_normalization integers": (al.InvalidDtypeError, lambda b: nn.rms_normalization(arr(b, [1, 2], "int32"))),
    "rms_normalization epsilon": (al.InvalidArgumentError, lambda b: nn.rms_normalization(arr(b, X), epsilon=-1.0)),
    "psnr shapes": (al.InvalidArgumentError, lambda b: nn.psnr(arr(b, X), arr(b, X[0]), 1.0)),
    "psnr max_val": (al.InvalidArgumentError, lambda b: nn.psnr(arr(b, X), arr(b, X), 0.0)),
    "ctc_decode beam_search": (al.UnsupportedOperationError, lambda b: nn.ctc_decode(
        arr(b, _CTC), arr(b, _CTC_LENGTHS, "int32"), strategy="beam_search")),
    "ctc_decode lengths": (al.InvalidArgumentError, lambda b: nn.ctc_decode(arr(b, _CTC), arr(b, [1, 2], "int32"))),
    "ctc_decode mask_index": (al.InvalidArgumentError, lambda b: nn.ctc_decode(
        arr(b, _CTC), arr(b, _CTC_LENGTHS, "int32"), mask_index=4)),
    "polar integers": (al.InvalidDtypeError, lambda b: nn.polar(arr(b, [1, 2], "int32"), arr(b, [1.0, 2.0]))),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_gets_arraylayers_errors(backend, case):
    error, call = BAD_CALLS[case]
    with pytest.raises(error):
        call(backend)


# -- gradients: float64, against finite differences of the oracles ---------------------------------
def _torch(function: Any) -> Any:
    return lambda *args: function(*(torch.tensor(a) for a in args)).numpy()


_SMALL = RNG.uniform(-1, 1, (1, 2, 4, 4))
_SCALE = RNG.uniform(0.5, 1.5, 4)
GRADIENT_CASES = {
    "depth_to_space": (lambda x: nn.depth_to_space(x, 2, "channels_first"), _torch(lambda x: F.pixel_shuffle(x, 2)),
                       (RNG.uniform(-1, 1, (1, 4, 2, 3)),)),
    "space_to_depth": (lambda x: nn.space_to_depth(x, 2, "channels_first"), _torch(lambda x: F.pixel_unshuffle(x, 2)),
                       (_SMALL,)),
    "unfold": (lambda x: nn.unfold(x, 2, padding=1, stride=2), _torch(lambda x: F.unfold(x, 2, padding=1, stride=2)),
               (_SMALL,)),
    "fold": (lambda x: nn.fold(x, 4, 2, stride=1), _torch(lambda x: F.fold(x, 4, 2, stride=1)),
             (RNG.uniform(-1, 1, (1, 8, 9)),)),
    "rms_normalization": (lambda x, s: nn.rms_normalization(x, s, epsilon=1e-3),
                          _torch(lambda x, s: F.rms_norm(x, (4,), s, 1e-3)), (_SMALL, _SCALE)),
    "psnr": (lambda a, b: nn.psnr(a, b, 2.0), lambda a, b: 20 * np.log10(2.0) - 10 * np.log10(np.mean((a - b) ** 2)),
             (_SMALL, _SMALL[..., ::-1].copy())),
    "polar": (lambda r, t: al.real(nn.polar(r, t)) + 2 * al.imag(nn.polar(r, t)),
              lambda r, t: r * np.cos(t) + 2 * r * np.sin(t), (np.abs(_SCALE), _SCALE[::-1].copy())),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_against_finite_differences(ad_backend, name, x64_on):
    f, reference, args = GRADIENT_CASES[name]
    cotangent = RNG.uniform(0.5, 1.5, np.shape(reference(*args)))
    expected = finite_difference(reference, list(args), cotangent)
    assert_gradients(backend_gradient(ad_backend, f, list(args), cotangent), expected, name)
