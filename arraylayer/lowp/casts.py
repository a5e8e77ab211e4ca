"""Casts between float16/bfloat16/float32/float64 and every low-precision format, with exactly
ml_dtypes' bits on every backend.

``encode(x, format)`` gives the codes (one per uint8 element) and ``decode(codes, format)`` the values
back. The rule is ml_dtypes': round to nearest, ties to even; out of range as the format defines it
(:mod:`.formats`: NaN, inf or saturation); ``saturate=True`` maps finite values beyond the largest
and infinities to the largest finite value of that sign instead (NaN stays NaN). Integer formats
wrap: a float is truncated toward zero and its low bits kept, NaN, inf and values outside int32 give 0.

The portable encoder works on the int32 bit pattern of a float32 with the framework's own integer
ops. float16 and bfloat16 are widened to float32 first (exact); float64 is rounded to float32
first, because that is what ml_dtypes does (a float64 just below a tie of the format rounds up). Where a framework's native cast gives the same bits
(``NATIVE_ENCODE``, measured by tests/test_lowp_casts.py) it is used instead, with a fix-up where
only the out-of-range or NaN codes differ; torch's eager contiguous CPU tensors are encoded in C
instead, in one pass (:mod:`.cpu_codes`). The decoder is a gather from a table of 2**bits values
(in C, threaded, for torch's eager contiguous CPU tensors: :mod:`.cpu_codes` again).
"""

from __future__ import annotations

from functools import cache, partial
from typing import Any

import numpy as np

from arraylayer.context import replaying
from arraylayer.errors import InvalidArgumentError, UnsupportedDtypeError
from arraylayer.lowp._ops import ops_of
from arraylayer.lowp.cpu_codes import ENCODE, decoded, encoded, usable
from arraylayer.lowp.formats import FORMATS, STATUS, Format, get_format
from arraylayer.lowp.one_kernel import compiled

__all__ = ["encode", "decode", "cast", "to_native", "format_of", "NATIVE_ENCODE", "NATIVE_DECODE"]

_WIDE = ("float32", "float64")
_NARROW = ("float16", "bfloat16")

# (backend, format) -> how the framework's own cast is used for encoding: "direct" (its bits are
# ml_dtypes'), "nan" (only NaN's code differs), "overflow" (it saturates where ml_dtypes gives NaN),
# "cast" (its bits are ml_dtypes' but its arrays cannot be viewed as codes: used by cast() only).
NATIVE_ENCODE: dict[tuple[str, str], str] = {
    **{("numpy", n): "direct" for n in FORMATS if FORMATS[n].is_float},  # ml_dtypes itself
    **{("jax", n): "direct" for n in FORMATS if n.startswith("float8")},
    ("torch", "float8_e4m3fnuz"): "direct",
    ("torch", "float8_e5m2fnuz"): "direct",
    ("torch", "float8_e4m3fn"): "overflow",
    ("torch", "float8_e5m2"): "nan",
    # TensorFlow has no bitcast of its float8 arrays: its cast is used by cast() only
    ("tensorflow", "float8_e4m3fn"): "cast",
    ("tensorflow", "float8_e5m2"): "cast",
}
_FIXED = ("nan", "overflow")  # torch's casts, which cpu_codes' C encoder replaces on eager CPU tensors
# (backend, format) whose own cast of a native low-precision array to a wider float gives
# ml_dtypes' bits (NaN's sign included); other native arrays are decoded through their codes.
NATIVE_DECODE = {("tensorflow", "float8_e4m3fn"), ("tensorflow", "float8_e5m2"),
                 *(("numpy", n) for n in FORMATS if FORMATS[n].is_float)}


def _unwrap(x: Any) -> tuple[Any, Any]:
    """``(native, wrapper class)`` for an arraylayer.Array, ``(x, None)`` otherwise. The class is
    recognised by name, not imported: the api layer reaches this module through the low-precision rule."""
    cls = type(x)
    return (x.native, cls) if cls.__name__ == "Array" and cls.__module__ == "arraylayer.array" else (x, None)


def _wrap(y: Any, wrapped: Any) -> Any:
    """``y`` in the wrapper class that :func:`_unwrap` found (as it is when None)."""
    return wrapped(y) if wrapped else y


