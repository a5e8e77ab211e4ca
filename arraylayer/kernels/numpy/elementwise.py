"""Element-wise kernels: numpy's ufuncs, used as they are.

numpy 2 already has the Array API semantics (sign of complex is x/|x|, round is half-to-even,
remainder/floor_divide follow Python's signs, maximum/minimum propagate NaN, ceil/floor/trunc
keep integer dtypes, a Python scalar takes the array's dtype). The one gap is ml_dtypes'
bfloat16, which promotes a Python float to float32: the binary functions that accept floats
are wrapped to convert such a scalar first (see ``_common.bf16_scalar``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from arraylayer.kernels.numpy._common import BF16, PY_REAL, bf16_scalar


def _weak(ufunc: np.ufunc) -> Callable[[Any, Any], Any]:
    """``ufunc`` taking a Python scalar beside a bfloat16 array as a bfloat16 value."""

    def kernel(x1: Any, x2: Any, /) -> Any:
        if type(x2) in PY_REAL:
            if x1.dtype is BF16:
                x2 = BF16.type(float(x2))
        elif type(x1) in PY_REAL and x2.dtype is BF16:
            x1 = BF16.type(float(x1))
        return ufunc(x1, x2)

    kernel.arrays_plain = lambda dtype: ufunc  # type: ignore[attr-defined]  # two arrays of one dtype: the ufunc itself
    # beside any array but a bfloat16 one, the ufunc takes a Python scalar as NEP 50 says
    kernel.scalar_plain = lambda dtype, scalar_class: None if dtype is BF16 else ufunc  # type: ignore[attr-defined]
    kernel.__name__ = kernel.__qualname__ = ufunc.__name__
    kernel.__doc__ = f"numpy.{ufunc.__name__}, with a Python scalar beside a bfloat16 array kept bfloat16."
    return kernel


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """numpy.clip; for bfloat16 a maximum and a minimum instead, with bfloat16 bounds: ml_dtypes
    has no clip loop (numpy would clip in float32 and return float32)."""
    if x.dtype is not BF16 or (min is None and max is None):
        return np.clip(x, min, max)
    if min is not None:
        x = np.maximum(x, bf16_scalar(min, x))
    return x if max is None else np.minimum(x, bf16_scalar(max, x))


abs = np.abs
acos = np.acos
acosh = np.acosh
asin = np.asin
asinh = np.asinh
atan = np.atan
atanh = np.atanh
bitwise_and = np.bitwise_and
bitwise_invert = np.bitwise_invert
bitwise_left_shift = np.bitwise_left_shift
bitwise_or = np.bitwise_or
bitwise_right_shift = np.bitwise_right_shift
bitwise_xor = np.bitwise_xor
ceil = np.ceil
conj = np.conj
cos = np.cos
cosh = np.cosh
exp = np.exp
floor = np.floor
imag = np.imag
isfinite = np.isfinite
isinf = np.isinf
isnan = np.isnan
log = np.log
log2 = np.log2
log10 = np.log10
logical_and = np.logical_and
logical_not = np.logical_not
logical_or = np.logical_or
logical_xor = np.logical_xor
negative = np.negative
positive = np.positive
real = np.real
reciprocal = np.reciprocal
round = np.round
sign = np.sign
signbit = np.signbit
sin = np.sin
sinh = np.sinh
sqrt = np.sqrt
square = np.square
tan = np.tan
trunc = np.trunc

add = _weak(np.add)
atan2 = _weak(np.atan2)
copysign = _weak(np.copysign)
divide = _weak(np.divide)
equal = _weak(np.equal)
greater = _weak(np.greater)
greater_equal = _weak(np.greater_equal)
hypot = _weak(np.hypot)
less = _weak(np.less)
less_equal = _weak(np.less_equal)
logaddexp = _weak(np.logaddexp)
maximum = _weak(np.maximum)
minimum = _weak(np.minimum)
multiply = _weak(np.multiply)
nextafter = _weak(np.nextafter)
not_equal = _weak(np.not_equal)
remainder = _weak(np.remainder)
subtract = _weak(np.subtract)


def expm1(x: Any, /) -> Any:
    """Complex input at infinities, NaN and zero: exp(x) - 1, which has the standard's special
    values there (the framework's complex expm1 gives nan + nanj at the first two, -0 + 0j for
    -0 + 0j where the standard says 0 + 0j)."""
    if x.dtype.kind != "c":
        return np.expm1(x)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(x) & (x != 0), np.expm1(x), np.exp(x) - 1)


def _standard_at_infinities(x1: Any, x2: Any, quotient: Any) -> Any:
    """A floating ``floor_divide`` quotient with the standard's values where x1 or x2 is infinite:
    the floor of the true quotient (+-inf, +-0 or nan), where Python's ``//`` (numpy's) gives nan
    for ``inf // 2`` and -1 for ``-5 // inf``."""
    if quotient.dtype.kind in "biu":
        return quotient
    with np.errstate(over="ignore"):  # a Python float beyond the dtype's range is infinite in it
        x1, x2 = (np.asarray(x, quotient.dtype) if type(x) in PY_REAL else x for x in (x1, x2))
    infinite = np.isinf(x1) | np.isinf(x2)
    if not infinite.any():
        return quotient
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(infinite, np.floor(np.true_divide(x1, x2)), quotient).astype(quotient.dtype)


