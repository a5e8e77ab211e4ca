"""The dtype rules of the public functions, as data that the api layer and the support
declarations (:mod:`arraylayer.support`) both read; neither reads the other for them.

Each row of :data:`UNARY` / :data:`BINARY` says which dtype kinds an element-wise function
takes (letters b i u f c) and which rule gives its computation dtype:

* ``same``: the inputs' promoted dtype (``add``, ``floor``, ``maximum`` ...);
* ``inexact``: the promoted dtype, with bool and integers raised to the default float
  (seed 002's divide rule: ``int8 / int8`` is never narrower than the default float;
  ``sqrt(int32)`` is the default float on every backend);
* ``bool``: compare in the promoted dtype, return bool (comparisons, ``isnan`` ...);
* ``real``: the real dtype of a complex input (``abs``, ``real``, ``imag``);
* ``logical``: inputs as bool (``logical_and`` ...).

:func:`accumulator_dtype` is the Array API's accumulator rule of ``sum``, ``prod``,
``cumulative_*`` and ``trace``.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from arraylayer.dtypes.defaults import default_int_dtype, default_uint_dtype
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype

__all__ = ["KIND_LETTER", "KIND_WORDS", "Spec", "UNARY", "BINARY", "accumulator_dtype"]

#: Each dtype kind's letter in :attr:`Spec.kinds` (and :class:`~arraylayer.support.Uses`).
KIND_LETTER: Final = {"bool": "b", "int": "i", "uint": "u", "float": "f", "complex": "c"}
#: The words an error uses for each kind letter.
KIND_WORDS: Final = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "real floating-point",
                      "c": "complex"}


class Spec(NamedTuple):
    """One elementwise function: accepted kinds (letters b i u f c), rule, Paddle scope, summary."""

    kinds: str
    rule: str
    paddle: str  # "common", "divide", "logic", "scalar" (tensor-scalar only) or "" (not in Paddle's list)
    summary: str


UNARY: Final[dict[str, Spec]] = {
    "abs": Spec("iufc", "real", "", "Absolute value; the real dtype for complex input."),
    "acos": Spec("biufc", "inexact", "", "Inverse cosine."),
    "acosh": Spec("biufc", "inexact", "", "Inverse hyperbolic cosine."),
    "asin": Spec("biufc", "inexact", "", "Inverse sine."),
    "asinh": Spec("biufc", "inexact", "", "Inverse hyperbolic sine."),
    "atan": Spec("biufc", "inexact", "", "Inverse tangent."),
    "atanh": Spec("biufc", "inexact", "", "Inverse hyperbolic tangent."),
    "bitwise_invert": Spec("biu", "same", "", "Bitwise NOT (logical NOT for bool)."),
    "ceil": Spec("iuf", "same", "", "Smallest integer value not less than x, in x's dtype."),
    "conj": Spec("iufc", "same", "", "Complex conjugate (x itself for real input)."),
    "cos": Spec("biufc", "inexact", "", "Cosine."),
    "cosh": Spec("biufc", "inexact", "", "Hyperbolic cosine."),
    "exp": Spec("biufc", "inexact", "", "Exponential."),
    "expm1": Spec("biufc", "inexact", "", "exp(x) - 1, accurate near 0."),
    "floor": Spec("iuf", "same", "", "Largest integer value not greater than x, in x's dtype."),
    "imag": Spec("biufc", "real", "", "Imaginary part (zeros of x's dtype for real and bool input, as NumPy)."),
    "isfinite": Spec("biufc", "bool", "", "True where x is finite."),
    "isinf": Spec("biufc", "bool", "", "True where x is infinite."),
    "isnan": Spec("biufc", "bool", "", "True where x is NaN."),
    "log": Spec("biufc", "inexact", "", "Natural logarithm."),
    "log1p": Spec("biufc", "inexact", "", "log(1 + x), accurate near 0."),
    "log2": Spec("biufc", "inexact", "", "Base-2 logarithm."),
    "log10": Spec("biufc", "inexact", "", "Base-10 logarithm."),
    "logical_not": Spec("biufc", "logical", "", "Logical NOT (input read as bool)."),
    "negative": Spec("iufc", "same", "", "-x."),
    "positive": Spec("iufc", "same", "", "+x."),
    "real": Spec("biufc", "real", "", "Real part (x itself for real and bool input, as NumPy)."),
    "reciprocal": Spec("biufc", "inexact", "", "1 / x."),
    "round": Spec("iufc", "same", "", "Round to the nearest integer, halves to even, in x's dtype."),
    "sign": Spec("iufc", "same", "", "Sign of x (x / |x| for complex, 0 at 0)."),
    "signbit": Spec("f", "bool", "", "True where the sign bit is set (also for -0.0 and -NaN)."),
    "sin": Spec("biufc", "inexact", "", "Sine."),
    "sinh": Spec("biufc", "inexact", "", "Hyperbolic sine."),
    "sqrt": Spec("biufc", "inexact", "", "Square root."),
    "square": Spec("iufc", "same", "", "x * x."),
    "tan": Spec("biufc", "inexact", "", "Tangent."),
    "tanh": Spec("biufc", "inexact", "", "Hyperbolic tangent."),
    "trunc": Spec("iuf", "same", "", "Round toward zero, in x's dtype."),
}

BINARY: Final[dict[str, Spec]] = {
    "add": Spec("biufc", "same", "common", "x1 + x2 (logical OR for bool)."),
    "atan2": Spec("biuf", "inexact", "common", "Angle of the point (x2, x1), quadrant-aware."),
    "bitwise_and": Spec("biu", "same", "scalar", "Bitwise AND."),
    "bitwise_left_shift": Spec("iu", "same", "", "x1 shifted left by x2 bits."),
    "bitwise_or": Spec("biu", "same", "scalar", "Bitwise OR."),
    "bitwise_right_shift": Spec("iu", "same", "", "x1 shifted right by x2 bits (arithmetic for signed)."),
    "bitwise_xor": Spec("biu", "same", "scalar", "Bitwise XOR."),
    "copysign": Spec("biuf", "inexact", "", "|x1| with the sign of x2."),
    "divide": Spec("biufc", "inexact", "divide", "True division; integers give the default float."),
    "equal": Spec("biufc", "bool", "logic", "x1 == x2."),
    "floor_divide": Spec("iuf", "same", "common", "Floor of x1 / x2 (Python's //; at infinities the floor of the true quotient, as the standard says)."),
    "greater": Spec("biuf", "bool", "logic", "x1 > x2."),
    "greater_equal": Spec("biuf", "bool", "logic", "x1 >= x2."),
    "hypot": Spec("biuf", "inexact", "", "sqrt(x1**2 + x2**2) without overflow."),
    "less": Spec("biuf", "bool", "logic", "x1 < x2."),
    "less_equal": Spec("biuf", "bool", "logic", "x1 <= x2."),
    "logaddexp": Spec("biuf", "inexact", "common", "log(exp(x1) + exp(x2)) without overflow."),
    "logical_and": Spec("biufc", "logical", "logic", "Logical AND (inputs read as bool)."),
    "logical_or": Spec("biufc", "logical", "logic", "Logical OR (inputs read as bool)."),
    "logical_xor": Spec("biufc", "logical", "logic", "Logical XOR (inputs read as bool)."),
    "maximum": Spec("biuf", "same", "common", "Elementwise maximum; NaN propagates."),
    "minimum": Spec("biuf", "same", "common", "Elementwise minimum; NaN propagates."),
    "multiply": Spec("biufc", "same", "common", "x1 * x2 (logical AND for bool)."),
    "nextafter": Spec("biuf", "inexact", "common", "The next representable value after x1 toward x2."),
    "not_equal": Spec("biufc", "bool", "logic", "x1 != x2."),
    "pow": Spec("iufc", "same", "common", "x1 ** x2."),
    "remainder": Spec("iuf", "same", "common", "x1 mod x2 with the sign of x2 (Python's %)."),
    "subtract": Spec("iufc", "same", "common", "x1 - x2."),
}


def accumulator_dtype(dtype: Dtype, requested: DtypeLike | None) -> Dtype:
    """The dtype ``sum``/``prod``/``cumulative_*``/``trace`` compute and return in."""
    if requested is not None:
        return as_dtype(requested)
    if dtype.category in ("bool", "int"):
        default = default_int_dtype()
        return default if dtype.category == "bool" or dtype.bits < default.bits else dtype
    if dtype.category == "uint":
        default = default_uint_dtype()
        return default if dtype.bits < default.bits else dtype
    return dtype
