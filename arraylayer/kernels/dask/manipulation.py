"""Manipulation and indexing kernels: ``dask.array``'s functions under the Array API's names.

Array-valued ``repeats`` make a length only the values decide: that case runs NumPy's repeat in
one task (``_lazy.gathered``) and the length is unknown until computed.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

import dask.array as da
import numpy as np
from dask.array.core import elemwise

from arraylayer.errors import InvalidArgumentError, unknown_lengths_error
from arraylayer.kernels.dask._lazy import gathered, known, unknown, whole_axes

broadcast_to = da.broadcast_to
flip = da.flip
moveaxis = da.moveaxis
roll = da.roll
squeeze = da.squeeze
tile = da.tile


def broadcast_arrays(*arrays: Any) -> tuple[Any, ...]:
    """dask's broadcast_arrays; with unknown lengths (which dask's refuses), each array broadcast
    chunk by chunk against the others, as dask's element-wise functions broadcast them."""
    if all(known(a.shape) for a in arrays):
        return tuple(da.broadcast_arrays(*arrays))
    return tuple(elemwise(_broadcast_first, a, *(b for b in arrays if b is not a), dtype=a.dtype) for a in arrays)


def _broadcast_first(first: Any, *others: Any) -> Any:
    """``first`` broadcast to the shape it makes with ``others`` (a copy: chunks are not views)."""
    return np.array(np.broadcast_to(first, np.broadcast_shapes(first.shape, *(o.shape for o in others))))


def expand_dims(x: Any, /, axis: int = 0) -> Any:
    """A new axis of length one at ``axis``, by indexing with None (dask's expand_dims refuses
    unknown lengths; indexing keeps them)."""
    return x[(slice(None),) * (axis % (x.ndim + 1)) + (None,)]


def concat(arrays: Any, /, *, axis: int | None = 0) -> Any:
    """dask's concatenate; arrays of unknown lengths are joined chunk by chunk (the api layer has
    checked what is known; a mismatch of what is not shows when computed, as in dask)."""
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    return da.concatenate(list(arrays), axis=axis, allow_unknown_chunksizes=not all(known(a.shape) for a in arrays))


def stack(arrays: Any, /, *, axis: int = 0) -> Any:
    """dask's stack, with unknown lengths as :func:`concat` joins them (``nonzero``'s index arrays)."""
    return da.stack(list(arrays), axis=axis, allow_unknown_chunksizes=not all(known(a.shape) for a in arrays))


def permute_dims(x: Any, /, axes: tuple[int, ...]) -> Any:
    return da.transpose(x, axes)


def reshape(x: Any, /, shape: tuple[int, ...], *, copy: bool | None = None) -> Any:
    """dask's reshape; a reshape dask cannot map chunk to chunk (dimensions split unevenly) goes
    through the flattened array, which dask can always reshape. With an unknown length, the
    reshapes that only add or drop axes of length one (``-1`` standing for the unknown one) are
    indexing; dask refuses the others until its lengths are computed."""
    if not known(x.shape):
        return _reshape_unknown(x, shape)
    try:
        return da.reshape(x, shape)
    except NotImplementedError:
        return da.reshape(da.reshape(x, (-1,)), shape)


def _reshape_unknown(x: Any, shape: tuple[int, ...]) -> Any:
    ones = [i for i, n in enumerate(x.shape) if n == 1]
    lengths = [-1 if n != n else n for n in x.shape if n != 1]  # the unknown one written -1, as in shape
    if lengths.count(-1) == 1 and lengths == [n for n in shape if n != 1]:
        squeezed = da.squeeze(x, axis=tuple(ones)) if ones else x
        return squeezed[tuple(None if n == 1 else slice(None) for n in shape)]
    raise unknown_lengths_error(f"reshape to {shape} (only axes of length one can be added or dropped)", x.shape)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    front = da.moveaxis(x, axis, 0)
    return tuple(front[i] for i in range(front.shape[0]))


def repeat(x: Any, repeats: Any, /, *, axis: int | None = None) -> Any:
    if axis is None:
        x, axis = x.reshape(-1), 0
    if isinstance(repeats, int):
        if x.size == 0:  # dask cannot repeat an empty array; there are no values to wait for
            return da.from_array(np.repeat(np.empty(x.shape, x.dtype), repeats, axis=axis), chunks=-1)
        return da.repeat(x, repeats, axis=axis)
    shape = list(x.shape)
    shape[axis] = unknown()[0]
    return gathered(functools.partial(_repeated, axis=axis), _pair(x, repeats), [(x.dtype, tuple(shape))])[0]


def _repeated(pair: tuple[Any, Any], axis: int) -> tuple[Any]:
    """NumPy's repeat of the gathered (x, repeats), with the NumPy backend's error for a negative count."""
    x, counts = pair
    if counts.size and counts.min() < 0:
        raise InvalidArgumentError("repeats must be non-negative, with a result no backend refuses for its size.")
    return (np.repeat(x, counts, axis=axis),)


def _pair(x: Any, repeats: Any) -> Any:
    """x and the repeats, both dask arrays, for one task."""
    return (x, repeats if isinstance(repeats, da.Array) else da.asarray(repeats))


def take(x: Any, indices: Any, /, *, axis: int | None = None) -> Any:
    """da.take; dask builds a real-valued meta of a complex x for lazy indices, and its
    ComplexWarning about that (which concerns no value) is kept from the caller."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    if x.dtype.kind != "c":
        return da.take(x, indices, axis=axis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return da.take(x, indices, axis=axis)


def take_along_axis(x: Any, indices: Any, /, *, axis: int = -1) -> Any:
    """NumPy's take_along_axis per chunk, with ``axis`` whole in both and the other axes aligned."""
    axis %= x.ndim
    shape = tuple(max(a, b) if i != axis else None for i, (a, b) in enumerate(zip(x.shape, indices.shape, strict=True)))
    x = da.broadcast_to(x, tuple(x.shape[axis] if s is None else s for s in shape))
    indices = da.broadcast_to(indices, tuple(indices.shape[axis] if s is None else s for s in shape))
    x = whole_axes(x, (axis,))
    indices = indices.rechunk(tuple(-1 if i == axis else c for i, c in enumerate(x.chunks)))
    # axis gets its own index in indices (its length may differ from x's); the output takes it.
    x_index = tuple(range(x.ndim))
    index = tuple(x.ndim if i == axis else i for i in x_index)
    return da.blockwise(np.take_along_axis, index, x, x_index, indices, index, axis=axis, dtype=x.dtype,
                        concatenate=True)
