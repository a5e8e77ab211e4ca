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
import numpy as np

from arraylayer.kernels.numpy import nn as numpy_nn
from arraylayer.kernels.dask._lazy import chunkwise, whole_axes

sigmoid = chunkwise("sigmoid", numpy_nn.sigmoid)
relu = chunkwise("relu", numpy_nn.relu)
erf = chunkwise("erf", numpy_nn.erf)
erfc = chunkwise("erfc", numpy_nn.erfc)
erfinv = chunkwise("erfinv", numpy_nn.erfinv)

_IMAGE_AXES = (1, 2, 3)  # height, width and channels in either layout: one chunk each
_OUT = (0, 1, 2, 3)  # blockwise indices of an image batch (the batch axis is index 0)
_WEIGHTS = (4, 5, 6, 7)  # indices of a convolution kernel, none in the output: gathered whole


def concrete(x: Any) -> None:
    """None: a dask array's values are known only once computed, and arraylayer never computes."""
    return None


def checked(x: Any, check: Callable[[Any], Any]) -> Any:
    """``x`` with every chunk passed through ``check`` (a function of a NumPy array that returns it
    or raises) when the graph runs: one task per chunk, as ``take``'s lazy bounds check."""
    return x.map_blocks(check, dtype=x.dtype, meta=x._meta)


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    """NumPy's conv2d per block of whole images; ``kernel`` (dask or NumPy) whole in every task."""
    weights = kernel if isinstance(kernel, da.Array) else da.asarray(kernel)
    function = functools.partial(numpy_nn.conv2d, strides=strides, padding=padding, dilation=dilation,
                                 channels_last=channels_last)
    return _per_images(function, x, weights)


def max_pool(x: Any, window: tuple[int, int], strides: tuple[int, int], padding: Any, channels_last: bool) -> Any:
    """NumPy's max_pool per block of whole images."""
    return _per_images(functools.partial(numpy_nn.max_pool, window=window, strides=strides, padding=padding,
                                         channels_last=channels_last), x)


def sum_pool(x: Any, window: tuple[int, int], strides: tuple[int, int], padding: Any, channels_last: bool) -> Any:
    """NumPy's sum_pool per block of whole images."""
    return _per_images(functools.partial(numpy_nn.sum_pool, window=window, strides=strides, padding=padding,
                                         channels_last=channels_last), x)


def _per_images(function: Callable[..., Any], x: Any, weights: Any = None) -> Any:
    """``function(images[, weights])`` on each block of whole images of the 4-d ``x`` (batch
    chunks kept); the output's image axes are sized by ``function`` on a batch of none."""
    x = whole_axes(x, _IMAGE_AXES)
    extra = () if weights is None else (weights, _WEIGHTS)
    out_shape = _output_shape(function, x, weights)
    return da.blockwise(function, _OUT, x, _OUT, *extra, dtype=x.dtype, concatenate=True,
                        adjust_chunks={axis: out_shape[axis] for axis in _IMAGE_AXES},
                        meta=np.empty((0,) * 4, x.dtype))


def _output_shape(function: Callable[..., Any], x: Any, weights: Any) -> tuple[int, ...]:
    """The shape of ``function``'s output for a batch of no images of x's size (NumPy's own
    arithmetic, at no cost: the inputs are zero-strided views of one zero)."""
    args = [np.broadcast_to(np.zeros((), x.dtype), (0, *x.shape[1:]))]
    if weights is not None:
        args.append(np.broadcast_to(np.zeros((), weights.dtype), weights.shape))
    return tuple(function(*args).shape)
