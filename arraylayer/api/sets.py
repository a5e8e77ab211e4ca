"""Set functions: ``isin``, ``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``.

Inputs are flattened, as the Array API says; NaNs are each distinct. Indices and counts have
the default index dtype on every backend. Results are named tuples with the standard's
field names.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..dtypes import Dtype
from .dispatch import index_result, kernel
from .searching import _real

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


def _unique(name: str, x: Array) -> tuple[Any, tuple[Array, ...]]:
    backend, x, dtype = _real(name, x)
    result = kernel(backend, name, dtype)(x)
    return backend, result


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
    backend, x, dtype = _real("unique_values", x)
    return kernel(backend, "unique_values", dtype)(x)


def isin(x1: Array | int, x2: Array | int, /, *, invert: bool = False) -> Array:
    """For each element of x1, whether it equals some element of x2 (``equal``'s promotion and
    comparison: NaN is in nothing); the shape of x1 (0-d for a scalar x1), bool."""
    from .dispatch import promoted_inputs

    backend, dtype, (a1, a2) = promoted_inputs(x1, x2)
    flat = backend.kernels["reshape"](a2, (-1,), copy=None)
    equal = kernel(backend, "equal", dtype)(backend.kernels["expand_dims"](a1, axis=-1), flat)
    found = kernel(backend, "any", Dtype("bool"))(equal, axis=-1, keepdims=False)
    if not isinstance(found, backend.array_types):  # numpy reduces a 0-d x1 to a scalar
        found = backend.asarray(found, Dtype("bool"))
    return kernel(backend, "logical_not", Dtype("bool"))(found) if invert else found