def encode(x: Any, format: str | Format, *, saturate: bool = False, native: bool = True) -> Any:
    """The codes of ``x`` (float16/bfloat16/float32/float64; any integer dtype for int formats)
    in ``format``: a uint8 array of ``x``'s shape, ml_dtypes' bits. ``native=False`` forces the
    portable bit-manipulation path (the tests compare both)."""
    f = get_format(format)
    x, wrapped = _unwrap(x)
    ops = ops_of(x)
    return _wrap(_encode(ops, x, ops.dtype_name(x), f, saturate, native), wrapped)


def _encode(ops: Any, x: Any, source: str, f: Format, saturate: bool, native: bool) -> Any:
    """:func:`encode` of a native array of ``ops``' framework whose dtype is ``source``."""
    if ops.name == "dask":
        return x.map_blocks(encode, f, saturate=saturate, native=native, dtype=np.uint8)
    if not f.is_float:
        return _encode_int(ops, x, source, f, saturate)
    _check_float(source, f, "x")
    # on an accelerator, the portable rule compiled into one kernel (see one_kernel: a compiler may
    # fold a widening into the float8 conversion, which then spells NaNs its own way)
    fused = compiled(ops, x, ("encode", f.name, saturate), lambda: partial(_encode_float, ops, f=f, saturate=saturate, native=False))
    codes = fused(x) if fused else None  # None: a Triton kernel that could not run
    return _encode_float(ops, x, f, saturate, native) if codes is None else codes


def _float32(ops: Any, x: Any, source: str) -> Any:
    """``x`` as float32: float16/bfloat16 exactly; float64 rounded once, as ml_dtypes does. On a GPU
    (or while JAX traces, where it may run on one) the widening gives every NaN a positive sign
    (measured on an H200, torch and jax: 1,023 of the 65,536 float16 patterns encoded as +NaN): the
    sign bit is then set from ``x``'s own bits, as integers."""
    if source == "float32":
        return x
    wide = ops.astype(x, "float32")
    if ops.accelerated(x):
        negative = ops.astype(ops.float_bits(x) < 0, "int32")
        return ops.bits_float32((ops.float_bits(wide) & 0x7FFFFFFF) | ops.shl(negative, 31))
    return _float16_nan_signs(ops.torch, x, wide) if source == "float16" and ops.name == "torch" else wide


def _encode_float(ops: Any, x: Any, f: Format, saturate: bool, native: bool) -> Any:
    """The codes of the float16/bfloat16/float32/float64 array ``x`` in the float format ``f``."""
    source = ops.dtype_name(x)
    wide, x = x, _float32(ops, x, source)
    mode = NATIVE_ENCODE.get((ops.name, f.name)) if native else None
    if mode is not None and ops.own_cast_unlike_eager(x, source):  # a compiler's own conversion
        mode = None
    if mode not in (None, "cast") and not (saturate and ops.name == "jax"):  # XLA's clip flushes subnormals
        codes = _encode_native(ops, x, f, saturate, mode)
    else:
        codes = _encode_portable(ops, x, f, saturate)
    if source == "float64" and f.specials == "e8m0" and ops.name in ("jax", "tensorflow"):
        codes = _below_float32_normals(ops, wide, codes)
    return codes


def _float16_nan_signs(torch: Any, half: Any, x: Any) -> Any:
    """``x`` (torch's float32 cast of the float16 ``half``) with the sign of ``half``'s NaNs: the
    cast's scalar loop (a short array, the tail of a long one) gives +NaN for every NaN. Eagerly,
    NaN-free data costs one ``isnan`` pass."""
    nan = torch.isnan(x)
    if not replaying() and not bool(nan.any()):
        return x
    return torch.where(nan & (half.view(torch.int16) < 0), -torch.abs(x), x)


def _below_float32_normals(ops: Any, x: Any, codes: Any) -> Any:
    """float8_e8m0fnu codes of the positive float64 values below float32's smallest normal, which
    XLA's and TensorFlow's float64 -> float32 conversion flushes to zero. ml_dtypes rounds them to
    float32's subnormals, then gives code 1 (2**-126) above 2**-127 and code 0 (2**-127) below."""
    tiny = (x > 0) & (x < 2.0**-126)
    return ops.where(tiny & (x > 2.0**-127 + 2.0**-150), 1, ops.where(tiny, 0, codes))


def _check_float(source: str, f: Format, name: str) -> None:
    if source not in _WIDE and source not in _NARROW:
        raise UnsupportedDtypeError(
            f"{name} of dtype {source} cannot be encoded as {f.name}: pass float16, bfloat16, float32 or "
            f"float64 (cast integers with astype first)."
        )


