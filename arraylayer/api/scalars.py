"""Python scalars as the weak scalar rule sees them: converted to the Python type of the array's
kind and, beside a half-precision array, rounded to that dtype first.

JAX, NumPy and TensorFlow convert a Python scalar to the array's dtype before computing, so
``divide(float16 1.5, 65535)`` divides by ``inf`` (65535 rounds to inf in float16) and gives 0.
PyTorch computes half-precision ops in float32 with the scalar unrounded and gives 2.3e-5.
Rounding the scalar on the host first gives every backend the same inputs, hence the same
result; for the other dtypes the Python type conversion is all there is to do.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from typing import Any, Final

from arraylayer.dtypes import Dtype

__all__ = ["PYTHON_TYPE_OF_KIND", "scalar_converter"]

# The Python type a scalar takes next to an array of a dtype of this kind: TensorFlow,
# for one, will not convert ``True`` for an int32 tensor, nor ``2`` for a complex one.
PYTHON_TYPE_OF_KIND: Final = {"bool": bool, "int": int, "uint": int, "float": float, "complex": complex}


def _float16(value: Any) -> float:
    """``value`` rounded to the nearest float16 (ties to even), as a Python float."""
    value = float(value)
    try:
        return struct.unpack("<e", struct.pack("<e", value))[0]  # type: ignore[no-any-return]
    except OverflowError:  # beyond float16's range: the conversion gives an infinity
        return math.copysign(math.inf, value)


def _bfloat16(value: Any) -> float:
    """``value`` rounded to the nearest bfloat16 (ties to even, through float32), as a Python float."""
    value = float(value)
    if value != value:  # NaN
        return value
    try:
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    if (bits & 0x7F800000) != 0x7F800000:  # finite: round the low 16 bits away, ties to even
        bits += 0x7FFF + ((bits >> 16) & 1)
    return struct.unpack("<f", struct.pack("<I", bits & 0xFFFF0000))[0]  # type: ignore[no-any-return]


_ROUNDING: Final[dict[str, Callable[[Any], float]]] = {"float16": _float16, "bfloat16": _bfloat16}


def scalar_converter(dtype: Dtype) -> Callable[[Any], Any]:
    """How a Python scalar beside an array of ``dtype`` enters the kernel: the Python type of
    the dtype's kind (``float`` for float32), or, for half precision, rounding to the dtype."""
    return _ROUNDING.get(str(dtype)) or PYTHON_TYPE_OF_KIND[dtype.category]
