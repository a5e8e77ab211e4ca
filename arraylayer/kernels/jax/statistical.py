"""Statistical and utility kernels.

With an explicit ``dtype=`` (which the contract always passes) jax accumulates float16 and
bfloat16 sums and products in that half dtype (a bfloat16 product of 300 values 1.0078125
comes out 8.25, where float32 accumulation gives 10.3), so ``sum``/``prod``/``cumulative_*`` compute the two in float32
and round once. ``mean``/``std``/``var`` (no ``dtype=``) already do.

``mean``, ``var`` and ``std`` of real floating arrays are jax.numpy's formulas (the sum over
the count; the sum of squared deviations from the mean over the count less ``correction``), with
each division a true division (``_common.true_divide``): jax.numpy divides by the count as a
constant, which XLA turns into a multiplication by its reciprocal (a mean over 1000 values was an
ulp off NumPy's quotient of the same sum in half the rows; a float32 var under jax.jit in two
thirds). What still differs from NumPy is the sums' order, not the division.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from arraylayer.kernels.jax._common import F32, FLOATS, HALF, true_divide


def _truth(x: Any) -> Any:
    """x as bool: jax 0.10 reads a complex value's real part only (jnp.any of 1j is False)."""
    return x != 0 if jnp.iscomplexobj(x) else x


def all(x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return jnp.all(_truth(x), *args, **kwargs)


def any(x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return jnp.any(_truth(x), *args, **kwargs)


diff = jnp.diff
max = jnp.max
min = jnp.min


def _count(shape: tuple[int, ...], axis: Any) -> int:
    """How many elements a reduction over ``axis`` (None, an int or a tuple) takes together."""
    axes = range(len(shape)) if axis is None else (axis,) if isinstance(axis, int) else axis
    return math.prod(shape[a] for a in axes)


def _widened(x: Any) -> Any:
    """float16/bfloat16 as float32 (the sums' accumulation dtype); other dtypes as they are."""
    return x.astype(F32) if x.dtype in HALF else x


def _mean_of(x: Any, axis: Any, keepdims: bool) -> Any:
    """The sum over the count, a true division (x in its computation dtype already)."""
    return true_divide(jnp.sum(x, axis=axis, keepdims=keepdims), _count(x.shape, axis))


def mean(x: Any, /, *, axis: Any = None, keepdims: bool = False) -> Any:
    """jax.numpy's mean (float16/bfloat16 summed in float32) with a true division by the count."""
    if x.dtype not in FLOATS:  # complex and the low-precision formats: jax.numpy's own
        return jnp.mean(x, axis=axis, keepdims=keepdims)
    return _mean(x, static_axis(axis), keepdims)


@partial(jax.jit, static_argnums=(1, 2))
def _mean(x: Any, axis: Any, keepdims: bool) -> Any:
    return _mean_of(_widened(x), axis, keepdims).astype(x.dtype)


def var(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """jax.numpy's two-pass variance with true divisions by the count (the mean) and by the count
    less ``correction``; NaN where that is not positive."""
    if x.dtype not in FLOATS:
        return jnp.var(x, axis=axis, correction=correction, keepdims=keepdims)
    return _var(x, static_axis(axis), correction, keepdims)


@partial(jax.jit, static_argnums=(1, 2, 3))
def _var(x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    wide = _widened(x)
    squares = jnp.square(wide - _mean_of(wide, axis, True))
    normaliser = _count(x.shape, axis) - correction
    if normaliser <= 0:  # jax.numpy's NaN
        return jnp.full_like(jnp.sum(squares, axis=axis, keepdims=keepdims), jnp.nan, dtype=x.dtype)
    return true_divide(jnp.sum(squares, axis=axis, keepdims=keepdims), normaliser).astype(x.dtype)


@jax.custom_jvp
def _root(x: Any) -> Any:
    return jnp.sqrt(x)


@_root.defjvp
def _root_jvp(primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
    (x,), (t,) = primals, tangents
    result = jnp.sqrt(x)  # 1 / (2 sqrt(x)), and 0 at 0: the norm of zeros (a cone's tip) has gradient 0
    return result, jnp.where(result == 0, 0, 0.5 / jnp.where(result == 0, 1, result)) * t


root = _root  # sqrt with gradient 0 at 0, for norms and standard deviations


def std(x: Any, /, *, axis: Any = None, correction: float = 0.0, keepdims: bool = False) -> Any:
    """``sqrt(var)`` (as jax.numpy's); where all values are equal its gradient is 0, not NaN."""
    return _std(x, static_axis(axis), correction, keepdims)


@partial(jax.jit, static_argnums=(1, 2, 3))
def _std(x: Any, axis: Any, correction: float, keepdims: bool) -> Any:
    return _root(var(x, axis=axis, correction=correction, keepdims=keepdims))


def static_axis(axis: Any) -> Any:
    """``axis`` hashable, as a static argument of a jitted function must be (a list as a tuple)."""
    return tuple(axis) if isinstance(axis, list) else axis


def sum(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    if dtype in HALF:
        return jnp.sum(x, axis=axis, dtype=F32, keepdims=keepdims).astype(dtype)
    return jnp.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)


def prod(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    if dtype in HALF:
        return jnp.prod(x, axis=axis, dtype=F32, keepdims=keepdims).astype(dtype)
    return jnp.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)


def cumulative_sum(
    x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    if dtype in HALF:
        return jnp.cumulative_sum(x, axis=axis, dtype=F32, include_initial=include_initial).astype(dtype)
    return jnp.cumulative_sum(x, axis=axis, dtype=dtype, include_initial=include_initial)


def cumulative_prod(
    x: Any, /, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False
) -> Any:
    if dtype in HALF:
        return jnp.cumulative_prod(x, axis=axis, dtype=F32, include_initial=include_initial).astype(dtype)
    return jnp.cumulative_prod(x, axis=axis, dtype=dtype, include_initial=include_initial)
