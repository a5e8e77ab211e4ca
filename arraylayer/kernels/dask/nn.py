"""Neural-network kernels of the dask backend (see arraylayer/models/nn.py): the NumPy backend's nn
kernels, laid out lazily, so that values and dtypes are NumPy's and nothing is computed.

* ``sigmoid``, ``relu``, ``erf`` are element-wise: NumPy's kernels chunk by chunk
  (:func:`._lazy.chunkwise`, one task per chunk).
* ``conv2d``, ``max_pool`` and ``sum_pool`` need whole images: the spatial and channel axes
  become one chunk each (rechunked lazily), the batch axis keeps its chunks, and NumPy's kernel
  runs once per block of images, with a convolution kernel gathered whole into every task.
* ``concrete`` is None (values are known only once computed); :func:`checked` is how
  arraylayer.models.nn checks label and id values instead: per chunk, when the graph runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import dask.array as da
from dask.array.core import elemwise
import numpy as np

from arraylayer.kernels.numpy import nn as numpy_nn
from arraylayer.kernels.dask._lazy import chunkwise, whole_axes

sigmoid = chunkwise("sigmoid", numpy_nn.sigmoid)
relu = chunkwise("relu", numpy_nn.relu)
erf = chunkwise("erf", numpy_nn.erf)
erfc = chunkwise("erfc", numpy_nn.erfc)
erfinv = chunkwise("erfinv", numpy_nn.erfinv)

def concrete(x: Any) -> None:
    """None: a dask array's values are known only once computed, and arraylayer never computes."""
    return None


def checked(x: Any, check: Callable[[Any], Any]) -> Any:
    """``x`` with every chunk passed through ``check`` (a function of a NumPy array that returns it
    or raises) when the graph runs: one task per chunk, as ``take``'s lazy bounds check."""
    return x.map_blocks(check, dtype=x.dtype, meta=x._meta)


def conv(x: Any, kernel: Any, strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
         dilation: tuple[int, ...], channels_last: bool, groups: int = 1) -> Any:
    """NumPy's conv per block of whole images; ``kernel`` (dask or NumPy) whole in every task."""
    weights = kernel if isinstance(kernel, da.Array) else da.asarray(kernel)
    function = functools.partial(numpy_nn.conv, strides=strides, padding=padding, dilation=dilation,
                                 channels_last=channels_last, groups=groups)
    return _per_images(function, x, weights)


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    return conv(x, kernel, strides, padding, dilation, channels_last)


def max_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    """NumPy's max_pool per block of whole images."""
    return _per_images(functools.partial(numpy_nn.max_pool, window=window, strides=strides, padding=padding,
                                         channels_last=channels_last), x)


def sum_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    """NumPy's sum_pool per block of whole images."""
    return _per_images(functools.partial(numpy_nn.sum_pool, window=window, strides=strides, padding=padding,
                                         channels_last=channels_last), x)


def _per_images(function: Callable[..., Any], x: Any, weights: Any = None) -> Any:
    """``function(images[, weights])`` on each block of whole images of ``x`` (batch chunks kept;
    the spatial and channel axes one chunk each); the output's image axes are sized by
    ``function`` on a batch of none."""
    image_axes = tuple(range(1, x.ndim))
    out = tuple(range(x.ndim))
    x = whole_axes(x, image_axes)
    extra = () if weights is None else (weights, tuple(range(x.ndim, x.ndim + weights.ndim)))  # gathered whole
    out_shape = _output_shape(function, x, weights)
    return da.blockwise(function, out, x, out, *extra, dtype=x.dtype, concatenate=True,
                        adjust_chunks={axis: out_shape[axis] for axis in image_axes},
                        meta=np.empty((0,) * x.ndim, x.dtype))
def _output_shape(function: Callable[..., Any], x: Any, weights: Any) -> tuple[int, ...]:
    """The shape of ``function``'s output for a batch of no images of x's size (NumPy's own
    arithmetic, at no cost: the inputs are zero-strided views of one zero)."""
    args = [np.broadcast_to(np.zeros((), x.dtype), (0, *x.shape[1:]))]
    if weights is not None:
        args.append(np.broadcast_to(np.zeros((), weights.dtype), weights.shape))
    return tuple(function(*args).shape)


def einsum(subscripts: str, *operands: Any) -> Any:
    """dask's blocked einsum (lazy); operands share one dtype (the api promotes)."""
    return da.einsum(subscripts, *operands)


def complex_from_parts(real: Any, imag: Any) -> Any:
    """The complex array real + imag j, chunk by chunk with NumPy's kernel."""
    return elemwise(numpy_nn.complex_from_parts, real, imag)
