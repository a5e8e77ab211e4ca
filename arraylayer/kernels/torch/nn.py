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


_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
_MAX = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
_AVG = {2: F.avg_pool2d, 3: F.avg_pool3d}  # avg_pool1d has no divisor_override: 1-d runs as 2-d
#: dtypes torch's CPU avg_pool3d has no kernel for ("avg_pool3d_out_frame" not implemented for 'Half'):
#: summed in float32 and rounded once, as its avg_pool2d accumulates them and NumPy's kernel sums them
_CPU_POOL3D_WIDENED = (torch.float16, torch.bfloat16)


def _first(x: Any, channels_last: bool) -> Any:
    return x.permute(0, x.ndim - 1, *range(1, x.ndim - 1)) if channels_last else x


def _back(y: Any, channels_last: bool) -> Any:
    return y.permute(0, *range(2, y.ndim), 1) if channels_last else y


def _pad(x: Any, padding: Any, value: float = 0.0) -> Any:
    if not any(a or b for a, b in padding):
        return x
    return F.pad(x, tuple(n for pair in reversed(padding) for n in pair), value=value)  # last axis first


def conv(x: Any, kernel: Any, strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
         dilation: tuple[int, ...], channels_last: bool, groups: int = 1) -> Any:
    n = len(strides)
    weights = kernel.permute(n + 1, n, *range(n)) if channels_last else kernel  # -> (out, in/groups, *window)
    if all(a == b for a, b in padding):  # symmetric: torch pads inside its convolution
        y = _CONV[n](_first(x, channels_last), weights, stride=strides, padding=tuple(a for a, _ in padding),
                     dilation=dilation, groups=groups)
    else:
        y = _CONV[n](_pad(_first(x, channels_last), padding), weights, stride=strides, dilation=dilation,
                     groups=groups)
    return _back(y, channels_last)


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    return conv(x, kernel, strides, padding, dilation, channels_last)


def max_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    y = _MAX[len(window)](_pad(_first(x, channels_last), padding, float("-inf")), window, strides)
    return _back(y, channels_last)


def sum_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    y = _pad(_first(x, channels_last), padding)
    if len(window) == 1:
        y = F.avg_pool2d(y.unsqueeze(2), (1, *window), (1, *strides), divisor_override=1).squeeze(2)
    elif len(window) == 3 and y.dtype in _CPU_POOL3D_WIDENED and y.device.type == "cpu":
        y = F.avg_pool3d(y.float(), window, strides, divisor_override=1).to(y.dtype)
    else:
        y = _AVG[len(window)](y, window, strides, divisor_override=1)
    return _back(y, channels_last)


def einsum(subscripts: str, *operands: Any) -> Any:
    """torch's einsum; operands share one dtype (the api promotes, widening what bmm lacks)."""
    return torch.einsum(subscripts, *operands)


complex_from_parts = torch.complex
