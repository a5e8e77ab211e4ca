"""Low-precision formats (float8, float6, float4, int4, int2) with ml_dtypes' bits on every backend.

The catalogue (:mod:`arraylayer.dtypes`) reads :mod:`.formats` at import, so this package imports
nothing else until a name is used: casts and scales (which need NumPy) load on first access.
docs/low_precision.rst describes what stands.

The folder ``arraylayer/lowp/`` owns the low-precision formats: their rules as data (``formats.py``),
the casts with ml_dtypes' bits, the computation rule, the moves of their bits, scaled matmul.

May import: the base modules, ``dtypes``, ``runtime``, ``kernels``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from arraylayer.lowp.formats import FLOAT_FORMATS, FORMATS, INT_FORMATS, NATIVE, STATUS, Format, get_format

# name -> the submodule defining it, imported on first access (NumPy is not imported with arraylayer).
_LAZY = {
    **dict.fromkeys(("cast", "decode", "encode", "format_of", "to_native"), "casts"),
    **dict.fromkeys(("NATIVE_ENCODE", "NATIVE_DECODE"), "native_casts"),
    "explain": "engine",
    **dict.fromkeys(("amax_scale", "dequantize", "quantize", "scaled_matmul"), "scaled"),
}

__all__ = ["FORMATS", "FLOAT_FORMATS", "INT_FORMATS", "NATIVE", "STATUS", "Format", "get_format", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:  # kept in the module once found: the next look-up does not come here
        value = globals()[name] = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
