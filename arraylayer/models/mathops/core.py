"""keras.ops' core names ``is_tensor``, ``saturate_cast`` and ``slice``, over arraylayer's functions.

``saturate_cast`` clamps to the range both dtypes hold before the cast, with keras' rule for a
limit the source dtype cannot hold exactly (the nearest value inside the target's range: float32
to int32 saturates at 2147483520); infinities clamp to the limits too and NaN casts to 0 for
integer and bool targets, the same on every backend (a plain cast of NaN to an integer is each
framework's own). ``slice`` is ``jax.lax.dynamic_slice``: starts may be traced 0-d integer arrays;
a negative one counts from the end, and each is clamped so the block fits.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from arraylayer import arguments
from arraylayer.api import data_types, elementwise, indexing, searching
from arraylayer.api.dispatch import WRAPPERS, array_input
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype, finfo, iinfo
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError
from arraylayer.models.mathops.scatter import _arange_like_int, _clamped
from arraylayer.runtime.registry import backend_of, get_backend

Array = Any

__all__ = ["is_tensor", "saturate_cast", "slice"]


def is_tensor(x: Any, /) -> bool:
    """True for an array of any installed backend (a NumPy scalar is a 0-d NumPy array here, as
    everywhere in arraylayer) and for an :class:`arraylayer.Array`; False for Python numbers and lists."""
    return type(x) in WRAPPERS or isinstance(x, backend_of(x).array_types)


def _limits(dtype: Dtype) -> tuple[Any, Any]:
    """(lowest, highest) value of ``dtype`` (bool: 0 and 1)."""
    if dtype.category == "bool":
        return 0, 1
    info = iinfo(dtype) if dtype.category in ("int", "uint") else finfo(dtype)
    return info.min, info.max


def _step_toward_zero(value: Any, native: Any) -> Any:
    """The next ``native`` value after ``value`` toward 0 (NumPy's nextafter, ml_dtypes' for its formats)."""
    kind = np.dtype(native).type
    return np.nextafter(kind(value), kind(0))


def saturate_cast(x: Array, dtype: DtypeLike, /) -> Array:
    """x cast to ``dtype`` with values outside its range clamped to the nearest limit first
    (keras.ops.saturate_cast); NaN becomes 0 for integer and bool targets. Complex is refused."""
    _, x, source = array_input(x)
    target = as_dtype(dtype)
    if source.category == "complex" or target.category == "complex":
        raise InvalidDtypeError(f"saturate_cast casts between real dtypes; got {source} to {target}. Take the real "
                                f"part first (arraylayer.real(x)) or use arraylayer.astype.")
    if source.category == "bool":
        return data_types.astype(x, target)
    in_min, in_max = _limits(source)
    out_min, out_max = _limits(target)
    low = _as_python(max(in_min, out_min), source)
    high = _as_python(min(in_max, out_max), source)
    if source.category == "float":
        low = _inside(low, out_min, source, above=True)
        high = _inside(high, out_max, source, above=False)
    clamped = elementwise.clip(x, low, high)
    if source.category == "float" and target.category != "float":
        clamped = searching.where(elementwise.isnan(clamped), 0, clamped)
    return data_types.astype(clamped, target)


def _as_python(value: Any, source: Dtype) -> Any:
    return float(value) if source.category == "float" else int(value)


def _inside(limit: float, bound: Any, source: Dtype, *, above: bool) -> float:
    """``limit`` rounded to the float dtype ``source``, moved one step toward 0 if the rounding took
    it past ``bound`` (keras' nudge: int32's max is 2**31 in float32, past it; 2147483520 is not)."""
    native = get_backend("numpy").as_native_dtype(source)
    rounded = np.asarray(limit, dtype=np.float64).astype(native)
    outside = float(rounded) < bound if above else float(rounded) > bound
    if outside:
        rounded = _step_toward_zero(rounded, native)
    return float(rounded)


def slice(inputs: Array, start_indices: Sequence[Any], shape: Sequence[int]) -> Array:  # noqa: A001 - keras' name
    """The block of ``inputs`` of ``shape`` at ``start_indices`` (jax.lax.dynamic_slice): starts are
    ints or 0-d integer arrays (traced ones too), a negative one counted from the end, each clamped
    to [0, n - size] so the block fits."""
    _, inputs, _ = array_input(inputs)
    full = tuple(inputs.shape)
    sizes = arguments.shape(shape)
    starts = tuple(start_indices) if isinstance(start_indices, (list, tuple)) else None
    if starts is None or len(starts) != len(full) or len(sizes) != len(full) or \
            any(s > n for s, n in zip(sizes, full, strict=True)):
        raise InvalidArgumentError(f"slice: one start and one size per axis of inputs (shape {full}), no size larger "
                                   f"than its axis; got start_indices={start_indices!r} and shape={tuple(sizes)}.")
    result = inputs
    for axis, (start, n, size) in enumerate(zip(starts, full, sizes, strict=True)):
        if size == n and not hasattr(start, "shape"):
            arguments.integer(start, f"start_indices[{axis}]")
            continue  # the whole axis: every start clamps to 0
        start = _clamped(start, n, n - size, axis)
        if not hasattr(start, "shape"):
            result = result[(builtins.slice(None),) * axis + (builtins.slice(start, start + size),)]
            continue
        positions = elementwise.add(_arange_like_int(inputs, size), start)
        result = indexing.take(result, positions, axis=axis)
    return result

