"""Element-wise kernels.

TF's own op is used wherever it already has NumPy's values; the wrappers fill TF's gaps
exactly: no bool arithmetic or ordering (add/multiply/maximum/minimum are or/and,
comparisons go through uint8), no unsigned abs/negative/sign/pow, shifts clamped instead
of shifted out, integer division by zero raising (NumPy gives 0), float ``floordiv`` as
``floor(x1 / x2)`` (Python floors the exact quotient), complex ``x ** 0``, division by
zero and reciprocal of zero; no ``trunc``/``hypot``/``logaddexp``/``copysign``/``signbit``/
``log2``/``log10``; ``nextafter`` for float32/float64 only. Binary kernels go through
:func:`pair`, so that a Python scalar in either position takes the array's dtype.
"""

from __future__ import annotations

import math
from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import BOOL, FLOAT32, SAME_WIDTH_INT, is_half, pair, raw_binary, same
from arraylayer.kernels.tensorflow._gradients import (
    atan2_rule,
    hypot_rule,
    logaddexp_rule,
    maximum_rule,
    may_differentiate,
    minimum_rule,
    pow_rule,
    remainder_rule,
    with_gradient,
)
from arraylayer.kernels.tensorflow._high_rank import select

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)

# Unary functions whose TF op has the Array API semantics on every dtype the api layer sends.
acos = tf.math.acos
acosh = tf.math.acosh
asin = tf.math.asin
asinh = tf.math.asinh
atan = tf.math.atan
atanh = tf.math.atanh
cos = tf.math.cos
cosh = tf.math.cosh
exp = tf.math.exp
logical_not = tf.math.logical_not
sin = tf.math.sin
sinh = tf.math.sinh
sqrt = tf.math.sqrt
square = tf.math.square
tan = tf.math.tan


# -- binary kernels that are TF's op once both operands are tensors --------------------------
def _binary(name: str, op: Any, on_bool: Any = None, plain: Any = None) -> Any:
    """The kernel ``name``: :func:`pair`, then ``op`` (``on_bool`` for bool operands, where TF's
    arithmetic, ordering and bitwise ops have no kernel; ``plain``: ``op``'s raw op, for plans)."""
    if on_bool is None:
        def kernel(x1: Any, x2: Any, /) -> Any:
            x1, x2 = pair(x1, x2)
            return op(x1, x2)
    else:
        def kernel(x1: Any, x2: Any, /) -> Any:
            x1, x2 = pair(x1, x2)
            return on_bool(x1, x2) if x1.dtype is BOOL else op(x1, x2)
    # two tensors of one dtype: nothing for pair() to convert, and the dtype is known when planned
    kernel.arrays_plain = lambda dtype: on_bool if on_bool is not None and dtype is BOOL else plain or op  # type: ignore[attr-defined]
    kernel.__name__ = kernel.__qualname__ = name
    return kernel


def _as_uint8(compare: Any) -> Any:
    """``compare`` on bools as uint8 (False < True)."""
    return lambda x1, x2: compare(tf.cast(x1, tf.uint8), tf.cast(x2, tf.uint8))


add = _binary("add", tf.math.add, tf.math.logical_or, raw_binary("AddV2"))
subtract = _binary("subtract", tf.math.subtract, plain=raw_binary("Sub"))
multiply = _binary("multiply", tf.math.multiply, tf.math.logical_and, raw_binary("Mul"))
# Differentiated by arraylayer's rules at ties and kinks (see _gradients.py); TF's own give a tie to x1.
_maximum = with_gradient(tf.math.maximum, maximum_rule)  # NaN-propagating on every float dtype
_minimum = with_gradient(tf.math.minimum, minimum_rule)
maximum = _binary("maximum", _maximum, tf.math.logical_or)
minimum = _binary("minimum", _minimum, tf.math.logical_and)
atan2 = _binary("atan2", with_gradient(tf.math.atan2, atan2_rule))
equal = _binary("equal", tf.math.equal)
not_equal = _binary("not_equal", tf.math.not_equal)
greater = _binary("greater", tf.math.greater, _as_uint8(tf.math.greater))
greater_equal = _binary("greater_equal", tf.math.greater_equal, _as_uint8(tf.math.greater_equal))
less = _binary("less", tf.math.less, _as_uint8(tf.math.less))
less_equal = _binary("less_equal", tf.math.less_equal, _as_uint8(tf.math.less_equal))
logical_and = _binary("logical_and", tf.math.logical_and)
logical_or = _binary("logical_or", tf.math.logical_or)
logical_xor = _binary("logical_xor", tf.math.logical_xor)
bitwise_and = _binary("bitwise_and", tf.bitwise.bitwise_and, tf.math.logical_and)
bitwise_or = _binary("bitwise_or", tf.bitwise.bitwise_or, tf.math.logical_or)
bitwise_xor = _binary("bitwise_xor", tf.bitwise.bitwise_xor, tf.math.logical_xor)


