"""Creation kernels. ``device`` is a ``tf.device`` name or None (TF's own placement).

TF's ``range`` lacks 8/16-bit and unsigned integers, ``eye`` has no diagonal offset,
``band_part`` no uint16 kernel nor a k below the diagonal, and ``meshgrid`` multiplies
(no bool kernel): the kernels here build the same values from ops every dtype has.
"""

from __future__ import annotations

import math
from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._common import BOOL, placed, scalar
from arraylayer.kernels.tensorflow._high_rank import select

_INT64 = tf.int64
_FLOAT64 = tf.float64


def zeros(shape: tuple[int, ...], *, dtype: Any, device: Any = None) -> Any:
    return placed(device, tf.zeros, shape, dtype)


def ones(shape: tuple[int, ...], *, dtype: Any, device: Any = None) -> Any:
    return placed(device, tf.ones, shape, dtype)


def empty(shape: tuple[int, ...], *, dtype: Any, device: Any = None) -> Any:
    """TF cannot leave memory uninitialised: zeros."""
    return placed(device, tf.zeros, shape, dtype)


def full(shape: tuple[int, ...], fill_value: Any, *, dtype: Any, device: Any = None) -> Any:
    return placed(device, _full, shape, fill_value, dtype)


def _full(shape: tuple[int, ...], fill_value: Any, dtype: Any) -> Any:
    return tf.fill(shape, scalar(fill_value, dtype))


def arange(start: Any, /, stop: Any = None, step: Any = 1, *, dtype: Any, device: Any = None) -> Any:
    """NumPy's values: ``ceil((stop - start) / step)`` elements ``start + i * step`` (TF's
    ``range`` has no 8/16-bit or unsigned kernels).

    Integers are computed in int64 and cast (wrapping alike, so exact), uint64 as unsigned
    offsets from ``start``, floats in float64 and rounded once.
    """
    if stop is None:
        start, stop = 0, start
    if isinstance(start, int) and isinstance(stop, int) and isinstance(step, int):
        length = -((start - stop) // step)
    else:
        length = math.ceil((stop - start) / step)
    return placed(device, _arange, start, step, max(length, 0), dtype)


def _arange(start: Any, step: Any, length: int, dtype: Any) -> Any:
    index = tf.range(length, dtype=_INT64)
    if dtype is tf.uint64:
        offsets = tf.multiply(tf.cast(index, dtype), abs(step))
        return (tf.add if step > 0 else tf.subtract)(tf.constant(start, dtype), offsets)
    if dtype.is_integer or dtype is BOOL:
        return tf.cast(tf.add(tf.multiply(index, step), start), dtype)
    return tf.cast(tf.add(tf.multiply(tf.cast(index, _FLOAT64), step), start), dtype)


def linspace(start: Any, stop: Any, /, num: int, *, dtype: Any, device: Any = None, endpoint: bool = True) -> Any:
    """NumPy's recipe in float64 (complex128 for complex): ``start + i * step``, the last
    value exactly ``stop`` when ``endpoint``; integer dtypes take the floor."""
    return placed(device, _linspace, start, stop, num, dtype, endpoint)


def _linspace(start: Any, stop: Any, num: int, dtype: Any, endpoint: bool) -> Any:
    work = tf.complex128 if dtype.is_complex or isinstance(start, complex) or isinstance(stop, complex) else _FLOAT64
    divisions = (num - 1 if endpoint else num) or 1
    step = (stop - start) / divisions
    values = tf.add(tf.multiply(tf.cast(tf.range(num), work), step), start)
    if endpoint and num > 1:
        values = tf.concat([values[:-1], tf.constant([stop], work)], 0)
    if dtype.is_integer:
        values = tf.math.floor(values)
    return tf.cast(values, dtype)


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: Any, device: Any = None) -> Any:
    return placed(device, _eye, n_rows, n_rows if n_cols is None else n_cols, k, dtype)


def _eye(n_rows: int, n_cols: int, k: int, dtype: Any) -> Any:
    on_diagonal = tf.equal(tf.range(n_rows)[:, None] + k, tf.range(n_cols)[None, :])
    return tf.cast(on_diagonal, dtype)


def tril(x: Any, /, *, k: int = 0) -> Any:
    """Keeps ``j <= i + k`` (a mask: ``band_part`` has neither uint16 nor k < 0)."""
    rows, cols = _indices(x)
    return select(rows + k >= cols, x, tf.zeros_like(x))


def triu(x: Any, /, *, k: int = 0) -> Any:
    rows, cols = _indices(x)
    return select(rows + k <= cols, x, tf.zeros_like(x))


def _indices(x: Any) -> tuple[Any, Any]:
    """Row and column indices of the last two axes, shaped to broadcast against them."""
    shape = tf.shape(x)
    return tf.range(shape[-2])[:, None], tf.range(shape[-1])[None, :]


def meshgrid(*arrays: Any, indexing: str = "xy") -> list[Any]:
    """Each 1-d array reshaped along its own axis and broadcast (TF's meshgrid multiplies,
    which bool cannot)."""
    count = len(arrays)
    if not count:
        return []
    axes = list(range(count))
    if indexing == "xy" and count > 1:
        axes[:2] = [1, 0]  # the first array varies along columns, the second along rows
    sizes: list[Any] = [None] * count
    for axis, array in zip(axes, arrays, strict=True):
        sizes[axis] = tf.size(array)
    shape = tf.stack(sizes)
    grids = []
    for axis, array in zip(axes, arrays, strict=True):
        view = [1] * count
        view[axis] = -1
        grids.append(tf.broadcast_to(tf.reshape(array, view), shape))
    return grids
