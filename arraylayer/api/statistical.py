"""Statistical functions: ``sum``, ``prod``, ``cumulative_sum``, ``cumulative_prod``, ``max``,
``min``, ``mean``, ``std``, ``var``.

Accumulators (the Array API's rule, the same on every backend): ``sum``, ``prod`` and the
cumulative functions of bool and of integers narrower than the default int accumulate in
the default int (unsigned ones in the default uint) unless ``dtype=`` is given, so
``sum(ones((100, 100), int8))`` is 10000, never a wrapped -56. ``mean``, ``std`` and ``var``
are defined for floating-point input; integer and bool input is computed in the default
float dtype (as :func:`divide` does), the same on every backend.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.dtypes import Dtype, DtypeLike
from arraylayer.errors import InvalidArgumentError, UnsupportedDtypeError
from arraylayer.dtypes.function_rules import accumulator_dtype
from arraylayer.support import stored_only_dtypes
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, kernel, native_dtype, not_defined

Array = Any
Axis = int | tuple[int, ...] | None

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

_NUMERIC: Final = frozenset({"bool", "int", "uint", "float", "complex"})


def _accumulate(name: str, x: Array, axis: Any, dtype: DtypeLike | None, **options: Any) -> Array:
    backend, x, source = array_input(x)
    axis = arguments.axes(axis, len(x.shape))
    accumulator = accumulator_dtype(source, dtype)
    if dtype is None and accumulator not in backend.valid_dtypes() and accumulator not in stored_only_dtypes(backend):
        raise UnsupportedDtypeError(
            f"{name} of {source} accumulates in {accumulator} (the default {accumulator.category} dtype), which the "
            f"{backend.name} backend cannot hold here: {backend.remedy(accumulator)} Pass dtype= explicitly "
            f"(e.g. dtype='int64'), or change the default with arraylayer.use_default_uint_dtype / "
            f"use_default_int_dtype."
        )
    run = kernel(backend, name, accumulator)
    return run(x, axis=axis, dtype=accumulator_native(backend, accumulator), **options)


def accumulator_native(backend: Any, accumulator: Dtype) -> Any:
    """The native dtype of ``accumulator``, once :func:`kernel` has found a kernel for it: a dtype the
    backend stores only (torch's uint32) has one where the kernel computes it by an exact route."""
    try:
        return native_dtype(backend, accumulator)
    except UnsupportedDtypeError:
        if accumulator not in stored_only_dtypes(backend):
            raise
        return backend.native_dtypes[accumulator]


def sum(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Sum over ``axis`` (all axes by default), in the accumulator dtype (see module docs)."""
    return _accumulate("sum", x, axis, dtype, keepdims=arguments.flag(keepdims, "keepdims"))


def prod(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, keepdims: bool = False) -> Array:
    """Product over ``axis`` (all axes by default), in the accumulator dtype (see module docs)."""
    return _accumulate("prod", x, axis, dtype, keepdims=arguments.flag(keepdims, "keepdims"))


def _cumulative_axis(x: Any, axis: int | None, name: str) -> int:
    if axis is None:
        if len(x.shape) != 1:
            raise InvalidArgumentError(f"{name} needs axis= for a {len(x.shape)}-d array (axis=None is for 1-d arrays only).")
        return 0
    return arguments.axis(axis, len(x.shape))


def cumulative_sum(x: Array, /, *, axis: int | None = None, dtype: DtypeLike | None = None,
                   include_initial: bool = False) -> Array:
    """Running sum along ``axis`` (optional for 1-d input), in the accumulator dtype;
    ``include_initial`` prepends the zero."""
    backend, x, _ = array_input(x)
    return _accumulate("cumulative_sum", x, _cumulative_axis(x, axis, "cumulative_sum"), dtype,
                       include_initial=arguments.flag(include_initial, "include_initial"))


def cumulative_prod(x: Array, /, *, axis: int | None = None, dtype: DtypeLike | None = None,
                    include_initial: bool = False) -> Array:
    """Running product along ``axis`` (optional for 1-d input), in the accumulator dtype;
    ``include_initial`` prepends the one."""
    backend, x, _ = array_input(x)
    return _accumulate("cumulative_prod", x, _cumulative_axis(x, axis, "cumulative_prod"), dtype,
                       include_initial=arguments.flag(include_initial, "include_initial"))


def _extreme(name: str, x: Array, axis: Axis, keepdims: bool) -> Array:
    backend, x, dtype = array_input(x)
    if dtype.category == "complex":
        raise not_defined(name, (dtype,), "real-valued arrays (complex numbers have no order)")
    axis = arguments.axes(axis, len(x.shape))
    arguments.flag(keepdims, "keepdims")
    if 0 in x.shape and (axis is None or any(x.shape[a] == 0 for a in ((axis,) if isinstance(axis, int) else axis))):
        raise InvalidArgumentError(f"{name} of an empty array (or along an empty axis) has no value; pass a non-empty array.")
    return kernel(backend, name, dtype)(x, axis=axis, keepdims=keepdims)


def max(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Maximum over ``axis``, in x's dtype (NaN propagates). Empty reductions raise ValueError."""
    return _extreme("max", x, axis, keepdims)


def min(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:  # noqa: A001
    """Minimum over ``axis``, in x's dtype (NaN propagates). Empty reductions raise ValueError."""
    return _extreme("min", x, axis, keepdims)


def _floating(name: str, x: Array, complex_ok: bool) -> tuple[Any, Array, Dtype]:
    """x in its floating dtype: integer/bool input in the default float."""
    backend, x, dtype = array_input(x)
    if dtype.category == "complex" and not complex_ok:
        raise not_defined(name, (dtype,), "real-valued arrays")
    if dtype.category in ("bool", "int", "uint"):
        dtype = default_float_dtype()
        x = backend.astype(x, dtype)
    return backend, x, dtype


def _correction(correction: Any) -> float:
    if correction.__class__ not in (int, float) or correction < 0:
        raise arguments.InvalidArgumentTypeError(
            f"correction={correction!r} must be a non-negative int or float (0 or 1, usually).")
    return float(correction) if correction > 2**53 else correction


def mean(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """Arithmetic mean over ``axis``; integer and bool input give the default float dtype."""
    backend, x, dtype = _floating("mean", x, complex_ok=True)
    arguments.flag(keepdims, "keepdims")
    return kernel(backend, "mean", dtype)(x, axis=arguments.axes(axis, len(x.shape)), keepdims=keepdims)


def std(x: Array, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Standard deviation over ``axis`` with ``correction`` (1 for the sample estimate); integer
    and bool input give the default float dtype."""
    backend, x, dtype = _floating("std", x, complex_ok=False)
    arguments.flag(keepdims, "keepdims")
    return kernel(backend, "std", dtype)(x, axis=arguments.axes(axis, len(x.shape)), correction=_correction(correction), keepdims=keepdims)


def var(x: Array, /, *, axis: Axis = None, correction: int | float = 0.0, keepdims: bool = False) -> Array:
    """Variance over ``axis`` with ``correction`` (1 for the sample estimate); integer and bool
    input give the default float dtype."""
    backend, x, dtype = _floating("var", x, complex_ok=False)
    arguments.flag(keepdims, "keepdims")
    return kernel(backend, "var", dtype)(x, axis=arguments.axes(axis, len(x.shape)), correction=_correction(correction), keepdims=keepdims)
