"""The rest of keras.ops.nn's activations, composed of arraylayer's element-wise functions (so
their dtypes, weak scalars, errors and gradients are arraylayer's): relu6, leaky_relu, elu, selu,
celu, softsign, log_sigmoid, hard_sigmoid, hard_silu, hard_tanh, tanh_shrink, soft_shrink,
hard_shrink, threshold, sparse_plus, sparse_sigmoid, squareplus, glu and sparsemax.

Piecewise functions choose with ``where``; the branch not taken is never allowed to be inf or
NaN where its gradient would leak (elu's exp sees min(x, 0) only)."""

from __future__ import annotations

from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.creation import arange
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (
    abs as absolute,
    add,
    clip,
    divide,
    expm1,
    greater,
    greater_equal,
    less,
    logaddexp,
    maximum,
    minimum,
    multiply,
    negative,
    sqrt,
    square,
    subtract,
    tanh,
)
from arraylayer.api.manipulation import moveaxis
from arraylayer.api.searching import where
from arraylayer.api.sorting import sort
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.nn.activations import sigmoid
from arraylayer.models.nn.common import _creating_on, _device, _floating, _native, rounded_once

#: SELU's constants (Klambauer et al. 2017), as Keras, torch and JAX give them
SELU_ALPHA: Final = 1.6732632423543772
SELU_SCALE: Final = 1.0507009873554805


@rounded_once
def relu6(x: Any) -> Any:
    """min(max(x, 0), 6)."""
    _floating(x, "relu6")
    return clip(x, 0.0, 6.0)


@rounded_once
def leaky_relu(x: Any, negative_slope: float = 0.2) -> Any:
    """x for x >= 0, ``negative_slope * x`` below (Keras' default slope 0.2; torch's is 0.01)."""
    _floating(x, "leaky_relu")
    slope = arguments.real_float(negative_slope, "negative_slope")
    return where(greater_equal(x, 0.0), x, multiply(x, slope))


@rounded_once
def elu(x: Any, alpha: float = 1.0) -> Any:
    """x for x > 0, alpha (exp(x) - 1) below."""
    _floating(x, "elu")
    alpha = arguments.real_float(alpha, "alpha")
    return where(greater(x, 0.0), x, multiply(expm1(minimum(x, 0.0)), alpha))


@rounded_once
def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return multiply(elu(x, SELU_ALPHA), SELU_SCALE)


@rounded_once
def celu(x: Any, alpha: float = 1.0) -> Any:
    """max(x, 0) + min(0, alpha (exp(x / alpha) - 1)); alpha must not be 0."""
    _floating(x, "celu")
    alpha = arguments.real_float(alpha, "alpha")
    if alpha == 0.0:
        raise InvalidArgumentError("nn.celu(alpha=0): alpha divides x; pass a non-zero alpha, e.g. 1.0.")
    negative_part = multiply(expm1(divide(minimum(x, 0.0), alpha)), alpha)
    return add(maximum(x, 0.0), minimum(negative_part, 0.0))


@rounded_once
def softsign(x: Any) -> Any:
    """x / (|x| + 1)."""
    _floating(x, "softsign")
    return divide(x, add(absolute(x), 1.0))


@rounded_once
def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x), exact in both tails."""
    _floating(x, "log_sigmoid")
    return negative(logaddexp(negative(x), 0.0))


@rounded_once
def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between."""
    _floating(x, "hard_sigmoid")
    return divide(clip(add(x, 3.0), 0.0, 6.0), 6.0)


