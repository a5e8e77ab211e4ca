"""Creation kernels: jax.numpy's functions have the Array API signatures (``device=`` included)
and give strongly typed arrays when ``dtype=`` is given, as the contract always does."""

from __future__ import annotations

from typing import Any, Final

import jax.numpy as jnp
import numpy as np

_BOOL: Final = np.dtype(bool)


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Any:
    """jax.numpy.arange; a bool range (jax's iota refuses bool) is the int range cast to bool."""
    if dtype is _BOOL:
        return jnp.arange(start, stop, step, dtype=jnp.int32, device=device).astype(_BOOL)
    return jnp.arange(start, stop, step, dtype=dtype, device=device)

empty = jnp.empty
eye = jnp.eye
full = jnp.full
linspace = jnp.linspace
meshgrid = jnp.meshgrid
ones = jnp.ones
tril = jnp.tril
triu = jnp.triu
zeros = jnp.zeros
