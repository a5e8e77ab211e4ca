"""Searching functions: ``argmax``, ``argmin``, ``count_nonzero``, ``nonzero``, ``searchsorted``,
``where``. Index results have the default index dtype (:func:`~arraylayer.api.dispatch.index_dtype`)
on every backend."""

from __future__ import annotations

from typing import Any

from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.dtypes.promotion import result_type
from arraylayer.runtime.registry import backend_of
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, as_array, index_result, kernel, not_defined, operand, promoted_inputs

Array = Any

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"]


def _real(name: str, x: Array) -> tuple[Any, Array, Dtype]:
    backend, x, dtype = array_input(x)
    if dtype.category == "complex":
        raise not_defined(name, (dtype,), "real-valued arrays (complex numbers have no order)")
    return backend, x, dtype


def _arg_extreme(name: str, x: Array, axis: int | None, keepdims: bool) -> Array:
    backend, x, dtype = _real(name, x)
    if axis is not None:
        axis = arguments.axis(axis, len(x.shape))
    arguments.flag(keepdims, "keepdims")
    if 0 in x.shape:
        raise InvalidArgumentError(f"{name} of an empty array has no answer; pass a non-empty array.")
    return index_result(backend, kernel(backend, name, dtype)(x, axis=axis, keepdims=keepdims))


def argmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the (first) maximum along ``axis`` (of the flattened array when None)."""
    return _arg_extreme("argmax", x, axis, keepdims)


def argmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the (first) minimum along ``axis`` (of the flattened array when None)."""
    return _arg_extreme("argmin", x, axis, keepdims)


def count_nonzero(x: Array, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """The number of non-zero elements along ``axis``, in the default index dtype."""
    backend, x, dtype = array_input(x)
    return index_result(backend, kernel(backend, "count_nonzero", dtype)(x, axis=arguments.axes(axis, len(x.shape)),
                                                                              keepdims=arguments.flag(keepdims, "keepdims")))


def nonzero(x: Array, /) -> tuple[Array, ...]:
    """The indices of the non-zero elements: one index array per axis (x must be at least 1-d)."""
    backend, x, dtype = array_input(x)
    if len(x.shape) == 0:
        raise InvalidArgumentError("nonzero needs an array of at least one dimension; reshape a 0-d array first.")
    return tuple(index_result(backend, i) for i in kernel(backend, "nonzero", dtype)(x))


def searchsorted(x1: Array, x2: Array, /, *, side: str = "left", sorter: Array | None = None) -> Array:
    """Insertion indices of x2 into the sorted 1-d x1 (compared in their promoted dtype)."""
    if side not in ("left", "right"):
        raise InvalidArgumentError(f"searchsorted side must be 'left' or 'right', got {side!r}.")
    backend, dtype, (x1, x2) = promoted_inputs(x1, x2)
    if dtype.category == "complex":
        raise not_defined("searchsorted", (dtype,), "real-valued arrays")
    if len(x1.shape) != 1:
        raise InvalidArgumentError(f"searchsorted needs a 1-d x1, got shape {tuple(x1.shape)}.")
    if sorter is not None:
        _, sorter, kind = array_input(sorter)
        if kind.category not in ("int", "uint") or tuple(sorter.shape) != tuple(x1.shape):
            raise InvalidArgumentError(f"sorter must be an integer array of x1's shape {tuple(x1.shape)}, got {kind} "
                                       f"of shape {tuple(sorter.shape)}.")
        sorter = arguments.indices_in_bounds(backend, sorter, x1.shape[0], "sorter")
    return index_result(backend, kernel(backend, "searchsorted", dtype)(x1, x2, side=side, sorter=sorter))


def where(condition: Array, x1: Array | complex, x2: Array | complex, /) -> Array:
    """x1 where condition is true, else x2, in the promoted dtype of x1 and x2 (Python scalars are
    weak, as in arithmetic); a non-bool condition is read as bool."""
    backend = backend_of(condition, x1, x2)
    dtype = result_type(x1, x2)
    condition = as_array(backend, condition, Dtype("bool"))
    x1, x2 = _where_operand(backend, x1, x2, dtype), _where_operand(backend, x2, x1, dtype)
    arguments.broadcast_shapes(*(tuple(getattr(a, "shape", ())) for a in (condition, x1, x2)))
    return kernel(backend, "where", dtype)(condition, x1, x2)


def _where_operand(backend: Any, x: Any, other: Any, dtype: Dtype) -> Any:
    """One branch of ``where`` as an array of ``dtype``; on a chunked backend (dask) a Python
    scalar beside an array stays a scalar of dtype's kind, as ``da.where`` takes it: wrapping it
    in an array would add a task to the graph."""
    return operand(backend, x, dtype, scalar_ok=backend.chunked and isinstance(other, backend.array_types))
