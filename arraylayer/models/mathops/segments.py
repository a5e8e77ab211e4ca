"""``segment_sum``/``segment_max``/``segment_min``/``segment_prod``: reductions of data's rows by id.

jax.ops.segment_*'s semantics: row i of ``data`` goes to segment ``segment_ids[i]``; the result has
``num_segments`` rows; an empty segment holds the reduction's identity (0; -inf or the dtype's
minimum; +inf or its maximum; 1); ids outside [0, num_segments) are dropped. The result keeps data's
dtype. Each segment is a masked reduction over all rows (work and memory O(rows x segments x
row size)), composed of arraylayer's functions: lazy on dask, traceable under jit, differentiable.
"""

from __future__ import annotations

import math
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import creation, elementwise, manipulation, searching, statistical
from arraylayer.api.dispatch import array_input
from arraylayer.dtypes import Dtype, iinfo
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError
from arraylayer.models.nn.common import _creating_on, _device
from arraylayer.models.lowp_rule import rounded_once

Array = Any

#: each reduction's statistical function, and the kinds of data it takes
_REDUCTIONS: Final[dict[str, tuple[Any, tuple[str, ...]]]] = {
    "segment_sum": (statistical.sum, ("int", "uint", "float", "complex")),
    "segment_prod": (statistical.prod, ("int", "uint", "float", "complex")),
    "segment_max": (statistical.max, ("int", "uint", "float")),
    "segment_min": (statistical.min, ("int", "uint", "float")),
}


def _identity(name: str, dtype: Dtype) -> int | float:
    """The value of an empty segment: the reduction's identity in ``dtype``."""
    if name == "segment_sum":
        return 0
    if name == "segment_prod":
        return 1
    low = name == "segment_max"
    if dtype.category == "float":
        return -math.inf if low else math.inf
    info = iinfo(dtype)
    return info.min if low else info.max


def segment_count(backend: Any, segment_ids: Array, num_segments: int | None, name: str) -> int:
    """``num_segments`` checked, or max(segment_ids) + 1 where the ids' values are known now."""
    if num_segments is not None:
        return arguments.count(num_segments, "num_segments")
    kernels = backend.nn_kernels
    values = None if kernels is None else kernels.concrete(segment_ids)
    if values is None:
        raise InvalidArgumentError(f"{name}: the segment ids' values are not known yet (a lazy or traced array), "
                                   f"so the result's length is not either; pass num_segments=.")
    return int(values.max()) + 1 if values.size else 0


def _segment(name: str, data: Array, segment_ids: Array, num_segments: int | None, sorted: bool) -> Array:  # noqa: A002
    reduce, kinds = _REDUCTIONS[name]
    backend, data, dtype = array_input(data)
    _, segment_ids, id_dtype = array_input(segment_ids)
    arguments.flag(sorted, "sorted")
    if dtype.category not in kinds:
        raise InvalidDtypeError(f"{name} takes {', '.join(kinds)} data; got {dtype}.")
    if id_dtype.category not in ("int", "uint"):
        raise InvalidDtypeError(f"{name}: segment_ids must be integers; got {id_dtype}.")
    if len(data.shape) == 0 or tuple(segment_ids.shape) != tuple(data.shape[:1]):
        raise InvalidArgumentError(f"{name}: segment_ids must be 1-d with one id per row of data (shape "
                                   f"({tuple(data.shape)[0] if tuple(data.shape) else '?'},)); got ids of shape "
                                   f"{tuple(segment_ids.shape)} and data of shape {tuple(data.shape)}.")
    count = segment_count(backend, segment_ids, num_segments, name)
    identity = _identity(name, dtype)
    rest = tuple(data.shape[1:])
    if data.shape[0] == 0 or count == 0:
        with _creating_on(data):
            return creation.full((count, *rest), identity, dtype=dtype, device=_device(data))
    segments = _arange_like(segment_ids, count)
    mask = elementwise.equal(manipulation.expand_dims(segment_ids, axis=0), manipulation.expand_dims(segments, axis=1))
    mask = manipulation.reshape(mask, (count, data.shape[0]) + (1,) * len(rest))
    masked = searching.where(mask, manipulation.expand_dims(data, axis=0), identity)
    if name in ("segment_sum", "segment_prod"):
        return reduce(masked, axis=1, dtype=dtype)
    return reduce(masked, axis=1)


def _arange_like(segment_ids: Array, count: int) -> Array:
    """0 .. count-1 on the ids' backend and device, in their dtype."""
    _, _, dtype = array_input(segment_ids)
    with _creating_on(segment_ids):
        return creation.arange(count, dtype=dtype, device=_device(segment_ids))


@rounded_once  # in float32: the 0 / 1 fill of the masked rows exists there (float8_e8m0fnu has no 0)
def segment_sum(data: Array, segment_ids: Array, num_segments: int | None = None, sorted: bool = False) -> Array:  # noqa: A002
    """Sum of data's rows per segment (0 for an empty one); ``sorted`` is a hint, ignored."""
    return _segment("segment_sum", data, segment_ids, num_segments, sorted)


@rounded_once  # in float32: the 0 / 1 fill of the masked rows exists there (float8_e8m0fnu has no 0)
def segment_prod(data: Array, segment_ids: Array, num_segments: int | None = None, sorted: bool = False) -> Array:  # noqa: A002
    """Product of data's rows per segment (1 for an empty one)."""
    return _segment("segment_prod", data, segment_ids, num_segments, sorted)


@rounded_once  # in float32: the -inf fill of the masked rows exists there (float8_e4m3fn has no inf)
def segment_max(data: Array, segment_ids: Array, num_segments: int | None = None, sorted: bool = False) -> Array:  # noqa: A002
    """Maximum of data's rows per segment (-inf, or the integer dtype's minimum, for an empty one)."""
    return _segment("segment_max", data, segment_ids, num_segments, sorted)


@rounded_once  # in float32: the -inf fill of the masked rows exists there (float8_e4m3fn has no inf)
def segment_min(data: Array, segment_ids: Array, num_segments: int | None = None, sorted: bool = False) -> Array:  # noqa: A002
    """Minimum of data's rows per segment (+inf, or the integer dtype's maximum, for an empty one)."""
    return _segment("segment_min", data, segment_ids, num_segments, sorted)


__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
