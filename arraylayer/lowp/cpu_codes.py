"""float32 -> float8_e4m3fn/e5m2 with ml_dtypes' bits, and torch's float8 arrays decoded to wider
floats, on eager contiguous CPU tensors, in C, on torch's threads.

torch spells a few codes otherwise than ml_dtypes (measured by tests/test_lowp_casts.py): encoding,
its float8_e5m2 NaN is S.11111.11 where ml_dtypes' is S.11111.10, and its float8_e4m3fn cast
saturates to S.1111.110 (448) beyond the rounding bound where ml_dtypes gives NaN (S.1111.111);
decoding, its NaNs keep their payload (and lose their sign in bfloat16) where ml_dtypes gives the
quiet NaN of the code's sign. The optional C extension ``arraylayer._codes`` (built by setup.py)
encodes in one pass (round to nearest even, the format's out-of-range code) instead of torch's
cast, and decodes by a gather from casts.py's table of the format's values, each split over
``torch.get_num_threads()`` threads as torch splits its own casts (encoding over 32,768 elements on
torch's own OpenMP workers where its libgomp is loaded; see _codes.c). Where it is not built, casts.py
fixes torch's casts with torch's ops and decodes through its table; it does so too outside eager
contiguous CPU tensors (torch.compile, other devices, strided views).
"""

from __future__ import annotations

from functools import cache
from typing import Any

from arraylayer.runtime.c_extensions import optional_extension
from arraylayer.context import replaying
from arraylayer.lowp import engine, reference
from arraylayer.lowp.formats import FORMATS

__all__ = ["ENCODE", "decoded", "encoded", "usable"]

_kernel: Any = optional_extension("_codes")

#: Formats that the C encoder serves (it keeps the sign of NaN and zero: "fn" and "ieee" formats).
ENCODE = ("float8_e4m3fn", "float8_e5m2")

def usable(x: Any, y: Any) -> bool:
    """Whether the C functions can run on ``x`` and its cast ``y``: built, eagerly, on the CPU, both
    contiguous (so that their elements lie in the same order)."""
    if _kernel is None or not x.is_cpu or not x.is_contiguous() or not y.is_contiguous() or replaying():
        return False
    import torch  # loaded: x is its tensor

    return not torch.compiler.is_compiling()


@cache
def _fields(format: str, saturate: bool) -> tuple[int, int, int, int, int]:
    """_codes.encode's format arguments: mantissa bits, bias, the largest finite magnitude, the one
    past it (saturate: the largest; otherwise inf, or NaN where there is none) and NaN's."""
    f = FORMATS[format]
    over = f.max_code if saturate else f.inf_code if f.has_inf else f.nan_code
    return f.mantissa_bits, f.bias, f.max_code, over, f.nan_code


def encoded(x: Any, format: str, saturate: bool, dtype: Any) -> Any:
    """The codes of the contiguous float32 CPU tensor ``x`` in ``format`` (one of ``ENCODE``), ml_dtypes'
    bits, as a new tensor of x's shape and the torch dtype ``dtype`` (uint8, or the format's own);
    ``saturate``: beyond the largest finite value gives it."""
    import torch  # loaded: x is its tensor

    codes = torch.empty_like(x, dtype=dtype)
    _kernel.encode(x.data_ptr(), codes.data_ptr(), x.numel(), *_fields(format, saturate), torch.get_num_threads())
    return codes


def decoded(codes: Any, table: tuple[Any, int], dtype: Any) -> Any:
    """The values of ``codes`` (a contiguous CPU tensor of one byte per element: a float8 dtype or
    uint8) as a new tensor of the torch dtype ``dtype``: ``table[code]`` (``table``: a NumPy array of
    ``dtype``'s width, 256 values, kept alive by the caller, and its address)."""
    import torch  # loaded: codes is its tensor

    values, address = table
    out = torch.empty_like(codes, dtype=dtype)
    _kernel.decode(codes.data_ptr(), address, out.data_ptr(), codes.numel(), values.itemsize, torch.get_num_threads())
    return out


class CTables:
    """The cast engine's acceleration for torch's eager contiguous CPU tensors: the C encoder (float8_e4m3fn
    and float8_e5m2, in place of torch's cast and its fix-up) and the C gather from the format's table
    (every 8-bit format into a wider float)."""

    name, order, operations = "c_tables", 20, ("encode", "decode", "cast")

    def declines(self, request: Any) -> str:
        if request.ops.name != "torch":
            return "torch's tensors only"
        if _kernel is None:
            return "the C extension arraylayer._codes is not built"
        f = request.format
        if request.op == "decode":
            if f.bits != 8 or request.dtype not in _DECODE_TO:
                return f"decodes 8-bit formats into float16/bfloat16/float32/float64, not {f.name} into {request.dtype}"
            return "" if usable(request.x, request.x) else "not an eager contiguous CPU tensor"
        if f.name not in ENCODE or request.portable:
            return "asked for the portable rule" if request.portable else f"encodes {' and '.join(ENCODE)} only"
        return "" if usable(request.wide, request.wide) else "not an eager contiguous CPU tensor"

    def run(self, request: Any) -> Any:
        ops, f = request.ops, request.format
        if request.op == "decode":
            codes = ops.codes_of(request.x) if request.stored else request.x
            return decoded(codes, _table(f.name, request.dtype), ops.native_dtype(request.dtype))
        dtype = ops.native_dtype(f.name if request.op == "cast" else "uint8")
        return encoded(request.wide, f.name, request.saturate, dtype)


_DECODE_TO = ("float16", "bfloat16", "float32", "float64")


@cache
def _table(format: str, dtype: str) -> tuple[Any, int]:
    """The reference's table of ``format``'s values as ``dtype``, and its address (kept alive here)."""
    table = reference.decode_table(format, dtype)
    return table, table.ctypes.data


engine.register(CTables())
