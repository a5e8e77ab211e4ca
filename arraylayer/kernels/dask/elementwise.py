"""Element-wise kernels: NumPy's, chunk by chunk (see ``_lazy.chunkwise``).

An element-wise function of aligned chunks is the function of the whole array, so the NumPy
backend's kernels (NumPy 2's Array API semantics, the bfloat16 scalar fix, the standard's
special values, integer powers with negative exponents) give the same values here, in the same
one task per chunk that ``dask.array``'s own ufuncs add to the graph.
"""

from __future__ import annotations

from arraylayer.kernels.names import KERNEL_NAMES
from arraylayer.kernels.dask._lazy import chunkwise

globals().update({name: chunkwise(name) for name in KERNEL_NAMES["elementwise"]})
