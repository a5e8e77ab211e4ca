"""arraylayer.image against its oracles: keras.ops.image on Keras' NumPy backend (colour, crop, pad,
patches, resize), jax.image.resize (half-pixel resizing without antialiasing) and
jax.scipy.ndimage.map_coordinates (sampling, and affine_transform's coordinates); on every backend
the same dtype and values, both data formats, arraylayer's errors on bad input, and the gradients
against finite differences on jax, torch and tensorflow."""

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
RNG = np.random.default_rng(40)
IMAGES = RNG.uniform(0.0, 1.0, (2, 5, 7, 3)).astype(np.float32)
IMAGES[0, 0, :4] = [[0.3, 0.3, 0.3], [0.5, 0.5, 0.2], [0.1, 0.5, 0.5], [0.0, 0.0, 0.0]]  # gray, ties, black
TRANSFORMS = np.array([[1.1, 0.23, -0.47, 0.13, 0.91, 0.71, 0, 0], [0.83, -0.29, 1.53, 0.21, 1.17, -0.97, 0, 0]],
                      np.float32)  # no sampling point on a half-pixel tie
FILL_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


@pytest.fixture(scope="module")
def keras_image():
    keras = pytest.importorskip("keras")
    return lambda name, *args, **kw: np.asarray(keras.ops.convert_to_numpy(getattr(keras.ops.image, name)(*args, **kw)))


#: name -> (arraylayer call, the same call's name and arguments for keras.ops.image)
KERAS_CASES = {
    "rgb_to_grayscale": ((), {}),
    "rgb_to_hsv": ((), {}),
    "crop_images": ((1, 2), {"target_height": 3, "target_width": 4}),
    "crop_images sides": ((), {"top_cropping": 1, "bottom_cropping": 2, "left_cropping": 0, "right_cropping": 3}),
    "pad_images": ((1, 2), {"target_height": 8, "target_width": 12}),
    "pad_images sides": ((), {"bottom_padding": 2, "top_padding": 0, "right_padding": 1, "left_padding": 3}),
    "extract_patches": ((2,), {}),
    "extract_patches strides 1": (((2, 3),), {"strides": 1}),
    "extract_patches same": ((3,), {"strides": 2, "padding": "same"}),
    "extract_patches dilated": ((2,), {"strides": 1, "dilation_rate": 2}),
    "resize nearest down": (((3, 4),), {"interpolation": "nearest"}),
    "resize nearest up": (((9, 11),), {"interpolation": "nearest"}),
    "resize bilinear down": (((3, 4),), {"interpolation": "bilinear", "antialias": False}),
    "resize bilinear up": (((9, 11),), {"interpolation": "bilinear", "antialias": False}),
    "resize crop_to_aspect_ratio": (((4, 4),), {"crop_to_aspect_ratio": True}),
}


@pytest.mark.parametrize("data_format", ["channels_last", "channels_first"])
@pytest.mark.parametrize("case", sorted(KERAS_CASES))
def test_against_keras(backend, case, data_format, keras_image):
    name = case.split()[0]
    args, options = KERAS_CASES[case]
    x = IMAGES if data_format == "channels_last" else IMAGES.transpose(0, 3, 1, 2)
    expected = keras_image(name, x, *args, data_format=data_format, **options)
    options = {k: v for k, v in options.items() if k != "antialias"}
    got = getattr(image, name)(arr(backend, x), *args, data_format=data_format, **options)
    assert al.as_arraylayer_dtype(got.dtype) == "float32"
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-6, atol=2e-7)


def test_hsv_to_rgb_against_keras_and_round_trip(backend, keras_image):
    hsv = keras_image("rgb_to_hsv", IMAGES)
    got = image.hsv_to_rgb(arr(backend, hsv))
    np.testing.assert_allclose(to_np(got), keras_image("hsv_to_rgb", hsv), rtol=1e-6, atol=2e-7)
    np.testing.assert_allclose(to_np(got), IMAGES, atol=1e-6)


def test_a_single_image_keeps_its_rank(backend, keras_image):
    got = image.resize(arr(backend, IMAGES[0]), (4, 9))
    np.testing.assert_allclose(to_np(got), keras_image("resize", IMAGES[0], (4, 9), antialias=False), atol=2e-7)


