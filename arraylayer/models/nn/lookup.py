"""Embedding lookup: rows of a table at integer ids, checked to lie in the table."""

from __future__ import annotations

from typing import Any

from arraylayer.api.indexing import take
from arraylayer.api.manipulation import reshape
from arraylayer.dtypes import as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.runtime.registry import backend_of
from arraylayer.models.nn.common import _array, _fused, _in_range, _native


def _id_error(bad: int, rows: int) -> InvalidArgumentError:
    return InvalidArgumentError(f"nn.embedding: id {bad} is not a row of the table of {rows} rows; "
                                f"ids must lie in [0, {rows}).")


def embedding(table: Any, ids: Any) -> Any:
    """Rows of ``table`` (vocabulary, features) at integer ``ids`` of any shape: ids.shape + (features,).
    Ids outside [0, vocabulary) raise InvalidArgumentError (a negative id is no row): now where their
    values are known, when computed on dask."""
    if not (hasattr(ids, "dtype") and hasattr(ids, "shape")):
        raise InvalidArgumentTypeError(f"nn.embedding: ids is {type(ids).__name__}, not an array; pass an integer "
                                       f"array, e.g. arraylayer.asarray(ids, dtype='int32').")
    kind = as_dtype(ids.dtype)
    if kind.category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.embedding takes integer ids; got {kind}.")
    if _array(table, "embedding", "table").ndim != 2:
        raise InvalidArgumentError(f"nn.embedding takes a 2-d table (vocabulary, features); got shape {tuple(table.shape)}.")
    ids = _in_range(ids, int(table.shape[0]), _id_error)  # al.take would read a negative id from the end
    native, rewrap = _native(table)
    kernel = _fused(native, as_dtype(native.dtype), "embedding")
    native_ids = _native(ids)[0]
    if kernel is not None and backend_of(native_ids) is backend_of(native):  # the framework's own gather
        return rewrap(kernel(native, native_ids))
    rows = take(table, reshape(ids, (-1,)), axis=0)
    return reshape(rows, (*tuple(ids.shape), int(table.shape[1])))


