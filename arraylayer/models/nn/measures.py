"""Keras' ``psnr`` (the peak signal-to-noise ratio of two signals, in decibels) and ``polar``
(complex numbers from magnitudes and angles, torch's ``polar``), composed of arraylayer's
element-wise functions and reductions, so promotion, dask laziness and gradients are the rest's."""

from __future__ import annotations

import math
from typing import Any

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import add, cos, log10, multiply, sin, square, subtract
from arraylayer.api.manipulation import reshape
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.nn.common import _floating, rounded_once


@rounded_once
def psnr(x1: Any, x2: Any, max_val: float) -> Any:
    """``20 log10(max_val) - 10 log10(mean((x1 - x2)**2))``: a scalar of the promoted floating
    dtype, the mean over every element (Keras' definition: one number for the whole batch);
    identical signals give ``inf``."""
    _floating(x1, "psnr")
    _floating(x2, "psnr")
    if tuple(x1.shape) != tuple(x2.shape):
        raise InvalidArgumentError(f"nn.psnr: x1 and x2 must have one shape; got {tuple(x1.shape)} and "
                                   f"{tuple(x2.shape)}.")
    peak = arguments.real_float(max_val, "max_val")
    if not peak > 0:
        raise InvalidArgumentError(f"nn.psnr(max_val={max_val}): give the signal's largest possible value, > 0.")
    # the arithmetic on a kept-dims mean, reshaped to () last: NumPy's ufuncs give a 0-d array's
    # result as a NumPy scalar, not an array
    error = statistical.mean(square(subtract(x1, x2)), keepdims=True)
    return reshape(subtract(20.0 * math.log10(peak), multiply(log10(error), 10.0)), ())


@rounded_once
def polar(abs_: Any, angle: Any) -> Any:
    """``abs_ * (cos(angle) + i sin(angle))``: complex64 from float32 (and half precision, and
    float8/6/4, computed in float32), complex128 from float64; the two broadcast against each other."""
    _floating(abs_, "polar")
    _floating(angle, "polar")
    real, imaginary = multiply(abs_, cos(angle)), multiply(abs_, sin(angle))
    if as_dtype(real.dtype).itemsize < 4:  # no complex32: half precision is widened first
        real, imaginary = astype(real, "float32"), astype(imaginary, "float32")
    return add(real, multiply(imaginary, 1j))