def _encode_portable(ops: Any, x: Any, f: Format, saturate: bool = False) -> Any:
    """Round-to-nearest-even of a float32 array to ``f``'s codes, with integer ops only."""
    bits = ops.float_bits(x)
    a = bits & 0x7FFFFFFF  # |x| as bits
    sign = ops.shr(bits, 31) & 1
    exponent = ops.shr(a, 23)
    sig = (a & 0x7FFFFF) + ops.shl(ops.minimum(exponent, 1), 23)  # with the implicit bit
    te = ops.maximum(exponent, 1) + (f.bias - 127)  # the target's biased exponent if normal
    # a shift of 25 leaves 0 whatever the remainder: larger ones are capped there
    shift = ops.minimum(ops.maximum(1 - te, 0) + (23 - f.mantissa_bits), 25)
    q = ops.shr(sig, shift)
    rem = sig - ops.shl(q, shift)
    half = ops.shl(shift * 0 + 1, shift - 1)
    q = ops.where((rem > half) | ((rem == half) & ((q & 1) == 1)), q + 1, q)
    code = ops.shl(ops.maximum(te, 1) - 1, f.mantissa_bits) + q  # carries into the exponent
    nan, over = a > 0x7F800000, code > f.max_code  # inf is over
    signed = code | ops.shl(sign, f.bits - 1)
    kind = f.specials
    big = f.max_code if saturate or kind == "finite" else f.inf_code if kind == "ieee" else f.nan_code
    if kind in ("ieee", "fn"):
        out = ops.where(over, big | ops.shl(sign, f.bits - 1), signed)
        out = ops.where(nan, f.nan_code | ops.shl(sign, f.bits - 1), out)
    elif kind == "fnuz":
        out = ops.where(code == 0, code, signed)  # no negative zero
        out = ops.where(over, big | ops.shl(sign, f.bits - 1), out)
        out = ops.where(nan, f.nan_code, out)
    elif kind == "e8m0":
        out = ops.where(over, big, code)
        out = ops.where(nan | (sign == 1) | (a == 0), f.nan_code, out)
    else:  # finite: saturate; NaN becomes a zero of the opposite sign (ml_dtypes' rule)
        out = ops.where(over, big | ops.shl(sign, f.bits - 1), signed)
        out = ops.where(nan, ops.shl(1 - sign, f.bits - 1), out)
    return ops.astype(out, "uint8")


def _encode_native(ops: Any, x: Any, f: Format, saturate: bool, mode: str) -> Any:
    """The framework's own cast, fixed up where its codes differ from ml_dtypes' (``mode``); on
    torch's eager contiguous CPU tensors, the C encoder instead."""
    if mode in _FIXED and f.name in ENCODE and usable(x, x):
        return encoded(x, f.name, saturate, ops.torch.uint8)
    if saturate:
        x = ops.clip(x, -f.max, f.max)
    codes = ops.codes_of(ops.astype(x, f.name))
    if mode == "direct" or (mode == "overflow" and saturate):
        return codes
    # torch gives "nan" S.11111.11 for NaN where ml_dtypes gives S.11111.10 (no value gives S.11111.11);
    # "overflow": the largest finite S.1111.110 where ml_dtypes gives NaN, S.1111.111.
    bound, inclusive = f.rounding_bound
    torch = ops.torch
    # Eagerly, whether any code may need the fix: for "nan", one maximum over the codes' magnitudes
    # (a byte pass); for "overflow", one aminmax over x (NaN propagates: a NaN takes the fix path,
    # which leaves its code), as cheap as the byte pass and needed after it where data scaled to the
    # format's amax reaches the largest code.
    # (on an accelerator the check's host synchronisation costs more than the fix: none there)
    eager = not replaying()
    if eager and codes.numel() == 0:
        return codes
    eager = eager and x.device.type == "cpu"
    if mode == "nan":  # magnitude + 1 reaches the sign bit only from S.11111.11: flip its last bit
        magnitude = codes & (f.sign_bit - 1)
        if eager and int(torch.amax(magnitude)) < f.sign_bit - 1:
            return codes
        return codes ^ ((magnitude + 1) >> (f.bits - 1))
    if eager:
        low, high = torch.aminmax(x)
        if (high < bound and low > -bound) if inclusive else (high <= bound and low >= -bound):  # NaN: False
            return codes
    beyond = torch.abs(x) >= bound if inclusive else torch.abs(x) > bound
    # a cast, not a bool -> uint8 view: Inductor (torch 2.11, CUDA) fails to lower that view inside
    # a user's torch.compile ("torch.bool is not supported by torch.iinfo"; benchmarks/gpu_compile_casts.py)
    return codes | beyond.to(torch.uint8)


