"""What every public function does between its arguments and a backend kernel.

* :func:`kernel` finds a backend's kernel for a dtype, or raises the UnsupportedDtypeError
  that names function, dtype, backend and version, before the framework is called.
* :func:`operand` turns one input into what the kernel contract promises (an array of the
  agreed dtype, or a Python scalar of that dtype's kind next to an array).
* :func:`not_defined` is the error for a dtype the Array API does not define a function for.
* :func:`index_result` casts index-valued kernel results to the default index dtype.

No function here is a decorator: each public function calls what it needs, inline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..backend import Backend
from ..defaults import default_int_dtype, infer_dtype
from ..dtypes import Dtype, as_dtype
from ..errors import UnsupportedDtypeError
from ..promotion import result_type
from ..registry import backend_of
from ..support import kernel_unsupported_dtypes

__all__ = [
    "kernel", "unsupported_error", "not_defined", "operand", "as_array", "index_dtype", "index_result",
    "native_dtype", "native_device", "array_input", "promoted_inputs", "PYTHON_SCALARS",
]

PYTHON_SCALARS: Final = (bool, int, float, complex)
# The Python type a scalar takes next to an array of a dtype of this kind: TensorFlow,
# for one, will not convert ``True`` for an int32 tensor, nor ``2`` for a complex one.
PYTHON_TYPE_OF_KIND: Final = {"bool": bool, "int": int, "uint": int, "float": float, "complex": complex}


def unsupported_error(name: str, dtype: Dtype, backend: Backend) -> UnsupportedDtypeError:
    """The error for a kernel that has no implementation for ``dtype`` on ``backend``."""
    others = [d for d in backend.valid_dtypes() if d.kind == dtype.kind and d not in kernel_unsupported_dtypes(backend, name)]
    hint = f"Cast to {' or '.join(others)} first, " if others else "Cast to a supported dtype first, "
    return UnsupportedDtypeError(
        f"{name} has no {dtype} kernel on the {backend.name} backend ({backend.framework} {backend.version}) "
        f"and no exact fallback. {hint}or use another backend (arraylayer.function_unsupported_dtypes("
        f"{name!r}) lists what is missing)."
    )


def kernel(backend: Backend, name: str, dtype: Dtype) -> Callable[..., Any]:
    """``backend``'s kernel ``name`` for inputs of ``dtype``; UnsupportedDtypeError where it has none."""
    if dtype in kernel_unsupported_dtypes(backend, name):
        raise unsupported_error(name, dtype, backend)
    return backend.kernels[name]


def not_defined(name: str, dtypes: tuple[Any, ...], takes: str) -> UnsupportedDtypeError:
    """The error for inputs of a dtype the function is not defined for (on any backend)."""
    shown = ", ".join(str(d) for d in dtypes)
    return UnsupportedDtypeError(
        f"{name} is not defined for {shown} inputs: it takes {takes}. Convert first, e.g. "
        f"arraylayer.astype(x, ...)."
    )


def as_array(backend: Backend, x: Any, dtype: Dtype) -> Any:
    """``x`` (an array of ``backend`` or a Python scalar/sequence) as an array of ``dtype``."""
    if isinstance(x, backend.array_types):
        return x if backend.dtype_of(x) is dtype else backend.astype(x, dtype)
    return backend.asarray(x, dtype)


def operand(backend: Backend, x: Any, dtype: Dtype, scalar_ok: bool) -> Any:
    """One input of a binary kernel: an array of ``dtype``, or (when ``scalar_ok``: the other
    input is an array) a Python scalar converted to the Python type of ``dtype``'s kind."""
    if scalar_ok and x.__class__ in SCALAR_CLASSES:
        return PYTHON_TYPE_OF_KIND[dtype.kind](x)
    return as_array(backend, x, dtype)


SCALAR_CLASSES: Final = frozenset(PYTHON_SCALARS)


def index_dtype() -> Dtype:
    """The dtype of index-valued results (argmax, nonzero, argsort, unique counts ...): the
    default int dtype, the same on every backend (int32 out of the box; int64 with
    ``use_default_int_dtype("int64")`` for arrays of more than 2**31 - 1 elements)."""
    return default_int_dtype()


def index_result(backend: Backend, result: Any) -> Any:
    """An index-valued kernel result in the default index dtype (no copy when it already is)."""
    return backend.astype(result, index_dtype())


def array_input(x: Any) -> tuple[Backend, Any, Dtype]:
    """The backend of ``x``, ``x`` as an array of it (Python scalars and nested sequences
    become arrays of their inferred dtype), and its dtype."""
    backend = backend_of(x)
    if not isinstance(x, backend.array_types):
        x = backend.asarray(x, infer_dtype(None, x))
    return backend, x, backend.dtype_of(x)


def promoted_inputs(*xs: Any) -> tuple[Backend, Dtype, list[Any]]:
    """The backend, the promoted dtype (active policy) and the inputs cast to it."""
    backend = backend_of(*xs)
    dtype = result_type(*xs)
    return backend, dtype, [as_array(backend, x, dtype) for x in xs]


def native_dtype(backend: Backend, dtype: Any) -> Any:
    """The framework's dtype object for a resolved dtype (validated for this backend)."""
    return backend.as_native_dtype(dtype if dtype.__class__ is Dtype else as_dtype(dtype))


def native_device(backend: Backend, device: str | None) -> Any:
    """The framework's device object for an arraylayer device string (None: framework default)."""
    return None if device is None else backend.native_device(device)
