"""PyTorch kernels of arraylayer.nn: torch.nn.functional.conv2d / max_pool2d / avg_pool2d.

Inputs as in arraylayer/kernels/numpy/nn.py. torch pads symmetrically only, so the explicit
(possibly asymmetric, TensorFlow-SAME) padding is applied first with F.pad.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

erf = torch.erf


def _nchw(x: Any, channels_last: bool, padding: Any, value: float) -> Any:
    x = x.permute(0, 3, 1, 2) if channels_last else x
    (top, bottom), (left, right) = padding
    return F.pad(x, (left, right, top, bottom), value=value) if top or bottom or left or right else x


def _back(y: Any, channels_last: bool) -> Any:
    return y.permute(0, 2, 3, 1) if channels_last else y


def conv2d(x: Any, kernel: Any, stride: Any, padding: Any, dilation: Any, channels_last: bool) -> Any:
    oihw = kernel.permute(3, 2, 0, 1) if channels_last else kernel
    return _back(F.conv2d(_nchw(x, channels_last, padding, 0.0), oihw, stride=stride, dilation=dilation),
                 channels_last)


def max_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    return _back(F.max_pool2d(_nchw(x, channels_last, padding, -torch.inf), window, stride), channels_last)


def sum_pool2d(x: Any, window: Any, stride: Any, padding: Any, channels_last: bool) -> Any:
    return _back(F.avg_pool2d(_nchw(x, channels_last, padding, 0.0), window, stride,
                              divisor_override=1), channels_last)
