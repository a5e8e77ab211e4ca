"""Creation kernels: Array API parameter names over torch's (``shape`` not ``size``, ``k`` not
``diagonal``), ``eye`` with an offset, ``linspace`` without its endpoint, ``arange`` of complex
and bool dtypes."""

from __future__ import annotations

from typing import Any, Final

import torch

# torch.arange has no complex or bool kernel: complex values are the real ones of the same
# precision (exact), bool ones are int64 (float64 for float bounds) ones compared with 0.
_ARANGE_IN: Final = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any = None, device: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    if step != 0 and (stop - start) / step <= 0:  # an empty range; torch refuses bounds "against" the step
        return torch.empty(0, dtype=dtype, device=device)
    if dtype is torch.bool:
        ints = all(isinstance(v, int) for v in (start, stop, step))
        return torch.arange(start, stop, step, dtype=torch.int64 if ints else torch.float64, device=device) != 0
    real = _ARANGE_IN.get(dtype)
    if real is not None:
        return torch.arange(start, stop, step, dtype=real, device=device).to(dtype)
    return torch.arange(start, stop, step, dtype=dtype, device=device)


def empty(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return torch.empty(shape, dtype=dtype, device=device)


def ones(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return torch.ones(shape, dtype=dtype, device=device)


def zeros(shape: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return torch.zeros(shape, dtype=dtype, device=device)


def full(shape: Any, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Any:
    return torch.full(shape, fill_value, dtype=dtype, device=device)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any = None, device: Any = None) -> Any:
    """torch.eye has no diagonal offset: ones are written on the k-th diagonal of zeros."""
    n_cols = n_rows if n_cols is None else n_cols
    if k == 0:
        return torch.eye(n_rows, n_cols, dtype=dtype, device=device)
    x = torch.zeros((n_rows, n_cols), dtype=dtype, device=device)
    x.diagonal(k).fill_(1)
    return x


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any = None, device: Any = None, endpoint: bool = True) -> Any:
    """Without the endpoint: the first ``num`` of ``num + 1`` points (same step, (stop - start) / num)."""
    if endpoint:
        return torch.linspace(start, stop, num, dtype=dtype, device=device)
    return torch.linspace(start, stop, num + 1, dtype=dtype, device=device)[:num]


def meshgrid(*arrays: Any, indexing: str = "xy") -> tuple[Any, ...]:
    """torch.meshgrid (views, as the Array API allows); no arrays give no grids, as numpy."""
    return torch.meshgrid(*arrays, indexing=indexing) if arrays else ()


def tril(x: Any, /, *, k: int = 0) -> Any:
    return torch.tril(x, k)


def triu(x: Any, /, *, k: int = 0) -> Any:
    return torch.triu(x, k)