@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
@pytest.mark.parametrize("size", [(3, 4), (9, 11), (1, 1), (5, 13), (2, 7)])
def test_resize_against_jax_image_resize(backend, interpolation, size):
    jax = pytest.importorskip("jax")
    expected = np.asarray(jax.image.resize(IMAGES, (2, *size, 3), method=interpolation, antialias=False))
    got = image.resize(arr(backend, IMAGES), size, interpolation=interpolation)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-6, atol=2e-7)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_floating_dtypes_are_kept(backend, dtype, x64_on):
    x = arr(backend, IMAGES, dtype)
    for got in (image.resize(x, (3, 9)), image.rgb_to_hsv(x), image.affine_transform(x, arr(backend, TRANSFORMS, dtype)),
                image.map_coordinates(x[0, :, :, 0], arr(backend, RNG.uniform(-1, 6, (2, 3)), dtype), 1)):
        assert al.as_arraylayer_dtype(got.dtype) == dtype


def test_nearest_resize_crop_pad_and_patches_keep_integer_images(backend):
    ints = (IMAGES * 100).astype(np.int32)
    x = arr(backend, ints, "int32")
    pairs = [(image.resize(x, (9, 4), interpolation="nearest"), ints[:, [0, 0, 1, 1, 2, 3, 3, 4, 4]][:, :, [0, 2, 4, 6]]),
             (image.crop_images(x, 1, 1, 2, 2), ints[:, 1:3, 1:5]),
             (image.pad_images(x, 1, 0, 0, 2), np.pad(ints, ((0, 0), (1, 0), (0, 2), (0, 0)))),
             (image.extract_patches(x, (5, 7)), ints.reshape(2, 1, 1, -1))]
    for got, expected in pairs:
        assert al.as_arraylayer_dtype(got.dtype) == "int32"
        np.testing.assert_array_equal(to_np(got), expected)


@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates_against_jax(backend, order, fill_mode):
    jax = pytest.importorskip("jax")
    inputs = RNG.uniform(0, 1, (6, 5)).astype(np.float32)
    coordinates = np.random.default_rng(3).uniform(-3, 8, (2, 4, 3)).astype(np.float32)
    expected = np.asarray(jax.scipy.ndimage.map_coordinates(inputs, coordinates, order, fill_mode, 0.5))
    got = image.map_coordinates(arr(backend, inputs), arr(backend, coordinates), order, fill_mode, 0.5)
    assert al.as_arraylayer_dtype(got.dtype) == "float32" and got.shape == (4, 3)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=1e-6)


def test_map_coordinates_of_a_volume_against_scipy(backend):
    ndimage = pytest.importorskip("scipy.ndimage")
    volume = RNG.uniform(0, 1, (3, 4, 5))
    coordinates = np.random.default_rng(4).uniform(0, 2, (3, 7))
    expected = ndimage.map_coordinates(volume, coordinates, order=1, mode="nearest")
    got = image.map_coordinates(arr(backend, volume), arr(backend, coordinates), 1, "nearest")
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=1e-6)


def _affine_reference(images: np.ndarray, transforms: np.ndarray, order: int, mode: str, cval: float) -> np.ndarray:
    """Each output pixel (x, y) sampled at TensorFlow's projective map of it, by jax.scipy.ndimage."""
    jax = pytest.importorskip("jax")
    _, height, width, channels = images.shape
    y, x, c = np.meshgrid(np.arange(height), np.arange(width), np.arange(channels), indexing="ij")
    out = []
    for one, (a0, a1, a2, b0, b1, b2, c0, c1) in zip(images, transforms.astype(np.float64), strict=True):
        k = c0 * x + c1 * y + 1
        points = np.stack([(b0 * x + b1 * y + b2) / k, (a0 * x + a1 * y + a2) / k, c]).astype(images.dtype)
        out.append(np.asarray(jax.scipy.ndimage.map_coordinates(one, points, order, mode, cval)))
    return np.stack(out)