_floor_divide_weak = _weak(np.floor_divide)


def floor_divide(x1: Any, x2: Any, /) -> Any:
    """numpy.floor_divide (Python's signs, -0.0 included), with the standard's values at infinities."""
    return _standard_at_infinities(x1, x2, _floor_divide_weak(x1, x2))


def _floor_divide_arrays(x1: Any, x2: Any, /) -> Any:
    return _standard_at_infinities(x1, x2, np.floor_divide(x1, x2))


floor_divide.arrays_plain = lambda dtype: _floor_divide_arrays  # type: ignore[attr-defined]


def log1p(x: Any, /) -> Any:
    """Complex input at infinities and NaN: log(1 + x), which has the standard's special values
    there (the framework's complex log1p does not)."""
    if x.dtype.kind != "c":
        return np.log1p(x)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(x), np.log1p(x), np.log(1 + x))


def _signed_pow(x1: Any, x2: Any) -> Any:
    """Integer ``x1 ** x2`` where some exponent is negative: the true value truncated toward zero
    (1 for a base of 1, +-1 for -1, 0 otherwise; 0 ** -n is 0, as integer division by zero is),
    the rule of every backend (docs/errors.rst); NumPy itself refuses negative exponents."""
    if type(x1) is int:  # a weak Python int takes the array's dtype
        x1 = np.asarray(x1, x2.dtype)
    elif type(x2) is int:
        x2 = np.asarray(x2, x1.dtype)
    negative = np.less(x2, 0)
    power = np.pow(x1, np.where(negative, 0, x2))
    inverse = np.where(np.equal(x1, 1), 1, np.where(np.equal(x1, -1), np.where(np.remainder(x2, 2) == 0, 1, -1), 0))
    return np.where(negative, inverse, power).astype(power.dtype, copy=False)


_weak_pow = _weak(np.pow)


def _pow_arrays(x1: Any, x2: Any, /) -> Any:
    try:
        return np.pow(x1, x2)
    except ValueError:  # "Integers to negative integer powers are not allowed"
        return _signed_pow(x1, x2)


def pow(x1: Any, x2: Any, /) -> Any:  # noqa: A001 - the Array API's name
    """numpy.pow, with the truncating rule for negative integer exponents (see _signed_pow)."""
    try:
        return _weak_pow(x1, x2)
    except ValueError:
        return _signed_pow(x1, x2)


# two arrays: NumPy's own pow where no integer exponent can be negative (its ValueError is integers' only)
pow.arrays_plain = lambda dtype: np.pow if dtype.kind in "fc" else _pow_arrays  # type: ignore[attr-defined]


def tanh(x: Any, /) -> Any:
    """The standard's tanh(+-inf + yj) = +-1 + 0j for finite y (sign of y's zero kept, by symmetry),
    where C99 gives the sign of sin(2y) to the zero."""
    out = np.tanh(x)
    if np.iscomplexobj(out):
        out = np.array(out, copy=True)
        out.imag[...] = np.where(np.isinf(x.real) & np.isfinite(x.imag), np.copysign(0.0, x.imag), out.imag)
        return out if np.ndim(x) else out[()]
    return out
