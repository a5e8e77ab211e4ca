"""Sorting kernels: stable in both directions.

``tf.argsort`` is ``top_k`` (which keeps equal elements in index order) on the values,
inverted for ascending order, so it is stable either way; what it gets wrong is NaN
(``tf.sort`` scatters NaNs among the numbers). Floats are therefore sorted by integer
order keys (NaN last ascending, first descending: the reverse order, as NumPy's flip of
an ascending sort gives), and their values gathered back, which also keeps gradients.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import BOOL, sortable
from arraylayer.kernels.tensorflow.indexing import gather_along

_DIRECTIONS = {False: "ASCENDING", True: "DESCENDING"}


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    return tf.argsort(sortable(x), axis, _DIRECTIONS[descending], stable=True)


def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    dtype = x.dtype
    if dtype.is_floating:
        return gather_along(x, argsort(x, axis=axis, descending=descending), axis)
    if dtype is BOOL:
        return tf.cast(tf.sort(tf.cast(x, tf.uint8), axis, _DIRECTIONS[descending]), BOOL)
    return tf.sort(x, axis, _DIRECTIONS[descending])
