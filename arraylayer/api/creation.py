"""Creation functions. Each infers its dtype with :func:`~arraylayer.infer_dtype` (``full(s, 1)``
is the default int, ``full(s, 1.0)`` the default float, ``arange(5)`` the default int, on every
backend), takes its backend from its array arguments (else the active backend), and honours
``device=`` and the default device."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Final

from arraylayer.runtime.devices import canonical_device, default_device
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype, iinfo
from arraylayer.errors import (
    AllocationError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    TypePromotionError,
    UnsupportedDtypeError,
)
from arraylayer.dtypes.inference import infer_dtype_unchecked
from arraylayer.api.interchange import from_dlpack_or_bits, to_backend
from arraylayer.dtypes.promotion import check_ints_fit, result_type
from arraylayer.runtime.registry import backend_of, chosen_backend
from arraylayer import arguments
from arraylayer.api.dispatch import array_input, as_array, kernel, native_device, native_dtype

Array = Any
Shape = int | Sequence[int]

__all__ = [
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like", "linspace",
    "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
]

# Kind ranks: a Python scalar may fill an array of its own kind or a higher one, never lower
# (1.5 into int32 would truncate silently on every framework).
_RANK: Final = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}
_SCALAR_RANKS: Final = ((bool, 0), (int, 1), (float, 2), (complex, 3))  # bool before int: bool is an int


def asarray(
    obj: Any, /, *, dtype: DtypeLike | None = None, device: str | None = None, copy: bool | None = None,
    chunks: Any = None,
) -> Array:
    """``obj`` (an array, a Python scalar or a nested sequence) as a native array.

    dtype: as given; else the array's own dtype; else the default dtype of the highest
    kind among the Python scalars (``asarray([1, 2.5])`` is the default float). Python ints
    that do not fit an integer dtype raise ScalarOverflowError on every backend.
    device: as given; else the array's own device; else :func:`default_device` (None: the
    framework's default).
    copy: True always copies; False never does (ValueError when a copy would be needed);
    None copies only when needed.

    Inside ``use_backend(name)`` / after ``set_backend(name)`` the result is an array of that
    backend: an array of another backend is moved over first (:func:`arraylayer.to_backend`).

    chunks: on a chunked backend (dask), the chunks of the result (dask's ``chunks``: an int, -1,
    ``"auto"``, a tuple per axis or a dict); None: dask's ``"auto"`` for new arrays, a dask array's
    own chunks. Elsewhere it must be None.
    """
    backend = backend_of(obj)
    chosen = chosen_backend()
    if chosen is not None and chosen is not backend and isinstance(obj, backend.array_types):
        obj, backend = to_backend(obj, chosen.name), chosen
    resolved = infer_dtype_unchecked(dtype, obj)
    if resolved.is_integer:
        check_ints_fit((obj,), resolved)
    if not hasattr(obj, "dtype"):
        arguments.array_like(obj, "obj")
        if dtype is not None:
            arguments.no_narrowing(obj, resolved)
    is_array = isinstance(obj, backend.array_types)
    if device is None and not is_array:
        device = default_device()
    if copy is False:
        same_device = is_array and (device is None or backend.device_of(obj) == canonical_device(device))
        if not (is_array and backend.dtype_of(obj) is resolved and same_device):
            raise InvalidArgumentError(
                f"asarray(copy=False) cannot return {type(obj).__name__} as a {resolved} array on "
                f"{device or 'its device'} without a copy; pass copy=None to allow one."
            )
        return obj
    if resolved.is_low_precision and not (is_array and backend.dtype_of(obj) is resolved):
        return _low_precision_asarray(obj, resolved, device, chunks)
    if chunks is not None:
        shape = tuple(obj.shape) if hasattr(obj, "shape") else arguments.nested_shape(obj, "obj")
        result = backend.asarray(obj, resolved, device, **arguments.chunks(backend, chunks, shape, resolved))
    else:
        result = backend.asarray(obj, resolved, device)
    if copy and (result is obj or (not is_array and hasattr(obj, "__dlpack__"))):
        result = backend.copy(result)
    return result


def _low_precision_asarray(obj: Any, dtype: Dtype, device: str | None, chunks: Any) -> Array:
    """``obj`` as a low-precision array: made in float32 (int32; a low-precision array stays itself) and
    cast by ml_dtypes' rule, as ml_dtypes casts a float64 (through float32)."""
    from arraylayer.api.data_types import astype

    own = getattr(obj, "dtype", None)
    low = own is not None and as_dtype(own).is_low_precision
    wide = None if low else "float32" if dtype.is_floating else "int32"
    return astype(asarray(obj, dtype=wide, device=device, chunks=chunks), dtype)


