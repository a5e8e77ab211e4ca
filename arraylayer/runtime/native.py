"""Native dtype objects of the active backend, and conversion of inputs to a promoted dtype.

The parts of the dtype API that need a backend live here, so that the dtype core (``dtypes``,
``lattice``, ``policies``, ``promotion``, ``defaults``, ``inference``) knows none.
"""

from __future__ import annotations

from typing import Any

from arraylayer.dtypes import Dtype, DtypeLike, as_dtype
from arraylayer.dtypes.inference import infer_dtype
from arraylayer.dtypes.promotion import result_type
from arraylayer.runtime.registry import backend_of, get_backend

__all__ = ["as_native_dtype", "as_arraylayer_dtype", "convert_inputs", "default_dtype", "promote_types_of_inputs"]


def as_native_dtype(dtype: DtypeLike) -> Any:
    """The active backend's dtype object for ``dtype`` (``np.dtype``, ``torch.dtype``, ``tf.DType``)."""
    return get_backend().as_native_dtype(dtype)


def as_arraylayer_dtype(native: Any) -> Dtype:
    """The arraylayer :class:`Dtype` of a native dtype object of any backend."""
    return as_dtype(native)


def convert_inputs(dtype: Dtype, *inputs: Any) -> tuple[Any, ...]:
    """Each input as an array of ``dtype`` on the inputs' backend: arrays are cast only when
    their dtype differs, Python scalars become strongly typed 0-d arrays."""
    backend = backend_of(*inputs)
    backend.check_valid(dtype)
    return tuple(
        backend.astype(x, dtype) if isinstance(x, backend.array_types) else backend.asarray(x, dtype)
        for x in inputs
    )


def promote_types_of_inputs(x1: Any, x2: Any) -> tuple[Any, Any]:
    """Both inputs converted to their promoted dtype, as arrays of their backend.

    Arrays are cast only when their dtype differs; Python scalars become strongly typed
    0-d arrays of the other input's backend (of the active backend when both are scalars).
    Raises TypePromotionError, ScalarOverflowError or BackendMismatchError as result_type
    and backend_of do.
    """
    return convert_inputs(result_type(x1, x2), x1, x2)


def default_dtype(dtype: DtypeLike | None = None, item: Any = None, as_native: bool = False) -> Any:
    """The dtype to use for a call, as :func:`~arraylayer.infer_dtype` decides it from one ``item``.

    With ``as_native=True`` the active backend's native dtype object is returned.
    """
    result = infer_dtype(dtype) if item is None else infer_dtype(dtype, item)
    return as_native_dtype(result) if as_native else result