# -- arithmetic ------------------------------------------------------------------------------
def divide(x1: Any, x2: Any, /) -> Any:
    x1, x2 = pair(x1, x2)
    if x1.dtype.is_complex:
        return _complex_divide(x1, x2)
    return tf.math.truediv(x1, x2)


def _complex_divide(x1: Any, x2: Any) -> Any:
    """By a complex zero, each part of ``x1`` is divided by +0 (NumPy's and C99's infinities);
    TF gives NaN there for complex128 and, depending on vectorisation, for complex64."""
    by_parts = tf.complex(tf.math.truediv(tf.math.real(x1), 0.0), tf.math.truediv(tf.math.imag(x1), 0.0))
    return select(tf.math.equal(x2, 0), by_parts, tf.math.truediv(x1, x2))


def reciprocal(x: Any, /) -> Any:
    """``1 / x``; NaN at a complex zero, as NumPy gives (TF's complex64 gives ``inf + nanj``
    or NaN there depending on how the array is vectorised)."""
    if x.dtype.is_complex:
        return select(tf.math.equal(x, 0), tf.constant(complex(math.nan, math.nan), x.dtype),
                        tf.math.reciprocal(x))
    return tf.math.reciprocal(x)


def negative(x: Any, /) -> Any:
    """Unsigned negation wraps, as NumPy's does: TF has no unsigned ``Neg``, so ``x * (2**n - 1)``
    (``0 - x`` would do, but graph optimisers rewrite it into ``Neg``)."""
    dtype = x.dtype
    if dtype.is_unsigned:
        return tf.math.multiply(x, tf.constant(dtype.max, dtype))
    return tf.math.negative(x)


def positive(x: Any, /) -> Any:
    return same(x)


def abs(x: Any, /) -> Any:
    return same(x) if x.dtype.is_unsigned else tf.math.abs(x)


def sign(x: Any, /) -> Any:
    """``x / |x|`` (0 at 0) for complex, as TF's ``sign`` already is; ``min(x, 1)`` for unsigned."""
    if x.dtype.is_unsigned:
        return tf.math.minimum(x, 1)
    return tf.math.sign(x)


def pow(x1: Any, x2: Any, /) -> Any:
    """Complex ``x ** 0`` is 1 for every ``x`` (TF's ``exp(0 * log(0))`` is NaN)."""
    x1, x2 = pair(x1, x2)
    dtype = x1.dtype
    if dtype.is_unsigned:
        return _unsigned_pow(x1, x2)
    if dtype.is_complex:
        return select(tf.math.equal(x2, 0), tf.constant(1, dtype), tf.math.pow(x1, x2))
    if dtype.is_floating:
        return _float_pow(x1, x2)
    return _signed_pow(x1, x2)


def _signed_pow(x1: Any, x2: Any) -> Any:
    """Integer ``x1 ** x2`` with the truncating rule for negative exponents (1 for a base of 1,
    +-1 for -1, 0 otherwise), where TF refuses negative integer exponents."""
    negative = tf.math.less(x2, 0)
    power = tf.math.pow(x1, select(negative, tf.zeros_like(x2), x2))
    one = tf.ones_like(power)
    sign = select(tf.math.equal(tf.math.floormod(x2, 2), 0), one, -one)
    inverse = select(tf.math.equal(x1, 1), one, select(tf.math.equal(x1, -1), sign, tf.zeros_like(power)))
    return select(negative, inverse, power)


_float_pow = with_gradient(tf.math.pow, pow_rule)


