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

from ..names import collect_kernels, half_precision_decompositions_unsupported

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(__name__)

# What the NumPy chunks cannot compute exactly (half-precision factorisations, solves and transforms).
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(">=2026.1")
