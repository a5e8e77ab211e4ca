"""How ``arraylayer.Array`` stores a value: in-place operators (``a += b``) and the dtype rule
they share with item assignment (``a[k] = v``).

The rule: a value may be stored into an array when its promotion with the array gives the
array's dtype, or when it gives a wider float (complex) dtype and the array is float (complex):
that cast only rounds, as NumPy and torch allow. Integer narrowing and kind changes (float into
an integer array, complex into a float one) raise TypePromotionError and change nothing.

Where the result goes depends on whether the backend's arrays are mutable: NumPy arrays and torch
tensors are written in place (through views, as NumPy does), a tf.Variable is assigned, and JAX
arrays, TensorFlow tensors and dask arrays (immutable) are replaced by a new array.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arraylayer.runtime.backend import Backend
from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError, TypePromotionError, UnsupportedOperationError
from arraylayer.runtime.registry import backend_of

# Kinds within which narrowing only rounds (float64 -> float32, complex128 -> complex64).
_ROUNDING_KINDS: Final = frozenset({"float", "complex"})


def storable(target: Dtype, combined: Dtype) -> bool:
    """Whether a value whose promotion with a ``target`` array gives ``combined`` may be stored in
    that array: the same dtype, or a float/complex dtype of the target's kind (rounding only)."""
    return combined is target or (combined.category == target.category and target.category in _ROUNDING_KINDS)


def combine(function: Callable[[Any, Any], Any], before: Any, other: Any, symbol: str) -> Any:
    """The native array an Array holding ``before`` holds after ``before <symbol> other``: the
    out-of-place ``function(before, other)`` (so dtype, values and errors are the function's),
    stored with ``before``'s dtype and shape; ``before`` itself, written, on mutable backends.
    Any refusal comes before the write, so the array is unchanged by it."""
    backend = backend_of(before)
    prepare = _OPERANDS.get(backend.name)
    result = function(before, other) if prepare is None else function(*prepare(backend, before, other))
    dtype, combined = backend.dtype_of(before), backend.dtype_of(result)
    if combined is not dtype and not storable(dtype, combined):
        raise TypePromotionError(
            f"In-place {symbol} would change the left operand's dtype from {dtype} to {combined} (with "
            f"{describe(other)}); an in-place operator keeps the dtype and casts only within float or complex, "
            f"as NumPy refuses this cast. Write x = x {symbol[:-1]} y to get a new {combined} array, or cast y first."
        )
    if tuple(result.shape) != tuple(before.shape) and not _same_shape(result.shape, before.shape):
        raise ValueError(
            f"In-place {symbol} would change the left operand's shape from {tuple(before.shape)} to "
            f"{tuple(result.shape)} (broadcasting); write x = x {symbol[:-1]} y instead."
        )
    return _STORE.get(backend.name, _rebind)(backend, before, result, dtype)


def _same_shape(first: Any, second: Any) -> bool:
    """Whether two shapes can be the same, an unknown length (None while tracing, NaN in dask)
    matching any."""
    return len(first) == len(second) and all(
        a == b or a is None or b is None or a != a or b != b for a, b in zip(first, second, strict=True))


def check_assignment(target: Dtype, combined: Dtype, value: Any, native: Any) -> None:
    """TypePromotionError for a value (whose promotion with ``native`` gives ``combined``) that
    item assignment may not store into an array of ``target``."""
    if combined is not target and not storable(target, combined):
        raise TypePromotionError(
            f"Assigning {describe(value)} into {describe(native)} would need {combined}; item assignment keeps "
            f"the array's dtype and casts only within float or complex. Cast the value first "
            f"(arraylayer.astype(value, {str(target)!r}))."
        )


def check_writeable(backend: Backend, native: Any) -> None:
    """InvalidArgumentError for a read-only NumPy array (NumPy's own ValueError, said here)."""
    if backend.name == "numpy" and not native.flags.writeable:
        raise InvalidArgumentError(
            "This NumPy array is read-only (flags.writeable is False: a broadcast view, or memory NumPy does not "
            "own), so nothing can be written into it. Copy it first (arraylayer.Array(x.native.copy())), or "
            "write x = x + y to get a new array."
        )


def describe(value: Any) -> str:
    """``a Python float (2.5)``, ``an int8 array``: a value named for an error message."""
    if isinstance(value, (bool, int, float, complex)) and not hasattr(value, "dtype"):
        return f"a Python {type(value).__name__} ({value!r})"
    dtype = backend_of(value).dtype_of(value)
    return f"{'an' if dtype.name[0] in 'aeiou' else 'a'} {dtype} array"


# -- storing the result, per backend ------------------------------------------------------------------

def _into_numpy(backend: Backend, before: Any, result: Any, dtype: Dtype) -> Any:
    if not isinstance(before, backend.module.ndarray):  # a NumPy scalar (a 0-d result): no buffer to write
        return _rebind(backend, before, result, dtype)
    check_writeable(backend, before)
    before[...] = result  # a cast the rule allowed: rounding within float or complex
    return before


def torch_refused(error: RuntimeError, instead: str = "x = x + y") -> UnsupportedOperationError:
    """arraylayer's error for torch's refusal to write into a tensor, with the fix."""
    return UnsupportedOperationError(
        f"torch refuses to write into this tensor in place ({str(error).splitlines()[0]}). Write {instead} "
        f"to get a new tensor (a leaf that requires grad can also be updated under torch.no_grad(), as "
        f"optimisers do)."
    )


def _into_torch(backend: Backend, before: Any, result: Any, dtype: Dtype) -> Any:
    try:
        before.copy_(result)
    except RuntimeError as error:  # a leaf that requires grad, or a tensor whose elements overlap
        raise torch_refused(error) from None
    return before


def _into_tensorflow(backend: Backend, before: Any, result: Any, dtype: Dtype) -> Any:
    result = backend.astype(result, dtype)
    if hasattr(before, "assign"):  # a tf.Variable is assigned and keeps its identity
        before.assign(result)
        return before
    return result


def _rebind(backend: Backend, before: Any, result: Any, dtype: Dtype) -> Any:
    return backend.astype(result, dtype)


def _torch_operands(backend: Backend, before: Any, other: Any) -> tuple[Any, Any]:
    """The operands, as copies while autograd records them: the out-of-place function saves its
    inputs for the backward pass, and the write into ``before`` must not change what it saved."""
    if backend.module.is_grad_enabled() and (before.requires_grad or getattr(other, "requires_grad", False)):
        return before.clone(), other.clone() if hasattr(other, "clone") else other
    return before, other


# backend name -> prepare(backend, before, other) -> the operands the out-of-place function takes
_OPERANDS: Final[dict[str, Callable[[Backend, Any, Any], tuple[Any, Any]]]] = {"torch": _torch_operands}

# backend name -> store(backend, before, result, dtype) -> the native array the Array holds after;
# other backends (JAX, dask, third-party adapters) get a new array.
_STORE: Final[dict[str, Callable[[Backend, Any, Any, Dtype], Any]]] = {
    "numpy": _into_numpy,
    "torch": _into_torch,
    "tensorflow": _into_tensorflow,
}