# Unsigned dtype -> the signed dtype whose wrapping power, cast back, is exact (products are
# taken modulo 2**bits, and 2**16 and 2**32 divide 2**32 and 2**64).
_POW_VIA = {tf.uint8: tf.int32, tf.uint16: tf.int32, tf.uint32: tf.int64}


def _unsigned_pow(x1: Any, x2: Any) -> Any:
    dtype = x1.dtype
    wide = _POW_VIA.get(dtype)
    if wide is not None:
        return tf.cast(tf.math.pow(tf.cast(x1, wide), tf.cast(x2, wide)), dtype)
    # uint64: the int64 bits multiply alike modulo 2**64. Exponents >= 2**62 (negative as
    # int64 from 2**63) become 2**62 + (e mod 2**62): odd bases have multiplicative order
    # dividing 2**62, even ones reach 0 from exponent 64 on, so the value is unchanged.
    big = tf.math.greater_equal(x2, tf.constant(1 << 62, dtype))
    folded = tf.bitwise.bitwise_or(tf.bitwise.bitwise_and(x2, (1 << 62) - 1), 1 << 62)
    x2 = select(big, folded, x2)
    return tf.bitcast(tf.math.pow(tf.bitcast(x1, tf.int64), tf.bitcast(x2, tf.int64)), dtype)


def floor_divide(x1: Any, x2: Any, /) -> Any:
    x1, x2 = pair(x1, x2)
    if x1.dtype.is_floating:
        return _float_floor_divide(x1, x2)
    return _integer_division(tf.math.floordiv, x1, x2)


def _integer_division(divide: Any, x1: Any, x2: Any) -> Any:
    """``divide`` with 0 wherever ``x2`` is 0, as NumPy gives (TF raises on the CPU)."""
    dtype = x1.dtype
    by_zero = tf.math.equal(x2, 0)
    quotient = divide(x1, select(by_zero, tf.constant(1, dtype), x2))
    return select(by_zero, tf.constant(0, dtype), quotient)


def _float_floor_divide(x1: Any, x2: Any) -> Any:
    """Python's float ``//``: the floor of the exact quotient (``1 // 0.1 == 9``), where TF
    rounds the quotient first (``floor(1 / 0.1) == 10``); ``x1 / 0`` is ``x1 / x2`` itself.
    Half precision runs in float32 (no half ``truncatemod``): the floor is exact there and
    rounds once, as NumPy's float16 does."""
    dtype = x1.dtype
    if is_half(dtype):
        return tf.cast(_float_floor_divide(tf.cast(x1, FLOAT32), tf.cast(x2, FLOAT32)), dtype)
    mod = tf.truncatemod(x1, x2)  # C's fmod: exact, with the sign of x1
    div = tf.math.truediv(tf.math.subtract(x1, mod), x2)  # an integer up to rounding
    opposite = tf.math.less(tf.math.multiply(mod, tf.math.sign(x2)), 0.0)  # then the floor is one lower
    div = select(opposite, tf.math.subtract(div, 1.0), div)
    # to the nearest integer, a half down, as NumPy's divmod does (tf.math.round takes a half to even:
    # 9478175081853292.0 // 3.0 gave ...098, where (x1 - mod) / x2 rounds to ...097.5)
    result = tf.math.floor(div)
    result = select(tf.math.greater(tf.math.subtract(div, result), 0.5), tf.math.add(result, 1.0), result)
    # a zero quotient takes the sign of x1 / x2, as NumPy's (-0.0 // 2.0 is -0.0)
    result = select(tf.math.equal(result, 0.0), tf.math.multiply(tf.zeros_like(result), tf.math.truediv(x1, x2)), result)
    result = select(tf.math.equal(x2, 0.0), tf.math.truediv(x1, x2), result)
    # at infinities, the standard's values: the floor of the true quotient (+-inf, +-0, nan)
    infinite = tf.math.logical_or(tf.math.is_inf(x1), tf.math.is_inf(x2))
    result = select(infinite, tf.math.floor(tf.math.truediv(x1, x2)), result)
    return tf.stop_gradient(result) if may_differentiate() else result  # a step function: gradient 0


def remainder(x1: Any, x2: Any, /) -> Any:
    """TF's ``floormod`` has Python's sign rule for integers and floats alike; a zero float
    remainder takes the sign of ``x2`` as NumPy's (TF gives ``0.0 % -2.0`` as ``+0.0``)."""
    x1, x2 = pair(x1, x2)
    if x1.dtype.is_floating:
        return _float_remainder(x1, x2)
    return _integer_division(tf.math.floormod, x1, x2)


