"""Evaluating a draw: whole arrays (compiled on JAX and TensorFlow), cache-sized tiles (NumPy,
eager PyTorch), one task per chunk (dask); every way gives the same bits. The checks of keys and shapes."""

from __future__ import annotations

import functools
import math
from typing import Any

from arraylayer import arguments
from arraylayer.api.creation import arange, asarray, empty
from arraylayer.api.data_types import astype, isdtype
from arraylayer.api.elementwise import bitwise_and
from arraylayer.api.manipulation import reshape
from arraylayer.context import replaying
from arraylayer.runtime.devices import use_device
from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.api.interchange import dev
from arraylayer.runtime.registry import current_backend, use_backend
from arraylayer.models.random.threefry import (
    _COMPILERS,
    _INT32,
    _INT64,
    _MASK,
    _UINT32,
    _threefry,
    _threefry_rounds,
    _to_rounds,
    _words,
)
from arraylayer.models.random.word_transforms import EXACT

# A draw is transform(y0, y1): an element-wise function of the two threefry output words of each
# counter in [start, stop) (the high counter words are zero: fewer than 2**32 draws).

#: Elements per tile where the rounds run one operation at a time: each of the ~120 operations
#: then reads and writes cache-resident tiles instead of streaming whole arrays through memory.
#: PyTorch's tile is its parallel grain size (32768), so no operation wakes its thread pool.
_TILES: dict[str, int] = {"numpy": 2**16, "torch": 2**15}


def _device(k: Any) -> Any:
    """The key's device; None under a tracer that cannot tell (jax.jit), meaning the default."""
    try:
        return dev(k)
    except Exception:
        return None


def _key_words(key: Any) -> tuple[Any, Any]:
    words = _to_rounds(key)
    return words[0], words[1]


# al.zeros_like cannot run under jax.jit: the high words are and(counters, 0).
def _counters(start: int, stop: int, device: Any) -> Any:
    """The low counter words [start, stop) on ``device`` (None: where the computation runs)."""
    if stop > 2**31 and _words().rounds == _INT32:  # int32 cannot count that far: wrap from int64
        return astype(arange(start, stop, dtype=_INT64, device=device), _INT32)
    return arange(start, stop, dtype=_words().rounds, device=device)


def _whole(key: Any, start: int, stop: int, transform: Any, dtype: Any = None) -> Any:
    """The draw for counters [start, stop) in one pass of whole-array operations: the way for
    compilers (jax.jit, tf.function, torch.compile) and for small draws."""
    k0, k1 = _key_words(key)
    fused = _fused(transform)
    if fused is not None:
        return fused(k0, k1, start, stop)
    lo = _counters(start, stop, _device(key))
    y0, y1 = _threefry(k0, k1, bitwise_and(lo, 0), lo)
    return transform(y0, y1)


def _fused_draw(transform: Any) -> Any:
    def draw(k0: Any, k1: Any, start: int, stop: int) -> Any:
        # no device named, not even the default one (use_device(None)): inside the compiled draw the
        # counters go where the key's words are (placing them on the default device broke a CPU key
        # beside a GPU default: "incompatible devices")
        with use_device(None):
            lo = _counters(start, stop, None)
        return transform(*_threefry_rounds(k0, k1, bitwise_and(lo, 0), lo))

    return draw


#: compiled draws (counters, rounds and transform in one kernel) by backend and transform
_FUSED: dict[tuple[Any, ...], Any] = {}


def _fused(transform: Any) -> Any:
    """The whole draw compiled as one function of (k0, k1, start, stop), where the backend has a
    compiler and ``transform`` is exact (``word_transforms.EXACT``: the same bits fused or not); else
    None. Inside a user's jax.jit or tf.function it is inlined as the rounds alone were: one XLA
    call per draw instead of the rounds' call plus the counters and the transform's passes."""
    func = getattr(transform, "func", transform)
    name = current_backend()
    make = _COMPILERS.get(name)
    if make is None or func not in EXACT:
        return None
    cache_key = (name, func, *sorted(getattr(transform, "keywords", {}).items()))
    fused = _FUSED.get(cache_key)
    if fused is None:
        fused = _FUSED[cache_key] = make(_fused_draw(transform), static=(2, 3))
    return fused


def _constants(key: Any) -> Any:
    """The rounds' integer constants as 0-d arrays of the words, each made once per draw: PyTorch
    turns a Python int into a tensor on every operation (~2 us, ~65 times per tile)."""
    made: dict[int, Any] = {}

    def const(value: int) -> Any:
        if value not in made:
            made[value] = asarray(value, dtype=_words().rounds, device=_device(key))
        return made[value]

    return const


