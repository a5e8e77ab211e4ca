"""Element-wise kernels: jax.numpy's functions, used as they are where they match the Array API.

jax already keeps the array's dtype for a Python scalar (a weak type) and has numpy 2's
semantics (half-to-even round, NaN-propagating maximum/minimum, integer ceil/floor/trunc).
The gaps closed here, each for the dtypes it concerns only (a static branch):

* a Python int beyond int32 (see ``_common.as_operand``) in the functions that take integers;
* the sign of a zero result of floating ``remainder``/``floor_divide``, which jax gets wrong
  where the Array API, Python and numpy agree: ``remainder(-6.0, 3.0)`` is +0,
  ``floor_divide(-0.0, 3.0)`` is -0;
* floating ``floor_divide`` by a constant under jax.jit, where XLA's multiplication by the
  reciprocal put large quotients one off (``x // 0.001`` in 7720 of 1.3M float32 values);
* integer ``floor_divide`` by 0, which is 0 as in numpy (XLA's quotient is -1, floored to -2);
* ``divide`` by a scalar or a broadcast array, which XLA turns into a multiplication by the
  reciprocal (an ulp off numpy in a third of float32 values divided by 3.0), and under an outer
  jax.jit by a constant (200 steps divided by 7.0: 108 an ulp off), a ``sqrt`` (``rsqrt``) or an
  ``exp`` (``exp(-y)``): the divisor goes behind an optimization barrier
  (``_common.true_divide``, which mean, var, std and the fused softmax and layer_norm use too);
* complex ``pow`` of 0 (0 ** (0.5 - 1j) is 0, not NaN) and complex ``sign`` of a number with
  an infinite component (``sign(inf + 1j)`` is 1, not NaN), as numpy gives them; ``sign`` of a
  signed zero is +0;
* complex ``exp``, ``log``, ``sqrt``, the hyperbolic functions and their inverses at infinities
  and NaN (``_complex``: the standard's special values where XLA gives nan + nanj).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from arraylayer.kernels.jax import _complex
from arraylayer.kernels.jax._common import COMPLEX, FLOATS, as_operand, is_big_int, operand_dtype, true_divide


def _weak(fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``fn`` taking a Python int beyond int32 as a value of the other operand's dtype."""
    # the plans' callable: a jnp ufunc is a Python object whose __call__ checks its arguments, then calls
    # its jitted function; a plan knows its arguments (arrays, a Python float) when made, so it calls a jit
    # of fn, the same computation without that check (inline: a traced call adds fn's operations only)
    plain = jax.jit(fn, inline=True)

    def kernel(x1: Any, x2: Any, /) -> Any:
        if is_big_int(x2):
            x2 = as_operand(x2, x1)
        elif is_big_int(x1):
            x1 = as_operand(x1, x2)
        return fn(x1, x2)

    kernel.arrays_plain = lambda dtype: plain  # type: ignore[attr-defined]  # two arrays: no Python int to check
    kernel.scalar_plain = lambda dtype, scalar_class: None if scalar_class is int else plain  # type: ignore[attr-defined]
    kernel.__name__ = kernel.__qualname__ = fn.__name__
    kernel.__doc__ = f"jax.numpy.{fn.__name__}, also for a Python int beyond int32 (a uint32/uint64 value)."
    return kernel


@jax.custom_jvp
def _signed_remainder(x1: Any, x2: Any) -> Any:
    r = jnp.remainder(x1, x2)
    return jnp.where(r == 0, jnp.copysign(jnp.zeros_like(r), x2), r)  # a zero takes the divisor's sign


@_signed_remainder.defjvp
def _signed_remainder_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x1, x2), (t1, t2) = primals, tangents  # jnp.remainder's derivative, also where the result is 0
    return _signed_remainder(x1, x2), t1 - jnp.floor_divide(x1, x2) * t2


_float_remainder = jax.jit(_signed_remainder)


