"""nn.dropout's mask and ``random.split``'s keys in eager code on the CPU, computed by NumPy in
place: the same bits as ``arraylayer.models.random.bernoulli(key, p, shape)`` and ``random.split``,
several times faster there (a split of a few keys: ~110 tiny NumPy operations instead of ~200
arraylayer calls on PyTorch). Dropout's mask comes as its *divisor*: ``p`` where an element is
kept and ``inf`` where it is dropped, in the input's dtype, so that dropout is one division
(x / p exactly as before where kept, a zero where dropped).

``random`` runs threefry's ~110 integer operations through arraylayer, one array at a time (on
PyTorch in int32, which needs a mask after every right shift). Here they run as NumPy uint32
operations into preallocated tiles: the rotations are three operations, the key's words are
Python ints, and the uniform's comparison becomes one comparison of the words. With
p32 = float32(p) (the weak scalar ``p`` in bernoulli's float32 comparison):

    m * 2**-23 < p32  <=>  m < ceil(p32 * 2**23) = t  <=>  (y0 ^ y1) < t * 2**9

where m = (y0 ^ y1) >> 9 and t * 2**9 <= 2**32. Backends without an entry (JAX and TensorFlow
compile threefry whole; dask), traced calls and other devices keep ``random.bernoulli``.

Where the optional C extension ``arraylayer._threefry`` (``arraylayer/_threefry.c``, built by
setup.py) is built, it computes the blocks instead of NumPy (~50x fewer passes over memory): the
same two functions with the same arguments, the same bits (tests/test_threefry_kernel.py);
``ARRAYLAYER_PURE_PYTHON=1`` or a missing compiler leaves the NumPy path. The decisions (which
key, counters and threshold) stay here, in Python.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final, NamedTuple

from arraylayer.runtime.c_extensions import optional_extension
from arraylayer.context import replaying

# NumPy, bound on the first mask made here (importing arraylayer imports no array framework).
np: Any = None


def _load_numpy() -> None:
    global np
    if np is None:
        import numpy

        np = numpy

__all__ = ["divisor", "keep", "split"]

_ROTATIONS: Final = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY: Final = 0x1BD11BDA
_MASK: Final = 0xFFFFFFFF
_TILE: Final = 2**16
_UNITS: Final = 2**23  # float32 uniforms are multiples of 2**-23 below 1


def _read(key: Any) -> tuple[int, int] | None:
    """The key's two words as Python ints, or None where they cannot be read here."""
    try:
        k0, k1 = (int(v) & _MASK for v in key.tolist())
    except (RuntimeError, TypeError, ValueError):  # e.g. a key batched by torch.func.vmap
        return None
    return k0, k1


def _threefry(keys: tuple[int, int, int], first: int, size: int) -> tuple[Any, Any]:
    """threefry-2x32's two output words (uint32 arrays) for the counters first, first + 1, ...
    (high words 0), computed in place."""
    x1 = np.arange(first, first + size, dtype=np.uint32)
    x1 += np.uint32(keys[1])
    x0 = x1 + np.uint32(keys[0])  # the first round's x0 + x1, with x0 = 0 + keys[0]
    spare = np.empty_like(x1)
    steps = 0
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            if steps:
                np.add(x0, x1, out=x0)
            steps += 1
            np.left_shift(x1, np.uint32(r), out=spare)
            np.right_shift(x1, np.uint32(32 - r), out=x1)
            np.bitwise_or(x1, spare, out=x1)
            np.bitwise_xor(x1, x0, out=x1)
        np.add(x0, np.uint32(keys[(group + 1) % 3]), out=x0)
        np.add(x1, np.uint32((keys[(group + 2) % 3] + group + 1) & _MASK), out=x1)
    return x0, x1


def _keep_numpy(out: Any, k0: int, k1: int, first: int, threshold: int) -> None:
    """out[i] = (y0 ^ y1) < threshold for the counters first + i (high words 0), tile by tile:
    ``_threefry.keep`` computed with NumPy."""
    keys = (k0, k1, k0 ^ k1 ^ _PARITY)
    for start in range(0, out.size, _TILE):
        tile = out[start:start + _TILE]
        x0, x1 = _threefry(keys, first + start, tile.size)
        np.bitwise_xor(x0, x1, out=x0)
        np.less(x0, np.uint32(threshold), out=tile)


def _blocks_numpy(out: Any, k0: int, k1: int, first: int) -> None:
    """out[i] = (y0, y1) for the counters first + i (high words 0), out of shape (n, 2) uint32:
    ``_threefry.blocks`` computed with NumPy."""
    out[:, 0], out[:, 1] = _threefry((k0, k1, k0 ^ k1 ^ _PARITY), first, out.shape[0])


_kernel: Any = optional_extension("_threefry")

