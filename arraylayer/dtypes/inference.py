"""Inference of a function's ``dtype`` argument: :func:`infer_dtype`.

The order follows Ivy's "Data Types" notes: the given dtype, else the arrays' dtypes joined on
the standard lattice, else the default dtype of the highest kind of Python scalar, else the
default float dtype.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes.defaults import default_dtype_of_kind, default_float_dtype
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype
from arraylayer.dtypes.promotion import lattice_join_of_arrays

__all__ = ["infer_dtype", "infer_dtype_unchecked"]

# Kind order used to pick the dtype of a mix of Python scalars: bool < int < float < complex.
_SCALAR_RANK: Final = {bool: 0, int: 1, float: 2, complex: 3}
_RANKED_TYPES: Final = (bool, int, float, complex)


def _scan(item: Any, arrays: list[Any]) -> int:
    """Highest scalar rank in ``item`` (nested lists/tuples walked); arrays are collected."""
    rank = _SCALAR_RANK.get(type(item))
    if rank is not None:
        return rank
    if isinstance(item, (list, tuple)):
        return max((_scan(element, arrays) for element in item), default=-1)
    if hasattr(item, "dtype"):
        arrays.append(item)
        return -1
    # numpy scalars and other numbers that are subclasses of the Python types
    for pytype in reversed(_RANKED_TYPES):
        if isinstance(item, pytype):
            return _SCALAR_RANK[pytype]
    return -1


def infer_dtype(dtype: DtypeLike | None, *items: Any) -> Dtype:
    """The dtype a function should produce, in the order Ivy's "Data Types" notes give.

    1. ``dtype``, when given;
    2. else the dtype of the array arguments among ``items`` (joined on the lattice
       when there are several);
    3. else the default dtype of the highest kind among the *relevant* Python scalars
       in ``items`` (nested lists and tuples are walked): bool, then int, float, complex;
    4. else the default float dtype.

    Call it inline, ``dtype = infer_dtype(dtype, fill_value)``; with a ``dtype``
    already given it is one dict look-up. Each item must be None (ignored), a Python number,
    an array, or a rectangular nested list/tuple of those: anything else (a str, bytes, a dict,
    a set, an arbitrary object, a ragged list) raises InvalidArgumentTypeError or
    InvalidArgumentError instead of being read as "no information" (float32).
    """
    for index, item in enumerate(items):
        if item is not None:
            from arraylayer.arguments import array_like

            array_like(item, f"items[{index}]" if len(items) > 1 else "item")
    return infer_dtype_unchecked(dtype, *items)


def infer_dtype_unchecked(dtype: DtypeLike | None, *items: Any) -> Dtype:
    """:func:`infer_dtype` without checking ``items`` (for callers that check them, or pass
    arguments their own checks see next)."""
    if dtype is not None:
        return as_dtype(dtype)
    arrays: list[Any] = []
    rank = -1
    for item in items:  # a loop, not max() over a generator: torch.compile traces this one
        rank = max(rank, _scan(item, arrays))
    if arrays:
        return lattice_join_of_arrays(arrays)
    if rank < 0:
        return default_float_dtype()
    return default_dtype_of_kind(_RANKED_TYPES[rank])
