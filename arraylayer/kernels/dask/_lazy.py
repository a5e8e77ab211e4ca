"""What the dask kernel modules share: NumPy's kernels applied chunk by chunk, and the three
ways a computation that is not chunk-local is laid out lazily.

* :func:`chunkwise`: element-wise functions are exact per chunk, so the NumPy kernel itself
  (with its bfloat16-scalar and special-value handling) runs on every chunk, in the same one
  task per chunk that ``dask.array``'s own ufuncs build.
* :func:`along`: functions of whole 1-D or 2-D slices (sorts, factorisations, transforms) get
  those axes as one chunk each (``rechunk``, lazily), then the NumPy kernel runs per chunk.
* :func:`gathered`: functions whose output shape depends on the values (``unique_*``, array
  ``repeats``) run the NumPy kernel in one task over the whole array; their lengths are
  unknown (``nan``) until computed, dask's own convention for such shapes.

Nothing here computes: every function returns dask arrays.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import dask
import dask.array as da
from dask.array.core import elemwise

from arraylayer.errors import unknown_lengths_error
from arraylayer.kernels.numpy import KERNELS as NUMPY
from arraylayer.kernels.numpy._common import F32, is_half


def chunkwise(name: str, numpy_kernel: Callable[..., Any] | None = None) -> Callable[..., Any]:
    """The NumPy kernel ``name`` (or ``numpy_kernel``, one outside ``KERNELS``) applied chunk by
    chunk (broadcasting, Python scalars passed as they are)."""
    numpy_kernel = NUMPY[name] if numpy_kernel is None else numpy_kernel

    def kernel(*args: Any, **kwargs: Any) -> Any:
        return elemwise(numpy_kernel, *args, **kwargs)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"NumPy's {name} kernel, chunk by chunk."
    return kernel


def whole_axes(x: Any, axes: Sequence[int]) -> Any:
    """``x`` with each of ``axes`` in one chunk (no-op when it already is)."""
    wanted = {a % x.ndim: -1 for a in axes if len(x.chunks[a % x.ndim]) > 1}
    return x.rechunk(wanted) if wanted else x


def along(function: Callable[..., Any], x: Any, axes: Sequence[int], dtype: Any, **kwargs: Any) -> Any:
    """``function(chunk, **kwargs)`` on ``x`` with ``axes`` whole; the output keeps x's shape and chunks."""
    return whole_axes(x, axes).map_blocks(function, dtype=dtype, **kwargs)


def gathered(function: Callable[..., Any], x: Any, outputs: Sequence[tuple[Any, tuple[float, ...]]]) -> tuple[Any, ...]:
    """``function(x)`` computed in one task (x gathered whole); one dask array per output, each
    with its (dtype, shape), ``nan`` for a length only the values decide."""
    results = dask.delayed(function, nout=len(outputs), pure=True)(x)
    return tuple(da.from_delayed(results[i], shape=shape, dtype=dtype) for i, (dtype, shape) in enumerate(outputs))


def unknown(length_of: int | float = math.nan) -> tuple[float, ...]:
    """A 1-D shape whose length is known only after computing (dask writes it ``nan``)."""
    return (length_of,)


def in_float32(function: Callable[..., Any], x: Any, dtype: Any, **kwargs: Any) -> Any:
    """``function(x, **kwargs)``, computed in float32 and rounded once when ``dtype`` is a half
    precision (chunks summed in float16 would round at every partial sum)."""
    if is_half(dtype):
        return function(x.astype(F32), **kwargs).astype(dtype)
    return function(x, **kwargs)


def known(shape: tuple[Any, ...]) -> bool:
    """Whether every length of ``shape`` is known (dask writes an unknown one nan, the one value
    not equal to itself)."""
    return all(n == n for n in shape)


def needs_known_lengths(name: str, kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` refusing, with :func:`unknown_lengths_error`, an array of unknown lengths."""
    def checked(x: Any, *args: Any, **kwargs: Any) -> Any:
        if not known(x.shape):
            raise unknown_lengths_error(name, x.shape)
        return kernel(x, *args, **kwargs)

    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = kernel.__doc__
    return checked
