"""The portable rule of the low-precision casts: each format's rule (:mod:`.formats`, data) applied with
a framework's own integer and gather operations, so it runs on every backend, eagerly, under every
compiler and on every device, and gives ml_dtypes' bits.

* **Floating formats**, encoding: a float32 bit pattern rounded to nearest, ties to even, with the
  format's out-of-range codes (NaN, inf or saturation, ``Format.specials``); ``saturate=True`` maps
  finite values beyond the largest and infinities to the largest finite value of that sign (NaN stays
  NaN). float16 and bfloat16 are widened to float32 first (exact); float64 is rounded to float32 first,
  as ml_dtypes does.
* **Integer formats** wrap: a float is truncated toward zero and its low bits kept; NaN, inf and
  values outside int32 give 0 (see docs/low_precision.rst for the out-of-range rule).
* **Decoding** gathers from a table of the format's 2**bits values.

This module is the reference: every acceleration registered with :mod:`.engine` (C tables, Triton,
JAX's one kernel, the frameworks' own casts with fix-ups) is checked against it bit for bit, on every
code of every format (tests/test_lowp_engine.py).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

from arraylayer.context import replaying
from arraylayer.errors import UnsupportedDtypeError
from arraylayer.lowp.formats import FORMATS, Format

__all__ = ["check_float", "decode_table", "encode_float", "encode_int", "gather", "native_codes", "widened"]

WIDE = ("float32", "float64")
NARROW = ("float16", "bfloat16")


def check_float(source: str, f: Format, name: str) -> None:
    """Refuse a ``source`` dtype that no float format encodes from."""
    if source not in WIDE and source not in NARROW:
        raise UnsupportedDtypeError(
            f"{name} of dtype {source} cannot be encoded as {f.name}: pass float16, bfloat16, float32 or "
            f"float64 (cast integers with astype first)."
        )


def widened(ops: Any, x: Any, source: str) -> Any:
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


def _float16_nan_signs(torch: Any, half: Any, x: Any) -> Any:
    """``x`` (torch's float32 cast of the float16 ``half``) with the sign of ``half``'s NaNs: the
    cast's scalar loop (a short array, the tail of a long one) gives +NaN for every NaN. Eagerly,
    NaN-free data costs one ``isnan`` pass."""
    nan = torch.isnan(x)
    if not replaying() and not bool(nan.any()):
        return x
    return torch.where(nan & (half.view(torch.int16) < 0), -torch.abs(x), x)


def below_float32_normals(ops: Any, x: Any, codes: Any) -> Any:
    """float8_e8m0fnu codes of the positive float64 values below float32's smallest normal, which
    XLA's and TensorFlow's float64 -> float32 conversion flushes to zero. ml_dtypes rounds them to
    float32's subnormals, then gives code 1 (2**-126) above 2**-127 and code 0 (2**-127) below."""
    tiny = (x > 0) & (x < 2.0**-126)
    return ops.where(tiny & (x > 2.0**-127 + 2.0**-150), 1, ops.where(tiny, 0, codes))


def encode_float(ops: Any, x: Any, f: Format, saturate: bool = False) -> Any:
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


def encode_int(ops: Any, x: Any, source: str, f: Format, saturate: bool) -> Any:
    """The codes of ``x`` (any integer dtype, or float16/bfloat16/float32/float64) in the integer
    format ``f``: integers keep their low bits; floats are truncated toward zero first."""
    mask = (1 << f.bits) - 1
    if source.startswith(("int", "uint")):
        if saturate:
            x = ops.clip(x, int(f.min), int(f.max))
        return ops.astype(x & mask, "uint8")
    check_float(source, f, "x")
    if source in NARROW:
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


def _decoded(f: Format, code: int) -> float:
    magnitude = code & ~f.sign_bit
    negative = bool(code & f.sign_bit)
    if code == f.nan_code or (f.specials == "ieee" and magnitude > f.inf_code) or (f.specials == "fn" and magnitude == f.nan_code):
        return float(np.copysign(np.nan, -1.0 if negative else 1.0))
    if f.specials == "ieee" and magnitude == f.inf_code:
        return -np.inf if negative else np.inf
    return f.value(code)


def gather(ops: Any, table: Any, codes: Any, bits: int) -> Any:
    """``table[codes]``, the codes of a format narrower than a byte masked to their bits first."""
    return ops.take(table, codes if bits == 8 else codes & ((1 << bits) - 1))


def native_codes(ops: Any, x: Any, f: Format) -> Any:
    """The codes of a native low-precision array. TensorFlow has no bitcast for them, and XLA bitcasts
    a type narrower than a byte only in pairs: those go through float32 (int32), exactly."""
    if ops.name == "tensorflow" or (ops.name == "jax" and f.bits < 8):
        if not f.is_float:
            return ops.astype(ops.astype(x, "int32") & ((1 << f.bits) - 1), "uint8")
        return encode_float(ops, ops.astype(x, "float32"), f)
    return ops.codes_of(x)
