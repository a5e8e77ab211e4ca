"""Neural-network kernels of the PyTorch backend (see arraylayer/models/nn.py): torch.nn.functional's
convolution and pooling (channels first, as torch computes them; channels-last input is
permuted around them), with explicit padding through ``F.pad`` (torch's own is symmetric)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

erf = torch.special.erf
erfc = torch.special.erfc
erfinv = torch.special.erfinv
relu = torch.relu
sigmoid = torch.sigmoid


def concrete(x: Any) -> Any:
    """x's values as a NumPy array; None while torch.compile traces (reading them would break the
    graph) and inside torch.func transforms (whose wrapped tensors have no storage to read)."""
    if torch.compiler.is_compiling():
        return None
    try:
        return x.detach().cpu().numpy()
    except RuntimeError:
        return None


def softmax_cross_entropy(logits: Any, labels: Any) -> Any:
    """Per-row -log_softmax(logits)[label] for 2-d logits: torch's fused cross-entropy."""
    return F.cross_entropy(logits, labels.long(), reduction="none")


def _first(x: Any, channels_last: bool) -> Any:
    return x.permute(0, 3, 1, 2) if channels_last else x


def _back(y: Any, channels_last: bool) -> Any:
    return y.permute(0, 2, 3, 1) if channels_last else y


def _pad(x: Any, padding: Any, value: float = 0.0) -> Any:
    (top, bottom), (left, right) = padding
    if not (top or bottom or left or right):
        return x
    return F.pad(x, (left, right, top, bottom), value=value)


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    oihw = kernel.permute(3, 2, 0, 1) if channels_last else kernel
    (top, bottom), (left, right) = padding
    if top == bottom and left == right:  # symmetric: torch pads inside its convolution
        y = F.conv2d(_first(x, channels_last), oihw, stride=strides, padding=(top, left), dilation=dilation)
    else:
        y = F.conv2d(_pad(_first(x, channels_last), padding), oihw, stride=strides, dilation=dilation)
    return _back(y, channels_last)


def max_pool(x: Any, window: tuple[int, int], strides: tuple[int, int], padding: Any, channels_last: bool) -> Any:
    y = F.max_pool2d(_pad(_first(x, channels_last), padding, float("-inf")), window, strides)
    return _back(y, channels_last)


def sum_pool(x: Any, window: tuple[int, int], strides: tuple[int, int], padding: Any, channels_last: bool) -> Any:
    y = F.avg_pool2d(_pad(_first(x, channels_last), padding), window, strides, divisor_override=1)
    return _back(y, channels_last)
