"""What every nn function shares: the dtype check, native arrays in and out, the backend's nn
and fused kernels, arrays made beside an input, reductions of losses, range checks of indices,
and the low-precision rule (:func:`rounded_once`)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, Final

from arraylayer.models import fused
from arraylayer import arguments
from arraylayer.api import statistical
from arraylayer.api.dispatch import WRAPPERS
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import (
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDtypeError,
    UnsupportedOperationError,
)
from arraylayer.api.interchange import dev
from arraylayer.runtime.registry import backend_of, current_backend, use_backend
from arraylayer.models.lowp_rule import rounded_once

__all__ = ["rounded_once"]  # the one rule of every nn function for float8/6/4 (models/lowp_rule.py)

_REDUCTIONS: Final = ("mean", "sum", "none")
#: the dtypes the frameworks' fused cross-entropies compute in their own dtype (half precision is
#: composed, with arraylayer's promotion, on every backend alike)
_FUSED_DTYPES: Final = (Dtype("float32"), Dtype("float64"))


def _floating(x: Any, function: str) -> Dtype:
    """x's dtype, which must be real floating (and x an array: a list has no dtype to check)."""
    if not hasattr(x, "dtype"):
        raise InvalidArgumentTypeError(f"nn.{function}: x is {type(x).__name__}, not an array; pass an array, e.g. "
                                       f"arraylayer.asarray(x, dtype='float32').")
    dtype = as_dtype(x.dtype)
    if dtype.category != "float":
        raise InvalidDtypeError(f"nn.{function} takes real floating arrays; got {dtype}. Cast first, e.g. "
                                f"arraylayer.astype(x, 'float32').")
    return dtype


def _array(value: Any, function: str, name: str) -> Any:
    """``value``, which must be an array (a list or a number has no shape or dtype to check)."""
    if not (hasattr(value, "dtype") and hasattr(value, "shape")):
        raise InvalidArgumentTypeError(f"nn.{function}: {name} is {type(value).__name__}, not an array; pass an "
                                       f"array, e.g. arraylayer.asarray({name}).")
    return value


def _native(x: Any) -> tuple[Any, Any]:
    """(native array, rewrap): an arraylayer.Array is unwrapped, and its result wrapped back."""
    pair = WRAPPERS.get(type(x))
    if pair is None:
        return x, lambda y: y
    return pair[0](x), pair[1]


def _kernels(x: Any) -> Any:
    """The backend's nn kernel module (``arraylayer/kernels/<backend>/nn.py``)."""
    backend = backend_of(x)
    if backend.nn_kernels is None:
        raise UnsupportedOperationError(
            f"arraylayer.models.nn has no convolution, pooling or erf for the {backend.name} backend; move the arrays "
            f"to numpy, jax, torch or tensorflow first (arraylayer.to_backend(x, 'numpy'))."
        )
    return backend.nn_kernels


def _fused(native: Any, dtype: Dtype, name: str) -> Any:
    """The backend's fused kernel ``name`` (arraylayer/models/fused.py) for a float32/float64 native
    array, or None: half precision and backends without one keep the composed form."""
    if dtype not in _FUSED_DTYPES or 0 in tuple(native.shape):
        return None
    return fused.table(backend_of(native).name).get(name)


def _fused_along(x: Any, dtype: Dtype, name: str, axis: Any) -> Any:
    """softmax/log_softmax of x along one int ``axis`` by the fused kernel; None where there is none."""
    native, rewrap = _native(x)
    kernel = _fused(native, dtype, name)
    if kernel is None or type(axis) is not int:  # tuples of axes (and bools) keep the composed form
        return None
    return rewrap(kernel(native, arguments.axis(axis, native.ndim)))


def _creating_on(x: Any) -> Any:
    """A scope in which arraylayer creates arrays on x's backend: none when that backend is the
    active one already (no scope to enter and leave, which under torch.compile is a trace-time
    call; see ``context.Setting.scope``)."""
    name = backend_of(x).name
    return contextlib.nullcontext() if current_backend() == name else use_backend(name)


def _device(x: Any) -> Any:
    """x's device, for arrays made beside it (a CUDA label tensor needs CUDA classes); None (the
    default device) where a tracer cannot tell (jax.jit)."""
    try:
        return dev(x)
    except Exception:  # noqa: BLE001 - a tracer without a device
        return None


def _reduce(losses: Any, reduction: str, function: str) -> Any:
    if reduction not in _REDUCTIONS:
        raise InvalidArgumentError(f"nn.{function}(reduction={reduction!r}): choose one of {', '.join(_REDUCTIONS)}.")
    if reduction == "mean":
        return statistical.mean(losses)
    return statistical.sum(losses) if reduction == "sum" else losses



def _in_range(indices: Any, length: int, error: Callable[[int, int], Exception]) -> Any:
    """``indices``, whose values must lie in [0, length): ``error(bad, length)`` is raised now where
    the values are known; lazy indices (dask) come back checked per chunk when the graph runs
    (the kernels' ``checked``); traced ones are returned unchecked."""
    native, rewrap = _native(indices)
    kernels = backend_of(native).nn_kernels
    check = functools.partial(_check_range, length=length, error=error)
    values = None if kernels is None else kernels.concrete(native)
    if values is not None:
        check(values)
        return indices
    lazy = getattr(kernels, "checked", None)
    return indices if lazy is None or 0 in tuple(native.shape) else rewrap(lazy(native, check))


def _check_range(values: Any, *, length: int, error: Callable[[int, int], Exception]) -> Any:
    """``values`` (a NumPy array); ``error(bad, length)`` for one outside [0, length)."""
    if values.size:
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= length:
            raise error(low if low < 0 else high, length)
    return values