def _place(device: str | None) -> str | None:
    return default_device() if device is None else device


def _scalar_rank(value: Any) -> int | None:
    """The kind rank of a Python scalar (None for anything else), by isinstance: torch.compile
    traces that, where it cannot look a class up in a dict."""
    for kind, rank in _SCALAR_RANKS:
        if isinstance(value, kind):
            return None if hasattr(value, "dtype") else rank  # NumPy scalars subclass float: arrays here
    return None


def _check_fill(value: Any, dtype: Dtype, what: str) -> None:
    """A Python scalar must fit ``dtype`` exactly: no kind narrowing, no integer overflow."""
    rank = _scalar_rank(value)
    if rank is None:
        if not hasattr(value, "dtype"):
            raise arguments.InvalidArgumentTypeError(
                f"{what}={value!r} ({type(value).__name__}) must be a Python number (bool, int, float, complex).")
        return
    if rank > _RANK[dtype.category] and not (rank == 1 and dtype.category == "bool" and value in (0, 1)):
        raise TypePromotionError(
            f"{what} {value!r} cannot be held by {dtype} without losing its value; pass a dtype of its "
            f"kind (or leave dtype=None), or convert the value yourself."
        )
    if dtype.is_integer:
        check_ints_fit((value,), dtype)


def _infinite_to_int(value: Any, dtype: Dtype) -> Any:
    """An infinite float fill for an integer dtype as that dtype's extreme of the same sign (what
    array-api-extra's nanmax/nanmin ask for integer arrays, and array-api-strict accepts; NumPy's
    cast would give the minimum for both signs); anything else as it is (NaN into an int still raises)."""
    if value.__class__ is float and dtype.is_integer and math.isinf(value):
        limits = iinfo(dtype)
        return limits.max if value > 0 else limits.min
    return value


def _exact(value: Any, dtype: Dtype) -> Any:
    """A Python int fill value for a float dtype as a float (torch cannot convert 2**70)."""
    return float(value) if value.__class__ is int and dtype.category in ("float", "complex") else value


def _shape(shape: Shape) -> tuple[int, ...]:
    return arguments.shape(shape)


def _low_precision(backend: Any, make: Callable[[Dtype], Array], dtype: Dtype) -> Array:
    """An array of a low-precision ``dtype``: made in float32 (int32) and cast by ml_dtypes' rule."""
    from arraylayer.lowp.convert import convert

    wide = as_dtype("float32" if dtype.is_floating else "int32")
    return convert(backend, make(wide), wide, backend.check_valid(dtype))


def _check_ones(name: str, dtype: Dtype) -> None:
    """``ones`` (``eye``) in a type without a one (int1: -1 and 0) raises, as ``full(shape, 1)`` does: it would wrap."""
    if name in ("ones", "eye"):
        _check_fill(1, dtype, f"{name}'s value")


#: what the frameworks' out-of-memory errors say (torch's CPU allocator and JAX raise RuntimeError)
_OUT_OF_MEMORY: Final = ("RESOURCE_EXHAUSTED", "can't allocate memory", "out of memory", "OOM when allocating")
_WAITED: Final = 2**30


def _allocated(name: str, shape: tuple[int, ...], dtype: Dtype, make: Callable[[], Array]) -> Array:
    """``make()``; AllocationError where the framework cannot allocate the array (NumPy's MemoryError,
    torch's and JAX's RuntimeError, TensorFlow's ResourceExhaustedError: one error on every backend).
    JAX dispatches some creations asynchronously (linspace): an array of 1 GiB or more is waited
    for here, so that its allocation fails here too; smaller ones, and tracers, are not waited for."""
    try:
        result = make()
        if math.prod(shape) * dtype.itemsize >= _WAITED:
            ready = getattr(result, "block_until_ready", None)
            if ready is not None:
                ready()
        return result
    except Exception as error:
        text = str(error)
        if not (isinstance(error, MemoryError) or type(error).__name__ in ("OutOfMemoryError", "ResourceExhaustedError")
                or any(sign in text for sign in _OUT_OF_MEMORY)):
            raise
        raise AllocationError(
            f"{name}: an array of shape {shape} and dtype {dtype} ({math.prod(shape) * dtype.itemsize} bytes) does not fit the "
            f"device's memory ({type(error).__name__}: {text.splitlines()[0][:120] if text else ''}); pass a smaller "
            f"shape or a narrower dtype, or build it on a chunked backend (dask), which computes it in parts."
        ) from None