def _tiled(key: Any, start: int, stop: int, transform: Any, dtype: Any) -> Any:
    """The draw for counters [start, stop), tile by tile into one preallocated result (eager,
    on the CPU: on an accelerator whole-array operations are faster)."""
    tile = _TILES[current_backend()]
    # under torch.compile (context.replaying) tiles would be traced one by one: whole arrays
    if stop - start <= tile or replaying() or _device(key) != "cpu":
        return _whole(key, start, stop, transform)
    k0, k1 = _key_words(key)
    out = empty((stop - start,), dtype=dtype, device=_device(key))
    const = _constants(key)
    for first in range(start, stop, tile):  # high counter words: 0-d zeros, broadcast by the rounds
        lo = _counters(first, min(first + tile, stop), _device(key))
        y0, y1 = _threefry_rounds(k0, k1, const(0), lo, const)
        out[first - start:first - start + tile] = transform(y0, y1)
    return out


def _numpy_block(bounds: Any, key: Any, *, transform: Any, dtype: Any) -> Any:
    """One dask chunk: the NumPy evaluation (tiled) of counters [start, stop)."""
    start, stop = (int(b) for b in bounds[0])
    with use_backend("numpy"):
        return _tiled(key, start, stop, transform, dtype)


def _blocks(key: Any, start: int, stop: int, transform: Any, dtype: Any) -> Any:
    """dask: one task per chunk (dask's default chunks for ``dtype``) running the NumPy tiles,
    instead of ~120 whole-chunk operations; lazy like any dask array."""
    import dask.array as da
    import numpy as np

    native = np.dtype(str(dtype))
    (sizes,) = da.core.normalize_chunks("auto", (stop - start,), dtype=native)
    ends = start + np.cumsum(sizes, dtype=np.int64)
    bounds = da.from_array(np.stack([ends - np.asarray(sizes, np.int64), ends], axis=1), chunks=(1, 2))
    block = functools.partial(_numpy_block, transform=transform, dtype=dtype)
    return da.blockwise(block, "i", bounds, "ib", da.asarray(key), "k", dtype=native, concatenate=True,
                        adjust_chunks={"i": sizes}, meta=np.empty((0,), native))


#: JAX's eager draws run for a size class: a power of two, at least this many counters ...
_SMALLEST_CLASS = 2**12
#: ... up to this many (larger draws run at their own size: no more than twice the work)
_LARGEST_CLASS = 2**22


def _size_class(key: Any, start: int, stop: int, transform: Any, dtype: Any) -> Any:
    """JAX, eager: the draw for counters [start, start + a power of two), cut to [start, stop).
    jax.jit compiles threefry (and JAX each eager operation of the transform) once per input
    shape, ~0.5-1 s of CPU for a new size; size classes compile once per class. Each element is a
    function of its own counter alone, so the first stop - start elements are the same bits.
    Traced draws (inside a user's jax.jit) keep their exact size."""
    import jax

    n = stop - start
    size = max(_SMALLEST_CLASS, 1 << (n - 1).bit_length()) if n > 0 else n
    if size > _LARGEST_CLASS or start + size > 2**32 or isinstance(key, jax.core.Tracer):
        return _whole(key, start, stop, transform)
    return _whole(key, start, start + size, transform)[:n]


#: How each backend evaluates a draw; TensorFlow compiles it whole.
_EVALUATORS: dict[str, Any] = {"numpy": _tiled, "torch": _tiled, "dask": _blocks, "jax": _size_class}


def _draw(key: Any, shape: tuple[int, ...], dtype: Any, transform: Any) -> Any:
    """``transform(y0, y1)`` for the counters ``0 .. prod(shape)-1``, of ``dtype``, as ``shape``."""
    key = _check_key(key)
    evaluate = _EVALUATORS.get(current_backend(), _whole)
    return reshape(evaluate(key, 0, math.prod(shape), transform, dtype), shape)


#: The most numbers one draw holds: one per value of the key's 32-bit counter word.
MAX_DRAW = 2**32


def _check_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints (``arguments.shape``) holding at most MAX_DRAW
    numbers: the same refusal on every backend (NumPy and torch ran out of memory, JAX and TensorFlow
    overflowed the counters)."""
    dims = arguments.shape(shape, name)
    if math.prod(dims) > MAX_DRAW:
        raise InvalidArgumentError(
            f"{name}={dims}: one draw holds at most 2**32 numbers (one per value of the key's 32-bit counter); "
            f"draw in parts, from keys made with arraylayer.random.split(key, n).")
    return dims


def _check_key(k: Any) -> Any:
    """The key, in the active backend's public words: a key moved from another backend
    (``to_backend``) arrives as that backend's integer dtype and is converted exactly."""
    shape = getattr(k, "shape", None)
    if shape is None or tuple(shape) != (2,):
        raise InvalidArgumentTypeError(
            f"key={k!r}: expected a key made by arraylayer.models.random.key(seed) (an array of shape (2,)).")
    public = _words().public
    if Dtype(k.dtype) is public:
        return k
    if not isdtype(Dtype(k.dtype), "integral"):
        raise InvalidArgumentTypeError(
            f"key of dtype {Dtype(k.dtype)}: a key holds two 32-bit words of an integer dtype; "
            f"make it with arraylayer.models.random.key(seed).")
    words = astype(k, public)
    return words if public is _UINT32 else bitwise_and(words, _MASK)