@pytest.mark.parametrize("fill_mode", FILL_MODES)
@pytest.mark.parametrize("interpolation", ["nearest", "bilinear"])
def test_affine_transform_against_jax_map_coordinates(backend, interpolation, fill_mode):
    expected = _affine_reference(IMAGES, TRANSFORMS, int(interpolation == "bilinear"), fill_mode, 0.25)
    got = image.affine_transform(arr(backend, IMAGES), arr(backend, TRANSFORMS), interpolation, fill_mode, 0.25)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=1e-6)


def test_affine_transform_projective_and_channels_first(backend):
    projective = TRANSFORMS.copy()
    projective[:, 6:] = [[0.02, -0.01], [0.0, 0.03]]
    expected = _affine_reference(IMAGES, projective, 1, "constant", 0.0)
    got = image.affine_transform(arr(backend, IMAGES.transpose(0, 3, 1, 2)), arr(backend, projective[0]),
                                 data_format="channels_first")
    np.testing.assert_allclose(to_np(got), _affine_reference(IMAGES, projective[[0, 0]], 1, "constant", 0.0)
                               .transpose(0, 3, 1, 2), rtol=1e-5, atol=1e-6)
    assert expected.shape == (2, 5, 7, 3)


BAD_CALLS = {
    "integer bilinear resize": (al.InvalidDtypeError, lambda b: image.resize(arr(b, IMAGES, "int32"), (2, 2))),
    "antialias": (al.UnsupportedOperationError, lambda b: image.resize(arr(b, IMAGES), (2, 2), antialias=True)),
    "bicubic": (al.InvalidArgumentError, lambda b: image.resize(arr(b, IMAGES), (2, 2), interpolation="bicubic")),
    "size": (al.InvalidArgumentError, lambda b: image.resize(arr(b, IMAGES), (0, 2))),
    "data_format": (al.InvalidArgumentError, lambda b: image.rgb_to_hsv(arr(b, IMAGES), data_format="NHWC")),
    "rank": (al.InvalidArgumentError, lambda b: image.rgb_to_grayscale(arr(b, IMAGES[0, 0]))),
    "channels": (al.InvalidArgumentError, lambda b: image.rgb_to_hsv(arr(b, IMAGES[..., :2]))),
    "not an array": (al.InvalidArgumentTypeError, lambda b: image.rgb_to_hsv(IMAGES.tolist())),
    "crop three sides": (al.InvalidArgumentError, lambda b: image.crop_images(arr(b, IMAGES), 1, 1, 1, 1, 2, 2)),
    "crop too much": (al.InvalidArgumentError, lambda b: image.crop_images(arr(b, IMAGES), 3, 0, 2, 0)),
    "pad smaller target": (al.InvalidArgumentError, lambda b: image.pad_images(arr(b, IMAGES), 0, 0, target_height=2,
                                                                               target_width=9)),
    "pad negative": (al.InvalidArgumentError, lambda b: image.pad_images(arr(b, IMAGES), -1, 0, 0, 0)),
    "patch too big": (al.InvalidArgumentError, lambda b: image.extract_patches(arr(b, IMAGES), 6)),
    "patch padding": (al.InvalidArgumentError, lambda b: image.extract_patches(arr(b, IMAGES), 2, padding="full")),
    "order 3": (al.InvalidArgumentError, lambda b: image.map_coordinates(arr(b, IMAGES[0, :, :, 0]),
                                                                         arr(b, np.zeros((2, 3))), 3)),
    "coordinates rank": (al.InvalidArgumentError, lambda b: image.map_coordinates(arr(b, IMAGES[0, :, :, 0]),
                                                                                  arr(b, np.zeros((3, 3))), 1)),
    "fill_mode": (al.InvalidArgumentError, lambda b: image.affine_transform(arr(b, IMAGES), arr(b, TRANSFORMS),
                                                                            fill_mode="edge")),
    "transform shape": (al.InvalidArgumentError, lambda b: image.affine_transform(arr(b, IMAGES),
                                                                                  arr(b, TRANSFORMS[:, :6]))),
    "transform count": (al.InvalidArgumentError, lambda b: image.affine_transform(arr(b, IMAGES),
                                                                                  arr(b, np.ones((3, 8))))),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_bad_input_gets_arraylayers_errors(backend, case):
    error, call = BAD_CALLS[case]
    with pytest.raises(error):
        call(backend)


# -- gradients: float64, against finite differences of NumPy references --------------------------------
_SMALL = RNG.uniform(0.05, 0.95, (1, 3, 4, 3))
_SMALL_TRANSFORM = np.array([0.9, 0.1, 0.3, -0.2, 1.1, 0.2, 0.0, 0.0])
_COORDS = np.random.default_rng(6).uniform(0.2, 2.6, (2, 5))  # inside, away from integer kinks


def _np_resize(x: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    jax = pytest.importorskip("jax")
    return np.asarray(jax.image.resize(x, (x.shape[0], *size, x.shape[3]), "bilinear", antialias=False))


def _np_hsv_to_rgb(x: np.ndarray) -> np.ndarray:
    import colorsys
    return np.apply_along_axis(lambda p: colorsys.hsv_to_rgb(*p), -1, x)


def _np_rgb_to_hsv(x: np.ndarray) -> np.ndarray:
    import colorsys
    return np.apply_along_axis(lambda p: colorsys.rgb_to_hsv(*p), -1, x)


def _np_linear_sample(x: np.ndarray, coords: np.ndarray) -> np.ndarray:
    ndimage = pytest.importorskip("scipy.ndimage")
    return ndimage.map_coordinates(x, coords, order=1, mode="nearest")


GRADIENT_CASES = {
    "resize": (lambda x: image.resize(x, (5, 3)), lambda x: _np_resize(x, (5, 3)), (_SMALL,)),
    "rgb_to_grayscale": (image.rgb_to_grayscale, lambda x: x @ np.array([[0.2989], [0.5870], [0.1140]]), (_SMALL,)),
    "rgb_to_hsv": (image.rgb_to_hsv, _np_rgb_to_hsv, (_SMALL,)),
    "hsv_to_rgb": (image.hsv_to_rgb, _np_hsv_to_rgb, (_SMALL,)),
    "crop_images": (lambda x: image.crop_images(x, 1, 1, 1, 0), lambda x: x[:, 1:2, 1:], (_SMALL,)),
    "pad_images": (lambda x: image.pad_images(x, 1, 0, 0, 2), lambda x: np.pad(x, ((0, 0), (1, 0), (0, 2), (0, 0))),
                   (_SMALL,)),
    "extract_patches": (lambda x: image.extract_patches(x, 2, 1),
                        lambda x: np.stack([x[:, i:i + 2, j:j + 2].reshape(-1) for i in range(2) for j in range(3)]),
                        (_SMALL,)),
    "map_coordinates": (lambda x, c: image.map_coordinates(x, c, 1, "nearest"), _np_linear_sample,
                        (_SMALL[0, :, :, 0], _COORDS)),
    "affine_transform": (lambda x: image.affine_transform(x, _transform_like(x)),
                         lambda x: _affine_reference(x, _SMALL_TRANSFORM[None], 1, "constant", 0.0), (_SMALL,)),
}


def _transform_like(x: Any) -> Any:
    with al.use_backend(al.backend_of(x).name):
        return al.asarray(_SMALL_TRANSFORM.tolist(), dtype=x.dtype)


def test_every_image_function_has_a_gradient_case():
    from test_image_more import GRADIENT_CASES as MORE_CASES
    own_test = {"elastic_transform"}  # test_image_more.test_elastic_transform_gradient_is_that_of_its_sampling
    assert set(GRADIENT_CASES) | set(MORE_CASES) | own_test == set(image.__all__)


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_against_finite_differences(ad_backend, name, x64_on):
    f, reference, args = GRADIENT_CASES[name]
    shape = np.shape(f(*(arr("numpy", a, "float64") for a in args)))
    cotangent = RNG.uniform(0.5, 1.5, shape)
    expected = finite_difference(lambda *a: np.reshape(reference(*a), shape), list(args), cotangent)
    assert_gradients(backend_gradient(ad_backend, f, list(args), cotangent), expected, name)
