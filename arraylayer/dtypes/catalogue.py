"""The dtypes as data: each name's category and width in canonical order (the standard's fifteen,
bfloat16 and the low-precision family), NumPy's kind letters and type characters, and the name a
native dtype object carries. Plain data read by :mod:`arraylayer.dtypes`; imports nothing of
arraylayer but the low-precision encodings (:mod:`arraylayer.lowp.formats`)."""

from __future__ import annotations

import sys
from typing import Any, Final

from arraylayer.lowp.formats import FORMATS

# name -> (category, bits). The order is the canonical order of every tuple of arraylayer.dtypes.
CATALOGUE: Final[dict[str, tuple[str, int]]] = {
    "bool": ("bool", 8),
    "int8": ("int", 8),
    "int16": ("int", 16),
    "int32": ("int", 32),
    "int64": ("int", 64),
    "uint8": ("uint", 8),
    "uint16": ("uint", 16),
    "uint32": ("uint", 32),
    "uint64": ("uint", 64),
    "bfloat16": ("float", 16),
    "float16": ("float", 16),
    "float32": ("float", 32),
    "float64": ("float", 64),
    "complex64": ("complex", 64),
    "complex128": ("complex", 128),
    # The low-precision family (ml_dtypes' types; :mod:`arraylayer.lowp.formats` holds their encodings).
    **{name: ("float" if f.is_float else "int" if f.signed else "uint", f.bits) for name, f in FORMATS.items()},
}
#: The low-precision names, in canonical order: they sit outside the ``all_*`` tuples of the standard's dtypes.
LOW_PRECISION: Final = frozenset(FORMATS)

#: NumPy's one-letter kind of each category. The letter says what the values mean, also where
#: ml_dtypes' own answer differs (it says 'V' for bfloat16): every real floating type is 'f'.
KIND_LETTER: Final[dict[str, str]] = {"bool": "b", "int": "i", "uint": "u", "float": "f", "complex": "c"}

#: NumPy's (and ml_dtypes') type character of each dtype, as ``numpy.dtype(name).char`` gives it.
CHAR: Final[dict[str, str]] = {
    "bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "l", "uint8": "B", "uint16": "H",
    "uint32": "I", "uint64": "L", "bfloat16": "E", "float16": "e", "float32": "f", "float64": "d",
    "complex64": "F", "complex128": "D",
    # ml_dtypes' characters (two of them repeat NumPy's: look a type up by name, never by char)
    "float8_e4m3fn": "4", "float8_e5m2": "5", "float8_e4m3fnuz": "G", "float8_e5m2fnuz": "C",
    "float8_e4m3b11fnuz": "L", "float8_e4m3": "7", "float8_e3m4": "3", "float8_e8m0fnu": "W",
    "float6_e2m3fn": "8", "float6_e3m2fn": "9", "float4_e2m1fn": "0", "int4": "a", "uint4": "A", "int2": "c",
    "uint2": "C", "int1": "e", "uint1": "E",
}

# Modules whose dtype objects may be inspected by name. Anything else must be
# registered explicitly with :func:`arraylayer.dtypes.register_dtype_alias` (third-party backends do).
KNOWN_NATIVE_MODULES: Final = ("numpy", "ml_dtypes", "jax", "jaxlib", "torch", "tensorflow")


def native_name(value: Any) -> str | None:
    """The dtype name a native dtype object stands for, or None if it is not one."""
    if isinstance(value, type):
        # numpy/ml_dtypes scalar types (np.float32, ml_dtypes.bfloat16) ...
        if value.__module__.split(".")[0] in ("numpy", "ml_dtypes") and "numpy" in sys.modules:
            try:
                return str(sys.modules["numpy"].dtype(value).name)
            except TypeError:
                return None
        # ... and jnp.float32, a type that carries its numpy dtype as `.dtype`.
        inner = getattr(value, "dtype", None)
        name = getattr(inner, "name", None)
        return name if isinstance(name, str) else None
    root = type(value).__module__.split(".")[0]
    if root not in KNOWN_NATIVE_MODULES:
        return None
    if root == "torch":
        text = str(value)
        return text[6:] if text.startswith("torch.") else None
    name = getattr(value, "name", None)  # numpy.dtype, tf.DType
    return name if isinstance(name, str) else None
