"""``astype`` and creation for the low-precision dtypes: every conversion into or out of one goes
through :mod:`.casts`, so its bits are ml_dtypes' on every backend (round to nearest even; out of
range as the type defines it; ``saturate=True`` clamps to the largest finite value instead). Integer
targets (int4, int2) wrap, as an explicit cast does."""

from __future__ import annotations

from typing import Any

from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.lowp.formats import FORMATS

__all__ = ["convert"]

_FLOAT32, _INT32 = as_dtype("float32"), as_dtype("int32")
_WIDER = ("float16", "bfloat16", "float32", "float64")  # what decode() gives
_CASTS: tuple[Any, Any] | None = None  # (casts.cast, casts.decode) once loaded: casts imports NumPy


def _load_casts() -> tuple[Any, Any]:
    global _CASTS
    from arraylayer.lowp.casts import cast, decode

    _CASTS = (cast, decode)
    return _CASTS


def convert(backend: Any, x: Any, source: Dtype, target: Dtype, *, saturate: bool = False) -> Any:
    """``x`` (a native array of ``backend`` of dtype ``source``) as ``target``, where one of the two
    is low precision; ``backend`` stores ``target`` (the caller checked)."""
    cast, decode = _CASTS or _load_casts()
    if source is target:
        return x
    if source.is_low_precision:  # decode exactly into float32 (int32 for the integer types)
        if source.is_floating and target.name in _WIDER:  # straight into it: a float32 NaN cast on
            return decode(x, dtype=target.name)  # to bfloat16 by torch would lose its sign
        wide = _FLOAT32 if source.is_floating else _INT32
        x, source = decode(x, dtype=wide.name), wide
        if not target.is_low_precision:
            return backend.astype(x, target)
    f = FORMATS[target.name]
    if source.is_bool or (f.is_float and not source.is_floating):
        x = backend.astype(x, _FLOAT32 if f.is_float else _INT32)
    return cast(x, f, saturate=saturate)
