"""Standard indexing for frameworks whose own indexing falls short of NumPy's.

TensorFlow's ``tensor[key]`` has no integer-array indexing and no 0-d boolean masks, and it
reports an out-of-bounds integer as an ``InvalidArgumentError``; JAX clamps an out-of-bounds
integer to the edge. Here NumPy decides what a key selects: the key indexes a NumPy grid of
flat positions, so results and errors are NumPy's by construction, and the framework then
gathers (or scatters to) those positions. Keys of integers, slices, ``...`` and ``None`` only
take the framework's own indexing (after a bounds check), which costs nothing extra.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from arraylayer.runtime.layouts import shareable

if TYPE_CHECKING:  # NumPy is imported on first use: importing arraylayer loads no array framework
    import numpy as np

_BASIC = (int, slice, type(Ellipsis), type(None))


def is_basic(key: Any) -> bool:
    """Whether ``key`` holds only Python ints, slices of ints, ``...`` and ``None``."""
    if key.__class__ is tuple:
        return all(k.__class__ in _BASIC and _plain_slice(k) for k in key)
    return key.__class__ in _BASIC and _plain_slice(key)


def _plain_slice(k: Any) -> bool:
    return k.__class__ is not slice or all(b is None or b.__class__ is int for b in (k.start, k.stop, k.step))


def check_integer_bounds(shape: tuple[int, ...], key: Any) -> None:
    """An IndexError, worded as NumPy's, for an out-of-bounds Python int in a basic ``key``."""
    parts = key if key.__class__ is tuple else (key,)
    if not any(k.__class__ is int for k in parts):
        return
    before = []
    for k in parts:
        if k is Ellipsis:
            break
        before.append(k)
    after = list(parts[len(before) + 1:]) if len(before) < len(parts) else []
    indexed = [k for k in before if k is not None]
    tail = [k for k in after if k is not None]
    axes = list(zip(indexed, range(len(indexed)), strict=True)) + list(zip(tail, range(len(shape) - len(tail), len(shape)), strict=True))
    if len(indexed) + len(tail) > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{len(indexed) + len(tail)} were indexed")
    for k, axis in axes:
        if k.__class__ is int and not -shape[axis] <= k < shape[axis]:
            raise IndexError(f"index {k} is out of bounds for axis {axis} with size {shape[axis]}")


def numpy_key(key: Any, to_numpy: Any) -> Any:
    """``key`` with every array (and slice bound) as NumPy sees it."""
    if key.__class__ is tuple:
        return tuple(_numpy_part(k, to_numpy) for k in key)
    return _numpy_part(key, to_numpy)


def _numpy_part(k: Any, to_numpy: Any) -> Any:
    import numpy as np

    if k.__class__ in _BASIC and k.__class__ is not slice or isinstance(k, (bool, np.ndarray, np.generic)):
        return k
    if k.__class__ is slice:
        return slice(*(None if b is None else operator.index(b) for b in (k.start, k.stop, k.step)))
    if isinstance(k, (list,)):
        array = np.asarray(k)  # an empty list indexes nothing: NumPy reads it as an empty integer array
        return array.astype(np.intp) if array.size == 0 and array.dtype.kind == "f" else array
    return to_numpy(k)


def positions(shape: tuple[int, ...], key: Any) -> np.ndarray:
    """The flat positions that ``key`` selects in an array of ``shape``, in NumPy's result layout;
    NumPy's IndexError for a key it refuses."""
    import numpy as np

    grid = np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)
    # C order: torch refuses NumPy's negative strides; asarray, not ascontiguousarray, which makes
    # a 0-d selection (one element, x[i] of a 1-d x) 1-d
    return np.asarray(grid[key], order="C")


def numpy_getitem(x: Any, key: Any) -> Any:
    """NumPy's indexing, with an element (a NumPy scalar: what NumPy gives when integers index
    every axis) as the 0-d view ``x[key + (...,)]``, NumPy's own 0-d form of it (the standard wants
    a 0-d array; a view, as torch's element and NumPy's rows are, and as cheap as the scalar)."""
    result = x[key]
    if result.__class__ is x.__class__:
        return result
    import numpy as np

    if isinstance(result, np.ndarray):
        return result
    return x[(*key, Ellipsis) if isinstance(key, tuple) else (key, Ellipsis)]