def _encode_int(ops: Any, x: Any, source: str, f: Format, saturate: bool) -> Any:
    mask = (1 << f.bits) - 1
    if source.startswith(("int", "uint")):
        if saturate:
            x = ops.clip(x, int(f.min), int(f.max))
        return ops.astype(x & mask, "uint8")
    _check_float(source, f, "x")
    if source in _NARROW:
        x = ops.astype(x, "float32")
    if saturate:
        x = ops.clip(x, f.min, f.max)
    inside = ops.abs(x) < 2.0**31  # False for NaN and inf: those, and values outside int32, give 0
    wrapped = ops.trunc_mod(ops.where(inside, x, 0.0), 1 << f.bits)
    return ops.astype(ops.astype(wrapped, "int32") & mask, "uint8")


@cache
def decode_table(format: str, dtype: str) -> np.ndarray:
    """The value of every code of ``format`` as a NumPy array of ``dtype`` (2**bits entries), from
    the format's fields (NaN codes decode to a quiet NaN with the code's sign)."""
    f = FORMATS[format]
    codes = range(1 << f.bits)
    if not f.is_float:
        values = np.array([c - (1 << f.bits) if f.signed and c & f.sign_bit else c for c in codes], np.int64)
    else:
        values = np.array([_decoded(f, c) for c in codes], np.float64)
    if dtype == "bfloat16":
        import ml_dtypes

        return values.astype(np.float32).astype(ml_dtypes.bfloat16)
    return values.astype(dtype)


@cache
def _c_table(format: str, dtype: str) -> tuple[np.ndarray, int]:
    """:func:`decode_table` and its address, for cpu_codes.decoded."""
    table = decode_table(format, dtype)
    return table, table.ctypes.data


def _decoded(f: Format, code: int) -> float:
    magnitude = code & ~f.sign_bit
    negative = bool(code & f.sign_bit)
    if code == f.nan_code or (f.specials == "ieee" and magnitude > f.inf_code) or (f.specials == "fn" and magnitude == f.nan_code):
        return float(np.copysign(np.nan, -1.0 if negative else 1.0))
    if f.specials == "ieee" and magnitude == f.inf_code:
        return -np.inf if negative else np.inf
    return f.value(code)


_DECODE_TO = ("float16", "bfloat16", "float32", "float64")
_INT_TO = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def decode(codes: Any, format: str | Format | None = None, dtype: str = "float32") -> Any:
    """The values of ``codes`` (a uint8 array of codes of ``format``, or a native array of a
    low-precision dtype, whose dtype names the format) as an array of ``dtype``: exact, with
    ml_dtypes' bits (NaN codes give a quiet NaN of the code's sign)."""
    codes, wrapped = _unwrap(codes)
    ops = ops_of(codes)
    if ops.name == "dask":
        return _wrap(codes.map_blocks(decode, format, dtype, dtype=decode_table(get_format(format or codes.dtype.name).name, dtype).dtype), wrapped)
    source = ops.dtype_name(codes)
    stored = source in FORMATS  # a native low-precision array rather than uint8 codes
    if stored:
        if format is not None and get_format(format).name != source:
            raise InvalidArgumentError(f"format={format!r} but the array's dtype is {source}: leave format out.")
        if (ops.name, source) in NATIVE_DECODE and dtype in _DECODE_TO:
            return _wrap(ops.astype(codes, dtype), wrapped)
        format = source
    elif source != "uint8" or format is None:
        raise InvalidArgumentError(
            f"decode() takes uint8 codes with their format (format=...) or a native low-precision array, "
            f"not an array of dtype {source} with format={format!r}."
        )
    f = get_format(format)
    allowed = _DECODE_TO if f.is_float else _DECODE_TO + _INT_TO
    if dtype not in allowed:
        raise InvalidArgumentError(f"dtype={dtype!r}: {f.name} decodes to one of {', '.join(allowed)}.")
    table = ops.table((f.name, dtype), decode_table, codes)
    fused = compiled(ops, codes, ("decode", f.name, dtype, stored), lambda: _decode_rule(ops, f, stored))
    values = fused(table, codes) if fused else None  # None: a Triton kernel that could not run
    if values is not None:
        return _wrap(values, wrapped)
    if stored:
        codes = native_codes(ops, codes, f)
    if ops.name == "torch" and f.bits == 8 and dtype in _DECODE_TO and usable(codes, codes):  # in C, threaded
        return _wrap(decoded(codes, _c_table(f.name, dtype), ops.native_dtype(dtype)), wrapped)
    return _wrap(_gather(ops, table, codes, f.bits), wrapped)


