"""Set functions: ``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values``.

Inputs are flattened, as the Array API says; NaNs are each distinct. Indices and counts have
the default index dtype on every backend. Results are named tuples with the standard's
field names.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .dispatch import index_result, kernel
from .searching import _real

Array = Any

__all__ = ["UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "unique_all", "unique_counts",
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
