"""Element-wise transforms of the generator's words (the ``transform`` of a draw): keys, bits,
uniforms, normals by Acklam's quantile, truncated normals, integers, booleans."""

from __future__ import annotations

import math
from typing import Any

from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (
    add,
    bitwise_xor,
    clip,
    divide,
    less,
    log,
    minimum,
    multiply,
    negative,
    remainder,
    sqrt,
    subtract,
)
from arraylayer.api.manipulation import stack
from arraylayer.api.searching import where
from arraylayer.dtypes import finfo
from arraylayer.models.random.threefry import _FLOAT32, _FLOATS, _shr, _to_public


def _keys_of(y0: Any, y1: Any) -> Any:
    """Keys from the words of each counter: shape (n, 2)."""
    return stack([_to_public(y0), _to_public(y1)], axis=-1)


def _bits_of(y0: Any, y1: Any) -> Any:
    """The 32-bit words of ``jax.random.bits``, public dtype."""
    return _to_public(bitwise_xor(y0, y1))


def _unit_of(y0: Any, y1: Any, *, dtype: Any, open_low: bool = False) -> Any:
    """Uniform floats in [0, 1) (or (0, 1) when open_low), from the top bits of the words."""
    if dtype == _FLOATS[0]:
        m = astype(_shr(bitwise_xor(y0, y1), 9), _FLOAT32)
        return multiply(add(m, 0.5) if open_low else m, 2.0**-23)
    hi = astype(_shr(y0, 6), _FLOATS[1])
    lo = astype(_shr(y1, 5), _FLOATS[1])
    m = add(multiply(hi, 2.0**27), lo)
    return multiply(add(m, 0.5) if open_low else m, 2.0**-53)


def _normal_of(y0: Any, y1: Any, *, dtype: Any) -> Any:
    return _quantile(_unit_of(y0, y1, dtype=dtype, open_low=True))


def _truncated_of(y0: Any, y1: Any, *, dtype: Any, lower: float, upper: float) -> Any:
    """Normal quantiles of uniforms rescaled to [cdf(lower), cdf(upper)], clipped to the bounds."""
    cdf_low, cdf_high = (0.5 * math.erfc(-b / math.sqrt(2)) for b in (lower, upper))
    u = _unit_of(y0, y1, dtype=dtype, open_low=True)
    p = add(multiply(u, cdf_high - cdf_low), cdf_low)
    info = finfo(dtype)  # strictly inside (0, 1): the quantile of 0 or 1 is infinite (or NaN)
    p = clip(p, info.smallest_normal, 1.0 - info.eps / 2)
    return clip(_quantile(p), lower, upper)


def _randint_of(y0: Any, y1: Any, *, dtype: Any, minval: int, span: int) -> Any:
    offset = remainder(_bits_of(y0, y1), span)
    # Two's-complement wrap-around makes cast-then-add exact even when the offset overflows dtype.
    return add(astype(offset, dtype), minval)


def _bernoulli_of(y0: Any, y1: Any, *, p: float) -> Any:
    return less(_unit_of(y0, y1, dtype=_FLOATS[0]), p)


#: the transforms made of exact operations only (integer operations, conversions of integers the
#: float holds exactly, products by powers of two, comparisons): a compiler may fuse them with the
#: rounds without changing a bit (the normals' log and quantile polynomials stay outside)
EXACT = frozenset({_keys_of, _bits_of, _unit_of, _randint_of, _bernoulli_of})


# Acklam's rational approximation of the standard normal quantile function.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771082e01, -1.328068155288572e01, 1.0)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
      3.754408661907416e00, 1.0)
_P_LOW = 0.02425


def _poly(coefficients: tuple[float, ...], x: Any) -> Any:
    result = coefficients[0]
    for c in coefficients[1:]:
        result = add(multiply(result, x), c)
    return result


def _quantile(p: Any) -> Any:
    """The standard normal quantile of p in (0, 1)."""
    q = subtract(p, 0.5)
    r = multiply(q, q)
    central = divide(multiply(_poly(_A, r), q), _poly(_B, r))
    tail_p = minimum(p, subtract(1.0, p))
    t = sqrt(multiply(log(tail_p), -2.0))
    tail = divide(_poly(_C, t), _poly(_D, t))
    tail = where(less(p, 0.5), tail, negative(tail))
    return where(less(tail_p, _P_LOW), tail, central)