def _filled(name: str, shape: Shape, dtype: DtypeLike | None, device: str | None, chunks: Any) -> Array:
    backend = backend_of()
    resolved = infer_dtype_unchecked(dtype)
    if resolved.is_low_precision:
        _check_ones(name, resolved)
        return _low_precision(backend, lambda wide: _filled(name, shape, wide, device, chunks), resolved)
    checked = _shape(shape)
    chunking = arguments.chunks(backend, chunks, checked, resolved)
    make = kernel(backend, name, resolved)
    return _allocated(name, checked, resolved, lambda: make(
        checked, dtype=native_dtype(backend, resolved), device=native_device(backend, _place(device)), **chunking))


def zeros(shape: Shape, *, dtype: DtypeLike | None = None, device: str | None = None, chunks: Any = None) -> Array:
    """An array of zeros (default float dtype unless ``dtype`` is given). ``chunks``: on dask,
    the chunks (None: dask's ``"auto"``); elsewhere None."""
    return _filled("zeros", shape, dtype, device, chunks)


def ones(shape: Shape, *, dtype: DtypeLike | None = None, device: str | None = None, chunks: Any = None) -> Array:
    """An array of ones (default float dtype unless ``dtype`` is given); ``chunks`` as in :func:`zeros`."""
    return _filled("ones", shape, dtype, device, chunks)


def empty(shape: Shape, *, dtype: DtypeLike | None = None, device: str | None = None, chunks: Any = None) -> Array:
    """An uninitialised array (default float dtype unless ``dtype`` is given); ``chunks`` as in :func:`zeros`."""
    return _filled("empty", shape, dtype, device, chunks)


def full(shape: Shape, fill_value: bool | int | float | complex, *, dtype: DtypeLike | None = None,
         device: str | None = None, chunks: Any = None) -> Array:
    """An array filled with ``fill_value``. Without ``dtype`` the dtype is the default of the
    value's kind (``full(s, 1)``: default int; ``full(s, 1.0)``: default float). A value that
    ``dtype`` cannot hold (1.5 into int32, 300 into int8) raises instead of truncating; an infinite
    float into an integer dtype is that dtype's largest (``inf``) or smallest (``-inf``) value."""
    backend = backend_of()
    resolved = infer_dtype_unchecked(dtype, fill_value)
    fill_value = _infinite_to_int(fill_value, resolved)
    _check_fill(fill_value, resolved, "fill_value")
    if resolved.is_low_precision:
        return _low_precision(backend, lambda wide: full(shape, fill_value, dtype=wide, device=device, chunks=chunks),
                              resolved)
    checked = _shape(shape)
    chunking = arguments.chunks(backend, chunks, checked, resolved)
    make = kernel(backend, "full", resolved)
    return _allocated("full", checked, resolved, lambda: make(
        checked, _exact(fill_value, resolved), dtype=native_dtype(backend, resolved),
        device=native_device(backend, _place(device)), **chunking))


def _like(name: str, x: Array, dtype: DtypeLike | None, device: str | None, *fill: Any, chunks: Any = None) -> Array:
    backend, x, own = array_input(x)
    resolved = own if dtype is None else as_dtype(dtype)
    fill = tuple(_infinite_to_int(value, resolved) for value in fill)
    if resolved.is_low_precision:
        _check_ones(name, resolved)
        return _low_precision(backend, lambda wide: _like(name, x, wide, device, *fill, chunks=chunks), resolved)
    if fill:
        _check_fill(fill[0], resolved, "fill_value")
        fill = (_exact(fill[0], resolved),)
    placement = backend.placement_like(x) if device is None else native_device(backend, device)
    if chunks is None and backend.chunked:
        if any(length != length for length in x.shape):  # unknown lengths (after unique, a mask): dask's own
            like = getattr(backend.load().module, f"{name}_like")  # *_like keeps x's unknown chunks
            return like(x, *fill, dtype=native_dtype(backend, resolved))
        chunks = x.chunks  # x's own chunking
    shape = tuple(x.shape)
    chunking = arguments.chunks(backend, chunks, shape, resolved)
    make = kernel(backend, name, resolved)
    return _allocated(f"{name}_like", shape, resolved, lambda: make(
        shape, *fill, dtype=native_dtype(backend, resolved), device=placement, **chunking))


