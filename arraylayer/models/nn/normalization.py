"""Normalisation: layer_norm (the framework's fused kernel where it has one), moments and normalize."""

from __future__ import annotations

from typing import Any

from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.elementwise import abs as absolute
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import add, divide, maximum, multiply, sqrt, square, subtract
from arraylayer.api.elementwise import pow as pow_
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.runtime.registry import backend_of
from arraylayer.models.nn.common import _floating, _fused, _native, rounded_once


@rounded_once
def layer_norm(x: Any, scale: Any = None, offset: Any = None, axis: int | tuple[int, ...] = -1,
               eps: float = 1e-5) -> Any:
    """(x - mean) / sqrt(var + eps) over ``axis``, then ``* scale + offset`` when given."""
    dtype = _floating(x, "layer_norm")
    if not arguments.real_float(eps, "eps") >= 0:
        raise InvalidArgumentError(f"nn.layer_norm(eps={eps}): eps must be >= 0 (it keeps the division away from 0).")
    native, rewrap = _native(x)
    kernel = _fused(native, dtype, "layer_norm")
    trailing = None if kernel is None else _trailing(axis, native.ndim)
    if trailing is not None:
        shape = tuple(native.shape[native.ndim - trailing:])
        backend = backend_of(native)
        if _fits(scale, backend, dtype, shape) and _fits(offset, backend, dtype, shape):
            return rewrap(kernel(native, trailing, float(eps), _native(scale)[0], _native(offset)[0]))
        y = rewrap(kernel(native, trailing, float(eps), None, None))
        y = y if scale is None else multiply(y, scale)
        return y if offset is None else add(y, offset)
    mean = statistical.mean(x, axis=axis, keepdims=True)
    centred = subtract(x, mean)
    variance = statistical.mean(square(centred), axis=axis, keepdims=True)
    y = divide(centred, sqrt(add(variance, eps)))
    if scale is not None:
        y = multiply(y, scale)
    return y if offset is None else add(y, offset)


def _trailing(axis: Any, ndim: int) -> int | None:
    """k when ``axis`` names the last k axes (in any order), else None."""
    axes = arguments.axes(axis, ndim)
    axes = (axes,) if type(axes) is int else axes
    return len(axes) if axes and sorted(axes) == list(range(ndim - len(axes), ndim)) else None


def _fits(p: Any, backend: Any, dtype: Dtype, shape: tuple[int, ...]) -> bool:
    """Whether layer_norm's ``scale``/``offset`` p can go into the fused kernel: None, or an array of
    x's backend and dtype of exactly the normalised axes' shape (anything else is broadcast and
    promoted by arraylayer after the kernel)."""
    if p is None:
        return True
    native = _native(p)[0]
    return (hasattr(native, "dtype") and tuple(getattr(native, "shape", ())) == shape
            and backend_of(native) is backend and as_dtype(native.dtype) == dtype)




@rounded_once
def moments(x: Any, axes: int | tuple[int, ...], keepdims: bool = False) -> tuple[Any, Any]:
    """(mean, variance) of x over ``axes`` (the population variance, divided by the count)."""
    _floating(x, "moments")
    keep = arguments.flag(keepdims, "keepdims")
    mean = statistical.mean(x, axis=axes, keepdims=True)
    variance = statistical.mean(square(subtract(x, mean)), axis=axes, keepdims=keep)
    return (mean if keep else statistical.mean(x, axis=axes)), variance


@rounded_once
def normalize(x: Any, axis: int | tuple[int, ...] = -1, order: float = 2, epsilon: float = 1e-7) -> Any:
    """x / max(||x||_order, epsilon) along ``axis``: ``order`` 1, 2, any p >= 1 or inf (Keras' normalize)."""
    _floating(x, "normalize")
    p = arguments.real_float(order, "order")
    if not p >= 1:
        raise InvalidArgumentError(f"nn.normalize(order={order}): pass an order >= 1 (1, 2, ... or inf).")
    eps = arguments.real_float(epsilon, "epsilon")
    if eps < 0:
        raise InvalidArgumentError(f"nn.normalize(epsilon={epsilon}): epsilon must be >= 0.")
    magnitude = absolute(x)
    if p == float("inf"):
        norm = statistical.max(magnitude, axis=axis, keepdims=True)
    elif p == 2.0:
        norm = sqrt(statistical.sum(square(x), axis=axis, keepdims=True))
    elif p == 1.0:
        norm = statistical.sum(magnitude, axis=axis, keepdims=True)
    else:
        norm = pow_(statistical.sum(pow_(magnitude, p), axis=axis, keepdims=True), 1.0 / p)
    return divide(x, maximum(norm, eps))


@rounded_once
def rms_normalization(x: Any, scale: Any = None, axis: int | tuple[int, ...] = -1, epsilon: float | None = None) -> Any:
    """``x / sqrt(mean(x**2, axis) + epsilon) * scale`` (root-mean-square normalisation, Keras'
    definition: epsilon inside the root, default 1e-7); half precision is computed in float32
    and the result given back in x's dtype, as Keras does."""
    dtype = _floating(x, "rms_normalization")
    eps = 1e-7 if epsilon is None else arguments.real_float(epsilon, "epsilon")
    if not eps >= 0:
        raise InvalidArgumentError(f"nn.rms_normalization(epsilon={epsilon}): epsilon must be >= 0.")
    wide = astype(x, "float32") if dtype.itemsize < 4 else x
    y = divide(wide, sqrt(add(statistical.mean(square(wide), axis=axis, keepdims=True), eps)))
    if scale is not None:
        y = multiply(y, scale)
    return y if as_dtype(y.dtype) == dtype else astype(y, dtype)
