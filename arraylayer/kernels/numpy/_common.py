"""What several numpy kernel modules share: the half-precision dtypes and the bfloat16 scalar fix.

ml_dtypes' bfloat16 loops accumulate in bfloat16 (a sum of 1000 ones is 256), so the kernels
that accumulate compute float16/bfloat16 in float32 and round once.
Dtypes are compared by identity: the api layer passes numpy's own (singleton) dtype objects.
"""

from __future__ import annotations

from typing import Any, Final

import ml_dtypes
import numpy as np

BF16: Final = np.dtype(ml_dtypes.bfloat16)
F16: Final = np.dtype(np.float16)
F32: Final = np.dtype(np.float32)
#: the Python scalar types ml_dtypes' bfloat16 does not take as values of its own dtype
PY_REAL: Final = (int, float)


def is_half(dtype: Any) -> bool:
    """True for float16 and bfloat16, the dtypes computed in float32."""
    return dtype is F16 or dtype is BF16


def bf16_scalar(value: Any, other: Any) -> Any:
    """``value`` as a bfloat16 scalar when it is a Python int/float beside a bfloat16 array.

    numpy turns a Python scalar into the array's dtype (NEP 50), but ml_dtypes' bfloat16
    promotes a Python float to float32 (and cannot convert an int beyond int64), so it is
    converted here; anything else is returned unchanged.
    """
    if type(value) in PY_REAL and other.dtype is BF16:
        return BF16.type(float(value))
    return value

