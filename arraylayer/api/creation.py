"""Creation functions. Each infers its dtype with :func:`~arraylayer.infer_dtype`, takes its
backend from its array arguments (else the active backend), and honours ``device=`` and the
default device."""

from __future__ import annotations

from typing import Any

from ..defaults import infer_dtype
from ..devices import canonical_device, default_device
from ..dtypes import DtypeLike
from ..promotion import check_ints_fit
from ..registry import backend_of

__all__ = ["asarray"]


def asarray(
    obj: Any, /, *, dtype: DtypeLike | None = None, device: str | None = None, copy: bool | None = None
) -> Any:
    """``obj`` (an array, a Python scalar or a nested sequence) as a native array.

    dtype: as given; else the array's own dtype; else the default dtype of the highest
    kind among the Python scalars (``asarray([1, 2.5])`` is the default float). Python ints
    that do not fit an integer dtype raise ScalarOverflowError on every backend.
    device: as given; else the array's own device; else :func:`default_device` (None: the
    framework's default).
    copy: True always copies; False never does (ValueError when a copy would be needed);
    None copies only when needed.
    """
    backend = backend_of(obj)
    resolved = infer_dtype(dtype, obj)
    if resolved.is_integer:
        check_ints_fit((obj,), resolved)
    is_array = isinstance(obj, backend.array_types)
    if device is None and not is_array:
        device = default_device()
    if copy is False:
        same_device = is_array and (device is None or backend.device_of(obj) == canonical_device(device))
        if not (is_array and backend.dtype_of(obj) is resolved and same_device):
            raise ValueError(
                f"asarray(copy=False) cannot return {type(obj).__name__} as a {resolved} array on "
                f"{device or 'its device'} without a copy; pass copy=None to allow one."
            )
        return obj
    result = backend.asarray(obj, resolved, device)
    if copy and (result is obj or (not is_array and hasattr(obj, "__dlpack__"))):
        result = backend.copy(result)
    return result
