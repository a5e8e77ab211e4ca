"""Element-wise special functions (``rsqrt``, ``erf``, ``erfc``, ``erfinv``) and ``logdet``.

The result dtype is the input's floating dtype; integer and bool input computes in the default
float (as ``sqrt`` does); complex input is refused. float16, bfloat16 and the float8/6/4 formats
compute in float32 and round once to their own dtype (the low-precision computation rule of
docs/low_precision.rst), so every backend gives the same bits there; float32 and float64 use the
framework's own function (SciPy's on NumPy and dask), equal across backends to a few ulp.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.api import data_types, elementwise, linalg
from arraylayer.api.dispatch import array_input
from arraylayer.dtypes import Dtype
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import InvalidDtypeError, UnsupportedOperationError

Array = Any

#: the dtypes computed in float32 and rounded once to their own
_WIDENED: Final = frozenset({"float16", "bfloat16"})
_FLOAT32: Final = Dtype("float32")


def _floating(name: str, x: Array) -> tuple[Any, Array, Dtype]:
    """(backend, x in the dtype it computes in, the result dtype)."""
    backend, x, dtype = array_input(x)
    if dtype.category == "complex":
        raise InvalidDtypeError(f"{name} takes real arrays; got {dtype}. Take the real part first "
                                f"(arraylayer.real(x)).")
    if dtype.category != "float":
        dtype = default_float_dtype()
        x = data_types.astype(x, dtype)
    if dtype.is_low_precision or dtype.name in _WIDENED:
        return backend, data_types.astype(x, _FLOAT32), dtype
    return backend, x, dtype


def _rounded(y: Array, dtype: Dtype) -> Array:
    """y (float32 for the widened dtypes) in the result dtype."""
    return y if array_input(y)[2] == dtype else data_types.astype(y, dtype)


def _native(name: str, x: Array) -> Array:
    """The backend's nn kernel ``name`` (erf, erfc, erfinv) on x, in x's result dtype."""
    backend, wide, dtype = _floating(name, x)
    kernels = backend.nn_kernels
    if kernels is None or not hasattr(kernels, name):
        raise UnsupportedOperationError(f"{name} has no kernel for the {backend.name} backend; move the array to "
                                        f"numpy, jax, torch, tensorflow or dask first (arraylayer.to_backend).")
    return _rounded(getattr(kernels, name)(wide), dtype)


def rsqrt(x: Array, /) -> Array:
    """1 / sqrt(x), element-wise (inf at 0, NaN below)."""
    _, wide, dtype = _floating("rsqrt", x)
    return _rounded(elementwise.divide(1.0, elementwise.sqrt(wide)), dtype)


def erf(x: Array, /) -> Array:
    """The error function 2/sqrt(pi) * integral of exp(-t**2) from 0 to x."""
    return _native("erf", x)


def erfc(x: Array, /) -> Array:
    """The complementary error function 1 - erf(x), accurate where erf(x) is near 1."""
    return _native("erfc", x)


def erfinv(x: Array, /) -> Array:
    """The inverse of :func:`erf` on [-1, 1] (+-inf at +-1, NaN outside)."""
    return _native("erfinv", x)


def logdet(x: Array, /) -> Array:
    """log |det x| of each square matrix of x (shape (..., n, n)), from ``linalg.slogdet``.

    keras.ops.logdet's value on its NumPy and JAX backends: for the positive-definite matrices it is
    meant for, log det x; for a negative determinant log |det x| (``torch.logdet`` gives NaN
    there); -inf for a singular matrix. Real floating result (integer input: the default float).
    """
    return linalg.slogdet(x).logabsdet


__all__ = ["rsqrt", "erf", "erfc", "erfinv", "logdet"]

