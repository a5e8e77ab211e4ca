"""keras.ops' math names ``cdist``, ``extract_sequences``, ``view_as_complex`` and ``view_as_real``,
over arraylayer's functions (lazy on dask, differentiable, one dtype on every backend).

``cdist`` is torch.cdist: the p-norm distance of every row pair, from ``linalg.vector_norm`` of the
broadcast differences (so p=0 counts differing coordinates, p=inf takes the largest). ``view_as_complex``
builds each complex number from its two parts exactly (a backend kernel placing the parts: a multiply
by 1j would turn an infinite part's 0 * inf into NaN); the results are new arrays, not views.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import data_types, elementwise, indexing, linalg, manipulation
from arraylayer.api.dispatch import array_input
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError, UnsupportedOperationError
from arraylayer.models.mathops.scatter import _arange_like_int

Array = Any

__all__ = ["cdist", "extract_sequences", "view_as_complex", "view_as_real"]

_COMPLEX_OF: Final = {"float32": "complex64", "float64": "complex128"}


def cdist(x1: Array, x2: Array, /, p: float = 2.0) -> Array:
    """The p-norm distance between each row of ``x1`` (..., P, M) and each row of ``x2`` (..., R, M):
    shape (..., P, R), leading axes broadcast (torch.cdist). Real floating result (integers: the
    default float)."""
    _, x1, d1 = array_input(x1)
    _, x2, d2 = array_input(x2)
    if p.__class__ not in (int, float) or not p >= 0:
        raise InvalidArgumentTypeError(f"cdist: p={p!r} must be a non-negative number (0, 1, 2, inf, ...).")
    if len(x1.shape) < 2 or len(x2.shape) < 2 or x1.shape[-1] != x2.shape[-1]:
        raise InvalidArgumentError(f"cdist needs x1 (..., P, M) and x2 (..., R, M) with one M; got shapes "
                                   f"{tuple(x1.shape)} and {tuple(x2.shape)}.")
    if "bool" in (d1.category, d2.category):
        raise InvalidDtypeError("cdist takes numbers; got bool (cast to a float dtype first).")
    diff = elementwise.subtract(manipulation.expand_dims(x1, axis=-2), manipulation.expand_dims(x2, axis=-3))
    return linalg.vector_norm(diff, axis=-1, ord=float(p))


def extract_sequences(x: Array, /, sequence_length: int, sequence_stride: int) -> Array:
    """The windows of ``sequence_length`` along x's last axis, one every ``sequence_stride``:
    shape (..., 1 + (n - sequence_length) // sequence_stride, sequence_length), x's dtype
    (tf.signal.frame without padding)."""
    _, x, _ = array_input(x)
    length = arguments.integer(sequence_length, "sequence_length")
    stride = arguments.integer(sequence_stride, "sequence_stride")
    if len(x.shape) == 0 or length < 1 or stride < 1 or length > x.shape[-1]:
        raise InvalidArgumentError(f"extract_sequences needs an array of at least one axis, sequence_length in [1, "
                                   f"{x.shape[-1] if len(x.shape) else 0}] and sequence_stride >= 1; got shape "
                                   f"{tuple(x.shape)}, {sequence_length!r} and {sequence_stride!r}.")
    count = 1 + (int(x.shape[-1]) - length) // stride
    starts = elementwise.multiply(manipulation.reshape(_arange_like_int(x, count), (count, 1)), stride)
    positions = manipulation.reshape(elementwise.add(starts, _arange_like_int(x, length)), (count * length,))
    frames = indexing.take(x, positions, axis=len(x.shape) - 1)
    return manipulation.reshape(frames, (*x.shape[:-1], count, length))


def view_as_complex(x: Array, /) -> Array:
    """The complex array whose parts are x's last axis of 2 (real, imag): float32 -> complex64,
    float64 -> complex128 (integers: the default float's); torch.view_as_complex's values."""
    backend, x, dtype = array_input(x)
    if dtype.category in ("int", "uint"):
        dtype = default_float_dtype()
        x = data_types.astype(x, dtype)
    if dtype.name not in _COMPLEX_OF:
        raise InvalidDtypeError(f"view_as_complex takes float32 or float64 parts; got {dtype} (cast to float32 first).")
    if len(x.shape) == 0 or x.shape[-1] != 2:
        raise InvalidArgumentError(f"view_as_complex needs a last axis of 2 (real, imag); got shape {tuple(x.shape)}.")
    kernels = backend.nn_kernels
    if kernels is None or not hasattr(kernels, "complex_from_parts"):
        raise UnsupportedOperationError(f"view_as_complex has no kernel for the {backend.name} backend; move the "
                                        f"array to numpy, jax, torch, tensorflow or dask first (arraylayer.to_backend).")
    return kernels.complex_from_parts(x[..., 0], x[..., 1])


def view_as_real(x: Array, /) -> Array:
    """x's real and imaginary parts stacked on a new last axis of 2 (complex64 -> float32,
    complex128 -> float64), torch.view_as_real's values."""
    _, x, dtype = array_input(x)
    if dtype.category != "complex":
        raise InvalidDtypeError(f"view_as_real takes complex arrays; got {dtype}.")
    return manipulation.stack([elementwise.real(x), elementwise.imag(x)], axis=-1)


