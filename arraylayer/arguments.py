"""Argument checking: one checker per role a parameter can have, called on the planning/slow path.

Roles: array-like (:func:`array_like`), axis/axes (:func:`axis`, :func:`axes`), shape
(:func:`shape`), count (:func:`count`), integer (:func:`integer`), index (:func:`indices_in_bounds`)
and broadcasting (:func:`broadcast_shapes`). ``dtype=`` and ``device=`` have their checkers in
:func:`arraylayer.as_dtype` and :mod:`arraylayer.runtime.devices`. Each checker returns the value in its
canonical form (so kernels see normalised axes and plain ints) or raises an arraylayer error that
names the parameter, the value and the fix, and subclasses the builtin a Python user would catch.

Nothing here runs for native arrays on the planned fast path of the elementwise functions.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any, Final

from arraylayer.errors import (
    AxisError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    OutOfBoundsIndexError,
    TypePromotionError,
)

__all__ = [
    "MAX_ELEMENTS", "array_like", "convertible", "flag", "real_scalar", "real_float", "axes", "axis", "broadcast_shapes", "count", "indices_in_bounds", "integer",
    "shape", "no_narrowing", "chunks",
]

#: The largest number of elements any array may have: 2**48 (no backend can allocate more, and
#: larger shapes overflow the extent arithmetic of XLA, which aborts the interpreter).
MAX_ELEMENTS: Final = 2**48

_SCALARS: Final = (bool, int, float, complex)
_KIND_RANK: Final = {"bool": 0, "int": 1, "uint": 1, "float": 2, "complex": 3}
_SCALAR_RANK: Final = {bool: 0, int: 1, float: 2, complex: 3}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- array-likes ------------------------------------------------------------------------------------

def array_like(obj: Any, parameter: str = "x") -> None:
    """``obj`` must be a Python scalar, a (rectangular) nested list/tuple of them, or an object
    with ``__array__``/``__dlpack__``/``dtype`` (an array of some framework)."""
    if obj.__class__ in _SCALARS or hasattr(obj, "dtype") or hasattr(obj, "__array__") or hasattr(obj, "__dlpack__"):
        return
    if isinstance(obj, (list, tuple)):
        nested_shape(obj, parameter)
        return
    raise InvalidArgumentTypeError(
        f"{parameter}={_shown(obj)} ({type(obj).__name__}) is not an array: pass an array, a Python "
        f"number, or a (nested) list of numbers, e.g. arraylayer.asarray([1, 2])."
    )


def convertible(obj: Any, dtype: Any, parameter: str = "x") -> None:
    """What every backend's ``asarray`` checks before converting a non-array ``obj`` to ``dtype``:
    an array-like (see :func:`array_like`) whose Python ints fit an integer ``dtype`` (no wrap-around,
    whichever function the value entered through: ``sum(2**31)`` raises like ``add(x, 2**31)``)."""
    array_like(obj, parameter)
    from arraylayer.dtypes import Dtype, as_dtype

    dtype = dtype if type(dtype) is Dtype else as_dtype(dtype)
    if dtype.is_integer:
        from arraylayer.dtypes.promotion import check_ints_fit

        check_ints_fit((obj,), dtype)


def nested_shape(items: Any, parameter: str) -> tuple[int, ...]:
    if items.__class__ in _SCALARS or hasattr(items, "dtype"):
        return tuple(getattr(items, "shape", ()))
    if not isinstance(items, (list, tuple)):
        raise InvalidArgumentTypeError(
            f"{parameter} holds {_shown(items)} ({type(items).__name__}), which is not a number: nested "
            f"sequences must hold only numbers (or arrays). Convert or drop that element."
        )
    shapes = {nested_shape(item, parameter) for item in items}
    if len(shapes) > 1:
        raise InvalidArgumentError(
            f"{parameter}={_shown(items)} is ragged: its elements have the shapes {sorted(shapes)}. Pad "
            f"them to one length, or pass separate arrays."
        )
    return (len(items), *(shapes.pop() if shapes else ()))


def no_narrowing(obj: Any, dtype: Any, parameter: str = "obj") -> None:
    """No Python scalar in ``obj`` (nested lists walked) may lose its value in ``dtype``: 1.5 into
    an integer dtype, 2 into bool, 1j into a real dtype. ``astype`` is the explicit cast."""
    rank = _KIND_RANK[dtype.category]
    for value in _leaves(obj):
        value_rank = _SCALAR_RANK.get(value.__class__)
        if value_rank is None or value_rank <= rank:
            continue
        if value_rank == 1 and rank == 0 and value in (0, 1):
            continue
        if value_rank == 2 and rank == 1 and math.isfinite(value) and value == int(value):
            continue
        raise TypePromotionError(
            f"{parameter} holds {value!r}, which {dtype} cannot hold without changing it; pass a dtype of "
            f"its kind (or leave dtype=None), or cast explicitly with arraylayer.astype."
        )


def _leaves(obj: Any) -> Iterable[Any]:
    if isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _leaves(item)
    else:
        yield obj


def flag(value: Any, parameter: str) -> bool:
    """``value`` must be a bool (``keepdims=``, ``stable=``, ...): 2 or "yes" would be read as True
    by some frameworks and refused by others. Identity, not ``__class__``: torch 2.11's Dynamo read
    a constant's ``__class__`` as unknown and broke the graph here (seen on a GPU)."""
    if value is not True and value is not False:
        raise InvalidArgumentTypeError(f"{parameter}={_shown(value)} must be True or False.")
    return value


