"""Python scalars as tensors, for the torch functions that take tensors only.

``torch.full((), s, dtype=x.dtype, device=x.device)`` never asks torch for the scalar's own
dtype (``torch.result_type`` on a Python scalar breaks ``torch.compile`` graphs) and costs
about 1 us on CPU.
"""

from __future__ import annotations

from typing import Any

import torch

Tensor = torch.Tensor


def full(s: Any, x: Any) -> Any:
    """``s`` as a 0-d tensor of ``x``'s dtype and device. A float beyond the dtype's range (1e300
    next to float32) becomes an infinity, as NumPy's conversion gives (torch.full refuses it)."""
    try:
        return torch.full((), s, dtype=x.dtype, device=x.device)
    except RuntimeError:  # "value cannot be converted ... without overflow": the error path only
        if not (x.dtype.is_floating_point or x.dtype.is_complex):
            raise
        wide = torch.complex128 if x.dtype.is_complex else torch.float64
        return torch.full((), s, dtype=wide, device=x.device).to(x.dtype)


def like(s: Any, x: Any) -> Any:
    """``s`` as a 0-d tensor of ``x``'s dtype and device; ``s`` itself when it is a tensor."""
    if isinstance(s, Tensor):
        return s
    return full(s, x)


def both(x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x1``, ``x2`` as tensors: a Python scalar on either side takes the other's dtype."""
    if not isinstance(x1, Tensor):
        return full(x1, x2), x2
    if not isinstance(x2, Tensor):
        return x1, full(x2, x1)
    return x1, x2
