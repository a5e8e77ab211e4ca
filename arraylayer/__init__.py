"""arraylayer: write array code once, run it on NumPy, JAX, PyTorch and TensorFlow
with one set of dtype semantics.

This module is the public face: it re-exports, and holds no logic of its own
beyond the module-level look-ups of backend-dependent names (``valid_dtypes`` ...).
Importing it imports no array framework (not even NumPy).
"""

from __future__ import annotations

from typing import Any

from . import errors
from .defaults import (
    default_complex_dtype,
    default_dtype,
    default_float_dtype,
    default_int_dtype,
    default_uint_dtype,
    infer_dtype,
    set_default_complex_dtype,
    set_default_float_dtype,
    set_default_int_dtype,
    set_default_uint_dtype,
    use_default_complex_dtype,
    use_default_dtypes,
    use_default_float_dtype,
    use_default_int_dtype,
    use_default_uint_dtype,
)
from .dtypes import (
    Dtype,
    FInfo,
    IInfo,
    all_complex_dtypes,
    all_dtypes,
    all_float_dtypes,
    all_int_dtypes,
    all_numeric_dtypes,
    all_uint_dtypes,
    as_dtype,
    dtype_bits,
    finfo,
    iinfo,
    is_bool_dtype,
    is_complex_dtype,
    is_float_dtype,
    is_int_dtype,
    is_numeric_dtype,
    is_uint_dtype,
    register_dtype_alias,
)
from .errors import (
    ArrayLayerError,
    BackendMismatchError,
    BackendNotInstalledError,
    DeviceError,
    InvalidDtypeError,
    ScalarOverflowError,
    TypePromotionError,
    UnknownBackendError,
    UnsupportedDtypeError,
)
from .promotion import (
    can_cast,
    dtype_promotion,
    get_dtype_promotion,
    lattice_result_type,
    promote_types,
    promote_types_of_inputs,
    promotion_policies,
    result_type,
    set_dtype_promotion,
)

__version__ = "0.1.0"

# The fifteen dtypes as attributes: arraylayer.float32 and friends.
bool = Dtype("bool")  # noqa: A001 - the dtype's own name
int8 = Dtype("int8")
int16 = Dtype("int16")
int32 = Dtype("int32")
int64 = Dtype("int64")
uint8 = Dtype("uint8")
uint16 = Dtype("uint16")
uint32 = Dtype("uint32")
uint64 = Dtype("uint64")
bfloat16 = Dtype("bfloat16")
float16 = Dtype("float16")
float32 = Dtype("float32")
float64 = Dtype("float64")
complex64 = Dtype("complex64")
complex128 = Dtype("complex128")

# valid_* / invalid_*: before a backend narrows them, every dtype is valid.
_VALID_FROM_ALL = {
    "valid_dtypes": all_dtypes,
    "valid_numeric_dtypes": all_numeric_dtypes,
    "valid_int_dtypes": all_int_dtypes,
    "valid_uint_dtypes": all_uint_dtypes,
    "valid_float_dtypes": all_float_dtypes,
    "valid_complex_dtypes": all_complex_dtypes,
}


def __getattr__(name: str) -> Any:
    if name in _VALID_FROM_ALL:
        return _VALID_FROM_ALL[name]
    if name.startswith("invalid_") and "valid_" + name[len("invalid_"):] in _VALID_FROM_ALL:
        return ()
    raise AttributeError(f"module 'arraylayer' has no attribute {name!r}")


__all__ = [
    "errors", "Dtype", "FInfo", "IInfo", "as_dtype", "register_dtype_alias",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
    "all_dtypes", "all_numeric_dtypes", "all_int_dtypes", "all_uint_dtypes", "all_float_dtypes",
    "all_complex_dtypes", *_VALID_FROM_ALL, *("in" + n for n in _VALID_FROM_ALL),
    "is_bool_dtype", "is_int_dtype", "is_uint_dtype", "is_float_dtype", "is_complex_dtype",
    "is_numeric_dtype", "dtype_bits", "finfo", "iinfo",
    "promote_types", "result_type", "lattice_result_type", "can_cast", "promote_types_of_inputs",
    "set_dtype_promotion", "get_dtype_promotion", "dtype_promotion", "promotion_policies",
    "default_int_dtype", "default_uint_dtype", "default_float_dtype", "default_complex_dtype",
    "set_default_int_dtype", "set_default_uint_dtype", "set_default_float_dtype",
    "set_default_complex_dtype", "use_default_int_dtype", "use_default_uint_dtype",
    "use_default_float_dtype", "use_default_complex_dtype", "use_default_dtypes",
    "default_dtype", "infer_dtype",
    "ArrayLayerError", "InvalidDtypeError", "TypePromotionError", "ScalarOverflowError",
    "UnsupportedDtypeError", "UnknownBackendError", "BackendNotInstalledError",
    "BackendMismatchError", "DeviceError",
]
