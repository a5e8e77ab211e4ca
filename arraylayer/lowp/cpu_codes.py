"""torch's own float8 casts, eagerly on the CPU, fixed up to ml_dtypes' bits in one pass.

torch spells a few codes otherwise than ml_dtypes (measured by tests/test_lowp_casts.py): encoding,
its float8_e5m2 NaN is S.11111.11 where ml_dtypes' is S.11111.10, and its float8_e4m3fn cast
saturates to S.1111.110 (448) beyond the rounding bound where ml_dtypes gives NaN (S.1111.111);
decoding float8_e5m2, its NaNs keep their payload (and lose their sign in bfloat16) where ml_dtypes
gives the quiet NaN of the code's sign. The optional C extension ``arraylayer._codes`` (built by
setup.py) fixes them in place in one read-only scan of the cast's codes, reading the source only
at a suspect code. Where it is not built, casts.py fixes them with torch's ops (and decodes through
its table). Used for contiguous CPU tensors outside torch.compile; casts.py keeps its torch ops
elsewhere.
"""

from __future__ import annotations

from typing import Any

from ..c_extensions import optional_extension
from ..context import replaying

__all__ = ["DECODE_NANS", "decoded", "fixed", "usable"]

_kernel: Any = optional_extension("_codes")

#: Formats whose torch cast to float16/bfloat16/float32/float64 gives ml_dtypes' bits on the CPU
#: but for its NaN codes: the lowest NaN magnitude. (float8_e4m3fn's does too, but it is several
#: times slower than casts.py's table.)
DECODE_NANS = {"float8_e5m2": 0x7D}


def usable(x: Any, y: Any) -> bool:
    """Whether the C fix-ups can run on ``x`` and its cast ``y``: built, eagerly, on the CPU, both
    contiguous (so that their elements lie in the same order)."""
    if _kernel is None or not x.is_cpu or not x.is_contiguous() or not y.is_contiguous() or replaying():
        return False
    import torch  # loaded: x is its tensor

    return not torch.compiler.is_compiling()


def fixed(x: Any, codes: Any, mode: str, old: int, new: int, bound: float, inclusive: bool) -> Any:
    """``codes`` (uint8, torch's cast of the float32 ``x``, ours) with ml_dtypes' bits, in place:
    "nan": magnitude ``old`` becomes ``new``; "overflow": magnitude ``old`` becomes ``new`` where
    ``|x|`` is past ``bound`` (reached, where ``inclusive``)."""
    if mode == "nan":
        _kernel.respell(codes.data_ptr(), codes.numel(), old, new)
    else:
        _kernel.beyond(codes.data_ptr(), x.data_ptr(), codes.numel(), old, new, bound, inclusive)
    return codes


def decoded(y: Any, codes: Any, lowest: int, nans: tuple[int, int]) -> Any:
    """``y`` (torch's cast of the codes' float8 array to a wider float, ours) with each code of
    magnitude ``lowest`` or more given the bits ``nans`` (positive, negative), in place."""
    _kernel.nans(codes.data_ptr(), y.data_ptr(), codes.numel(), lowest, y.element_size(), *nans)
    return y
