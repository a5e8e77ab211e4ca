"""Manipulation and indexing kernels: numpy's functions, which match the Array API as they are."""

from __future__ import annotations

import numpy as np

broadcast_arrays = np.broadcast_arrays
broadcast_to = np.broadcast_to
concat = np.concat
expand_dims = np.expand_dims
flip = np.flip
moveaxis = np.moveaxis
permute_dims = np.permute_dims
repeat = np.repeat
reshape = np.reshape
roll = np.roll
squeeze = np.squeeze
stack = np.stack
tile = np.tile
unstack = np.unstack

take = np.take
take_along_axis = np.take_along_axis
