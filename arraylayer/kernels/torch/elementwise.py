"""Elementwise kernels.

torch's own function where it already matches the contract, a Python scalar in either
position included (``torch.add(2, x)`` keeps ``x``'s dtype). Wrappers where it does not:
functions that take tensors only (a scalar becomes a 0-d tensor of the other operand's
dtype), comparisons with the scalar first (the mirrored comparison), ``subtract`` with a
bool scalar, numpy's float ``remainder``, integer division by zero (0, as numpy), complex
``0 ** 0``, ``sign`` of NaN, ``round`` of complex and ``imag`` of real inputs.
Names are the Array API's, so some shadow builtins (abs, pow, round) here.
"""

from __future__ import annotations

import math
from typing import Any, Final

import torch

from arraylayer.kernels.torch import _gradients
from arraylayer.kernels.torch._gradients import is_compiling, may_differentiate
from arraylayer.kernels.torch._scalars import Tensor, both, like

# -- unary, as torch has them --------------------------------------------------------------
abs = torch.abs
acosh = torch.acosh
asin = torch.asin
asinh = torch.asinh
atan = torch.atan
atanh = torch.atanh
bitwise_invert = torch.bitwise_not
ceil = torch.ceil
conj = torch.conj_physical  # not torch.conj: its lazy conjugate bit makes .numpy() and DLPack raise
cos = torch.cos
cosh = torch.cosh
exp = torch.exp
floor = torch.floor
isfinite = torch.isfinite
isinf = torch.isinf
isnan = torch.isnan
log = torch.log
log2 = torch.log2
log10 = torch.log10
logical_not = torch.logical_not
negative = torch.neg
positive = torch.positive
real = torch.real
reciprocal = torch.reciprocal
signbit = torch.signbit
sin = torch.sin
sinh = torch.sinh
sqrt = torch.sqrt
square = torch.square
tan = torch.tan
trunc = torch.trunc

# -- binary, torch takes a Python scalar on either side ---------------------------------------
add = torch.add
multiply = torch.mul
divide = torch.div
bitwise_and = torch.bitwise_and
bitwise_or = torch.bitwise_or
bitwise_xor = torch.bitwise_xor
bitwise_left_shift = torch.bitwise_left_shift  # shifts >= the bit width give 0 (or -1), as numpy
bitwise_right_shift = torch.bitwise_right_shift

# -- a float tensor and an integer (or bool) tensor, which torch's own promotion gives the float's dtype
_PROMOTES_EXACTLY: Final = frozenset({torch.add, torch.mul, torch.div})
_FLOATS: Final = frozenset({torch.float32, torch.float64})
_INTEGERS: Final = frozenset({torch.bool, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8})


def mixed_plain(run: Any, dtype1: Any, dtype2: Any, compute: Any) -> Any:
    """``run`` itself where it computes tensors of ``dtype1`` and ``dtype2`` exactly as after a cast of
    both to ``compute`` (see the kernel contract), else None: one is a float32/float64 tensor of
    ``compute``, the other integer or bool. A float outranks an integer whichever is 0-d, so torch
    promotes the pair to ``compute``, and it converts each integer element to it with one rounding, as
    the cast would."""
    if run in _PROMOTES_EXACTLY and compute in _FLOATS and (
        (dtype1 is compute and dtype2 in _INTEGERS) or (dtype2 is compute and dtype1 in _INTEGERS)
    ):
        return run
    return None


# -- unary wrappers ---------------------------------------------------------------------------
def sign(x: Any, /) -> Any:
    """torch.sign of NaN is 0; the Array API's is NaN. Complex: x/|x| (torch.sgn)."""
    if x.is_floating_point():
        return torch.where(torch.isnan(x), x, torch.sign(x))
    return torch.sgn(x)


def round(x: Any, /) -> Any:
    """Half to even; complex rounds both parts (torch.round has no complex kernel)."""
    if x.is_complex():
        return torch.complex(torch.round(x.real), torch.round(x.imag))
    return torch.round(x)


def imag(x: Any, /) -> Any:
    """torch.imag raises for real tensors; their imaginary part is zero."""
    return torch.imag(x) if x.is_complex() else torch.zeros_like(x)


def clip(x: Any, /, min: Any = None, max: Any = None) -> Any:
    """torch.clamp; it takes no bounds at all or a tensor with a scalar, so those are handled here."""
    if min is None and max is None:
        return x.clone()
    if (x.requires_grad or getattr(min, "requires_grad", False) or getattr(max, "requires_grad", False)
            or is_compiling()):
        return _differentiable_clip(x, min, max)
    if min is not None and max is not None and isinstance(min, Tensor) is not isinstance(max, Tensor):
        min, max = like(min, x), like(max, x)
    return torch.clamp(x, min, max)