@jax.jit
def _float_floor_divide(x1: Any, x2: Any) -> Any:
    # NumPy's divmod: (x1 - fmod) / x2, one lower where fmod and x2 differ in sign, then to the nearest
    # integer with a half down (jnp.floor_divide rounds a half away from zero: 9478175081853292.0 // 3.0
    # gave ...098, where (x1 - fmod) / x2 is ...097.5)
    mod = jnp.fmod(x1, x2)
    div = true_divide(x1 - mod, x2)  # under jit XLA multiplied by 1 / 0.001: 8323806, not ...807
    div = jnp.where((mod != 0) & ((x2 < 0) != (mod < 0)), div - 1, div)
    q = jnp.floor(div)
    q = jnp.where(div - q > 0.5, q + 1, q)
    q = jnp.where(x2 == 0, jnp.floor_divide(x1, x2), q)
    q = jnp.where(q == 0, jnp.copysign(q, jnp.divide(x1, x2)), q)  # a zero quotient: the true one's sign
    # at infinities, the standard's values: the floor of the true quotient (+-inf, +-0, nan)
    return jnp.where(jnp.isinf(x1) | jnp.isinf(x2), jnp.floor(jnp.divide(x1, x2)), q)


@jax.jit
def divide(x1: Any, x2: Any, /) -> Any:
    """jnp.divide with the divisor broadcast to the quotient's shape behind an optimization
    barrier (``_common.true_divide``): XLA rewrites ``x / broadcast(c)`` as ``x * broadcast(1 /
    c)``, and under an outer jit ``x / constant``, ``x / sqrt(y)`` and ``x / exp(y)`` as
    multiplications, which differ from the quotient by an ulp (a third of float32 values divided
    by 3.0 on the CPU), where NumPy, torch and TensorFlow divide."""
    return true_divide(x1, x2)


def _integer_floor_divide(x1: Any, x2: Any) -> Any:
    return jnp.where(x2 == 0, 0, jnp.floor_divide(x1, x2))  # XLA gives -1 (then -2, 255 ...); numpy 0


@jax.jit
def _complex_pow(x1: Any, x2: Any) -> Any:
    # 0 ** z is 0 when Re(z) > 0 (exp(z * log 0)); XLA gives NaN for a non-integer z
    zero = (x1 == 0) & (jnp.real(x2) > 0)
    return jnp.where(zero, 0, jnp.pow(jnp.where(zero, 1, x1), x2))


@jax.jit
def _complex_sign(x: Any) -> Any:
    # numpy's sign of a number with one infinite component: that component's direction (XLA: NaN)
    re_inf, im_inf = jnp.isinf(jnp.real(x)), jnp.isinf(jnp.imag(x))
    axis = jax.lax.complex(jnp.where(re_inf, jnp.sign(jnp.real(x)), 0), jnp.where(im_inf, jnp.sign(jnp.imag(x)), 0))
    return jnp.where(re_inf ^ im_inf, axis, jnp.where(x == 0, 0, jnp.sign(x)))


@jax.jit
def _float_sign(x: Any) -> Any:
    # sign(-0.0) is +0 (the standard, numpy, torch); XLA keeps the zero's sign
    return jnp.where(x == 0, 0, jnp.sign(x))


# -- gradients at kinks, as arraylayer defines them (docs/autodiff.rst) ---------------------------
# jax's own rules differ here: abs'(0) is 1, hypot at the origin gets 0.5 per input, atan2 at the
# origin and pow's base derivative at a zero exponent are NaN. Each rule below is a custom_jvp
# around the same forward computation, jitted (as jax.numpy's own functions are).
def _ratio_or_zero(numerator: Any, denominator: Any, zero_where: Any) -> Any:
    return jnp.where(zero_where, 0, numerator / jnp.where(zero_where, 1, denominator))


@jax.custom_jvp
def _abs(x: Any) -> Any:
    return jnp.abs(x)


@_abs.defjvp
def _abs_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents  # sign(x): 0 at 0, the middle of the subgradients [-1, 1]
    return jnp.abs(x), jnp.sign(x) * t


@jax.custom_jvp
def _copysign(x1: Any, x2: Any) -> Any:
    return jnp.copysign(x1, x2)


