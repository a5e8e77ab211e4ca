"""Native dtype objects and array conversion for the core (NumPy, the default backend).

The backend adapters (``arraylayer.backends``) generalise these to every framework;
the core needs only NumPy, which is always installed, and imports it lazily.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .dtypes import Dtype, DtypeLike, as_dtype, register_dtype_alias

__all__ = ["as_native_dtype", "asarray_like"]


@cache
def _numpy_dtype(dtype: Dtype) -> Any:
    import numpy as np

    if dtype == "bfloat16":
        import ml_dtypes

        native = np.dtype(ml_dtypes.bfloat16)
    else:
        native = np.dtype(str(dtype))
    register_dtype_alias(native, dtype)
    return native


def as_native_dtype(dtype: DtypeLike) -> Any:
    """The NumPy dtype object for ``dtype`` (bfloat16 through ml_dtypes)."""
    return _numpy_dtype(as_dtype(dtype))


def asarray_like(x: Any, dtype: Dtype, like: Any) -> Any:
    """``x`` as an array of ``dtype``; cast only if its dtype differs."""
    import numpy as np

    native = _numpy_dtype(dtype)
    if isinstance(x, np.ndarray):
        return x if x.dtype == native else x.astype(native)
    if like is not None and not isinstance(like, (np.ndarray, np.generic)) and hasattr(like, "dtype"):
        raise TypeError(
            f"promote_types_of_inputs needs the backend of {type(like).__name__}; "
            "only NumPy arrays are handled by the core."
        )
    return np.asarray(x, dtype=native)