def _differentiable_clip(x: Any, min: Any, max: Any) -> Any:
    """``minimum(maximum(x, min), max)``, the same values as torch.clamp; at a bound the gradient
    is shared half and half between x and the bound (arraylayer's rule for ties), where
    torch.clamp's gives it all to x."""
    if min is not None:
        x = torch.maximum(x, like(min, x))
    if max is not None:
        x = torch.minimum(x, like(max, x))
    return x


# -- binary wrappers --------------------------------------------------------------------------
# torch.maximum and the like take tensors only: a Python scalar becomes a 0-d tensor.
def subtract(x1: Any, x2: Any, /) -> Any:
    """torch refuses bool scalars in a subtraction; as a value of the array's dtype they are 0 or 1."""
    if type(x1) is bool or type(x2) is bool:
        x1, x2 = both(x1, x2)
    return torch.sub(x1, x2)


def pow(x1: Any, x2: Any, /) -> Any:
    """torch.pow, but a complex 0 ** 0 is 1 (numpy, C99) where torch gives NaN (tensor exponents only),
    and negative integer exponents follow the truncating rule (torch refuses negative Python ones).
    A Python float is rounded to the tensor's dtype first, as the other backends do (torch would use
    the exact double: ``(-2.0) ** 1e-320`` is NaN there, and 1 after rounding to float32)."""
    if (type(x2) is int and x2 < 0 or type(x1) is int and isinstance(x2, Tensor) and not x2.dtype.is_floating_point
            or type(x1) is float or type(x2) is float):
        x1, x2 = both(x1, x2)
    if isinstance(x2, Tensor) and x2.dtype in _SIGNED:
        return _signed_pow(x1, x2)
    result = torch.pow(x1, x2)
    if isinstance(x2, Tensor) and result.is_complex():
        return torch.where(x2 == 0, 1, result)
    return result


_SIGNED = frozenset({torch.int8, torch.int16, torch.int32, torch.int64})


def _signed_pow(x1: Any, x2: Any) -> Any:
    """Integer ``x1 ** x2`` with the truncating rule for negative exponents: 1 for a base of 1,
    +-1 for -1, 0 otherwise (0 ** -n is 0, as integer division by zero is)."""
    negative = x2 < 0
    power = torch.pow(x1, torch.where(negative, 0, x2))
    sign = torch.where(x2 % 2 == 0, 1, -1)
    inverse = torch.where(x1 == 1, 1, torch.where(x1 == -1, sign, 0))
    return torch.where(negative, inverse.to(power.dtype), power)


# Integer division by zero raises in torch (on CPU); numpy and arraylayer give 0.
def floor_divide(x1: Any, x2: Any, /) -> Any:
    """Python's sign rules (torch.floor_divide; for floats numpy's algorithm, -0.0 included);
    integer division by zero gives 0."""
    x1, x2 = both(x1, x2)
    if x1.is_floating_point():
        if may_differentiate(x1, x2):  # a step function: gradient 0 (torch has no derivative for it)
            x1, x2 = x1.detach(), x2.detach()
        # at infinities, the standard's values: the floor of the true quotient
        infinite = torch.isinf(x1) | torch.isinf(x2)
        return torch.where(infinite, torch.floor(torch.true_divide(x1, x2)), torch.floor_divide(x1, x2))
    zero = x2 == 0
    return torch.where(zero, 0, torch.floor_divide(x1, torch.where(zero, 1, x2)))


#: float dtype -> a power of two that scales its divisors without rounding (a ladder of three)
_LADDER_STEP = {torch.float64: 2.0 ** 1000, torch.float32: 2.0 ** 100, torch.float16: 2.0 ** 10,
                torch.bfloat16: 2.0 ** 100}


def _fmod(x1: Any, x2: Any) -> Any:
    """C's fmod, exact. torch's vectorized CPU fmod gives NaN where ``x1 / x2`` overflows
    (``1e300 % 1e-10`` in a tensor of 8 or more); there the remainder is reduced modulo
    ``x2 * step**2`` and ``x2 * step`` first (multiples of ``x2``, so the result is unchanged),
    which keeps every quotient finite."""
    mod = torch.fmod(x1, x2)
    if not x1.is_cpu or not (is_compiling() or bool(torch.isnan(mod).any())):
        return mod
    step = _LADDER_STEP.get(x1.dtype)
    if step is None:
        return mod
    wrong = torch.isnan(mod) & torch.isfinite(x1) & torch.isfinite(x2) & (x2 != 0)
    reduced, far, near = x1, x2 * step * step, x2 * step
    for divisor in (far, near, x2):
        reduced = torch.where(torch.isfinite(divisor), torch.fmod(reduced, divisor), reduced)
    return torch.where(wrong, reduced, mod)