def _signed_floormod(x1: Any, x2: Any) -> Any:
    result = tf.math.floormod(x1, x2)
    zero = tf.zeros_like(result)
    signed_zero = select(tf.math.less(x2, 0.0), tf.math.negative(zero), zero)
    return select(tf.math.equal(result, 0.0), signed_zero, result)


# the signed zeros are constants: without the rule, a zero remainder would have gradient 0
_float_remainder = with_gradient(_signed_floormod, remainder_rule)


# -- rounding --------------------------------------------------------------------------------
def ceil(x: Any, /) -> Any:
    return tf.math.ceil(x) if x.dtype.is_floating else same(x)


def floor(x: Any, /) -> Any:
    return tf.math.floor(x) if x.dtype.is_floating else same(x)


def trunc(x: Any, /) -> Any:
    """TF has no ``trunc``: ceil below zero, floor elsewhere (keeps -0.0, NaN and infinities)."""
    if not x.dtype.is_floating:
        return same(x)
    return select(tf.math.less(x, 0.0), tf.math.ceil(x), tf.math.floor(x))


def round(x: Any, /) -> Any:
    """Half to even (TF's ``round`` is); complex numbers round both parts."""
    dtype = x.dtype
    if dtype.is_complex:
        return tf.complex(tf.math.round(tf.math.real(x)), tf.math.round(tf.math.imag(x)))
    return tf.math.round(x) if dtype.is_floating else same(x)


# -- complex parts ---------------------------------------------------------------------------
def conj(x: Any, /) -> Any:
    return tf.math.conj(x) if x.dtype.is_complex else same(x)


def real(x: Any, /) -> Any:
    return tf.math.real(x) if x.dtype.is_complex else same(x)


def imag(x: Any, /) -> Any:
    return tf.math.imag(x) if x.dtype.is_complex else tf.zeros_like(x)


# -- float functions TF lacks ----------------------------------------------------------------
def log(x: Any, /) -> Any:
    """Complex input as ``log|x| + i*atan2(imag, real)``: TF's complex log gives a NaN real part
    where ``|x|**2`` leaves the dtype's range (``log(1.6e19 + 1.5e19j)`` and ``log(1e-30 + 1e-30j)``
    in complex64), and this form has the standard's special values at zeros, infinities and NaN."""
    if not x.dtype.is_complex:
        return tf.math.log(x)
    return tf.complex(tf.math.log(tf.math.abs(x)), tf.math.atan2(tf.math.imag(x), tf.math.real(x)))


def log2(x: Any, /) -> Any:
    return _scaled_log(x, _LN2)


def log10(x: Any, /) -> Any:
    return _scaled_log(x, _LN10)


def _scaled_log(x: Any, ln_base: float) -> Any:
    """``log(x) / log(base)``; half precision computes in float32 and rounds once, complex
    scales each part (a complex division would turn ``log(0j) = -inf + 0j`` into NaNs)."""
    dtype = x.dtype
    if dtype.is_complex:
        natural = log(x)
        return tf.complex(tf.math.truediv(tf.math.real(natural), ln_base),
                          tf.math.truediv(tf.math.imag(natural), ln_base))
    if is_half(dtype):
        return tf.cast(tf.math.truediv(tf.math.log(tf.cast(x, FLOAT32)), ln_base), dtype)
    return tf.math.truediv(tf.math.log(x), ln_base)


def hypot(x1: Any, x2: Any, /) -> Any:
    x1, x2 = pair(x1, x2)
    return _hypot(x1, x2)


def _hypot_values(x1: Any, x2: Any) -> Any:
    """``max * sqrt(1 + (min / max)**2)``: no overflow, and +inf whenever either is infinite
    (even with a NaN), as C's ``hypot`` and NumPy give."""
    dtype = x1.dtype
    if is_half(dtype):
        x1, x2 = tf.cast(x1, FLOAT32), tf.cast(x2, FLOAT32)
    a, b = tf.math.abs(x1), tf.math.abs(x2)
    big, small = tf.math.maximum(a, b), tf.math.minimum(a, b)
    ratio = tf.math.divide_no_nan(small, big)
    result = tf.math.multiply(big, tf.math.sqrt(tf.math.add(tf.math.square(ratio), 1.0)))
    result = select(tf.math.logical_or(tf.math.is_inf(a), tf.math.is_inf(b)), tf.constant(math.inf, a.dtype),
                      result)
    return tf.cast(result, dtype) if result.dtype is not dtype else result