def to_host(x: Any) -> Any:
    """A framework array as a NumPy array (TensorFlow's and torch's through ``.numpy()``)."""
    import numpy as np

    if hasattr(x, "detach"):  # a torch tensor, on any device
        return x.detach().cpu().numpy()
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def checked_positions(shape: tuple[int, ...], key: Any) -> np.ndarray | None:
    """``positions`` for a key whose arrays can be read on the host; None for traced keys (JAX
    under ``jit``), which keep the framework's own semantics."""
    try:
        host_key = numpy_key(key, to_host)
    except Exception as error:  # a tracer refuses conversion: nothing concrete to check
        if "Tracer" in type(error).__name__:
            return None
        raise
    return positions(tuple(int(n) for n in shape), host_key)


def _bool_in_tuple(key: Any) -> bool:
    """Whether a tuple key holds a 0-d mask (a Python bool or a 0-d boolean array), which JAX
    mis-places beside None."""
    return key.__class__ is tuple and any(
        k.__class__ is bool or (getattr(k, "shape", None) == () and str(getattr(k, "dtype", "")) == "bool") for k in key)


_SLICE_LIMIT = 2**62  # beyond any axis (at most 2**48 long): a bound or step clamped to it selects the same


def _clamped(k: Any) -> Any:
    if k.__class__ is slice and any(b is not None and not -_SLICE_LIMIT <= b <= _SLICE_LIMIT
                                    for b in (k.start, k.stop, k.step)):
        return slice(*(None if b is None else max(-_SLICE_LIMIT, min(_SLICE_LIMIT, b))
                       for b in (k.start, k.stop, k.step)))
    return k


def clamped_slices(key: Any) -> Any:
    """A basic ``key`` with slice bounds and steps beyond int64's reach clamped, as NumPy reads them
    (JAX and TensorFlow raise their own overflow errors for them)."""
    return tuple(_clamped(k) for k in key) if key.__class__ is tuple else _clamped(key)


def jax_getitem(x: Any, key: Any) -> Any:
    """JAX indexing with NumPy's IndexError where JAX would clamp an out-of-bounds index."""
    if is_basic(key):
        check_integer_bounds(x.shape, key)
        return x[clamped_slices(key)]
    selected = checked_positions(x.shape, key)
    if selected is not None and _bool_in_tuple(key):  # gather NumPy's positions instead
        return x.reshape(-1)[selected.reshape(-1)].reshape(selected.shape)
    return x[key]


def jax_check_set(x: Any, key: Any) -> None:
    """NumPy's IndexError where ``.at[key].set`` would drop out-of-bounds updates."""
    if is_basic(key):
        check_integer_bounds(x.shape, key)
    else:
        checked_positions(x.shape, key)


def jax_set(x: Any, key: Any, value: Any) -> Any:
    """``x.at[key].set(value)``; float8_e5m2, e4m3 and e3m4 as their uint8 codes, whose NaNs XLA's scatter
    would turn into 0x7F (their sign and payload lost)."""
    from arraylayer.lowp.formats import FORMATS

    f = FORMATS.get(x.dtype.name)
    if f is None or f.specials != "ieee":
        return x.at[key].set(value)
    from jax import lax
    from jax.numpy import uint8

    codes = lax.bitcast_convert_type(x, uint8).at[key].set(lax.bitcast_convert_type(value, uint8))
    return lax.bitcast_convert_type(codes, x.dtype)


# TensorFlow's StridedSlice kernel handles at most 8 dimensions (strided_slice_op.cc: "Unhandled
# input dimensions"); a basic key on a tensor of higher rank gathers NumPy's positions instead.
_TF_SLICE_RANK = 8


def tensorflow_getitem(tf: Any, x: Any, key: Any) -> Any:
    """TensorFlow indexing with the standard's full key set and NumPy's results and errors."""
    if is_basic(key) and (x.shape.rank or 0) <= _TF_SLICE_RANK:
        check_integer_bounds(tuple(x.shape), key)
        return x[clamped_slices(key)]
    selected = positions(tuple(x.shape), numpy_key(key, to_host))
    return tf.reshape(tf.gather(tf.reshape(x, [-1]), selected.reshape(-1)), selected.shape)


def tensorflow_set(tf: Any, x: Any, key: Any, value: Any) -> Any:
    """``x`` with ``x[key]`` replaced by ``value`` (broadcast to the selection), as a new tensor."""
    selected = positions(tuple(x.shape), numpy_key(key, to_host))
    updates = tf.reshape(tf.broadcast_to(value, selected.shape), [-1])
    flat = tf.reshape(x, [-1])
    if x.dtype.name.startswith("float8"):  # no scatter kernel: gather from x's elements followed by the updates
        import numpy as np

        size = int(np.prod(tuple(x.shape)))
        source = np.arange(size)
        source[selected.reshape(-1)] = size + np.arange(selected.size)
        flat = tf.gather(tf.concat([flat, updates], 0), source)
    else:
        flat = tf.tensor_scatter_nd_update(flat, selected.reshape(-1, 1), updates)
    return tf.reshape(flat, tf.shape(x))