def _decode_rule(ops: Any, f: Format, stored: bool) -> Any:
    """The function of ``(table, array)`` that one_kernel compiles: the codes of a native array read
    inside the kernel too."""
    def rule(table: Any, codes: Any) -> Any:
        return _gather(ops, table, native_codes(ops, codes, f) if stored else codes, f.bits)
    return rule


def _gather(ops: Any, table: Any, codes: Any, bits: int) -> Any:
    """``table[codes]``, the codes of a format narrower than a byte masked to their bits first."""
    return ops.take(table, codes if bits == 8 else codes & ((1 << bits) - 1))


def native_codes(ops: Any, x: Any, f: Format) -> Any:
    """The codes of a native low-precision array. TensorFlow has no bitcast for them, and XLA bitcasts
    a type narrower than a byte only in pairs: those go through float32 (int32), exactly."""
    if ops.name == "tensorflow" or (ops.name == "jax" and f.bits < 8):
        if not f.is_float:
            return ops.astype(ops.astype(x, "int32") & ((1 << f.bits) - 1), "uint8")
        return _encode_portable(ops, ops.astype(x, "float32"), f)
    return ops.codes_of(x)


def format_of(x: Any) -> str | None:
    """The low-precision format of a native array's dtype, or None."""
    x, _ = _unwrap(x)
    name = ops_of(x).dtype_name(x)
    return name if name in FORMATS else None


def to_native(codes: Any, format: str | Format) -> Any:
    """The codes as an array of the framework's own dtype for ``format``, where it stores it
    (``STATUS`` "computed" or "stored"); UnsupportedDtypeError elsewhere (keep the uint8 codes)."""
    f = get_format(format)
    codes, _ = _unwrap(codes)
    ops = ops_of(codes)
    if STATUS[ops.name][f.name] not in ("computed", "stored"):
        raise UnsupportedDtypeError(
            f"{ops.name} cannot hold {f.name} arrays (status: {STATUS[ops.name][f.name]}); keep the uint8 codes "
            f"and decode them with arraylayer.lowp.decode(codes, {f.name!r})."
        )
    return _as_native(ops, codes, f)


def _as_native(ops: Any, codes: Any, f: Format) -> Any:
    """:func:`to_native` for a framework that holds ``f`` (checked by the caller)."""
    if ops.name == "tensorflow" or (ops.name == "jax" and f.bits < 8):  # no bitcast: every value is exact in float32/int32
        return ops.astype(decode(codes, f, "float32" if f.is_float else "int32"), f.name)
    return ops.from_codes(codes, f.name)


def cast(x: Any, format: str | Format, *, saturate: bool = False) -> Any:
    """``x`` in ``format``: an array of the framework's own dtype where it stores the format,
    otherwise the uint8 codes (the format is then carried by the caller). arraylayer Arrays give
    the uint8 codes as an Array (``arraylayer.astype`` gives an Array of the low-precision dtype)."""
    f = get_format(format)
    x, wrapped = _unwrap(x)
    ops = ops_of(x)
    source = ops.dtype_name(x)
    if not wrapped:
        mode = NATIVE_ENCODE.get((ops.name, f.name))
        if mode is not None and source == "float32" and not ops.own_cast_unlike_eager(x, source):
            if mode in ("direct", "cast") and not saturate:  # the framework's own cast: ml_dtypes' bits
                fused = compiled(ops, x, ("cast", f.name), lambda: partial(ops.astype, name=f.name))
                return fused(x) if fused else ops.astype(x, f.name)
            if mode in _FIXED and f.name in ENCODE and usable(x, x):  # torch's eager CPU tensors: in C
                return encoded(x, f.name, saturate, ops.native_dtype(f.name))
    codes = _encode(ops, x, source, f, saturate, True)
    if wrapped:
        return _wrap(codes, wrapped)
    return _as_native(ops, codes, f) if STATUS[ops.name][f.name] in ("computed", "stored") else codes