@rounded_once
def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x) (hard swish)."""
    return multiply(x, hard_sigmoid(x))


@rounded_once
def hard_tanh(x: Any) -> Any:
    """clip(x, -1, 1)."""
    _floating(x, "hard_tanh")
    return clip(x, -1.0, 1.0)


@rounded_once
def tanh_shrink(x: Any) -> Any:
    """x - tanh(x)."""
    _floating(x, "tanh_shrink")
    return subtract(x, tanh(x))


def _threshold_value(value: Any, function: str) -> float:
    t = arguments.real_float(value, "threshold")
    if t < 0:
        raise InvalidArgumentError(f"nn.{function}(threshold={value}): the threshold must be >= 0.")
    return t


@rounded_once
def soft_shrink(x: Any, threshold: float = 0.5) -> Any:
    """x - t above t, x + t below -t, 0 between."""
    _floating(x, "soft_shrink")
    t = _threshold_value(threshold, "soft_shrink")
    return where(greater(x, t), subtract(x, t), where(less(x, -t), add(x, t), multiply(x, 0.0)))


@rounded_once
def hard_shrink(x: Any, threshold: float = 0.5) -> Any:
    """x where |x| > t, 0 elsewhere."""
    _floating(x, "hard_shrink")
    t = _threshold_value(threshold, "hard_shrink")
    return where(greater(absolute(x), t), x, multiply(x, 0.0))


@rounded_once
def threshold(x: Any, threshold: float, default_value: float) -> Any:
    """x where x > threshold, ``default_value`` elsewhere (torch's and Keras' ``threshold``)."""
    _floating(x, "threshold")
    t = arguments.real_float(threshold, "threshold")
    return where(greater(x, t), x, arguments.real_float(default_value, "default_value"))


@rounded_once
def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, (x + 1)^2 / 4 between, x for x >= 1: a softplus with compact support."""
    _floating(x, "sparse_plus")
    middle = multiply(square(add(clip(x, -1.0, 1.0), 1.0)), 0.25)
    return where(greater_equal(x, 1.0), x, middle)


@rounded_once
def sparse_sigmoid(x: Any) -> Any:
    """0 for x <= -1, (x + 1) / 2 between, 1 for x >= 1."""
    _floating(x, "sparse_sigmoid")
    return multiply(add(clip(x, -1.0, 1.0), 1.0), 0.5)


@rounded_once
def squareplus(x: Any, b: float = 4.0) -> Any:
    """(x + sqrt(x^2 + b)) / 2 (Barron 2021), b >= 0."""
    _floating(x, "squareplus")
    b = arguments.real_float(b, "b")
    if b < 0:
        raise InvalidArgumentError(f"nn.squareplus(b={b}): b must be >= 0 (it is added under a square root).")
    return multiply(add(x, sqrt(add(square(x), b))), 0.5)


@rounded_once
def glu(x: Any, axis: int = -1) -> Any:
    """a * sigmoid(b), with a and b the two halves of x along ``axis`` (whose length must be even)."""
    _floating(x, "glu")
    axis = arguments.axis(axis, x.ndim)
    length = int(x.shape[axis])
    if length % 2:
        raise InvalidArgumentError(f"nn.glu: axis {axis} of x has odd length {length}; glu splits it in two halves.")
    first = tuple(slice(None) if i != axis else slice(0, length // 2) for i in range(x.ndim))
    second = tuple(slice(None) if i != axis else slice(length // 2, length) for i in range(x.ndim))
    native, rewrap = _native(x)
    return rewrap(multiply(native[first], sigmoid(native[second])))


@rounded_once
def sparsemax(x: Any, axis: int = -1) -> Any:
    """The Euclidean projection of x onto the probability simplex along ``axis`` (Martins and
    Astudillo 2016): max(x - tau, 0), with tau chosen so that the result sums to 1."""
    dtype = _floating(x, "sparsemax")
    axis = arguments.axis(axis, x.ndim)
    native, rewrap = _native(x)
    moved = moveaxis(native, axis, -1) if axis != native.ndim - 1 else native
    ordered = sort(moved, axis=-1, descending=True)
    with _creating_on(native):
        ks = arange(1, int(moved.shape[-1]) + 1, dtype=dtype, device=_device(native))
    running = statistical.cumulative_sum(ordered, axis=-1)
    support = greater(add(multiply(ordered, ks), 1.0), running)  # the k largest entries kept
    size = statistical.sum(astype(support, dtype), axis=-1, keepdims=True)
    kept = statistical.sum(where(support, ordered, 0.0), axis=-1, keepdims=True)
    out = maximum(subtract(moved, divide(subtract(kept, 1.0), size)), 0.0)
    return rewrap(moveaxis(out, -1, axis) if axis != native.ndim - 1 else out)
