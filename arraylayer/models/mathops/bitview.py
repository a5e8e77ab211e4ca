"""``view``: an array's bytes read as another dtype (NumPy's ``x.view(dtype)``, keras.ops' ``view``),
with one shape rule on every backend.

The bytes are reinterpreted, never converted: ``view(float32 array, "int32")`` gives the IEEE bit
patterns. Where the item sizes differ, the last axis changes length by their ratio, as in NumPy
(``(2, 4)`` float32 as uint8 is ``(2, 16)``), so it must divide; a 0-d array keeps its item size.
Each framework's own reinterpretation does the work (``ndarray.view``, ``Tensor.view``,
``jax.lax.bitcast_convert_type``, ``tf.bitcast``, dask's ``view``); a complex array is its real and
imaginary parts side by side and a bool array its 0/1 bytes, so those read the same everywhere too
(JAX and TensorFlow cannot reinterpret them). Viewing as bool is refused: bytes other than 0 and 1
are no booleans (compare with ``!= 0`` instead). The formats narrower than a byte (int4, float4, ...)
are stored differently by each framework and are refused; so are the float8 formats on TensorFlow,
whose ``bitcast`` has no kernel for them (:func:`arraylayer.lowp.encode` gives their codes there).
The result is a new array where the framework cannot make a view.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arraylayer.api import data_types, manipulation
from arraylayer.api.dispatch import array_input, native_dtype
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError, UnsupportedDtypeError
from arraylayer.models.mathops.tensors import view_as_complex, view_as_real
from arraylayer.runtime.backend import Backend

Array = Any

__all__ = ["view"]

_PARTS: Final = {"complex64": "float32", "complex128": "float64"}  # a complex dtype -> the dtype of its parts


def _numpy(backend: Backend, x: Any, target: Any, ratio: tuple[int, int]) -> Any:
    import numpy as np

    return (x if ratio == (1, 1) else np.ascontiguousarray(x)).view(target)


def _torch(backend: Backend, x: Any, target: Any, ratio: tuple[int, int]) -> Any:
    return (x if ratio == (1, 1) else x.contiguous()).view(target)


def _dask(backend: Backend, x: Any, target: Any, ratio: tuple[int, int]) -> Any:
    if ratio[1] > ratio[0]:  # dask views each chunk: the last axis in one chunk, so that it divides
        x = x.rechunk({len(x.shape) - 1: -1})
    return x.view(target)


def _trailing(cast: Callable[[Any, Any], Any]) -> Callable[[Backend, Any, Any, tuple[int, int]], Any]:
    """The NumPy shape rule over a bitcast that adds (narrower target) or takes (wider target) a
    trailing axis of the ratio's length: JAX's and TensorFlow's."""

    def run(backend: Backend, x: Any, target: Any, ratio: tuple[int, int]) -> Any:
        source_size, target_size = ratio
        shape = tuple(int(s) for s in x.shape)
        if source_size > target_size:
            return manipulation.reshape(cast(x, target), (*shape[:-1], shape[-1] * source_size // target_size))
        if source_size < target_size:
            x = manipulation.reshape(x, (*shape[:-1], shape[-1] * source_size // target_size,
                                         target_size // source_size))
        return cast(x, target)

    return run


def _jax_cast(x: Any, target: Any) -> Any:
    import jax

    return jax.lax.bitcast_convert_type(x, target)


def _tf_cast(x: Any, target: Any) -> Any:
    import tensorflow as tf

    return tf.bitcast(x, target)


_VIEWS: Final = {"numpy": _numpy, "torch": _torch, "dask": _dask, "jax": _trailing(_jax_cast),
                 "tensorflow": _trailing(_tf_cast)}
_NO_FLOAT8: Final = frozenset({"tensorflow"})  # whose bitcast has no kernel for the float8 formats


def _check(backend: Backend, source: Dtype, target: Dtype, shape: tuple[int, ...]) -> None:
    for d in (source, target):
        if d.bits < 8:
            raise UnsupportedDtypeError(f"view: {d.name} holds {d.bits} bits per element, stored differently by each "
                                        f"framework, so its bytes have no one meaning; use astype, or "
                                        f"arraylayer.lowp.encode for its codes.")
        if d.is_low_precision and backend.name in _NO_FLOAT8:
            raise UnsupportedDtypeError(f"view: {backend.name}'s bitcast has no kernel for {d.name}; "
                                        f"arraylayer.lowp.encode(x, {d.name!r}) gives the uint8 codes.")
    if target.is_bool and not source.is_bool:
        raise InvalidDtypeError(f"view: {source.name} bytes as bool would make booleans of bytes other than 0 and 1; "
                                f"compare instead (x != 0).")
    if source.itemsize != target.itemsize:
        if not shape:
            raise InvalidArgumentError(f"view: a 0-d {source.name} array keeps its item size; {target.name} has "
                                       f"{target.itemsize} bytes, not {source.itemsize} (reshape it to (1,) first).")
        if shape[-1] * source.itemsize % target.itemsize:
            raise InvalidArgumentError(f"view: the last axis of shape {shape} holds {shape[-1] * source.itemsize} bytes "
                                       f"of {source.name}, which {target.name}'s {target.itemsize} do not divide.")


def view(x: Array, dtype: Any = None) -> Array:
    """``x``'s bytes read as ``dtype`` (None: x as it is); the last axis scaled by the ratio of the item
    sizes where they differ (NumPy's rule)."""
    backend, x, source = array_input(x)
    if dtype is None:
        return x
    target = as_dtype(dtype)
    native_dtype(backend, target)  # a dtype this backend can hold
    shape = tuple(int(s) for s in x.shape)
    _check(backend, source, target, shape)
    if source == target:
        return x
    if not shape:  # the same item size (checked): the view of its one element
        return manipulation.reshape(view(manipulation.reshape(x, (1,)), target), ())
    if source.is_bool:  # its bytes are 0 and 1: the same bytes as uint8 on every framework
        return view(data_types.astype(x, Dtype("uint8")), target)
    if source.name in _PARTS:  # real and imaginary parts side by side
        parts = view_as_real(x)
        return view(manipulation.reshape(parts, (*shape[:-1], 2 * shape[-1])), target)
    if target.name in _PARTS:
        parts = view(x, _PARTS[target.name])
        part_shape = tuple(int(s) for s in parts.shape)
        return view_as_complex(manipulation.reshape(parts, (*part_shape[:-1], part_shape[-1] // 2, 2)))
    ratio = (source.itemsize, target.itemsize)
    return _VIEWS.get(backend.name, _numpy)(backend, x, native_dtype(backend, target), ratio)