def zeros_like(x: Array, /, *, dtype: DtypeLike | None = None, device: str | None = None,
               chunks: Any = None) -> Array:
    """Zeros with x's shape, and x's dtype and device unless given."""
    return _like("zeros", x, dtype, device, chunks=chunks)


def ones_like(x: Array, /, *, dtype: DtypeLike | None = None, device: str | None = None,
              chunks: Any = None) -> Array:
    """Ones with x's shape, and x's dtype and device unless given."""
    return _like("ones", x, dtype, device, chunks=chunks)


def empty_like(x: Array, /, *, dtype: DtypeLike | None = None, device: str | None = None,
               chunks: Any = None) -> Array:
    """An uninitialised array with x's shape, and x's dtype and device unless given."""
    return _like("empty", x, dtype, device, chunks=chunks)


def full_like(x: Array, /, fill_value: bool | int | float | complex, *, dtype: DtypeLike | None = None,
              device: str | None = None, chunks: Any = None) -> Array:
    """``fill_value`` with x's shape, and x's dtype and device unless given. The value must fit
    the dtype (no truncation, no wrap-around)."""
    return _like("full", x, dtype, device, fill_value, chunks=chunks)


def arange(start: int | float, /, stop: int | float | None = None, step: int | float = 1, *,
           dtype: DtypeLike | None = None, device: str | None = None, chunks: Any = None) -> Array:
    """Evenly spaced values in [start, stop). Without ``dtype``: the default int when all of
    start, stop and step are ints, else the default float."""
    backend = backend_of()
    for name, value in (("start", start), ("stop", stop), ("step", step)):
        if value is not None or name != "stop":
            arguments.real_scalar(value, name)
            if not math.isfinite(value):
                raise InvalidArgumentError(f"arange needs finite bounds, got {name}={value!r}.")
    resolved = infer_dtype_unchecked(dtype, start, stop, step)
    for value in (start, stop, step):
        if value is not None:
            _check_fill(value, resolved, "arange bound")
    if resolved.is_low_precision:  # in float32 (int32), then one cast: values round as astype rounds them
        return _low_precision(backend, lambda wide: arange(start, stop, step, dtype=wide, device=device, chunks=chunks),
                              resolved)
    if step == 0:
        raise InvalidArgumentError("arange needs a non-zero step; pass step=1 (or any non-zero number).")
    bounds = (0, start) if stop is None else (start, stop)
    length = max(0, math.ceil((bounds[1] - bounds[0]) / step))
    arguments.count(length, "the length of arange(start, stop, step)")
    chunking = arguments.chunks(backend, chunks, (length,), resolved)
    if length == 0:  # an empty range is empty on every backend (torch would raise for stop < start)
        return kernel(backend, "zeros", resolved)(
            (0,), dtype=native_dtype(backend, resolved), device=native_device(backend, _place(device)), **chunking)
    make = kernel(backend, "arange", resolved)
    return _allocated("arange", (length,), resolved, lambda: make(
        start, stop, step, dtype=native_dtype(backend, resolved), device=native_device(backend, _place(device)),
        **chunking))


