"""Filters over images, as keras.ops.image defines them: ``gaussian_blur`` (zero padding, the
output of the input's size), ``sobel_edges`` (scipy.ndimage's Sobel operator: edges reflected,
both derivatives stacked last) and ``ssim`` (the structural similarity of two images over an
11 x 11 Gaussian window, valid positions only).

Every filter is separable and applied as weighted sums of shifted slices (Python weights, made
in float64 and rounded once to the images' dtype), so every backend (dask lazily) gives the same
values and gradients flow through the slices."""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.api import statistical
from arraylayer.api.elementwise import add, divide, multiply, subtract
from arraylayer.api.extensions import pad
from arraylayer.api.manipulation import stack
from arraylayer.arguments import real_float
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.image.common import channels_last, dtype_of


def _correlate(x: Any, weights: Any, axis: int) -> Any:
    """x correlated with ``weights`` (a 1-d NumPy array) along ``axis``, valid positions only."""
    length = x.shape[axis] - len(weights) + 1
    total = None
    for k, w in enumerate(weights.tolist()):
        if w == 0.0:
            continue
        index = [slice(None)] * len(x.shape)
        index[axis] = slice(k, k + length)
        term = multiply(x[tuple(index)], w)
        total = term if total is None else add(total, term)
    return total


def _gaussian(size: int, sigma: float) -> np.ndarray:
    x = np.arange(size, dtype=np.float64) - (size - 1) / 2
    kernel = np.exp(-0.5 * (x / sigma) ** 2)
    return kernel / kernel.sum()


def _pair(value: Any, parameter: str, function: str, kind: type) -> tuple[Any, Any]:
    pair = (value, value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    try:
        pair = tuple(pair)
    except TypeError:
        pair = ()
    if len(pair) != 2 or not all(isinstance(v, (int, float) if kind is float else int) and not isinstance(v, bool)
                                 and v > 0 for v in pair):
        what = "numbers" if kind is float else "ints"
        raise InvalidArgumentError(f"image.{function}({parameter}={value!r}): give a positive {what[:-1]} or a pair "
                                   f"of positive {what}.")
    return tuple(kind(v) for v in pair)  # type: ignore[return-value]


def gaussian_blur(images: Any, kernel_size: int | tuple[int, int] = (3, 3), sigma: float | tuple[float, float] = (1.0, 1.0),
                  data_format: str | None = None) -> Any:
    """images blurred by a normalised Gaussian kernel, zero beyond the edges, of the images' shape
    and dtype. Keras' order: ``kernel_size[0]`` and ``sigma[0]`` run along the width (x),
    ``[1]`` along the height (y)."""
    batch, restore = channels_last(images, data_format, "gaussian_blur")
    (size_x, size_y), (sigma_x, sigma_y) = (_pair(kernel_size, "kernel_size", "gaussian_blur", int),
                                            _pair(sigma, "sigma", "gaussian_blur", float))
    padded = pad(batch, ((0, 0), ((size_y - 1) // 2, size_y // 2), ((size_x - 1) // 2, size_x // 2), (0, 0)))
    blurred = _correlate(_correlate(padded, _gaussian(size_y, sigma_y), 1), _gaussian(size_x, sigma_x), 2)
    return restore(blurred)


def sobel_edges(images: Any, data_format: str | None = None) -> Any:
    """The Sobel derivatives of each channel, scipy.ndimage's ``sobel`` (edges reflected): shape
    ``images.shape + (2,)``, ``[..., 0]`` along the height (y), ``[..., 1]`` along the width (x)."""
    dtype_of(images, "sobel_edges")
    batch, restore = channels_last(images, data_format, "sobel_edges")
    padded = pad(batch, ((0, 0), (1, 1), (1, 1), (0, 0)), mode="symmetric")
    derivative, smoothing = np.array([-1.0, 0.0, 1.0]), np.array([1.0, 2.0, 1.0])
    along_y = _correlate(_correlate(padded, derivative, 1), smoothing, 2)
    along_x = _correlate(_correlate(padded, smoothing, 1), derivative, 2)
    return stack([restore(along_y), restore(along_x)], axis=-1)


def ssim(image1: Any, image2: Any, max_val: float = 1.0, filter_size: int = 11, filter_sigma: float = 1.5,
         k1: float = 0.01, k2: float = 0.03, data_format: str | None = None) -> Any:
    """The structural similarity of image1 and image2 (Wang et al.): local means, variances and
    the covariance under a ``filter_size`` Gaussian window at every position where it fits, the
    SSIM map averaged over positions and channels. One value per image (a scalar for one image)."""
    first, _ = channels_last(image1, data_format, "ssim")
    second, _ = channels_last(image2, data_format, "ssim")
    if tuple(image1.shape) != tuple(image2.shape):
        raise InvalidArgumentError(f"image.ssim: image1 and image2 must have one shape; got {tuple(image1.shape)} and "
                                   f"{tuple(image2.shape)}.")
    if not isinstance(filter_size, int) or isinstance(filter_size, bool) or filter_size < 1:
        raise InvalidArgumentError(f"image.ssim(filter_size={filter_size!r}): give an int >= 1.")
    if filter_size > min(first.shape[1], first.shape[2]):
        raise InvalidArgumentError(f"image.ssim: a {filter_size} x {filter_size} window does not fit in "
                                   f"{first.shape[1]} x {first.shape[2]} images; pass a smaller filter_size.")
    sigma = real_float(filter_sigma, "filter_sigma")
    if not sigma > 0:
        raise InvalidArgumentError(f"image.ssim(filter_sigma={filter_sigma}): give a positive number.")
    weights = _gaussian(filter_size, sigma)

    def local_mean(x: Any) -> Any:
        return _correlate(_correlate(x, weights, 1), weights, 2)

    c1 = (real_float(k1, "k1") * real_float(max_val, "max_val")) ** 2
    c2 = (real_float(k2, "k2") * float(max_val)) ** 2
    mu1, mu2 = local_mean(first), local_mean(second)
    mu11, mu22, mu12 = multiply(mu1, mu1), multiply(mu2, mu2), multiply(mu1, mu2)
    var1 = subtract(local_mean(multiply(first, first)), mu11)
    var2 = subtract(local_mean(multiply(second, second)), mu22)
    covariance = subtract(local_mean(multiply(first, second)), mu12)
    numerator = multiply(add(multiply(mu12, 2.0), c1), add(multiply(covariance, 2.0), c2))
    denominator = multiply(add(add(mu11, mu22), c1), add(add(var1, var2), c2))
    per_image = statistical.mean(divide(numerator, denominator), axis=(1, 2, 3))
    return per_image if len(image1.shape) == 4 else per_image[0]
