"""Weight initialisers drawing from ``arraylayer.models.random``: the same key gives the same weights on
every backend. The array is made on the key's backend and device. Half-precision dtypes (bfloat16,
float16, also as the default float dtype) are drawn and scaled in float32 and rounded once.

Fans: ``in_axis`` and ``out_axis`` name the input and output feature axes (default: the last two,
as in a dense ``(in, out)`` matrix or an HWIO convolution kernel); every other axis is receptive
field, multiplying both fans. For OIHW kernels pass ``in_axis=1, out_axis=0``.
"""

from __future__ import annotations

import math
from typing import Any

from arraylayer.models import random
from arraylayer import arguments
from arraylayer.api import creation
from arraylayer.api.elementwise import multiply
from arraylayer.errors import InvalidArgumentError
from arraylayer.api.interchange import dev
from arraylayer.models.random.samplers import _float_dtype, _rounded
from arraylayer.runtime.registry import backend_of, use_backend

__all__ = ["glorot_uniform", "he_normal", "normal", "zeros", "ones", "fans"]


def fans(shape: Any, in_axis: int = -2, out_axis: int = -1) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of ``shape``."""
    shape = arguments.shape(shape)
    if len(shape) < 2:
        raise InvalidArgumentError(f"fans need a weight of two or more axes; got shape {shape}.")
    in_axis, out_axis = arguments.axis(in_axis, len(shape), "in_axis"), arguments.axis(out_axis, len(shape), "out_axis")
    if in_axis == out_axis:
        raise InvalidArgumentError(f"in_axis and out_axis must differ; both are {in_axis}.")
    receptive = math.prod(n for i, n in enumerate(shape) if i not in (in_axis, out_axis))
    return shape[in_axis] * receptive, shape[out_axis] * receptive


def glorot_uniform(key: Any, shape: Any, dtype: Any = None, in_axis: int = -2, out_axis: int = -1) -> Any:
    """Uniform on [-limit, limit) with limit = sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio)."""
    fan_in, fan_out = fans(shape, in_axis, out_axis)
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return random.uniform(key, tuple(shape), dtype, -limit, limit)


def he_normal(key: Any, shape: Any, dtype: Any = None, in_axis: int = -2, out_axis: int = -1) -> Any:
    """Normal with standard deviation sqrt(2 / fan_in) (He et al., for ReLU networks)."""
    fan_in, _ = fans(shape, in_axis, out_axis)
    return normal(key, shape, dtype, math.sqrt(2.0 / fan_in))


def normal(key: Any, shape: Any, dtype: Any = None, stddev: float = 1.0) -> Any:
    """Normal with mean 0 and standard deviation ``stddev`` (embeddings)."""
    drawn, dtype = _float_dtype(dtype, "normal")
    draw = multiply(random.normal(key, arguments.shape(shape), drawn), arguments.real_float(stddev, "stddev"))
    return _rounded(draw, dtype)


def zeros(key: Any, shape: Any, dtype: Any = None) -> Any:
    """Zeros (biases) on the key's backend and device; the key is not used."""
    with use_backend(backend_of(key).name):
        return creation.zeros(arguments.shape(shape), dtype=dtype, device=dev(key))


def ones(key: Any, shape: Any, dtype: Any = None) -> Any:
    """Ones (normalisation scales) on the key's backend and device; the key is not used."""
    with use_backend(backend_of(key).name):
        return creation.ones(arguments.shape(shape), dtype=dtype, device=dev(key))
