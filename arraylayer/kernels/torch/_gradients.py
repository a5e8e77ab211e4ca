"""Gradients at kinks and ties, as arraylayer defines them (docs/autodiff.rst), for the torch
kernels whose autograd formula differs: ``hypot`` is NaN at the origin, float
``floor_divide`` has no derivative at all, and the ``remainder`` built from ``fmod`` loses its
derivative where the result is 0.

Each fix is a composition of torch operations whose own derivatives give the rule, with the
same forward values (no ``torch.autograd.Function``: inside ``torch.func`` transforms
``torch.compile`` does not keep its backward), and is used only when a gradient may be asked
for (:func:`may_differentiate`): other calls run the plain kernel.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.compiler import is_compiling


def may_differentiate(x1: Any, x2: Any) -> bool:
    """Whether a gradient through two tensors may be asked for: one requires it (and grad mode
    is on), or torch.compile is tracing (inside ``torch.func`` transforms dynamo does not see
    the inputs' ``requires_grad``)."""
    return ((x1.requires_grad or x2.requires_grad) and torch.is_grad_enabled()) or is_compiling()


def hypot(x1: Any, x2: Any) -> Any:
    """``torch.hypot`` with gradient ``x_i / hypot`` and 0 at the origin (the smallest
    subgradient of the cone; torch's is NaN): the origin is computed away from it."""
    origin = (x1 == 0) & (x2 == 0)
    away = torch.hypot(torch.where(origin, 1.0, x1), torch.where(origin, 1.0, x2))
    return torch.where(origin, 0.0, away)


def with_derivative_of(result: Any, carrier: Any) -> Any:
    """``result``'s values with ``carrier``'s derivative, where the two are equal up to the
    sign of a zero (``result - (carrier - carrier)`` keeps -0.0: ``-0.0 - 0.0`` is -0.0)."""
    return result.detach() - (carrier.detach() - carrier)