def remainder(x1: Any, x2: Any, /) -> Any:
    """Integers: torch.remainder (and 0 for a zero divisor). Floats: numpy's algorithm (from fmod,
    so that huge quotients stay exact, and a zero result takes the divisor's sign), which
    torch.remainder does not follow."""
    x1, x2 = both(x1, x2)
    if not x1.is_floating_point():
        zero = x2 == 0
        return torch.where(zero, 0, torch.remainder(x1, torch.where(zero, 1, x2)))
    mod = _fmod(x1, x2)  # exact, with x1's sign
    mod = torch.where(mod * torch.sign(x2) < 0, mod + x2, mod)  # signs differ (a zero never does)
    result = torch.copysign(mod, x2)  # the result has x2's sign: a no-op but for zeros
    # copysign's derivative is 0 at a zero result; mod's is the rule (1, -floor(x1 / x2)) everywhere
    return _gradients.with_derivative_of(result, mod) if may_differentiate(x1, x2) else result


def copysign(x1: Any, x2: Any, /) -> Any:
    return torch.copysign(like(x1, x2), x2)


def maximum(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.maximum(x1, x2)
    return torch.maximum(*both(x1, x2))


def minimum(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.minimum(x1, x2)
    return torch.minimum(*both(x1, x2))


def atan2(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.atan2(x1, x2)
    return torch.atan2(*both(x1, x2))


def hypot(x1: Any, x2: Any, /) -> Any:
    """torch.hypot; with gradient 0 at the origin (see _gradients.hypot) when one may be taken."""
    if not (isinstance(x1, Tensor) and isinstance(x2, Tensor)):
        x1, x2 = both(x1, x2)
    return _gradients.hypot(x1, x2) if may_differentiate(x1, x2) else torch.hypot(x1, x2)


def logaddexp(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.logaddexp(x1, x2)
    return torch.logaddexp(*both(x1, x2))


def nextafter(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.nextafter(x1, x2)
    return torch.nextafter(*both(x1, x2))


def logical_and(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.logical_and(x1, x2)
    return torch.logical_and(*both(x1, x2))


def logical_or(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.logical_or(x1, x2)
    return torch.logical_or(*both(x1, x2))


def logical_xor(x1: Any, x2: Any, /) -> Any:
    if isinstance(x1, Tensor) and isinstance(x2, Tensor):
        return torch.logical_xor(x1, x2)
    return torch.logical_xor(*both(x1, x2))


# Comparisons take a scalar second only: a scalar first becomes the mirrored comparison.
def equal(x1: Any, x2: Any, /) -> Any:
    return torch.eq(x1, x2) if isinstance(x1, Tensor) else torch.eq(x2, x1)


def not_equal(x1: Any, x2: Any, /) -> Any:
    return torch.ne(x1, x2) if isinstance(x1, Tensor) else torch.ne(x2, x1)


def less(x1: Any, x2: Any, /) -> Any:
    return torch.lt(x1, x2) if isinstance(x1, Tensor) else torch.gt(x2, x1)


def less_equal(x1: Any, x2: Any, /) -> Any:
    return torch.le(x1, x2) if isinstance(x1, Tensor) else torch.ge(x2, x1)


def greater(x1: Any, x2: Any, /) -> Any:
    return torch.gt(x1, x2) if isinstance(x1, Tensor) else torch.lt(x2, x1)


def greater_equal(x1: Any, x2: Any, /) -> Any:
    return torch.ge(x1, x2) if isinstance(x1, Tensor) else torch.le(x2, x1)


def acos(x: Any, /) -> Any:
    """acos(+-0 + 0j) is pi/2 - 0j (and pi/2 + 0j for a -0j), as the standard says; torch gives
    the imaginary zero the input's sign."""
    if not x.is_complex():
        return torch.acos(x)
    zero = torch.complex(torch.full_like(x.real, math.pi / 2), torch.negative(x.imag))
    return torch.where(x == 0, zero, torch.acos(x))


def expm1(x: Any, /) -> Any:
    """Complex input at infinities, NaN and zero: exp(x) - 1, which has the standard's special
    values there (the framework's complex expm1 gives nan + nanj at the first two, -0 + 0j for
    -0 + 0j where the standard says 0 + 0j)."""
    if not x.is_complex():
        return torch.expm1(x)
    return torch.where(torch.isfinite(x) & (x != 0), torch.expm1(x), torch.exp(x) - 1)


def log1p(x: Any, /) -> Any:
    """Complex input at infinities and NaN: log(1 + x), which has the standard's special values
    there (the framework's complex log1p does not)."""
    if not x.is_complex():
        return torch.log1p(x)
    return torch.where(torch.isfinite(x), torch.log1p(x), torch.log(1 + x))


def tanh(x: Any, /) -> Any:
    """The standard's tanh(+-inf + yj) = +-1 + 0j for finite y (the zero signed as y), where C99
    (torch) signs the zero as sin(2y)."""
    out = torch.tanh(x)
    if not out.is_complex():
        return out
    fix = torch.isinf(x.real) & torch.isfinite(x.imag)
    return torch.complex(out.real, torch.where(fix, torch.copysign(torch.zeros_like(out.imag), x.imag), out.imag))
