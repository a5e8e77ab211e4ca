"""Casts between float16/bfloat16/float32/float64 and every low-precision format, with exactly
ml_dtypes' bits on every backend: the public face of the cast engine.

``encode(x, format)`` gives the codes (one per uint8 element), ``decode(codes, format)`` the values
back, ``cast(x, format)`` an array of the framework's own dtype for the format where it has one. The
rule is ml_dtypes' (:mod:`.reference`: round to nearest, ties to even; out of range as the format
defines it; ``saturate=True`` maps finite values beyond the largest and infinities to the largest
finite value of that sign; integer formats wrap). Each call is one :class:`~.engine.Request` that
:mod:`.engine` serves with the first implementation that takes it (the reference, or an acceleration
checked bit for bit against it); ``arraylayer.lowp.explain(x, format)`` says which and why.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.errors import InvalidArgumentError, UnsupportedDtypeError
from arraylayer.lowp import engine
from arraylayer.lowp.engine import _unwrap, _wrap, as_format as _format
from arraylayer.lowp._ops import ops_of
from arraylayer.lowp.formats import FORMATS, STATUS, Format
from arraylayer.lowp.reference import check_float, decode_table, native_codes

__all__ = ["encode", "decode", "cast", "to_native", "format_of", "decode_table", "native_codes"]

_DECODE_TO = ("float16", "bfloat16", "float32", "float64")
_INT_TO = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
_HELD = ("computed", "stored")


def encode(x: Any, format: str | Format, *, saturate: bool = False, native: bool = True) -> Any:
    """The codes of ``x`` (float16/bfloat16/float32/float64; any integer dtype for int formats)
    in ``format``: a uint8 array of ``x``'s shape, ml_dtypes' bits. ``native=False`` forces the
    portable rule (the tests compare both)."""
    f = _format(format)
    x, wrapped = _unwrap(x)
    ops = ops_of(x)
    return _wrap(_encode(ops, x, ops.dtype_name(x), f, saturate, native), wrapped)


def _encode(ops: Any, x: Any, source: str, f: Format, saturate: bool, native: bool) -> Any:
    """:func:`encode` of a native array of ``ops``' framework whose dtype is ``source``."""
    if ops.name == "dask":
        return x.map_blocks(encode, f, saturate=saturate, native=native, dtype=np.uint8)
    if f.is_float:
        check_float(source, f, "x")
    return engine.run(engine.Request("encode", ops, x, f, source, saturate, portable=not native))


def decode(codes: Any, format: str | Format | None = None, dtype: str = "float32") -> Any:
    """The values of ``codes`` (a uint8 array of codes of ``format``, or a native array of a
    low-precision dtype, whose dtype names the format) as an array of ``dtype``: exact, with
    ml_dtypes' bits (NaN codes give a quiet NaN of the code's sign)."""
    codes, wrapped = _unwrap(codes)
    ops = ops_of(codes)
    if ops.name == "dask":
        name = _format(format or codes.dtype.name).name
        return _wrap(codes.map_blocks(decode, format, dtype, dtype=decode_table(name, dtype).dtype), wrapped)
    source = ops.dtype_name(codes)
    stored = source in FORMATS  # a native low-precision array rather than uint8 codes
    if stored:
        if format is not None and _format(format).name != source:
            raise InvalidArgumentError(f"format={format!r} but the array's dtype is {source}: leave format out.")
        format = source
    elif source != "uint8" or format is None:
        raise InvalidArgumentError(
            f"decode() takes uint8 codes with their format (format=...) or a native low-precision array, "
            f"not an array of dtype {source} with format={format!r}."
        )
    f = _format(format)
    allowed = _DECODE_TO if f.is_float else _DECODE_TO + _INT_TO
    if dtype not in allowed:
        raise InvalidArgumentError(f"dtype={dtype!r}: {f.name} decodes to one of {', '.join(allowed)}.")
    return _wrap(engine.run(engine.Request("decode", ops, codes, f, source, dtype=dtype, stored=stored)), wrapped)


def cast(x: Any, format: str | Format, *, saturate: bool = False) -> Any:
    """``x`` in ``format``: an array of the framework's own dtype where it stores the format,
    otherwise the uint8 codes (the format is then carried by the caller). arraylayer Arrays give
    the uint8 codes as an Array (``arraylayer.astype`` gives an Array of the low-precision dtype)."""
    f = _format(format)
    x, wrapped = _unwrap(x)
    ops = ops_of(x)
    source = ops.dtype_name(x)
    if wrapped or STATUS[ops.name][f.name] not in _HELD:
        return _wrap(_encode(ops, x, source, f, saturate, True), wrapped)
    if ops.name == "dask":
        return engine.as_native(ops, _encode(ops, x, source, f, saturate, True), f)
    if f.is_float:
        check_float(source, f, "x")
    return engine.run(engine.Request("cast", ops, x, f, source, saturate))


def to_native(codes: Any, format: str | Format) -> Any:
    """The codes as an array of the framework's own dtype for ``format``, where it stores it
    (``STATUS`` "computed" or "stored"); UnsupportedDtypeError elsewhere (keep the uint8 codes)."""
    f = _format(format)
    codes, _ = _unwrap(codes)
    ops = ops_of(codes)
    if STATUS[ops.name][f.name] not in _HELD:
        raise UnsupportedDtypeError(
            f"{ops.name} cannot hold {f.name} arrays (status: {STATUS[ops.name][f.name]}); keep the uint8 codes "
            f"and decode them with arraylayer.lowp.decode(codes, {f.name!r})."
        )
    return engine.as_native(ops, codes, f)


def format_of(x: Any) -> str | None:
    """The low-precision format of a native array's dtype, or None."""
    x, _ = _unwrap(x)
    name = ops_of(x).dtype_name(x)
    return name if name in FORMATS else None
