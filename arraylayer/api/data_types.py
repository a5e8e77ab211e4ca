"""Data-type functions: ``astype``, ``can_cast``, ``finfo``, ``iinfo``, ``isdtype``, ``result_type``.

``can_cast``, ``finfo``, ``iinfo`` and ``result_type`` are the core's own (re-exported here);
``astype`` and ``isdtype`` are defined here.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes import Dtype, DtypeLike, as_dtype, finfo, iinfo
from arraylayer.errors import InvalidDtypeError, TypePromotionError
from arraylayer.lowp.convert import convert
from arraylayer.dtypes.promotion import can_cast, result_type
from arraylayer import arguments
from arraylayer.api.dispatch import array_input

Array = Any

__all__ = ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"]

# The Array API's kind names -> the arraylayer kinds they cover.
_KINDS: Final[dict[str, frozenset[str]]] = {
    "bool": frozenset({"bool"}),
    "signed integer": frozenset({"int"}),
    "unsigned integer": frozenset({"uint"}),
    "integral": frozenset({"int", "uint"}),
    "real floating": frozenset({"float"}),
    "complex floating": frozenset({"complex"}),
    "numeric": frozenset({"int", "uint", "float", "complex"}),
}
#: arraylayer's kind name of the low-precision family (not the standard's).
LOW_PRECISION_KIND: Final = "low precision"


def astype(x: Array, dtype: DtypeLike, /, *, copy: bool = True, device: str | None = None,
           saturate: bool = False) -> Array:
    """``x`` converted to ``dtype`` (an explicit cast: floats truncate toward zero into integers).

    Into or out of a low-precision dtype the bits are ml_dtypes' on every backend; ``saturate=True``
    clamps values beyond a low-precision target's range to its largest finite value (see
    docs/low_precision.rst).

    copy=True (the default) always returns a new array; copy=False returns ``x`` itself when
    nothing changes. Complex to real raises: take :func:`real` or :func:`abs` explicitly.
    ``device`` also moves the result.
    """
    backend, x, source = array_input(x)
    target = as_dtype(dtype)
    arguments.flag(copy, "copy")
    if source.category == "complex" and target.category != "complex" and target.category != "bool":
        raise TypePromotionError(
            f"astype from {source} to {target} would drop the imaginary part; take arraylayer.real(x) "
            f"or arraylayer.abs(x) first."
        )
    arguments.flag(saturate, "saturate")
    if target.name in _WRAPPED_INTS and source.is_floating:  # the one rule for out-of-range values
        if source.is_low_precision:
            x, source = convert(backend, x, source, _FLOAT32), _FLOAT32
        result = _wrapped(backend, x, source, target)
    elif source.is_low_precision or target.is_low_precision:
        result = convert(backend, x, source, backend.check_valid(target), saturate=saturate)
    else:
        result = backend.astype(x, target)
    if device is not None:
        result = backend.to_device(result, device)
    if copy and result is x:
        result = backend.copy(x)
    return result


#: The integer targets of the out-of-range rule (docs/low_precision.rst, "Out of range"): a float is
#: truncated toward zero and its low bits kept; NaN, the infinities and values beyond int32 give 0.
#: NumPy, torch, TensorFlow and ml_dtypes do so on some paths and saturate on others (TensorFlow's
#: vectorised cast, XLA always): the rule is spelled out here, so every backend gives the same bits.
_WRAPPED_INTS: Final = frozenset({"int8", "int16", "uint8", "uint16"})
_FLOAT32, _INT32 = as_dtype("float32"), as_dtype("int32")


def _wrapped(backend: Any, x: Any, source: Dtype, target: Dtype) -> Any:
    """The floating ``x`` in the narrow integer ``target`` by the out-of-range rule: through int32, whose
    conversion is exact for every value the rule keeps, then its low bits (integer narrowing wraps
    on every framework)."""
    kernels = backend.kernels
    inside = kernels["less"](kernels["abs"](x), backend.asarray(2.0**31, source))  # False for NaN and inf
    kept = kernels["where"](inside, x, backend.asarray(0, source))
    return backend.astype(backend.astype(kept, _INT32), target)


def isdtype(dtype: DtypeLike, kind: str | DtypeLike | tuple[str | DtypeLike, ...]) -> bool:
    """True if ``dtype`` is of ``kind``: a dtype, one of the Array API's kind names ("bool",
    "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
    "numeric"), arraylayer's "low precision" (float8/6/4, int4/int2), or a tuple of those.

    As in JAX, the low-precision types also answer to their meaning: float8_e4m3fn is "real
    floating", int4 "signed integer" and "integral"."""
    resolved = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(resolved, k) for k in kind)
    if kind == LOW_PRECISION_KIND:
        return resolved.is_low_precision
    if isinstance(kind, str) and not isinstance(kind, Dtype) and kind in _KINDS:
        return resolved.category in _KINDS[kind]
    try:
        return resolved is as_dtype(kind)
    except InvalidDtypeError:
        raise InvalidDtypeError(
            f"isdtype kind {kind!r} is neither a dtype nor one of {', '.join(map(repr, _KINDS))}, "
            f"{LOW_PRECISION_KIND!r}."
        ) from None

