"""NumPy memory layouts as frameworks can take them: the array itself where they can view its
memory, an exact C-ordered copy in native byte order where they cannot.

What each framework refuses (numpy 2.4, torch 2.13, jax 0.10, tensorflow 2.21):

- every framework: non-native byte order (``np.arange(3, dtype=">i4")``); DLPack cannot say it;
  negative strides, even on an axis of length 1 (``np.arange(2)[::-1][:1]``), which NumPy calls contiguous;
- torch: negative strides (``x[::-1]``): its DLPack import *aborts the process*, ``from_numpy`` and
  indexing raise; read-only arrays: it would share them as writable tensors;
- JAX (DLPack): strides that are not C or Fortran order, and read-only arrays (NumPy will not
  export them to JAX's DLPack version);
- TensorFlow (DLPack): anything but C order, and read-only arrays, as JAX.
"""

from __future__ import annotations

from typing import Any

NONE, C, C_OR_F = 0, 1, 2  # the memory orders a framework views: any strides, C order, C or Fortran order


def shareable(x: Any, order: int = NONE, writeable: bool = False) -> Any:
    """``x`` itself where a framework can view it, else a C-ordered native-byte-order copy.

    Negative strides (on any axis, even of length 1) and non-native byte order are always copied;
    ``order`` (``C``, ``C_OR_F``) copies other strides; ``writeable`` copies read-only arrays.
    Anything but a NumPy array is returned as it is. The check is a few attribute reads."""
    import numpy as np

    if not isinstance(x, np.ndarray):
        return x
    flags = x.flags
    if any(s < 0 for s in x.strides):  # even on an axis of length 1 (contiguous to NumPy): torch refuses it
        viewable = False
    elif flags.c_contiguous:
        viewable = True
    elif flags.f_contiguous:
        viewable = order != C
    else:
        viewable = order == NONE
    if viewable and x.dtype.isnative and (flags.writeable or not writeable):
        return x
    return np.array(x, dtype=x.dtype.newbyteorder("="), order="C", copy=True)  # keeps 0-d arrays 0-d