@_copysign.defjvp
def _copysign_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x1, x2), (t1, _) = primals, tangents  # |x1| with a sign: abs's rule, 0 at x1 == 0
    result = jnp.copysign(x1, x2)
    return result, jnp.sign(x1) * jnp.sign(result) * t1


@jax.custom_jvp
def _hypot(x1: Any, x2: Any) -> Any:
    return jnp.hypot(x1, x2)


@_hypot.defjvp
def _hypot_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x1, x2), (t1, t2) = primals, tangents  # x_i / hypot; 0 at the origin
    result = jnp.hypot(x1, x2)
    origin = result == 0
    return result, _ratio_or_zero(x1, result, origin) * t1 + _ratio_or_zero(x2, result, origin) * t2


@jax.custom_jvp
def _atan2(x1: Any, x2: Any) -> Any:
    return jnp.atan2(x1, x2)


@_atan2.defjvp
def _atan2_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x1, x2), (t1, t2) = primals, tangents  # (x2, -x1) / (x1**2 + x2**2); 0 at the origin
    origin = (x1 == 0) & (x2 == 0)
    squared = x1 * x1 + x2 * x2
    return jnp.atan2(x1, x2), _ratio_or_zero(x2, squared, origin) * t1 - _ratio_or_zero(x1, squared, origin) * t2


@jax.custom_jvp
def _float_pow(x1: Any, x2: Any) -> Any:
    return jnp.pow(x1, x2)


@_float_pow.defjvp
def _float_pow_jvp(primals: tuple[Any, Any], tangents: tuple[Any, Any]) -> tuple[Any, Any]:
    (x1, x2), (t1, t2) = primals, tangents
    result = jnp.pow(x1, x2)
    by_base = jnp.where(x2 == 0, 0, x2 * jnp.pow(x1, x2 - 1))  # x1 ** 0 is constant
    by_exponent = jnp.where(x1 == 0, 0, result * jnp.log(x1))  # NaN for a negative base
    return result, by_base * t1 + by_exponent * t2


_float_abs, _float_copysign, _float_hypot, _float_atan2, _jit_float_pow = (
    jax.jit(f) for f in (_abs, _copysign, _hypot, _atan2, _float_pow))


def abs(x: Any, /) -> Any:
    return _float_abs(x) if x.dtype in FLOATS else jnp.abs(x)


def copysign(x1: Any, x2: Any, /) -> Any:
    return _float_copysign(x1, x2)


def hypot(x1: Any, x2: Any, /) -> Any:
    return _float_hypot(x1, x2)


def atan2(x1: Any, x2: Any, /) -> Any:
    return _float_atan2(x1, x2)


def remainder(x1: Any, x2: Any, /) -> Any:
    if operand_dtype(x1, x2) in FLOATS:
        return _float_remainder(x1, x2)
    return jnp.remainder(as_operand(x1, x2), as_operand(x2, x1))


def floor_divide(x1: Any, x2: Any, /) -> Any:
    if operand_dtype(x1, x2) in FLOATS:
        return _float_floor_divide(x1, x2)
    return _integer_floor_divide(as_operand(x1, x2), as_operand(x2, x1))


def pow(x1: Any, x2: Any, /) -> Any:
    dtype = operand_dtype(x1, x2)
    if dtype in COMPLEX:
        return _complex_pow(x1, x2)
    if dtype in FLOATS:
        return _jit_float_pow(x1, x2)
    x1, x2 = as_operand(x1, x2), as_operand(x2, x1)
    if jnp.issubdtype(dtype, jnp.signedinteger):
        return _signed_pow(x1, x2)
    return jnp.pow(x1, x2)


@jax.jit
def _signed_pow(x1: Any, x2: Any) -> Any:
    """Integer ``x1 ** x2`` with the truncating rule for negative exponents (1 for a base of 1,
    +-1 for -1, 0 otherwise), where JAX gives garbage for negative array exponents and refuses
    negative Python ones."""
    negative = x2 < 0
    power = jnp.pow(x1, jnp.where(negative, 0, x2))
    sign = jnp.where(x2 % 2 == 0, 1, -1).astype(power.dtype)
    inverse = jnp.where(x1 == 1, 1, jnp.where(x1 == -1, sign, 0)).astype(power.dtype)
    return jnp.where(negative, inverse, power)