def real_scalar(value: Any, parameter: str) -> Any:
    """``value`` must be a Python bool, int or float (a bound or a fill value)."""
    if value.__class__ not in (bool, int, float) and not (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0):
        raise InvalidArgumentTypeError(
            f"{parameter}={_shown(value)} ({type(value).__name__}) must be a real Python number; pass an int or float."
        )
    return value


def real_float(value: Any, parameter: str) -> float:
    """``value`` (see :func:`real_scalar`) as a Python float; an int too large for one (2**1100) is
    refused instead of raising a bare OverflowError."""
    try:
        return float(real_scalar(value, parameter))
    except OverflowError:
        raise InvalidArgumentError(f"{parameter}={_shown(value)} is too large for a float; pass a float.") from None


# -- integers, counts, shapes -----------------------------------------------------------------------

def integer(value: Any, parameter: str) -> int:
    """``value`` as a plain int (Python ints and integer scalars of any framework; no bool, float
    or string)."""
    if value.__class__ is bool or isinstance(value, (str, bytes)):
        raise InvalidArgumentTypeError(f"{parameter}={_shown(value)} must be an integer; pass an int.")
    try:
        return operator.index(value)
    except TypeError:
        raise InvalidArgumentTypeError(
            f"{parameter}={_shown(value)} ({type(value).__name__}) must be an integer; pass an int"
            f"{' (round it yourself: int(...))' if isinstance(value, float) else ''}."
        ) from None


def count(value: Any, parameter: str, *, upper: int = MAX_ELEMENTS) -> int:
    """``value`` as a non-negative int of at most ``upper``."""
    n = integer(value, parameter)
    if not 0 <= n <= upper:
        raise InvalidArgumentError(f"{parameter}={n} must be a count from 0 to {upper}; pass a value in that range.")
    return n


def int_pair(value: Any, parameter: str, function: str, *, minimum: int = 1) -> tuple[int, int]:
    """An int or a pair of ints, each at least ``minimum``, as a pair (window sizes, strides, dilations);
    ``function`` is the caller's public name (``"image.resize"``) for the error."""
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        pair = tuple(pair)
    except TypeError:
        pair = ()
    # (at most MAX_ELEMENTS: no axis is longer, and the frameworks' int64 slices would overflow beyond)
    if len(pair) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and minimum <= v <= MAX_ELEMENTS
                                 for v in pair):
        raise InvalidArgumentError(f"{function}({parameter}={value!r}): give an int or a pair of ints, each at "
                                   f"least {minimum} and at most {MAX_ELEMENTS}.")
    return pair


