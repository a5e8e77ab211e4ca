"""Moving arrays between backends and devices: ``to_backend``, ``dev``, ``to_device``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.dispatch import accepting_wrapped
from arraylayer.runtime.devices import canonical_device
from arraylayer.errors import BackendMismatchError, InvalidArgumentTypeError
from arraylayer.runtime.registry import _BY_TYPE, backend_of, get_backend

__all__ = ["to_backend", "dev", "to_device"]

# How NumPy and torch see an array's bytes as uint8 and back, without a copy (DLPack has no code
# for the low-precision dtypes, but moves uint8 between them).
_AS_BYTES: Final[dict[str, Callable[[Any], Any]]] = {
    "numpy": lambda x: x.view("uint8"), "torch": lambda x: x.view(_torch_uint8(x)),
}
_FROM_BYTES: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "numpy": lambda codes, native: codes.view(native), "torch": lambda codes, native: codes.view(native),
}


def _torch_uint8(x: Any) -> Any:
    return sys.modules["torch"].uint8


def from_dlpack_or_bits(target: Any, x: Any, copy: bool | None) -> Any:
    """``target.from_dlpack(x)``; where the protocol refuses a low-precision array, or a dask array
    (which holds no memory until computed), the same bits by another road: NumPy and torch share
    the bytes as uint8 and view them as the dtype; other pairs copy exactly (``to_backend``), which
    ``copy=False`` refuses with BufferError, as the standard says."""
    try:
        return target.from_dlpack(x)
    except Exception:  # noqa: BLE001 - the protocol's refusal, in each framework's own words
        source = _BY_TYPE.get(type(x))
        if source is None or not (source.chunked or source.dtype_of(x).is_low_precision):
            raise
    dtype = source.dtype_of(x)
    target.check_valid(dtype)
    if source.name in _AS_BYTES and target.name in _FROM_BYTES and not source.chunked:
        codes = target.from_dlpack(_AS_BYTES[source.name](x))
        return _FROM_BYTES[target.name](codes, target.as_native_dtype(dtype))
    if copy is False:
        raise BufferError(f"from_dlpack(x, copy=False): {source.name} cannot share a {dtype} array with "
                          f"{target.name} (DLPack has no such exchange); pass copy=None to copy it exactly.")
    return to_backend(x, target.name)


def to_backend(x: Any, name: str, *, chunks: Any = None) -> Any:
    """``x`` as an array of backend ``name``, with the same dtype, values and device kind.

    To a chunked backend (dask), ``chunks`` sets the chunks (dask's ``chunks``; None: ``"auto"``);
    from dask, the graph is computed on the way out. ``chunks`` must be None for other targets.

    The exchange goes through DLPack, zero-copy where both frameworks allow it. Where
    DLPack cannot carry the array (a dtype the protocol or one framework does not
    exchange, such as bfloat16 between some pairs, or a producer that refuses), the
    documented fallback is an exact copy through a NumPy array of the same dtype
    (bfloat16 through ml_dtypes), placed on the same device when the target has it.
    """
    source = backend_of(x)
    if _BY_TYPE.get(type(x)) is not source:
        raise BackendMismatchError(
            f"to_backend(x=...) moves an array, and x is a {type(x).__qualname__} ({x!r:.80}). Make an array of "
            f"the target backend with: with arraylayer.use_backend({name!r}): arraylayer.asarray(x)."
        )
    target = get_backend(name)
    dtype = source.dtype_of(x)
    chunking = arguments.chunks(target, chunks, tuple(x.shape), dtype)
    if source is target:
        return target.asarray(x, dtype, **chunking) if chunking else x
    target.check_valid(dtype)
    if target.chunked:
        return target.asarray(source.to_numpy(x), dtype, **chunking)
    try:
        moved = target.from_dlpack(x)
    except Exception:  # noqa: BLE001 - any refusal of the protocol selects the exact-copy fallback
        moved = None
    if moved is not None and target.dtype_of(moved) == dtype:
        return moved
    device = source.device_of(x)
    placed = device if device in target.devices() else None
    return target.asarray(source.to_numpy(x), dtype, device=placed)


def _array_backend(x: Any, call: str) -> Any:
    """The backend of array ``x``; InvalidArgumentTypeError when ``x`` is not an array of any
    backend (a list, a Python number, None ...: those have no device)."""
    backend = backend_of(x)
    if _BY_TYPE.get(type(x)) is not backend:
        raise InvalidArgumentTypeError(
            f"{call}(x={x!r:.60}): x is a {type(x).__qualname__}, not an array, so it has no device. Pass an "
            f"array of a backend, e.g. arraylayer.asarray(x) first."
        )
    return backend


def dev(x: Any) -> str:
    """The device of array ``x`` in arraylayer's vocabulary: ``"cpu"``, ``"gpu:0"`` ..."""
    return _array_backend(x, "dev").device_of(x)


def to_device(x: Any, device: str) -> Any:
    """``x`` on ``device`` (``x`` itself if it is already there); DeviceError if unavailable."""
    return _array_backend(x, "to_device").to_device(x, canonical_device(device))


# The public names take arraylayer.Array wrappers too (to_backend of an Array is an Array).
to_backend, dev, to_device = (accepting_wrapped(f) for f in (to_backend, dev, to_device))
