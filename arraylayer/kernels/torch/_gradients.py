"""Gradients at kinks and ties, as arraylayer defines them (docs/autodiff.rst), for the torch
kernels whose autograd formula differs (``hypot`` is NaN at the origin, float ``floor_divide``
has no derivative at all, the ``remainder`` built from ``fmod`` loses it where the result is 0).

:func:`with_gradient` keeps the forward computation as it is and attaches the rule through a
``torch.autograd.Function`` (with ``setup_context``, so that ``torch.func`` transforms and
``torch.compile`` trace it), used only when an input requires a gradient: other calls run the
plain kernel and pay two attribute reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

Rule = Callable[..., tuple[Any, ...]]  # (upstream gradient, result, x1, x2) -> one gradient per input


def with_gradient(forward: Callable[[Any, Any], Any], rule: Rule) -> Callable[[Any, Any], Any]:
    """``forward(x1, x2)`` on two tensors, differentiated by ``rule`` (torch sums each gradient
    back to its input's shape)."""

    class Differentiable(torch.autograd.Function):
        @staticmethod
        def forward(x1: Any, x2: Any) -> Any:  # type: ignore[override]
            return forward(x1, x2)

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
            ctx.save_for_backward(*inputs, output)

        @staticmethod
        def backward(ctx: Any, g: Any) -> tuple[Any, ...]:  # type: ignore[override]
            x1, x2, result = ctx.saved_tensors
            return rule(g, result, x1, x2)

    Differentiable.__name__ = Differentiable.__qualname__ = f"{getattr(forward, '__name__', 'kernel')}_gradient"

    def kernel(x1: Any, x2: Any) -> Any:
        if (x1.requires_grad or x2.requires_grad) and torch.is_grad_enabled():
            return Differentiable.apply(x1, x2)
        return forward(x1, x2)

    kernel.__name__ = kernel.__qualname__ = getattr(forward, "__name__", "kernel")
    return kernel


def _safe_ratio(numerator: Any, denominator: Any, zero_where: Any) -> Any:
    """``numerator / denominator``, 0 where ``zero_where`` (no NaN reaches the gradient)."""
    return torch.where(zero_where, 0.0, numerator / torch.where(zero_where, 1.0, denominator))


def hypot_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x_i / result``; 0 at the origin (the smallest subgradient of the cone)."""
    origin = result == 0
    return g * _safe_ratio(x1, result, origin), g * _safe_ratio(x2, result, origin)


def floor_divide_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """A step function: 0 everywhere (its derivative wherever it has one)."""
    return torch.zeros_like(x1), torch.zeros_like(x2)


def remainder_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x1 - floor(x1 / x2) * x2``: 1 for x1, ``-floor(x1 / x2)`` for x2 (also where the
    remainder is 0, the side the result takes)."""
    return g, -g * torch.floor_divide(x1, x2)