def dims_sequence(value: Any) -> tuple[Any, ...] | None:
    """``value`` as a tuple when it is a list, a tuple or a framework's shape object (a native
    tensor's ``.shape``: TensorFlow's TensorShape is no tuple), else None."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    as_list = getattr(value, "as_list", None)  # tf.TensorShape (known rank); an unknown length is None
    return tuple(as_list()) if callable(as_list) and getattr(value, "rank", None) is not None else None


def shape(value: Any, parameter: str = "shape") -> tuple[int, ...]:
    """``value`` (an int, a sequence of ints or a native tensor's shape) as a tuple of non-negative
    ints whose product no backend refuses to allocate for its size alone."""
    sequence = dims_sequence(value)
    if sequence is not None:
        # plain ints (the usual case) as they are; anything else converted, its parameter named then
        dims = sequence if all(d.__class__ is int for d in sequence) else tuple(
            integer(d, f"{parameter}[{i}]") for i, d in enumerate(sequence))
    elif hasattr(value, "__index__") and value.__class__ is not bool:
        dims = (integer(value, parameter),)
    else:
        raise InvalidArgumentTypeError(
            f"{parameter}={_shown(value)} ({type(value).__name__}) is not a shape: pass a tuple of "
            f"non-negative ints, e.g. (2, 3)."
        )
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"{parameter}={dims} has a negative length; every length must be >= 0.")
    size = math.prod(dims)
    if size > MAX_ELEMENTS:
        raise InvalidArgumentError(
            f"{parameter}={dims} has {size} elements, more than any backend can allocate (at most "
            f"{MAX_ELEMENTS}); pass a smaller shape."
        )
    return dims


# -- axes -------------------------------------------------------------------------------------------

def axis(value: Any, ndim: int, parameter: str = "axis") -> int:
    """One axis of an array of rank ``ndim`` as an int in [0, ndim)."""
    a = integer(value, parameter)
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{parameter}={a} is out of range for an array of {ndim} dimension(s); pass an axis from "
            f"{-ndim} to {ndim - 1}."
        )
    return a % ndim


def axes(value: Any, ndim: int, parameter: str = "axis") -> Any:
    """None, one axis, or a tuple of distinct axes, normalised to non-negative ints."""
    if value is None:
        return None
    if isinstance(value, tuple):
        normalised = tuple(axis(a, ndim, parameter) for a in value)
        if len(set(normalised)) != len(normalised):
            raise AxisError(f"{parameter}={value} names an axis twice; pass each axis once.")
        return normalised
    if isinstance(value, list):
        raise InvalidArgumentTypeError(f"{parameter}={value} must be an int or a tuple of ints; pass tuple({value}).")
    return axis(value, ndim, parameter)


# -- indices and broadcasting -----------------------------------------------------------------------

def indices_in_bounds(backend: Any, indices: Any, length: int | float, parameter: str = "indices") -> Any:
    """``indices``, every one of which must lie in [-length, length): OutOfBoundsIndexError on every
    backend otherwise. Traced indices (inside jax.jit / tf.function / torch.compile), whose values
    are unknown, are not checked. Lazy ones (dask) are checked when the graph runs: the returned array raises the
    same error then, and costs one task per chunk. A dask length unknown until computed (nan) is
    not checked here: the kernel that gathers refuses it."""
    if 0 in tuple(indices.shape) or _torch_compiling(backend) or length != length:
        return indices
    length = int(length)
    if backend.chunked:
        return indices.map_blocks(check_index_block, length=length, parameter=parameter, dtype=indices.dtype)
    try:
        values = backend.to_numpy(indices)
    except Exception:  # noqa: BLE001 - a tracer has no values to check
        return indices
    check_index_block(values, length=length, parameter=parameter)
    return indices


def _torch_compiling(backend: Any) -> bool:
    """Whether torch.compile is tracing: its fake tensors have no values, and comparing them is a
    data-dependent guard that breaks ``fullgraph=True``."""
    if backend.name != "torch":
        return False
    import torch

    return torch.compiler.is_compiling()


def check_index_block(values: Any, *, length: int, parameter: str) -> Any:
    """``values`` (a NumPy array of indices); OutOfBoundsIndexError if one lies outside [-length, length)."""
    if values.size:
        low, high = int(values.min()), int(values.max())
        if low < -length or high >= length:
            bad = low if low < -length else high
            raise OutOfBoundsIndexError(
                f"{parameter} holds {bad}, out of bounds for an axis of length {length}; indices must lie in "
                f"[{-length}, {length})."
            )
    return values


#: dask's unknown length (``nan``): unknown lengths broadcast with each other and with 1 (dask
#: checks them when it computes), as dask's own broadcasting does.
_UNKNOWN: Final = math.nan


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of ``shapes``, or one error naming all of them."""
    if len(shapes) == 2:  # the usual call: equal shapes, or one of them 0-d
        first, second = shapes
        if first == second or not second:
            return tuple(first)
        if not first:
            return tuple(second)
    ndim = 0
    for s in shapes:
        ndim = len(s) if len(s) > ndim else ndim
    result = []
    for i in range(-ndim, 0):
        sizes = set()
        for s in shapes:
            if len(s) >= -i and s[i] != 1:
                sizes.add(s[i] if s[i] == s[i] else _UNKNOWN)  # dask's unknown lengths (nan) are one length
        if len(sizes) > 1:
            raise InvalidArgumentError(
                f"shapes {', '.join(str(tuple(s)) for s in shapes)} do not broadcast: lengths {sorted(sizes)} "
                f"meet at axis {i}. Reshape or slice them to matching lengths (or length 1)."
            )
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


# -- chunks (chunked backends: dask) -----------------------------------------------------------------

def chunks(backend: Any, value: Any, shape: tuple[int, ...], dtype: Any, parameter: str = "chunks") -> dict[str, Any]:
    """``{"chunks": normalised value}`` for a chunked backend given ``chunks``; ``{}`` when it is
    None (the backend's default, dask's ``"auto"``). On a backend whose arrays are not chunked,
    ``chunks`` must be None."""
    if value is None:
        return {}
    if not backend.chunked:
        raise InvalidArgumentError(
            f"{parameter}={_shown(value)}: the {backend.name} backend's arrays are not chunked; {parameter}= applies "
            f"to chunked backends (dask) only. Leave it out, or create the array under arraylayer.use_backend('dask')."
        )
    from dask.array.core import normalize_chunks

    try:
        normalised = normalize_chunks(value, shape, dtype=backend.as_native_dtype(dtype))
        for length, sizes in zip(shape, normalised, strict=True):
            if sum(sizes) != length or any(size < 0 or (size == 0 and length) for size in sizes):
                raise ValueError(f"chunk lengths {sizes} do not split an axis of {length}")
        return {"chunks": normalised}
    except (ValueError, TypeError, AssertionError, NotImplementedError) as error:
        raise InvalidArgumentError(
            f"{parameter}={_shown(value)} does not chunk an array of shape {shape} ({error}). Pass an int (the chunk "
            f"length on every axis), -1 (one chunk), 'auto' (dask's choice, about 128 MiB per chunk), a tuple with "
            f"one entry per axis, or a dict from axis to entry."
        ) from None
