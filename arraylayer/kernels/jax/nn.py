"""JAX kernels of arraylayer.nn: lax.conv_general_dilated and lax.reduce_window.

Inputs as in arraylayer/kernels/numpy/nn.py (one floating dtype, explicit padding pairs).
"""

from __future__ import annotations

from typing import Any

from jax import lax
from jax.scipy.special import erf  # noqa: F401 - the kernel as it is

_LAYOUTS = {True: ("NHWC", "HWIO", "NHWC"), False: ("NCHW", "OIHW", "NCHW")}


def conv2d(x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, channels_last: bool) -> Any:
    return lax.conv_general_dilated(x, kernel, window_strides=stride, padding=padding, rhs_dilation=dilation,
                                    dimension_numbers=_LAYOUTS[channels_last])


def _reduce(x: Any, init: Any, op: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    if channels_last:
        dims, strides, pads = (1, *window, 1), (1, *stride, 1), ((0, 0), *padding, (0, 0))
    else:
        dims, strides, pads = (1, 1, *window), (1, 1, *stride), ((0, 0), (0, 0), *padding)
    return lax.reduce_window(x, init, op, dims, strides, pads)  # a Python init: JAX's differentiable monoid path


def max_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    return _reduce(x, -float("inf"), lax.max, window, stride, padding, channels_last)


def sum_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    return _reduce(x, 0.0, lax.add, window, stride, padding, channels_last)
