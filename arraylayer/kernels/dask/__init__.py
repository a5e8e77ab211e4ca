"""The dask kernels (``dask.array`` with NumPy chunks); see ``arraylayer/kernels/__init__.py``.

Lazy by construction: every kernel builds graph nodes and none computes. Element-wise kernels
are the NumPy backend's, chunk by chunk; reductions, products and manipulations are
dask's own; functions of whole slices or matrices rechunk those axes and run NumPy's kernels;
``unique_*`` and array ``repeats`` run in one task with lengths unknown until computed
(``_lazy.py`` says how). The dtype declarations are NumPy's, as the chunks are NumPy arrays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arraylayer.kernels.names import collect_kernels, half_precision_decompositions_unsupported
from arraylayer.kernels.dask._lazy import needs_known_lengths

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(__name__)

# What dask refuses on an array of unknown lengths (nan, after a mask, nonzero or unique_*), with
# a raw ValueError or TypeError: refused up front with arraylayer's error and the fix instead.
# Cumulative sums and products are here too: dask's fail, when computed, on a chunk the mask left
# empty. Element-wise functions, reductions, masks and reshapes to and from length one work on
# such arrays and are not here.
KNOWN_LENGTHS: tuple[str, ...] = ("argmax", "argmin", "argsort", "cumulative_prod", "cumulative_sum", "diff", "flip",
                                  "roll", "searchsorted", "sort", "take", "take_along_axis", "unstack")
KERNELS.update({name: needs_known_lengths(name, KERNELS[name]) for name in KNOWN_LENGTHS})

# What the NumPy chunks cannot compute exactly (half-precision factorisations, solves and transforms).
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(">=2026.1")
