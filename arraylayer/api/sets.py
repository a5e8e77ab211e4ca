"""Set functions: ``isin``, ``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``.

Inputs are flattened, as the Array API says; NaNs are each distinct. Indices and counts have
the default index dtype on every backend. Results are named tuples with the standard's
field names. Complex inputs (which torch and TensorFlow cannot take) become one integer code
per element, from the unique real parts and the unique imaginary parts; the unique codes give
the first occurrences, whose values are returned: ordered by real part, then imaginary part,
signed zeros equal, a value with a NaN part distinct, on every backend.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer.api.dispatch import array_input, index_result, kernel

Array = Any

__all__ = ["isin", "UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]


class UniqueAllResult(NamedTuple):
    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    values: Array
    inverse_indices: Array


_PART = {Dtype("complex64"): Dtype("float32"), Dtype("complex128"): Dtype("float64")}
# the fields of each function's result, as positions in unique_all's
_FIELDS = {"unique_all": (0, 1, 2, 3), "unique_counts": (0, 3), "unique_inverse": (0, 2), "unique_values": (0,)}


def _unique(name: str, x: Array) -> tuple[Any, tuple[Array, ...]]:
    backend, x, dtype = array_input(x)
    if dtype in _PART:
        every = _complex_unique_all(name, backend, x, dtype)
        return backend, tuple(every[i] for i in _FIELDS[name])
    result = kernel(backend, name, dtype)(x)
    return backend, (result,) if name == "unique_values" else result


def _complex_unique_all(name: str, backend: Any, x: Any, dtype: Dtype) -> tuple[Any, Any, Any, Any]:
    """unique_all of a complex array: values, first occurrences, inverse (x's shape), counts."""
    ops = backend.kernels
    flat = ops["reshape"](x, (-1,), copy=None)
    part = _PART[dtype]
    _, real_rank = kernel(backend, "unique_inverse", part)(ops["real"](flat))
    imag_values, imag_rank = kernel(backend, "unique_inverse", part)(ops["imag"](flat))
    size, width = flat.shape[0], imag_values.shape[0]
    width = width if isinstance(width, int) else size  # dask: lengths unknown until computed
    code = Dtype("int64") if Dtype("int64") in backend.valid_dtypes() else Dtype("int32")
    if size * width > (2**63 if code == "int64" else 2**31) - 1:
        raise InvalidArgumentError(f"{name} of a complex array of {size} elements needs codes beyond "
                                   f"{code} here; enable 64-bit integers or pass fewer elements.")
    codes = ops["add"](ops["multiply"](backend.astype(real_rank, code), backend.asarray(width, code)),
                       backend.astype(imag_rank, code))
    _, first, inverse, counts = kernel(backend, "unique_all", code)(codes)
    values = ops["take"](flat, first, axis=0)
    return values, first, ops["reshape"](inverse, tuple(x.shape), copy=None), counts


def unique_all(x: Array, /) -> UniqueAllResult:
    """The sorted unique values, the index of each one's first occurrence, the inverse indices
    (x's shape) and the counts."""
    backend, (values, indices, inverse, counts) = _unique("unique_all", x)
    return UniqueAllResult(values, index_result(backend, indices), index_result(backend, inverse),
                           index_result(backend, counts))


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The sorted unique values and how often each occurs."""
    backend, (values, counts) = _unique("unique_counts", x)
    return UniqueCountsResult(values, index_result(backend, counts))


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The sorted unique values and, for each element of x, the index of its value."""
    backend, (values, inverse) = _unique("unique_inverse", x)
    return UniqueInverseResult(values, index_result(backend, inverse))


def unique_values(x: Array, /) -> Array:
    """The sorted unique values of x."""
    _, (values,) = _unique("unique_values", x)
    return values


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """For each element of x1, whether it equals some element of x2 (``equal``'s promotion and
    comparison: NaN is in nothing); the shape of x1 (0-d for a scalar x1), bool."""
    from arraylayer.api.dispatch import promoted_inputs

    backend, dtype, (a1, a2) = promoted_inputs(x1, x2)
    flat = backend.kernels["reshape"](a2, (-1,), copy=None)
    equal = kernel(backend, "equal", dtype)(backend.kernels["expand_dims"](a1, axis=-1), flat)
    found = kernel(backend, "any", Dtype("bool"))(equal, axis=-1, keepdims=False)
    if not isinstance(found, backend.array_types):  # numpy reduces a 0-d x1 to a scalar
        found = backend.asarray(found, Dtype("bool"))
    return kernel(backend, "logical_not", Dtype("bool"))(found) if invert else found