def logaddexp(x1: Any, x2: Any, /) -> Any:
    x1, x2 = pair(x1, x2)
    return _logaddexp(x1, x2)


def _logaddexp_values(x1: Any, x2: Any) -> Any:
    """``max + log1p(exp(-|x1 - x2|))``; equal arguments give ``x + log(2)`` (so that
    ``logaddexp(inf, inf)`` is inf, not NaN)."""
    dtype = x1.dtype
    if is_half(dtype):
        x1, x2 = tf.cast(x1, FLOAT32), tf.cast(x2, FLOAT32)
    gap = tf.math.abs(tf.math.subtract(x1, x2))
    result = tf.math.add(tf.math.maximum(x1, x2), tf.math.log1p(tf.math.exp(tf.math.negative(gap))))
    result = select(tf.math.equal(x1, x2), tf.math.add(x1, _LN2), result)
    return tf.cast(result, dtype) if result.dtype is not dtype else result


_hypot = with_gradient(_hypot_values, hypot_rule)
_logaddexp = with_gradient(_logaddexp_values, logaddexp_rule)


def signbit(x: Any, /) -> Any:
    """The sign bit itself (true for -0.0 and negative NaNs): the same-width integer is negative."""
    return tf.math.less(tf.bitcast(x, SAME_WIDTH_INT[x.dtype]), 0)


def copysign(x1: Any, x2: Any, /) -> Any:
    """``|x1|`` with the sign bit of ``x2`` (differentiable in ``x1``)."""
    x1, x2 = pair(x1, x2)
    magnitude = tf.math.abs(x1)
    return select(signbit(x2), tf.math.negative(magnitude), magnitude)


def nextafter(x1: Any, x2: Any, /) -> Any:
    x1, x2 = pair(x1, x2)
    if is_half(x1.dtype):
        return _half_nextafter(x1, x2)
    return tf.math.nextafter(x1, x2)


def _half_nextafter(x1: Any, x2: Any) -> Any:
    """``nextafter`` on 16-bit floats by stepping the bits: away from zero is +1 on the
    sign-magnitude bits, towards zero -1; from +-0 the smallest subnormal of x2's sign."""
    dtype = x1.dtype
    bits = tf.bitcast(x1, tf.int16)
    away = tf.math.equal(tf.math.greater(x2, x1), tf.math.greater(x1, 0.0))
    stepped = tf.math.add(bits, select(away, tf.constant(1, tf.int16), tf.constant(-1, tf.int16)))
    from_zero = select(tf.math.greater(x2, 0.0), tf.constant(1, tf.int16), tf.constant(-32767, tf.int16))
    result = tf.bitcast(select(tf.math.equal(x1, 0.0), from_zero, stepped), dtype)
    result = select(tf.math.equal(x1, x2), x2, result)
    unordered = tf.math.logical_or(tf.math.is_nan(x1), tf.math.is_nan(x2))
    return select(unordered, tf.constant(math.nan, dtype), result)


# -- predicates ----------------------------------------------------------------------------
def _predicate(name: str, test: Any, both_parts: Any, integers: Any) -> Any:
    """The kernel ``name``: ``test`` on floats, on both parts of complex numbers (joined by
    ``both_parts``), and a constant for integers and bool (TF has no integer ``is_nan``)."""
    def kernel(x: Any, /) -> Any:
        dtype = x.dtype
        if dtype.is_floating:
            return test(x)
        if dtype.is_complex:
            return both_parts(test(tf.math.real(x)), test(tf.math.imag(x)))
        return integers(x, dtype=BOOL)
    kernel.__name__ = kernel.__qualname__ = name
    return kernel


isnan = _predicate("isnan", tf.math.is_nan, tf.math.logical_or, tf.zeros_like)
isinf = _predicate("isinf", tf.math.is_inf, tf.math.logical_or, tf.zeros_like)
isfinite = _predicate("isfinite", tf.math.is_finite, tf.math.logical_and, tf.ones_like)


