"""Set kernels: sorted unique values of the flattened input, every NaN distinct (numpy 2).

torch.unique gives values, counts and inverse indices (NaNs distinct, since it compares
neighbours after sorting) but not the index of each value's first occurrence, which
``unique_all`` computes from a stable sort: the first of each run of equal sorted values
has the smallest original index.
"""

from __future__ import annotations

from typing import Any

import torch


def unique_values(x: Any, /) -> Any:
    return torch.unique(x)


def unique_counts(x: Any, /) -> tuple[Any, Any]:
    values, counts = torch.unique(x, return_counts=True)
    return values, counts


def unique_inverse(x: Any, /) -> tuple[Any, Any]:
    values, inverse = torch.unique(x, return_inverse=True)
    return values, inverse


def unique_all(x: Any, /) -> tuple[Any, Any, Any, Any]:
    """(values, first-occurrence indices, inverse indices of x's shape, counts)."""
    flat = x.reshape(-1)
    size = flat.shape[0]
    ordered, order = torch.sort(flat, stable=True)
    starts_run = torch.ones(size, dtype=torch.bool, device=x.device)
    starts_run[1:] = ordered[1:] != ordered[:-1]  # NaN != NaN: each NaN is its own run
    starts = torch.nonzero(starts_run).reshape(-1)
    ends = torch.cat([starts[1:], torch.full((1,), size, dtype=starts.dtype, device=x.device)])
    run = torch.cumsum(starts_run, 0) - 1  # the run of each sorted element
    inverse = torch.empty_like(order).scatter_(0, order, run)
    return ordered[starts], order[starts], inverse.reshape(x.shape), ends - starts
