"""Creation kernels: ``dask.array``'s, with ``chunks`` (dask's ``"auto"`` unless given).

``device`` is accepted and ignored: the api layer has checked it is the CPU, where the chunks live.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np

AUTO = "auto"


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None,
           chunks: Any = AUTO) -> Any:
    if stop is None:
        start, stop = 0, start
    return da.arange(start, stop, step, dtype=dtype, chunks=chunks)


def empty(shape: tuple[int, ...], *, dtype: Any = None, device: Any = None, chunks: Any = AUTO) -> Any:
    return da.empty(shape, dtype=dtype, chunks=chunks)


def zeros(shape: tuple[int, ...], *, dtype: Any = None, device: Any = None, chunks: Any = AUTO) -> Any:
    return da.zeros(shape, dtype=dtype, chunks=chunks)


def ones(shape: tuple[int, ...], *, dtype: Any = None, device: Any = None, chunks: Any = AUTO) -> Any:
    return da.ones(shape, dtype=dtype, chunks=chunks)


def full(shape: tuple[int, ...], fill_value: Any, *, dtype: Any = None, device: Any = None, chunks: Any = AUTO) -> Any:
    return da.full(shape, fill_value, dtype=dtype, chunks=chunks)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None,
        chunks: Any = AUTO) -> Any:
    """The k-th diagonal of ones, as the difference of two lower triangles (dask 2026.8's own
    ``eye`` builds a broken graph for non-square shapes with ``chunks="auto"``)."""
    n_cols = n_rows if n_cols is None else n_cols
    on_or_below = da.tri(n_rows, n_cols, k, dtype=bool, chunks=chunks)
    below = da.tri(n_rows, n_cols, k - 1, dtype=bool, chunks=on_or_below.chunks)
    return (on_or_below & ~below).astype(dtype)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None, endpoint: bool = True,
             chunks: Any = AUTO) -> Any:
    """One chunk's worth per chunk of np.linspace's values (the same values as NumPy's)."""
    values = da.arange(num, chunks=chunks, dtype=np.int64)
    step_count = num - 1 if endpoint else num
    return values.map_blocks(_linspace_block, start=start, stop=stop, num=num, endpoint=endpoint,
                             step_count=step_count, result=dtype, dtype=dtype)


def _linspace_block(positions: Any, *, start: Any, stop: Any, num: int, endpoint: bool, step_count: int,
                    result: Any) -> Any:
    """np.linspace's values at ``positions`` (a chunk of 0..num-1), computed as np.linspace
    computes them (in float64 or complex128, then cast), without building the whole array."""
    work = np.result_type(start, stop, float(num))
    delta = np.asarray(stop, work) - np.asarray(start, work)
    y = positions.astype(work)
    if step_count > 0:
        step = delta / step_count
        y = y / step_count * delta if np.any(step == 0) else y * step
    else:
        y = y * delta
    y = y + start
    if endpoint and num > 1:
        y[positions == num - 1] = stop
    return y.astype(result, copy=False)


def meshgrid(*arrays: Any, indexing: str = "xy") -> Any:
    return tuple(da.meshgrid(*arrays, indexing=indexing))


def _triangle(x: Any, k: int, lower: bool) -> Any:
    """``x`` with the elements outside the lower (or upper) triangle of its last two axes zeroed,
    chunk by chunk: a lazily made boolean mask with x's chunks on those axes."""
    rows, cols = x.shape[-2:]
    below = da.tri(rows, cols, k if lower else k - 1, dtype=bool, chunks=x.chunks[-2:])
    keep = below if lower else ~below
    return da.where(keep, x, da.zeros((), dtype=x.dtype))


def tril(x: Any, /, *, k: int = 0) -> Any:
    return _triangle(x, k, lower=True)


def triu(x: Any, /, *, k: int = 0) -> Any:
    return _triangle(x, k, lower=False)
