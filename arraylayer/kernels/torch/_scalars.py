"""Python scalars as tensors, for the torch functions that take tensors only.

``torch.full((), s, dtype=x.dtype, device=x.device)`` never asks torch for the scalar's own
dtype (``torch.result_type`` on a Python scalar breaks ``torch.compile`` graphs) and costs
about 1 us on CPU.
"""

from __future__ import annotations

from typing import Any

import torch

Tensor = torch.Tensor


def like(s: Any, x: Any) -> Any:
    """``s`` as a 0-d tensor of ``x``'s dtype and device; ``s`` itself when it is a tensor."""
    if isinstance(s, Tensor):
        return s
    return torch.full((), s, dtype=x.dtype, device=x.device)


def both(x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x1``, ``x2`` as tensors: a Python scalar on either side takes the other's dtype."""
    if not isinstance(x1, Tensor):
        return torch.full((), x1, dtype=x2.dtype, device=x2.device), x2
    if not isinstance(x2, Tensor):
        return x1, torch.full((), x2, dtype=x1.dtype, device=x1.device)
    return x1, x2
