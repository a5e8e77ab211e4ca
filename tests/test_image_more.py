"""gaussian_blur, sobel_edges, ssim, extract_patches_3d, scale_and_translate, perspective_transform
and elastic_transform against their oracles on every backend: keras.ops.image on Keras' NumPy
backend, scipy.ndimage.sobel, jax.image.scale_and_translate and jax.scipy.ndimage.map_coordinates
(elastic_transform's sampling, from the same key's noise); the same dtype and values everywhere,
both data formats, arraylayer's errors on bad input, and the gradients against finite differences
on jax, torch and tensorflow."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pytest
from conftest import arr, to_np
from conftest import parametrize_ad_backend as pytest_generate_tests  # noqa: F401 - pytest's hook: ad_backend
from test_gradients_agree import assert_gradients, backend_gradient, finite_difference

import arraylayer as al

os.environ.setdefault("KERAS_BACKEND", "numpy")  # Keras reads it once, at its first import
image = al.image
RNG = np.random.default_rng(61)
IMAGES = RNG.uniform(0.0, 1.0, (2, 9, 11, 3)).astype(np.float32)
BIG = RNG.uniform(0.0, 1.0, (2, 13, 14, 3)).astype(np.float32)  # room for ssim's 11 x 11 window
NOISY = np.clip(BIG + RNG.normal(0, 0.1, BIG.shape), 0, 1).astype(np.float32)
VOLUMES = RNG.uniform(0.0, 1.0, (2, 5, 6, 7, 2)).astype(np.float32)
START = np.float32([[0, 0], [10, 0], [10, 8], [0, 8]])
END = np.float32([[[1.3, 0.7], [9.1, 1.2], [10.4, 7.3], [0.6, 8.8]], [[0.2, -0.5], [10.7, 0.3], [9.4, 7.9], [-0.3, 7.6]]])


def dtype(x: Any) -> str:
    return str(al.as_arraylayer_dtype(x.dtype))


@pytest.fixture(scope="module")
def keras_image():
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "numpy":
        pytest.skip("Keras was imported with another backend first")
    return lambda name, *args, **kw: np.asarray(getattr(keras.ops.image, name)(*args, **kw))


def _first(x: np.ndarray) -> np.ndarray:
    return np.moveaxis(x, -1, 1)


#: case -> (name, the arguments after the images, keyword arguments): called alike on both
KERAS_CASES = {
    "gaussian_blur": ("gaussian_blur", (), {}),
    "gaussian_blur uneven": ("gaussian_blur", ((5, 3), (2.0, 0.7)), {}),
    "gaussian_blur even": ("gaussian_blur", ((4, 6), (1.3, 0.9)), {}),
    "sobel_edges": ("sobel_edges", (), {}),
    "ssim": ("ssim", (NOISY,), {}),
    "ssim small window": ("ssim", (NOISY,), {"filter_size": 5, "max_val": 2.0, "filter_sigma": 0.8}),
    "perspective_transform": ("perspective_transform", (START[None].repeat(2, 0), END), {"fill_value": 0.3}),
    "perspective_transform one": ("perspective_transform", (START, END[1]), {}),
    "perspective_transform nearest": ("perspective_transform", (START[None].repeat(2, 0), END, "nearest"), {}),
}


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("case", sorted(KERAS_CASES))
def test_against_keras(backend, case, data_format, keras_image):
    name, args, options = KERAS_CASES[case]
    first = data_format == "channels_first"
    if first and name == "sobel_edges":
        pytest.skip("Keras' NumPy sobel_edges of channels-first images keeps the channels axis second")
    x = BIG if name == "ssim" else IMAGES
    x = _first(x) if first else x
    args = tuple(_first(a) if first and a is NOISY else a for a in args)
    expected = keras_image(name, x, *args, data_format=data_format, **options)
    native = tuple(arr(backend, a) if isinstance(a, np.ndarray) else a for a in args)
    got = getattr(image, name)(arr(backend, x), *native, data_format=data_format, **options)
    assert dtype(got) == "float32" and tuple(got.shape) == expected.shape
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=2e-6)


def test_sobel_edges_against_scipy(backend):
    ndimage = pytest.importorskip("scipy.ndimage")
    got = to_np(image.sobel_edges(arr(backend, IMAGES[0])))
    for channel in range(3):
        for axis in (0, 1):
            np.testing.assert_allclose(got[:, :, channel, axis], ndimage.sobel(IMAGES[0, :, :, channel], axis=axis),
                                       rtol=1e-5, atol=2e-6)


def test_ssim_against_its_definition(backend):
    got = image.ssim(arr(backend, BIG), arr(backend, NOISY), filter_size=11)
    np.testing.assert_allclose(to_np(got), _np_ssim(BIG.astype(np.float64), NOISY.astype(np.float64), 11), rtol=1e-5)


def test_ssim_of_an_image_with_itself_is_one(backend):
    got = image.ssim(arr(backend, BIG[0]), arr(backend, BIG[0]))
    assert tuple(got.shape) == ()
    np.testing.assert_allclose(to_np(got), 1.0, rtol=1e-5)


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("case", [((2,), {}), (((2, 3, 2),), {"strides": 1}), ((3,), {"strides": 2, "padding": "same"}),
                                  ((2,), {"strides": 1, "dilation_rate": 2})])
def test_extract_patches_3d_against_keras(backend, case, data_format, keras_image):
    args, options = case
    v = VOLUMES if data_format == "channels_last" else np.moveaxis(VOLUMES, -1, 1)
    expected = keras_image("extract_patches_3d", v, *args, data_format=data_format, **options)
    got = image.extract_patches_3d(arr(backend, v), *args, data_format=data_format, **options)
    np.testing.assert_array_equal(to_np(got), expected)


def test_extract_patches_3d_keeps_integer_volumes(backend):
    ints = np.arange(4 * 4 * 4).reshape(4, 4, 4, 1).astype(np.int32)
    got = image.extract_patches_3d(arr(backend, ints, "int32"), 4)
    assert dtype(got) == "int32"
    np.testing.assert_array_equal(to_np(got), ints.reshape(1, 1, 1, -1))


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "lanczos5"])
@pytest.mark.parametrize("antialias", [True, False])
def test_scale_and_translate_against_jax(backend, method, antialias):
    jax = pytest.importorskip("jax")
    cases = [((2, 5, 14, 3), [0.55, 1.3], [0.4, -1.2]), ((2, 17, 4, 3), [1.9, 0.37], [0.0, 0.8])]
    for shape, scale, shift in cases[antialias:antialias + 1] if method != "linear" else cases:
        expected = np.asarray(jax.image.scale_and_translate(IMAGES, shape, (1, 2), np.float32(scale),
                                                            np.float32(shift), method, antialias))
        got = image.scale_and_translate(arr(backend, IMAGES), shape, arr(backend, scale), arr(backend, shift), (1, 2),
                                        method, antialias)
        assert dtype(got) == "float32"
        np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=2e-6)


def test_scale_and_translate_of_python_numbers_against_keras(backend, keras_image):
    expected = keras_image("scale_and_translate", IMAGES, (2, 9, 6, 3), np.float32([0.5]), np.float32([0.25]), (2,),
                           "bicubic")
    got = image.scale_and_translate(arr(backend, IMAGES), (2, 9, 6, 3), [0.5], [0.25], (2,), "bicubic")
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=2e-6)


def _elastic_reference(images: np.ndarray, noise: np.ndarray, alpha: float, sigma: float, order: int, mode: str,
                       keras_image: Any) -> np.ndarray:
    """Keras' recipe from the given noise: the fields blurred by Keras' gaussian_blur, each channel
    sampled by jax.scipy.ndimage.map_coordinates."""
    jax = pytest.importorskip("jax")
    count, height, width, channels = images.shape
    size = int(6 * sigma) | 1
    fields = keras_image("gaussian_blur", noise * sigma, (size, size), (sigma, sigma)).reshape(2, count, height, width)
    y, x = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    out = np.empty_like(images)
    for b in range(count):
        points = np.stack([y + alpha * fields[0, b], x + alpha * fields[1, b]]).astype(np.float32)
        for c in range(channels):
            out[b, :, :, c] = np.asarray(jax.scipy.ndimage.map_coordinates(images[b, :, :, c], points, order, mode))
    return out


@pytest.mark.parametrize("interpolation, fill_mode", [("bilinear", "reflect"), ("nearest", "constant")])
def test_elastic_transform_against_keras_recipe(backend, interpolation, fill_mode, keras_image):
    key = al.random.key(7)
    noise = np.asarray(al.random.normal(key, (4, 9, 11, 1), "float32"))  # the fields the key gives, on numpy
    expected = _elastic_reference(IMAGES, noise, 3.0, 1.2, int(interpolation == "bilinear"), fill_mode, keras_image)
    got = image.elastic_transform(key, arr(backend, IMAGES), 3.0, 1.2, interpolation, fill_mode)
    assert dtype(got) == "float32"
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-4, atol=1e-5)
    first = image.elastic_transform(key, arr(backend, _first(IMAGES)), 3.0, 1.2, interpolation, fill_mode,
                                    data_format="channels_first")
    np.testing.assert_allclose(to_np(first), _first(expected), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("half", ["float16", "bfloat16"])
def test_half_precision_is_kept(backend, half):
    x = arr(backend, BIG[:1, :9, :10], half)
    for got in (image.gaussian_blur(x), image.sobel_edges(x), image.ssim(x, x, filter_size=5),
                image.scale_and_translate(x, (1, 5, 5, 3), [0.5, 0.5], [0.0, 0.0], (1, 2), "linear"),
                image.perspective_transform(x, arr(backend, START), arr(backend, END[0])),
                image.elastic_transform(al.random.key(1), x, 2.0, 1.0)):
        assert dtype(got) == half


BAD_CALLS = {
    "blur kernel_size": (al.InvalidArgumentError, lambda b: image.gaussian_blur(arr(b, IMAGES), (3, 0))),
    "blur sigma": (al.InvalidArgumentError, lambda b: image.gaussian_blur(arr(b, IMAGES), 3, -1.0)),
    "blur integers": (al.InvalidDtypeError, lambda b: image.gaussian_blur(arr(b, IMAGES, "int32"))),
    "sobel rank": (al.InvalidArgumentError, lambda b: image.sobel_edges(arr(b, IMAGES[0, 0]))),
    "ssim shapes": (al.InvalidArgumentError, lambda b: image.ssim(arr(b, IMAGES), arr(b, IMAGES[:1]))),
    "ssim window": (al.InvalidArgumentError, lambda b: image.ssim(arr(b, IMAGES), arr(b, IMAGES), filter_size=13)),
    "patches_3d rank": (al.InvalidArgumentError, lambda b: image.extract_patches_3d(arr(b, IMAGES[0]), 2)),
    "patches_3d too big": (al.InvalidArgumentError, lambda b: image.extract_patches_3d(arr(b, VOLUMES), 6)),
    "patches_3d padding": (al.InvalidArgumentError, lambda b: image.extract_patches_3d(arr(b, VOLUMES), 2, padding="x")),
    "scale method": (al.InvalidArgumentError, lambda b: image.scale_and_translate(
        arr(b, IMAGES), (2, 5, 5, 3), [1.0, 1.0], [0.0, 0.0], (1, 2), "nearest")),
    "scale count": (al.InvalidArgumentError, lambda b: image.scale_and_translate(
        arr(b, IMAGES), (2, 5, 5, 3), [1.0], [0.0, 0.0], (1, 2), "linear")),
    "scale other axis": (al.InvalidArgumentError, lambda b: image.scale_and_translate(
        arr(b, IMAGES), (1, 5, 5, 3), [1.0, 1.0], [0.0, 0.0], (1, 2), "linear")),
    "perspective points": (al.InvalidArgumentError, lambda b: image.perspective_transform(
        arr(b, IMAGES), arr(b, START[:3]), arr(b, END[0, :3]))),
    "perspective shapes": (al.InvalidArgumentError, lambda b: image.perspective_transform(
        arr(b, IMAGES), arr(b, START), arr(b, END))),
    "perspective interpolation": (al.InvalidArgumentError, lambda b: image.perspective_transform(
        arr(b, IMAGES), arr(b, START), arr(b, END[0]), "bicubic")),
    "elastic fill_mode": (al.InvalidArgumentError, lambda b: image.elastic_transform(
        al.random.key(0), arr(b, IMAGES), fill_mode="edge")),
    "elastic sigma": (al.InvalidArgumentError, lambda b: image.elastic_transform(al.random.key(0), arr(b, IMAGES),
                                                                                 sigma=0.0)),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_gets_arraylayers_errors(backend, case):
    error, call = BAD_CALLS[case]
    with pytest.raises(error):
        call(backend)


# -- gradients: float64, against finite differences of NumPy/SciPy/JAX references ------------------
_SMALL = RNG.uniform(0.05, 0.95, (1, 4, 5, 2))


def _np_blur(x: np.ndarray) -> np.ndarray:
    ndimage = pytest.importorskip("scipy.ndimage")
    return ndimage.gaussian_filter(x, (0, 0.8, 0.8, 0), mode="constant", truncate=1.0 / 0.8)  # a 3 x 3 window


def _np_sobel(x: np.ndarray) -> np.ndarray:
    ndimage = pytest.importorskip("scipy.ndimage")
    return np.stack([np.stack([np.stack([ndimage.sobel(one[:, :, c], axis=axis) for c in range(x.shape[3])], -1)
                               for one in x]) for axis in (0, 1)], axis=-1)


def _np_scale(x: np.ndarray) -> np.ndarray:
    jax = pytest.importorskip("jax")  # in float64 (x64_on): Keras' casts to float32, too coarse here
    return np.asarray(jax.image.scale_and_translate(x, (1, 6, 3, 2), (1, 2), np.array([1.4, 0.6]),
                                                    np.array([0.2, 0.1]), "cubic"))


def _np_patches_3d(x: np.ndarray) -> np.ndarray:
    return np.stack([x[0, i:i + 2, j:j + 2, k:k + 2].reshape(-1) for i in range(3) for j in range(4) for k in range(1)])


def _np_ssim(a: np.ndarray, b: np.ndarray, size: int = 3, sigma: float = 1.5) -> np.ndarray:
    """Wang et al.'s SSIM in float64 from its definition: a 2-d Gaussian window over every valid
    position (NumPy's sliding windows), averaged over positions and channels (Keras' casts to
    float32 on the way, too coarse for finite differences)."""
    g = np.exp(-0.5 * ((np.arange(size) - (size - 1) / 2) / sigma) ** 2)
    window = np.outer(g, g) / g.sum() ** 2

    def mean(x: np.ndarray) -> np.ndarray:
        views = np.lib.stride_tricks.sliding_window_view(x, (size, size), axis=(1, 2))
        return np.einsum("bhwcij,ij->bhwc", views, window)

    c1, c2 = 0.01 ** 2, 0.03 ** 2
    mu_a, mu_b = mean(a), mean(b)
    var_a, var_b, cov = mean(a * a) - mu_a ** 2, mean(b * b) - mu_b ** 2, mean(a * b) - mu_a * mu_b
    ssim_map = (2 * mu_a * mu_b + c1) * (2 * cov + c2) / ((mu_a ** 2 + mu_b ** 2 + c1) * (var_a + var_b + c2))
    return ssim_map.mean(axis=(1, 2, 3))


def _np_perspective(x: np.ndarray) -> np.ndarray:
    """The homography of the four point pairs (NumPy's solve of the textbook 8 x 8 system), then
    TensorFlow's projective sampling by jax.scipy.ndimage (test_image_ops' reference), in float64:
    Keras' own computes its grid in float32, too coarse for finite differences."""
    from test_image_ops import _affine_reference
    rows, targets = [], []
    for (sx, sy), (ex, ey) in zip(START / 2, _END_SMALL, strict=True):
        rows += [[ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey], [0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey]]
        targets += [sx, sy]
    transform = np.linalg.solve(np.array(rows, np.float64), np.array(targets, np.float64))
    return _affine_reference(x, transform[None], 1, "constant", 0.0)