def python_part(k: Any) -> Any:
    """A NumPy scalar or 0-d NumPy array in a key as the Python bool or int it stands for (torch
    refuses NumPy bools; JAX reads ``np.False_`` as an integer); a list as the NumPy array NumPy
    reads it as (JAX refuses lists); a NumPy array with negative strides or non-native byte order
    as a copy that JAX and torch accept."""
    if k.__class__ is list:
        return _numpy_part(k, to_host)
    if k.__class__.__module__ != "numpy":
        return k
    if getattr(k, "shape", None) != ():
        return shareable(k)
    kind = k.dtype.kind
    return bool(k) if kind == "b" else int(k) if kind in "iu" else k


def _reversing(key: Any) -> bool:
    """Whether ``key`` holds a slice with a negative step (torch has none)."""
    parts = key if key.__class__ is tuple else (key,)
    return any(k.__class__ is slice and k.step is not None and operator.index(k.step) < 0 for k in parts)


_TORCH_UNSIGNED = ("torch.uint8", "torch.uint16", "torch.uint32", "torch.uint64")


def _torch_part(k: Any) -> Any:
    """A key part as torch reads it as NumPy does: unsigned integer arrays (torch reads uint8 as a
    mask) as int64, read-only NumPy arrays copied (torch cannot hold them read-only)."""
    if k.__class__ in _BASIC:
        return k
    dtype = getattr(k, "dtype", None)
    if k.__class__.__module__ == "numpy":
        if getattr(k, "shape", ()) == ():
            return k
        k = shareable(k, writeable=True)
        if dtype.kind != "u":
            return k
        # uint64 beyond int64 stays out of bounds (torch's IndexError) rather than wrapping negative
        return (k if dtype.itemsize < 8 else k.clip(max=dtype.type(2**63 - 1))).astype("int64")
    return k.long() if str(dtype) in _TORCH_UNSIGNED else k


def torch_key(key: Any) -> Any:
    """``key`` with each part as :func:`_torch_part` makes it."""
    if key.__class__ is tuple:
        return tuple(_torch_part(k) for k in key)
    return _torch_part(key)


def _torch_empty_mask(x: Any, key: Any) -> Any:
    """A sole boolean mask with an axis of length 0 where ``x``'s is not (the standard and NumPy
    take it: it selects nothing) as the all-False mask of ``x``'s leading axes, which torch takes;
    any other key as it is (torch's IndexError for mismatched shapes is NumPy's)."""
    dims = getattr(key, "ndim", 0)  # a tuple, int or slice key has none: the fast way out
    if not dims or 0 not in key.shape or dims > x.ndim or str(key.dtype) not in ("torch.bool", "bool"):
        return key
    if any(k not in (n, 0) for k, n in zip(key.shape, x.shape, strict=False)):
        return key
    import numpy

    return numpy.zeros(tuple(x.shape[:dims]), dtype=bool)  # a NumPy mask torch takes, on any device


def torch_getitem(x: Any, key: Any) -> Any:
    """torch indexing, plus negative slice steps (gathered from NumPy's positions), NumPy
    scalar keys, unsigned and read-only index arrays."""
    key = _torch_empty_mask(x, torch_key(key))
    if not _reversing(key):
        return x[key]
    import torch

    selected = positions(tuple(x.shape), numpy_key(key, to_host))
    flat = torch.as_tensor(selected.reshape(-1), device=x.device)
    return x.reshape(-1)[flat].reshape(selected.shape)


def torch_set(x: Any, key: Any, value: Any) -> None:
    """``x[key] = value`` in place, negative slice steps included."""
    key = _torch_empty_mask(x, torch_key(key))
    if not _reversing(key):
        x[key] = value
        return
    import torch

    selected = positions(tuple(x.shape), numpy_key(key, to_host))
    flat = torch.as_tensor(selected.reshape(-1), device=x.device)
    updates = torch.broadcast_to(torch.as_tensor(value, dtype=x.dtype, device=x.device), selected.shape)
    if x.is_contiguous():
        x.view(-1)[flat] = updates.reshape(-1)
    else:  # no flat view of a strided tensor: write through a contiguous copy, then back
        copy = x.contiguous()
        copy.view(-1)[flat] = updates.reshape(-1)
        x.copy_(copy)
