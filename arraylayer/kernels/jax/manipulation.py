"""Manipulation and indexing kernels: jax.numpy's functions, which match the Array API as they are.

``repeat`` with an array of repeats and the data-dependent shapes it makes cannot be traced
by ``jax.jit`` (jax needs ``total_repeat_length`` there); everything else can.
"""

from __future__ import annotations

import jax.numpy as jnp

broadcast_arrays = jnp.broadcast_arrays
broadcast_to = jnp.broadcast_to
concat = jnp.concat
expand_dims = jnp.expand_dims
flip = jnp.flip
moveaxis = jnp.moveaxis
permute_dims = jnp.permute_dims
repeat = jnp.repeat
reshape = jnp.reshape
roll = jnp.roll
squeeze = jnp.squeeze
stack = jnp.stack
tile = jnp.tile
unstack = jnp.unstack

take = jnp.take
take_along_axis = jnp.take_along_axis