_END_SMALL = np.array([[0.3, 0.2], [4.6, 0.1], [4.8, 4.3], [0.1, 3.7]])
GRADIENT_CASES = {
    "gaussian_blur": (lambda x: image.gaussian_blur(x, 3, 0.8), _np_blur, (_SMALL,)),
    "sobel_edges": (image.sobel_edges, _np_sobel, (_SMALL,)),
    "ssim": (lambda a, b: image.ssim(a, b, filter_size=3), _np_ssim, (_SMALL, _SMALL[:, ::-1].copy())),
    "extract_patches_3d": (lambda x: image.extract_patches_3d(x[..., None], 2, 1)[..., :8],
                           lambda x: _np_patches_3d(x[..., None]), (RNG.uniform(0, 1, (1, 4, 5, 2)),)),
    "scale_and_translate": (lambda x: image.scale_and_translate(x, (1, 6, 3, 2), [1.4, 0.6], [0.2, 0.1], (1, 2), "cubic"),
                            _np_scale, (_SMALL,)),
    "perspective_transform": (lambda x: image.perspective_transform(x, _like(x, START / 2), _like(x, _END_SMALL)),
                              _np_perspective, (_SMALL,)),
}


def _like(x: Any, values: np.ndarray) -> Any:
    with al.use_backend(al.backend_of(x).name):
        return al.asarray(values.tolist(), dtype=x.dtype)


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_against_finite_differences(ad_backend, name, x64_on):
    f, reference, args = GRADIENT_CASES[name]
    shape = np.shape(f(*(arr("numpy", a, "float64") for a in args)))
    cotangent = RNG.uniform(0.5, 1.5, shape)
    expected = finite_difference(lambda *a: np.reshape(reference(*a), shape), list(args), cotangent)
    assert_gradients(backend_gradient(ad_backend, f, list(args), cotangent), expected, name)


def test_elastic_transform_gradient_is_that_of_its_sampling(ad_backend, x64_on):
    """With the key fixed the displacement is a constant: the gradient is map_coordinates' at the
    displaced points (checked against finite differences of the reference)."""
    key = al.random.key(3)
    noise = np.asarray(al.random.normal(key, (2, 4, 5, 1), "float64"))
    keras_module = pytest.importorskip("keras")

    def reference(x: np.ndarray) -> np.ndarray:
        return _elastic_reference(x, noise, 1.5, 0.6, 1, "reflect",
                                  lambda name, *a, **kw: np.asarray(getattr(keras_module.ops.image, name)(*a, **kw)))

    cotangent = RNG.uniform(0.5, 1.5, _SMALL.shape)
    expected = finite_difference(reference, [_SMALL], cotangent)
    got = backend_gradient(ad_backend, lambda x: image.elastic_transform(key, x, 1.5, 0.6), [_SMALL], cotangent)
    assert_gradients(got, expected, "elastic_transform")