def sign(x: Any, /) -> Any:
    if x.dtype in COMPLEX:
        return _complex_sign(x)
    return _float_sign(x) if x.dtype in FLOATS else jnp.sign(x)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """jax.numpy.clip, also for Python-int bounds beyond int32 (uint32/uint64 values)."""
    return jnp.clip(x, as_operand(min, x), as_operand(max, x))


asin = jnp.asin
atan = jnp.atan
bitwise_invert = jnp.bitwise_invert
ceil = jnp.ceil
conj = jnp.conj
cos = jnp.cos
floor = jnp.floor
imag = jnp.imag
isfinite = jnp.isfinite
isinf = jnp.isinf
isnan = jnp.isnan
log2 = jnp.log2
log10 = jnp.log10
logaddexp = jnp.logaddexp
logical_and = jnp.logical_and
logical_not = jnp.logical_not
logical_or = jnp.logical_or
logical_xor = jnp.logical_xor
negative = jnp.negative
nextafter = jnp.nextafter
positive = jnp.positive
real = jnp.real
reciprocal = jnp.reciprocal
round = jnp.round
signbit = jnp.signbit
sin = jnp.sin
square = jnp.square
tan = jnp.tan
trunc = jnp.trunc

add = _weak(jnp.add)
bitwise_and = _weak(jnp.bitwise_and)
bitwise_left_shift = _weak(jnp.bitwise_left_shift)
bitwise_or = _weak(jnp.bitwise_or)
bitwise_right_shift = _weak(jnp.bitwise_right_shift)
bitwise_xor = _weak(jnp.bitwise_xor)
equal = _weak(jnp.equal)
greater = _weak(jnp.greater)
greater_equal = _weak(jnp.greater_equal)
less = _weak(jnp.less)
less_equal = _weak(jnp.less_equal)
maximum = _weak(jnp.maximum)
minimum = _weak(jnp.minimum)
multiply = _weak(jnp.multiply)
not_equal = _weak(jnp.not_equal)
subtract = _weak(jnp.subtract)


def _complex_special(real: Callable[[Any], Any], complex_: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """jax.numpy's ``real`` function, and for complex input ``complex_`` (the standard's special values)."""

    def kernel(x: Any, /) -> Any:
        return complex_(x) if x.dtype in COMPLEX else real(x)

    kernel.__name__ = kernel.__qualname__ = real.__name__
    return kernel


acos = _complex_special(jnp.acos, _complex.acos)
acosh = _complex_special(jnp.acosh, _complex.acosh)
asinh = _complex_special(jnp.asinh, _complex.asinh)
atanh = _complex_special(jnp.atanh, _complex.atanh)
cosh = _complex_special(jnp.cosh, _complex.cosh)
exp = _complex_special(jnp.exp, _complex.exp)
log = _complex_special(jnp.log, _complex.log)
sinh = _complex_special(jnp.sinh, _complex.sinh)
sqrt = _complex_special(jnp.sqrt, _complex.sqrt)
tanh = _complex_special(jnp.tanh, _complex.tanh)


def expm1(x: Any, /) -> Any:
    """Complex input at infinities and NaN: exp(x) - 1, which has the standard's special values
    there (the framework's complex expm1 gives nan + nanj for all of them)."""
    if not jnp.iscomplexobj(x):
        return jnp.expm1(x)
    return jnp.where(jnp.isfinite(x), jnp.expm1(x), _complex.exp(x) - 1)


def log1p(x: Any, /) -> Any:
    """Complex input at infinities and NaN: log(1 + x), which has the standard's special values
    there (the framework's complex log1p does not)."""
    if not jnp.iscomplexobj(x):
        return jnp.log1p(x)
    return jnp.where(jnp.isfinite(x), jnp.log1p(x), _complex.log(1 + x))
