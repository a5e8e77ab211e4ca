"""Searching, sorting and set kernels.

jax.numpy's sort and argsort take ``descending=`` and ``stable=`` (a stable descending sort
keeps equal elements in their original order). The ``unique_*`` functions return plain tuples
(jax counts every NaN as distinct, as numpy 2 does); they and ``nonzero`` have data-dependent
shapes, so they run eagerly only (under ``jax.jit`` jax needs a static ``size=``).
"""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

from arraylayer.kernels.jax._common import as_operand

argmax = jnp.argmax
argmin = jnp.argmin
argsort = jnp.argsort
count_nonzero = jnp.count_nonzero
nonzero = jnp.nonzero
searchsorted = jnp.searchsorted
sort = jnp.sort
unique_values = jnp.unique_values


def where(condition: Any, x1: Any, x2: Any, /) -> Any:
    """jax.numpy.where, also for a Python int beyond int32 (a uint32/uint64 value)."""
    return jnp.where(condition, as_operand(x1, x2), as_operand(x2, x1))


def unique_all(x: Any, /) -> tuple[Any, Any, Any, Any]:
    return tuple(jnp.unique_all(x))  # type: ignore[return-value]


def unique_counts(x: Any, /) -> tuple[Any, Any]:
    return tuple(jnp.unique_counts(x))  # type: ignore[return-value]


def unique_inverse(x: Any, /) -> tuple[Any, Any]:
    return tuple(jnp.unique_inverse(x))  # type: ignore[return-value]
