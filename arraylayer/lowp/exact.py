"""The functions of order and selection, which the computation rule runs exactly.

Every value of a low-precision format is exactly a float32 (an int32 for the integer formats), and
comparing, selecting, sorting and searching never make a new value: decoding to the wide type, running
the backend's own wide kernel and encoding the result back gives the inputs' values, bit for bit, on
every backend. The one exception is NaN: a NaN in a result is the format's one NaN (the positive
one), as every result of the rule is (:mod:`arraylayer.lowp.compute`). Element-wise comparisons,
``maximum``/``minimum``, ``isnan``/``isinf``/``isfinite``/``signbit``, ``abs`` and ``negative`` are in
the element-wise table already (tabulated, hence exact too); ``max``/``min`` are reductions.
``unique_counts``/``unique_inverse``/``unique_all`` are ``unique_values`` with indices and counts
(float32's equality: -0.0 is 0.0, every NaN is distinct); ``nonzero``/``count_nonzero`` read the
codes (-0.0 is zero, NaN is not; float8_e8m0fnu has no zero). The functions that only move elements are in
:mod:`arraylayer.lowp.moving`.

:data:`EXACT` lists the functions outside those tables that the rule runs this way, with the kinds
they take; :data:`INDEX_VALUED` those whose result is an index (never rounded into the format, also
where the index dtype is the integer formats' wide int32).
"""

from __future__ import annotations

from typing import Final

__all__ = ["EXACT", "INDEX_VALUED", "ZERO_TESTS", "refusal"]

#: Function -> the kind letters it takes (all of them are real-valued functions).
EXACT: Final[dict[str, str]] = dict.fromkeys(
    ("clip", "where", "sort", "argsort", "argmax", "argmin", "searchsorted", "unique_values", "unique_counts",
     "unique_inverse", "unique_all", "nonzero", "count_nonzero"), "iuf")
#: The functions of :data:`EXACT` whose result is an index array (or a count).
INDEX_VALUED: Final = frozenset({"argsort", "argmax", "argmin", "searchsorted", "nonzero", "count_nonzero"})
#: The functions of :data:`EXACT` that only ask which elements are zero: they read the codes.
ZERO_TESTS: Final = frozenset({"nonzero", "count_nonzero"})


_PRODUCTS: Final = frozenset({"matmul", "tensordot", "vecdot", "linalg.matmul", "linalg.tensordot", "linalg.vecdot"})


def refusal(name: str, dtype: str, wide: str) -> str:
    """The message of the UnsupportedDtypeError for a function the rule does not run, with the fix."""
    fix = f"Cast first: arraylayer.astype(x, '{wide}')"
    if name in _PRODUCTS:
        fix += ("; for float8 products with float32 accumulation use arraylayer.lowp.scaled_matmul(a, a_scale, "
                "b, b_scale) on lowp.quantize'd operands")
    return (f"{name} does not compute with {dtype} arrays on any backend (the low-precision rule covers the "
            f"element-wise, statistical, order and selection functions and those that move elements). {fix}.")
