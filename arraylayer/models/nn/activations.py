"""Activations: relu, sigmoid, silu, softplus, gelu."""

from __future__ import annotations

import math
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.elementwise import add, exp, logaddexp, maximum, multiply, negative, square, tanh
from arraylayer.runtime.registry import backend_of
from arraylayer.models.nn.common import _floating, _fused, _kernels, _native, rounded_once

_SQRT_2_OVER_PI: Final = math.sqrt(2.0 / math.pi)


@rounded_once
def relu(x: Any) -> Any:
    """max(x, 0), through the framework's own relu (fused by its compiler). Its gradient at 0 is 0,
    as every framework defines relu's (``arraylayer.maximum(x, 0.0)`` has 0.5 there: the convention
    of ``maximum`` at ties, docs/autodiff.rst)."""
    _floating(x, "relu")
    native, rewrap = _native(x)
    kernels = backend_of(native).nn_kernels
    return rewrap(maximum(native, 0.0) if kernels is None else kernels.relu(native))


@rounded_once
def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)) through the framework's own sigmoid (JAX's, torch's and TensorFlow's are
    stable and keep the lower tail's relative precision; NumPy's is written from exp(-|x|)): no
    overflow or NaN at any x, nor in its gradient, and sigmoid(-20) = 2e-9 rather than the 0 that
    (1 + tanh(x / 2)) / 2 rounds it to in float32. Composed as exp(-softplus(-x)) on other backends."""
    _floating(x, "sigmoid")
    native, rewrap = _native(x)
    kernels = backend_of(native).nn_kernels
    if kernels is None:
        return rewrap(exp(negative(logaddexp(negative(native), 0.0))))
    return rewrap(kernels.sigmoid(native))


@rounded_once
def silu(x: Any) -> Any:
    """x * sigmoid(x) (also called swish)."""
    return multiply(x, sigmoid(x))


@rounded_once
def softplus(x: Any) -> Any:
    """log(1 + exp(x)), as logaddexp(x, 0): exact for large |x|."""
    _floating(x, "softplus")
    return logaddexp(x, 0.0)


@rounded_once
def gelu(x: Any, approximate: bool = False) -> Any:
    """x * Phi(x): exact with erf, or with ``approximate=True`` the tanh form
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    dtype = _floating(x, "gelu")
    approximate = arguments.flag(approximate, "approximate")
    native, rewrap = _native(x)
    kernel = _fused(native, dtype, "gelu")
    if kernel is not None:
        return rewrap(kernel(native, approximate))
    if approximate:
        inner = multiply(add(x, multiply(multiply(square(x), x), 0.044715)), _SQRT_2_OVER_PI)
        return multiply(multiply(x, 0.5), add(tanh(inner), 1.0))
    erf = _kernels(native).erf(multiply(native, 1.0 / math.sqrt(2.0)))
    return rewrap(multiply(multiply(native, 0.5), add(erf, 1.0)))