def linspace(start: int | float | complex, stop: int | float | complex, /, num: int, *,
             dtype: DtypeLike | None = None, device: str | None = None, endpoint: bool = True,
             chunks: Any = None) -> Array:
    """``num`` evenly spaced values from start to stop. Without ``dtype``: the default float,
    or the default complex when start or stop is complex (integers give floats here, as the
    Array API says)."""
    backend = backend_of()
    for name, value in (("start", start), ("stop", stop)):
        if value.__class__ is not complex:
            arguments.real_scalar(value, name)
    arguments.flag(endpoint, "endpoint")
    start, stop = (float(v) if v.__class__ is int else v for v in (start, stop))
    resolved = infer_dtype_unchecked(dtype, start, stop, 1.0)
    if resolved.category not in ("float", "complex"):
        raise TypePromotionError(f"linspace makes floating-point arrays; {resolved} cannot hold its steps. "
                                 f"Pass a float or complex dtype.")
    for value in (start, stop):
        _check_fill(value, resolved, "linspace bound")
    count = arguments.count(num, "num")
    chunking = arguments.chunks(backend, chunks, (count,), resolved)
    make = kernel(backend, "linspace", resolved)
    return _allocated("linspace", (count,), resolved, lambda: make(
        start, stop, count, dtype=native_dtype(backend, resolved), device=native_device(backend, _place(device)),
        endpoint=endpoint, **chunking))


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DtypeLike | None = None,
        device: str | None = None, chunks: Any = None) -> Array:
    """A 2-d array with ones on the k-th diagonal (default float dtype unless given)."""
    backend = backend_of()
    resolved = infer_dtype_unchecked(dtype)
    if resolved.is_low_precision:  # in float32 (int32), then one cast; a format without zero has no eye
        from arraylayer.lowp.moving import has_zero, zero_refusal

        if not has_zero(backend.check_valid(resolved).name):
            raise UnsupportedDtypeError(zero_refusal("eye", resolved.name))
        _check_ones("eye", resolved)
        return _low_precision(backend, lambda wide: eye(n_rows, n_cols, k=k, dtype=wide, device=device, chunks=chunks),
                              resolved)
    rows = arguments.count(n_rows, "n_rows")
    cols = rows if n_cols is None else arguments.count(n_cols, "n_cols")
    arguments.shape((rows, cols))
    # A diagonal beyond the matrix selects nothing: the same all-zero result for any such k.
    diagonal = min(max(arguments.integer(k, "k"), -rows - 1), cols + 1)
    chunking = arguments.chunks(backend, chunks, (rows, cols), resolved)
    make = kernel(backend, "eye", resolved)
    return _allocated("eye", (rows, cols), resolved, lambda: make(
        rows, cols, k=diagonal, dtype=native_dtype(backend, resolved), device=native_device(backend, _place(device)),
        **chunking))


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple[Array, ...]:
    """Coordinate matrices from 1-d arrays, all in their promoted dtype (a tuple, as 2025.12 says)."""
    if indexing not in ("xy", "ij"):
        raise InvalidArgumentError(f"meshgrid indexing must be 'xy' or 'ij', got {indexing!r}.")
    if not arrays:
        return ()
    backend = backend_of(*arrays)
    dtype = result_type(*arrays)
    cast = [as_array(backend, x, dtype) for x in arrays]
    if any(len(x.shape) != 1 for x in cast):
        raise InvalidArgumentError(f"meshgrid takes 1-d arrays, got shapes {[tuple(x.shape) for x in cast]}.")
    return tuple(kernel(backend, "meshgrid", dtype)(*cast, indexing=indexing))


def _diagonal(x: Array, k: Any) -> int:
    """``k`` as an int, clamped to just beyond the matrix (the same result, no overflow)."""
    if len(x.shape) < 2:
        raise InvalidArgumentError(f"tril/triu need at least 2 dimensions, got shape {tuple(x.shape)}.")
    rows, cols = x.shape[-2], x.shape[-1]
    return min(max(arguments.integer(k, "k"), -int(rows) - 1), int(cols) + 1)


def tril(x: Array, /, *, k: int = 0) -> Array:
    """The lower triangle of the last two axes (elements above the k-th diagonal zeroed)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "tril", dtype)(x, k=_diagonal(x, k))


def triu(x: Array, /, *, k: int = 0) -> Array:
    """The upper triangle of the last two axes (elements below the k-th diagonal zeroed)."""
    backend, x, dtype = array_input(x)
    return kernel(backend, "triu", dtype)(x, k=_diagonal(x, k))


def from_dlpack(x: Any, /, *, device: str | None = None, copy: bool | None = None) -> Array:
    """An array of the active backend sharing memory with ``x`` (any DLPack producer).

    ``copy=True`` always copies; ``device`` moves the result (a copy when it moves). DLPack has no
    code for the low-precision dtypes: NumPy and torch then share the bytes (a uint8 view), and
    other pairs, like a dask array (no memory until computed), copy the bits exactly."""
    from arraylayer.runtime.registry import _active

    backend = _active()
    if not hasattr(x, "__dlpack__") and not isinstance(x, backend_of(x).array_types):
        raise InvalidArgumentTypeError(
            f"from_dlpack(x={x!r:.60}): x is a {type(x).__qualname__}, not a DLPack producer (an array with "
            f"__dlpack__). Pass an array of a framework, or use arraylayer.asarray(x) for lists and numbers."
        )
    result = from_dlpack_or_bits(backend, x, copy)
    if device is not None:
        result = backend.to_device(result, device)
    if copy:
        result = backend.copy(result)
    return result
