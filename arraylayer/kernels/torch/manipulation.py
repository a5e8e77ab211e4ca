"""Manipulation and indexing kernels: torch's functions under the Array API's parameter names
(``axis`` for ``dim``), plus what torch does differently: ``axis=None`` in ``concat``/``flip``, an
int ``shift`` over several axes in ``roll``, ``squeeze`` of an axis that is not of length 1 (an
error, torch ignores it), ``reshape(copy=...)`` and negative indices in ``take_along_axis``."""

from __future__ import annotations

from typing import Any

import torch

_INDEX_DTYPES = (torch.int64, torch.int32)  # what torch indexing takes as indices (uint8 is a mask)

broadcast_arrays = torch.broadcast_tensors
moveaxis = torch.moveaxis
tile = torch.tile


def broadcast_to(x: Any, /, shape: tuple[int, ...]) -> Any:
    return torch.broadcast_to(x, shape)


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    if axis is None:
        return torch.cat([a.reshape(-1) for a in arrays])
    return torch.cat(arrays, dim=axis)


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    return torch.stack(arrays, dim=axis)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    return torch.unbind(x, dim=axis)


def expand_dims(x: Any, /, axis: int | tuple[int, ...] = 0) -> Any:
    """An int axis (the 2024.12 standard) or a tuple of them (numpy, later standards)."""
    if isinstance(axis, int):
        return torch.unsqueeze(x, axis)
    ndim = x.ndim + len(axis)
    for a in sorted(a % ndim for a in axis):
        x = torch.unsqueeze(x, a)
    return x


def squeeze(x: Any, /, axis: int | tuple[int, ...]) -> Any:
    """Only axes of length 1; torch.squeeze silently keeps the others."""
    for a in (axis,) if isinstance(axis, int) else axis:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has length {x.shape[a]}, not 1 (shape {tuple(x.shape)}).")
    return torch.squeeze(x, axis)


def permute_dims(x: Any, /, axes: tuple[int, ...]) -> Any:
    return torch.permute(x, axes)


def flip(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    if axis is None:
        axis = tuple(range(x.ndim))
    return torch.flip(x, (axis,) if isinstance(axis, int) else axis)


def roll(x: Any, /, shift: int | tuple[int, ...], *, axis: int | tuple[int, ...] | None = None) -> Any:
    """One int shift over several axes shifts each by it (torch wants one shift per axis)."""
    if isinstance(shift, int) and isinstance(axis, tuple):
        shift = (shift,) * len(axis)
    return torch.roll(x, shift, axis)


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    """Repeat counts of any integer dtype (torch's repeat_interleave takes int64 counts only)."""
    if isinstance(repeats, torch.Tensor) and repeats.dtype != torch.int64:
        repeats = repeats.to(torch.int64)
    return torch.repeat_interleave(x, repeats, dim=axis)


def reshape(x: Any, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Any:
    """``copy=True``: always a new tensor; ``copy=False``: a view or ValueError."""
    if copy is None:
        return torch.reshape(x, shape)
    if copy:
        return x.clone(memory_format=torch.contiguous_format).view(shape)
    try:
        return x.view(shape)
    except RuntimeError as error:
        raise ValueError(f"reshape(copy=False): shape {tuple(x.shape)} -> {shape} needs a copy ({error})") from None


# -- indexing -------------------------------------------------------------------------------
def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    """Indexing, which takes negative indices (torch.index_select does not)."""
    if indices.dtype not in _INDEX_DTYPES:
        indices = indices.long()
    if axis is None or axis == 0 or axis == -x.ndim:
        return x[indices]
    return x[(slice(None),) * (axis % x.ndim) + (indices,)]


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    """torch.take_along_dim, with negative indices counted from the end as numpy does."""
    indices = indices.long()
    indices = torch.where(indices < 0, indices + x.shape[axis], indices)
    return torch.take_along_dim(x, indices, dim=axis)
