"""Complex ``exp``, ``log``, ``sqrt``, hyperbolic and inverse functions with the standard's special
values at infinities and NaN (C99 Annex G, which the Array API standard follows and NumPy gives).

XLA computes these from the components' formulas, so an infinite or NaN component gives NaN for
both (``exp(-inf + inf j)`` is nan + nan j, the standard says 0 + 0j). Each function here is
jax.numpy's own, with only the standard's special inputs replaced (one ``where``, fused by jit);
finite inputs keep jax.numpy's values and gradients.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

__all__ = ["acos", "acosh", "asinh", "atanh", "cosh", "exp", "log", "sinh", "sqrt", "tanh"]

_INF, _NAN, _HALF_PI = float("inf"), float("nan"), 1.5707963267948966


def _complex(re: Any, im: Any, like: Any) -> Any:
    """A complex array of ``like``'s component dtype from two (broadcast) real parts."""
    return jax.lax.complex(jnp.broadcast_to(re, like.shape).astype(like.dtype),
                           jnp.broadcast_to(im, like.shape).astype(like.dtype))


@jax.jit
def exp(x: Any) -> Any:
    """exp(+-inf + (inf or NaN) j): inf + NaN j at +inf, 0 + 0j at -inf."""
    re, im = jnp.real(x), jnp.imag(x)
    plus = re > 0
    special = _complex(jnp.where(plus, _INF, 0.0), jnp.where(plus, _NAN, 0.0), re)
    return jnp.where(jnp.isinf(re) & ~jnp.isfinite(im), special, jnp.exp(x))


@jax.jit
def log(x: Any) -> Any:
    """An infinite component makes the real part +inf (|x| is inf even beside a NaN)."""
    re, im = jnp.real(x), jnp.imag(x)
    out = jnp.log(x)
    infinite = jnp.isinf(re) | jnp.isinf(im)
    return _complex(jnp.where(infinite, _INF, jnp.real(out)), jnp.imag(out), re)


@jax.jit
def sqrt(x: Any) -> Any:
    """sqrt(anything +- inf j) is inf +- inf j (NaN too); sqrt(+inf + NaN j) is inf + NaN j,
    sqrt(-inf + NaN j) is NaN + inf j."""
    re, im = jnp.real(x), jnp.imag(x)
    plus = re > 0
    special = _complex(jnp.where(plus, _INF, _NAN), jnp.where(plus, _NAN, _INF), re)
    out = jnp.where(jnp.isinf(re) & jnp.isnan(im), special, jnp.sqrt(x))
    return jnp.where(jnp.isinf(im), _complex(_INF, im, re), out)


@jax.jit
def sinh(x: Any) -> Any:
    """A zero or infinite real part beside an infinite or NaN imaginary one: that real part + NaN j."""
    re, im = jnp.real(x), jnp.imag(x)
    special = _complex(re, _NAN, re)
    return jnp.where(((re == 0) | jnp.isinf(re)) & ~jnp.isfinite(im), special, jnp.sinh(x))


@jax.jit
def cosh(x: Any) -> Any:
    """Beside an infinite or NaN imaginary part: NaN + 0j at a zero real part, inf + NaN j at an
    infinite one."""
    re, im = jnp.real(x), jnp.imag(x)
    zero = re == 0
    special = _complex(jnp.where(zero, _NAN, _INF), jnp.where(zero, 0.0, _NAN), re)
    return jnp.where((zero | jnp.isinf(re)) & ~jnp.isfinite(im), special, jnp.cosh(x))


@jax.jit
def tanh(x: Any) -> Any:
    """tanh(+-0 + (inf or NaN) j) keeps the zero: +-0 + NaN j; tanh(+-inf + yj) for finite y is the
    standard's +-1 + 0j (the zero signed as y), where C99 signs it as sin(2y)."""
    re, im = jnp.real(x), jnp.imag(x)
    out = jnp.where((re == 0) & ~jnp.isfinite(im), _complex(re, _NAN, re), jnp.tanh(x))
    return jnp.where(jnp.isinf(re) & jnp.isfinite(im), _complex(jnp.sign(re), jnp.copysign(0.0, im), re), out)


@jax.jit
def acos(x: Any) -> Any:
    """With a NaN component: pi/2 + NaN j at a zero real part, NaN -+ inf j beside an infinity,
    NaN + NaN j otherwise (jax's large-argument formula gives a number for some)."""
    re, im = jnp.real(x), jnp.imag(x)
    nan_re, nan_im = jnp.isnan(re), jnp.isnan(im)
    special = _complex(jnp.where((re == 0) & nan_im, _HALF_PI, _NAN),
                       jnp.where(jnp.isinf(re) & nan_im, _INF, jnp.where(nan_re & jnp.isinf(im), -im, _NAN)), re)
    return jnp.where(nan_re | nan_im, special, jnp.acos(x))


@jax.jit
def acosh(x: Any) -> Any:
    """With a NaN component: NaN + pi/2 j at a zero real part, inf + NaN j beside an infinity,
    NaN + NaN j otherwise."""
    re, im = jnp.real(x), jnp.imag(x)
    nan_re, nan_im = jnp.isnan(re), jnp.isnan(im)
    special = _complex(jnp.where(jnp.isinf(re) | jnp.isinf(im), _INF, _NAN),
                       jnp.where((re == 0) & nan_im, _HALF_PI, _NAN), re)
    return jnp.where(nan_re | nan_im, special, jnp.acosh(x))


@jax.jit
def asinh(x: Any) -> Any:
    """With a NaN component: NaN +- 0j at a zero imaginary part, +-inf + NaN j beside an infinity,
    NaN + NaN j otherwise."""
    re, im = jnp.real(x), jnp.imag(x)
    nan_re, nan_im = jnp.isnan(re), jnp.isnan(im)
    special = _complex(jnp.where(jnp.isinf(re), re, jnp.where(jnp.isinf(im), _INF, _NAN)),
                       jnp.where(nan_re & (im == 0), im, _NAN), re)
    return jnp.where(nan_re | nan_im, special, jnp.asinh(x))


@jax.jit
def atanh(x: Any) -> Any:
    """With a NaN component: +-0 + NaN j where the real part is zero or infinite, +-0 +- pi/2 j
    where the imaginary part is infinite, NaN + NaN j otherwise (jax gives -pi/2 for the
    imaginary part)."""
    re, im = jnp.real(x), jnp.imag(x)
    nan_re, nan_im = jnp.isnan(re), jnp.isnan(im)
    keeps_zero = nan_im & ((re == 0) | jnp.isinf(re))
    toward_pole = nan_re & jnp.isinf(im)
    special = _complex(jnp.where(keeps_zero, jnp.copysign(0.0, re), jnp.where(toward_pole, 0.0, _NAN)),
                       jnp.where(toward_pole, jnp.copysign(_HALF_PI, im), _NAN), re)
    return jnp.where(nan_re | nan_im, special, jnp.atanh(x))
