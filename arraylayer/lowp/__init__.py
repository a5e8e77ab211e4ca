"""Low-precision formats (float8, float6, float4, int4, int2) with ml_dtypes' bits on every backend.

Not yet wired into arraylayer's dtype catalogue: these functions take native arrays (or
arraylayer Arrays) of float/uint8 and keep a format that a framework cannot store as uint8 codes.
docs/low_precision.rst describes what stands.
"""

from .casts import NATIVE_DECODE, NATIVE_ENCODE, cast, decode, encode, format_of, to_native
from .formats import FLOAT_FORMATS, FORMATS, INT_FORMATS, NATIVE, STATUS, Format, get_format
from .scaled import amax_scale, dequantize, quantize, scaled_matmul

__all__ = [
    "FORMATS", "FLOAT_FORMATS", "INT_FORMATS", "NATIVE", "STATUS", "NATIVE_ENCODE", "NATIVE_DECODE", "Format", "get_format",
    "encode", "decode", "cast", "to_native", "format_of", "amax_scale", "quantize", "dequantize", "scaled_matmul",
]
