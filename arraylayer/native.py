"""Native dtype objects of the active backend, and conversion of inputs to a promoted dtype."""

from __future__ import annotations

from typing import Any

from .dtypes import Dtype, DtypeLike, as_dtype

__all__ = ["as_native_dtype", "as_arraylayer_dtype", "convert_inputs"]


def as_native_dtype(dtype: DtypeLike) -> Any:
    """The active backend's dtype object for ``dtype`` (``np.dtype``, ``torch.dtype``, ``tf.DType``)."""
    from .registry import get_backend

    return get_backend().as_native_dtype(dtype)


def as_arraylayer_dtype(native: Any) -> Dtype:
    """The arraylayer :class:`Dtype` of a native dtype object of any backend."""
    return as_dtype(native)


def convert_inputs(dtype: Dtype, *inputs: Any) -> tuple[Any, ...]:
    """Each input as an array of ``dtype`` on the inputs' backend: arrays are cast only when
    their dtype differs, Python scalars become strongly typed 0-d arrays."""
    from .registry import backend_of

    backend = backend_of(*inputs)
    backend.check_valid(dtype)
    return tuple(
        backend.astype(x, dtype) if isinstance(x, backend.array_types) else backend.asarray(x, dtype)
        for x in inputs
    )
