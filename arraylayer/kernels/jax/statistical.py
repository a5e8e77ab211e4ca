"""Statistical and utility kernels.

With an explicit ``dtype=`` (which the contract always passes) jax accumulates float16 and
bfloat16 sums and products in that half dtype (a bfloat16 product of 300 values 1.0078125
comes out 8.25, where float32 accumulation gives 10.3), so ``sum``/``prod``/``cumulative_*`` compute the two in float32
and round once. ``mean``/``std``/``var`` (no ``dtype=``) already do.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from ._common import F32, HALF


def _truth(x: Any) -> Any:
    """x as bool: jax 0.10 reads a complex value's real part only (jnp.any of 1j is False)."""
    return x != 0 if jnp.iscomplexobj(x) else x


def all(x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return jnp.all(_truth(x), *args, **kwargs)


def any(x: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return jnp.any(_truth(x), *args, **kwargs)


diff = jnp.diff
max = jnp.max
mean = jnp.mean
min = jnp.min
var = jnp.var


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
    return _root(jnp.var(x, axis=axis, correction=correction, keepdims=keepdims))


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
