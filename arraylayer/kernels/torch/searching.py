"""Searching and sorting kernels.

torch.argmax/argmin have no bool kernel and torch.searchsorted none for bool (both read bool
as uint8, zero-copy); torch.searchsorted's binary search is wrong when NaNs are involved (the
Array API and numpy order NaN after +inf). torch.count_nonzero has no ``keepdims`` and reads
``dim=()`` as every axis.
"""

from __future__ import annotations

from typing import Any

import torch

where = torch.where


def argmax(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    if x.dtype is torch.bool:
        x = x.view(torch.uint8)
    return torch.argmax(x, dim=axis, keepdim=keepdims)


def argmin(x: Any, /, *, axis: int | None = None, keepdims: bool = False) -> Any:
    if x.dtype is torch.bool:
        x = x.view(torch.uint8)
    return torch.argmin(x, dim=axis, keepdim=keepdims)


def count_nonzero(x: Any, /, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
    if axis == ():
        return (x != 0).long()
    counts = torch.count_nonzero(x, dim=axis)
    if not keepdims:
        return counts
    axes = range(x.ndim) if axis is None else [a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)]
    return counts.reshape([1 if i in axes else n for i, n in enumerate(x.shape)])


def nonzero(x: Any, /) -> tuple[Any, ...]:
    return torch.nonzero(x, as_tuple=True)


def searchsorted(x1: Any, x2: Any, /, *, side: str = "left", sorter: Any = None) -> Any:
    """torch.searchsorted, with NaN above +inf and equal to NaN (x1 sorted so, NaNs last)."""
    if x1.dtype is torch.bool:
        x1, x2 = x1.view(torch.uint8), x2.view(torch.uint8)
    if sorter is not None and sorter.dtype is not torch.int64:
        sorter = sorter.long()  # torch takes int64 sorters only
    if not x1.is_floating_point():  # contiguous: torch would copy anyway, and warn
        return torch.searchsorted(x1.contiguous(), x2.contiguous(), side=side, sorter=sorter)
    inf = float("inf")
    found = torch.searchsorted(torch.nan_to_num(x1, nan=inf, posinf=inf, neginf=-inf),
                               torch.nan_to_num(x2, nan=inf, posinf=inf, neginf=-inf), side=side, sorter=sorter)
    # With NaN read as inf, only NaN itself and +inf (side right) can land wrong.
    numbers = torch.count_nonzero(x1 == x1)  # where the NaNs of x1 (1-d) start, in sorted order
    if side == "left":
        return torch.where(torch.isnan(x2), numbers, found)
    return torch.where(torch.isnan(x2), x1.shape[0], torch.minimum(found, numbers))


# -- sorting --------------------------------------------------------------------------------
def sort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    """torch.sort; a stable descending sort keeps equal elements in their original order."""
    return torch.sort(x, dim=axis, descending=descending, stable=stable).values


def argsort(x: Any, /, *, axis: int = -1, descending: bool = False, stable: bool = True) -> Any:
    return torch.argsort(x, dim=axis, descending=descending, stable=stable)
