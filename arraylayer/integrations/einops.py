"""An einops backend for ``arraylayer.Array``: ``einops.rearrange(A, ...)``, ``reduce``,
``repeat``, ``pack``/``unpack`` and ``einsum`` on Arrays of every arraylayer backend, with
arraylayer's semantics and Arrays back.

einops finds a backend by walking the subclasses of ``einops._backends.AbstractBackend`` whose
``framework_name`` is an imported module; importing this module (done by arraylayer right after
einops is imported) defines ours. Every operation is the arraylayer function of that meaning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from einops._backends import AbstractBackend

import arraylayer as al
from arraylayer.array import Array

__all__ = ["ArrayBackend"]

_FLOATS = frozenset({"bfloat16", "float16", "float32", "float64"})


class ArrayBackend(AbstractBackend):
    """einops' view of ``arraylayer.Array``."""

    framework_name = "arraylayer"

    def is_appropriate_type(self, tensor: Any) -> bool:
        return isinstance(tensor, Array)

    def from_numpy(self, x: Any) -> Array:
        return Array(al.asarray(x))

    def to_numpy(self, x: Array) -> Any:
        import numpy as np

        return np.asarray(x)

    def arange(self, start: int, stop: int) -> Array:
        return Array(al.arange(start, stop))

    def shape(self, x: Array) -> tuple[int | None, ...]:
        return x.shape

    def reshape(self, x: Array, shape: Sequence[int]) -> Array:
        """A length einops computed from dask's unknown one (nan) is asked for as -1."""
        unknown = sum(1 for n in shape if n != n)
        return al.reshape(x, tuple(-1 if n != n else n for n in shape) if unknown == 1 else tuple(shape))

    def transpose(self, x: Array, axes: Sequence[int]) -> Array:
        return al.permute_dims(x, tuple(axes))

    def reduce(self, x: Array, operation: str, axes: Sequence[int]) -> Array:
        return getattr(al, operation)(x, axis=tuple(axes))

    def stack_on_zeroth_dimension(self, tensors: list[Array]) -> Array:
        return al.stack(tensors)

    def add_axis(self, x: Array, new_position: int) -> Array:
        return al.expand_dims(x, axis=new_position)

    def tile(self, x: Array, repeats: Sequence[int]) -> Array:
        return al.tile(x, tuple(repeats))

    def concat(self, tensors: list[Array], axis: int) -> Array:
        return al.concat(tensors, axis=axis)

    def is_float_type(self, x: Array) -> bool:
        return str(x.dtype) in _FLOATS

    def einsum(self, pattern: str, *x: Array) -> Array:
        """The framework's einsum on the operands promoted to their common dtype (arraylayer's
        rule), so the result dtype is the same on every backend."""
        dtype = al.result_type(*x)
        backend = al.backend_of(x[0].native)
        compute = _EINSUM_WIDER.get((backend.name, str(dtype)), dtype)
        natives = [al.astype(operand, compute).native for operand in x]
        result = Array(_EINSUM[backend.name](backend.module)(pattern, *natives))
        return result if compute == dtype else al.astype(result, dtype)


# Integer dtypes TensorFlow's Einsum has no kernel for: computed in int64 and cast back, which
# gives the same wrapped values (integer arithmetic modulo 2**bits).
_EINSUM_WIDER = {("tensorflow", name): "int64" for name in ("int8", "int16", "uint8", "uint16", "uint32", "uint64")}

# The framework's einsum, per arraylayer backend name.
_EINSUM = {
    "numpy": lambda module: module.einsum,
    "jax": lambda module: module.numpy.einsum,
    "torch": lambda module: module.einsum,
    "tensorflow": lambda module: module.einsum,
    "dask": lambda module: module.einsum,
}