#: True when the blocks come from the C extension ``arraylayer._threefry``.
COMPILED: Final = _kernel is not None
_KEEP: Final[Callable[[Any, int, int, int, int], None]] = _keep_numpy if _kernel is None else _kernel.keep
_BLOCKS: Final[Callable[[Any, int, int, int], None]] = _blocks_numpy if _kernel is None else _kernel.blocks


def _mask(words: tuple[int, int], size: int, p: float) -> Any:
    """Flat keep mask of ``size`` elements: bernoulli(key, p)."""
    units = math.ceil(float(np.float32(p)) * _UNITS)
    if units >= _UNITS:
        return np.ones(size, dtype=bool)
    out = np.empty(size, dtype=bool)
    _KEEP(out, *words, 0, units << 9)
    return out


class _Eager(NamedTuple):
    """How a backend's eager CPU arrays meet NumPy here."""

    words: Callable[[Any], tuple[int, int] | None]  # a key's two words, or None: not here
    on_cpu: Callable[[Any], bool]  # whether an array is one this backend holds in host memory
    native: Callable[[Any], Any]  # a NumPy result as the backend's array (keys: its public words)
    float_name: Callable[[Any], str | None]  # an array's float dtype as NumPy names it, or None (e.g. bfloat16)


def _numpy_words(key: Any) -> tuple[int, int] | None:
    _load_numpy()
    if type(key) is not np.ndarray or key.shape != (2,) or key.dtype.kind not in "iu":
        return None
    return _read(key)


def _torch_words(key: Any) -> tuple[int, int] | None:
    import torch

    if (type(key) is not torch.Tensor or key.device.type != "cpu" or replaying()
            or key.dtype.is_floating_point or key.dtype.is_complex or tuple(key.shape) != (2,)):
        return None
    _load_numpy()  # never while Dynamo traces: a traced call returned above
    return _read(key)


def _torch_native(a: Any) -> Any:
    import torch

    return torch.from_numpy(a.astype(np.int64) if a.dtype == np.uint32 else a)  # keys: int64 in [0, 2**32)


def _numpy_float_name(x: Any) -> str | None:
    name = x.dtype.name
    return name if name in _FLOATS else None


def _torch_float_name(x: Any) -> str | None:
    name = str(x.dtype)[len("torch."):]  # "torch.float32"
    return name if name in _FLOATS else None


_FLOATS: Final = frozenset({"float16", "float32", "float64"})

#: the backends whose eager CPU masks and split keys come from here
_EAGER: Final[dict[str, _Eager]] = {
    "numpy": _Eager(_numpy_words, lambda x: True, lambda a: a, _numpy_float_name),
    "torch": _Eager(_torch_words, lambda x: x.device.type == "cpu", _torch_native, _torch_float_name),
}


def _flat_mask(eager: _Eager | None, key: Any, x: Any, p: float) -> Any:
    """The flat NumPy keep mask of x's size (``random.bernoulli(key, p)``), or None: not here."""
    size = math.prod(x.shape)
    if eager is None or size >= 2**32 or not eager.on_cpu(x):
        return None
    words = eager.words(key)
    return None if words is None else _mask(words, size, p)


def keep(backend: str, key: Any, x: Any, p: float) -> Any:
    """A native bool array of x's shape, True with probability ``p`` exactly where
    ``random.bernoulli(key, p, x.shape)`` is, or None (draw it with ``random.bernoulli``)."""
    eager = _EAGER.get(backend)
    mask = _flat_mask(eager, key, x, p)
    return None if mask is None else eager.native(mask).reshape(x.shape)  # type: ignore[union-attr]


def divisor(backend: str, key: Any, x: Any, p: float) -> Any:
    """dropout's divisor: a native array of x's shape and dtype holding ``p`` (rounded to that
    dtype) where ``random.bernoulli(key, p, x.shape)`` is True and ``inf`` where it is False, or
    None (not here: another backend or device, a traced call, a dtype NumPy lacks)."""
    eager = _EAGER.get(backend)
    name = None if eager is None else eager.float_name(x)
    mask = None if name is None else _flat_mask(eager, key, x, p)  # NumPy is loaded once a mask is made
    if mask is None:
        return None
    float_type = np.dtype(name).type
    return eager.native(np.where(mask, float_type(p), float_type(math.inf))).reshape(x.shape)  # type: ignore[union-attr]


def split(backend: str, key: Any, num: int) -> Any:
    """``random.split(key, num)`` (checked arguments; the key in the backend's public words) as a
    native array of shape (num, 2), or None (split it with ``random``'s own rounds)."""
    eager = _EAGER.get(backend)
    words = None if eager is None or num >= 2**32 else eager.words(key)
    if words is None:
        return None
    out = np.empty((num, 2), dtype=np.uint32)
    _BLOCKS(out, *words, 0)
    return eager.native(out)