# -- bitwise -------------------------------------------------------------------------------
def bitwise_invert(x: Any, /) -> Any:
    return tf.math.logical_not(x) if x.dtype is BOOL else tf.bitwise.invert(x)


def bitwise_left_shift(x1: Any, x2: Any, /) -> Any:
    """Shifts of the width or more give 0 (TF clamps the shift to width - 1 instead)."""
    x1, x2 = pair(x1, x2)
    return _shifted_out(tf.bitwise.left_shift(x1, x2), x2)


def bitwise_right_shift(x1: Any, x2: Any, /) -> Any:
    """Arithmetic shift; TF's clamp to width - 1 already gives the sign fill for signed
    integers, unsigned ones need the 0 of a shift by the width or more."""
    x1, x2 = pair(x1, x2)
    shifted = tf.bitwise.right_shift(x1, x2)
    return _shifted_out(shifted, x2) if x1.dtype.is_unsigned else shifted


def _shifted_out(shifted: Any, shift: Any) -> Any:
    inside = tf.math.less(shift, shift.dtype.size * 8)
    return tf.math.multiply(shifted, tf.cast(inside, shifted.dtype))


# -- clip ------------------------------------------------------------------------------------
def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """``minimum(maximum(x, min), max)``, NaN-propagating; a Python bound outside an integer
    dtype's range is moved to its edge (where it clips nothing) instead of wrapping."""
    if min is not None:
        x = _maximum(x, _bound(min, x.dtype))
    if max is not None:
        x = _minimum(x, _bound(max, x.dtype))
    return same(x)


def _bound(value: Any, dtype: Any) -> Any:
    if not isinstance(value, (int, float)):
        return value
    if dtype.is_integer:
        value = dtype.min if value < dtype.min else dtype.max if value > dtype.max else int(value)
    return tf.constant(value, dtype)


def expm1(x: Any, /) -> Any:
    """Complex input at infinities, NaN and zero: exp(x) - 1, which has the standard's special
    values there (the framework's complex expm1 gives nan + nanj at the first two, -0 + 0j for
    -0 + 0j where the standard says 0 + 0j)."""
    if not x.dtype.is_complex:
        return tf.math.expm1(x)
    one = tf.constant(1, dtype=x.dtype)
    finite = tf.math.logical_and(tf.math.is_finite(tf.math.real(x)), tf.math.is_finite(tf.math.imag(x)))
    regular = tf.math.logical_and(finite, tf.math.not_equal(x, tf.constant(0, dtype=x.dtype)))
    return select(regular, tf.math.expm1(x), tf.math.exp(x) - one)


def log1p(x: Any, /) -> Any:
    """Complex input at infinities, NaN and -1: log(1 + x), which has the standard's special values
    there (the framework's complex log1p does not: log1p(-1 + 0j) is -inf + nanj)."""
    if not x.dtype.is_complex:
        return tf.math.log1p(x)
    one = tf.constant(1, dtype=x.dtype)
    regular = tf.math.logical_and(
        tf.math.logical_and(tf.math.is_finite(tf.math.real(x)), tf.math.is_finite(tf.math.imag(x))),
        tf.math.not_equal(x, -one))
    return select(regular, tf.math.log1p(x), tf.math.log(x + one))


def tanh(x: Any, /) -> Any:
    """The standard's tanh(+-inf + yj) = +-1 + 0j for finite y (the zero signed as y), where C99
    (TensorFlow) signs the zero as sin(2y)."""
    out = tf.math.tanh(x)
    if not out.dtype.is_complex:
        return out
    re, im = tf.math.real(x), tf.math.imag(x)
    fix = tf.math.is_inf(re) & tf.math.is_finite(im) & (im != 0)  # at +-0 TF keeps its sign already
    zero = tf.zeros_like(im)
    # copysign(0, im) where im != 0; -0.0 as the negation of zeros, never tf.constant(-0.0): TF's eager
    # cache of scalar constants keys on the Python value and may hand back a +0.0 made earlier
    signed_zero = select(im < 0, -zero, zero)
    return tf.complex(tf.math.real(out), select(fix, signed_zero, tf.math.imag(out)))
