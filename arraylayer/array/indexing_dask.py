"""Standard indexing of dask arrays, lazy by construction (``arraylayer.Array`` keys on dask).

A key is applied without computing anything: basic keys and boolean masks are dask's own; keys
of concrete index arrays (NumPy arrays, lists) resolve NumPy's positions on the host (no data is
read); keys with dask integer arrays are gathered lazily, one dask take on the flat index of the
indexed axes, with out-of-bounds indices raising OutOfBoundsIndexError when the graph runs (as
``take`` does). The keys dask cannot apply lazily raise IndexError naming an alternative.
"""

from __future__ import annotations

import math
from typing import Any, Final

from arraylayer.errors import unknown_lengths_error
from arraylayer.array.indexing import check_integer_bounds, is_basic, numpy_key, positions, to_host

#: the largest dask array whose concrete advanced keys are resolved through NumPy's positions (an
#: int64 grid of this many elements, 512 MiB); larger arrays take the lazy route of dask keys
DASK_POSITIONS_LIMIT: Final = 2**26


def _is_dask(k: Any) -> bool:
    return type(k).__module__.startswith("dask.")


def _parts(key: Any) -> tuple[Any, ...]:
    return key if key.__class__ is tuple else (key,)


def _is_mask(k: Any) -> bool:
    return str(getattr(k, "dtype", "")) == "bool" and getattr(k, "ndim", 0) > 0


def _lazy_mask(key: Any) -> bool:
    """Whether ``key`` holds a dask boolean array of one or more dimensions (``x[x > 0]``), which
    dask applies lazily and which would be as large as the data to compute."""
    return any(_is_dask(k) and _is_mask(k) for k in _parts(key))


def _lazy_indices(key: Any) -> bool:
    """Whether ``key`` holds a dask array that is not a mask of one or more dimensions (integer
    indices or a 0-d mask): their values are unknown until computed."""
    return any(_is_dask(k) and not _is_mask(k) for k in _parts(key))


def dask_getitem(x: Any, key: Any) -> Any:
    """dask indexing with NumPy's results and errors, computing nothing. Basic keys are dask's
    own (bounds checked here); boolean dask masks are dask's own (the result's length is unknown
    until computed); dask integer arrays are gathered lazily (:func:`_gather`); concrete index
    arrays gather NumPy's positions of the flattened array (dask has no multi-array indexing)."""
    if not all(n == n for n in x.shape):  # nan: a length unknown until computed
        _check_unknown_axes(x, key)
    if is_basic(key):
        check_integer_bounds(x.shape, key)
        return x[_canonical_slices(tuple(x.shape), key)]
    if _lazy_mask(key):
        return _masked(x, key)
    if _lazy_indices(key):
        return _lazy_getitem(x, key)
    key = numpy_key(key, to_host)  # concrete already: nothing to compute
    if not x.size <= DASK_POSITIONS_LIMIT:
        return _gather(x, key)
    selected = positions(tuple(x.shape), key)
    return x.reshape(-1)[selected.reshape(-1)].reshape(selected.shape)


def _check_unknown_axes(x: Any, key: Any) -> None:
    """Refuse, with the fix, a key that selects along an axis of unknown length (dask can select
    there only with ``:`` or a dask mask)."""
    parts = [k for k in _expanded(_parts(key), x.ndim) if k is not None]
    for k, n in zip(parts, x.shape, strict=False):
        if n != n and not (k == slice(None) if k.__class__ is slice else _is_dask(k) and _is_mask(k)):
            raise unknown_lengths_error(f"indexing with {key!r}", x.shape)


def _lazy_getitem(x: Any, key: Any) -> Any:
    """``x[key]`` for a key with dask index arrays; a 0-d dask mask alone becomes a new axis of
    length one masked lazily (its length unknown until computed), as NumPy's ``x[True]``."""
    parts = _parts(key)
    zero_d = [i for i, k in enumerate(parts) if _is_dask(k) and getattr(k, "ndim", None) == 0 and k.dtype == bool]
    if not zero_d:
        return _gather(x, key)
    if len(zero_d) > 1 or any(_is_advanced(k) for i, k in enumerate(parts) if i != zero_d[0]):
        raise IndexError("dask cannot combine a 0-d boolean dask array with other array indices lazily; "
                         "index with the 0-d mask and the other arrays in two steps.")
    at = zero_d[0]
    widened = dask_getitem(x, parts[:at] + (None,) + parts[at + 1:])
    axis = sum(1 for k in parts[:at] if k is not Ellipsis and k.__class__ is not int)  # the new axis
    if _ellipsis_at(parts[:at]) is not None:  # plus the axes ... stands for
        axis += x.ndim - sum(1 for i, k in enumerate(parts) if k is not None and k is not Ellipsis and i != at)
    return widened[(slice(None),) * axis + (parts[at].reshape(1),)]


def _is_advanced(k: Any) -> bool:
    return not (k is None or k is Ellipsis or k.__class__ in (int, slice))


def _expanded(parts: tuple[Any, ...], ndim: int) -> list[Any]:
    """``parts`` with ``...`` written out as slices and the missing trailing axes added; each
    entry then stands for one axis of ``x`` or (None) a new one. Concrete masks become their
    integer arrays (``nonzero``), as NumPy reads them."""
    import numpy as np

    parts = tuple(np.asarray(k) if k.__class__ is list else k for k in parts)
    parts = tuple(p for k in parts for p in (np.nonzero(k) if isinstance(k, np.ndarray) and _is_mask(k) else (k,)))
    indexed = sum(1 for k in parts if k is not None and k is not Ellipsis)
    if indexed > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {indexed} were indexed")
    fill = [slice(None)] * (ndim - indexed)
    at = _ellipsis_at(parts)
    if at is None:
        return [*parts, *fill]
    return [*parts[:at], *fill, *(k for k in parts[at + 1:] if k is not Ellipsis)]


def _ellipsis_at(parts: tuple[Any, ...]) -> int | None:
    """Where ``...`` is in ``parts`` (compared by identity: ``in`` would compare arrays)."""
    return next((i for i, k in enumerate(parts) if k is Ellipsis), None)


def _gather(x: Any, key: Any) -> Any:
    """``x[key]`` for an advanced key, lazily: the basic parts first (dask's own slicing), then
    the index arrays (Python ints among them) broadcast, bounds-checked when the graph runs and
    flattened into one linear index of the indexed axes, gathered with one dask take. The
    result's axes are placed as NumPy places them (in place when the index arrays are adjacent,
    first otherwise)."""
    parts = _expanded(_parts(key), x.ndim)
    advanced = [i for i, k in enumerate(parts) if not (k is None or k.__class__ is slice)]  # ints too, as NumPy
    basic = tuple(slice(None) if i in advanced else k for i, k in enumerate(parts))
    y = x[_canonical_slices(tuple(x.shape), basic)]  # one axis per part: None adds one, the rest keep theirs
    lengths = [int(y.shape[i]) for i in advanced]
    shapes = [tuple(getattr(parts[i], "shape", ())) for i in advanced]
    try:
        import numpy as np

        shape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(s) for s in shapes)) from None
    if len(advanced) == 1 and len(shape) == 1:  # dask's own lazy take along one axis
        index = _checked(parts[advanced[0]], lengths[0], _axis_of(parts, advanced[0]), normalise=False)
        return y[(slice(None),) * advanced[0] + (index,)]
    return _gather_flat(y, advanced, lengths, [_checked(parts[i], n, _axis_of(parts, i)) for i, n in
                                               zip(advanced, lengths, strict=True)], shape)


def _axis_of(parts: list[Any], i: int) -> int:
    """The axis of x that entry ``i`` of expanded ``parts`` indexes (new axes, None, take none)."""
    return i - sum(1 for k in parts[:i] if k is None)


def _gather_flat(y: Any, advanced: list[int], lengths: list[int], indices: list[Any], shape: tuple[int, ...]) -> Any:
    """y gathered at the (non-negative, broadcast to ``shape``) ``indices`` of its ``advanced``
    axes through one linear index (``ravel_multi_index`` written with dask arithmetic)."""
    import math

    import dask.array as da

    linear = 0
    for index, stride in zip(indices, _strides(lengths), strict=True):
        linear = linear + da.broadcast_to(index, shape) * stride
    linear = da.broadcast_to(linear, shape)
    front = da.moveaxis(y, advanced, list(range(len(advanced))))
    flat = front.reshape((math.prod(lengths), *front.shape[len(advanced):]))
    taken = flat[linear.reshape(-1)].reshape(shape + flat.shape[1:])
    if advanced == list(range(advanced[0], advanced[0] + len(advanced))):  # adjacent: in place
        taken = da.moveaxis(taken, list(range(len(shape))), list(range(advanced[0], advanced[0] + len(shape))))
    return taken


def _strides(lengths: list[int]) -> list[int]:
    """C-order strides (in elements) of an array of ``lengths``."""
    strides, step = [], 1
    for n in reversed(lengths):
        strides.append(step)
        step *= n
    return strides[::-1]


_NOT_AN_INDEX: Final = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or "
                        "boolean arrays are valid indices")


def _checked(k: Any, length: int, axis: int, *, normalise: bool = True) -> Any:
    """The index ``k`` (a Python int, a NumPy or dask integer array) of an axis of ``length`` as a
    dask array whose values raise OutOfBoundsIndexError when out of bounds (concrete ones here,
    dask ones when the graph runs), negative ones counted from the end when ``normalise``."""
    import dask.array as da
    import numpy as np

    from arraylayer.arguments import check_index_block

    if k.__class__ is int:
        check_integer_bounds((length,), k)
        return da.asarray(np.int64(k % length))
    if getattr(k, "dtype", np.dtype(object)).kind not in "iu":
        raise IndexError(_NOT_AN_INDEX)
    checker = _normalised_block if normalise else check_index_block
    parameter = f"the index of axis {axis}"
    if not _is_dask(k):
        return da.from_array(checker(np.asarray(k), length=length, parameter=parameter))
    return k.map_blocks(checker, length=length, parameter=parameter, dtype=np.int64 if normalise else k.dtype)


def _normalised_block(values: Any, *, length: int, parameter: str) -> Any:
    """A block of indices, checked (OutOfBoundsIndexError) and with negative ones counted from the end."""
    import numpy as np

    from arraylayer.arguments import check_index_block

    values = check_index_block(values, length=length, parameter=parameter).astype(np.int64)
    return np.where(values < 0, values + length, values)


def _check_mask_shapes(shape: tuple[int, ...], key: Any) -> None:
    """NumPy's IndexError for a boolean mask whose shape is not that of the axes it indexes
    (metadata only: the mask stays lazy)."""
    parts = _parts(key)
    consumed = [0 if k is None else 0 if k is Ellipsis else getattr(k, "ndim", 1) if _is_mask(k) else 1 for k in parts]
    axis = 0
    for k, width in zip(parts, consumed, strict=True):
        if k is Ellipsis:
            axis += len(shape) - sum(consumed)
        elif _is_mask(k):
            for offset, size in enumerate(k.shape):
                if axis + offset >= len(shape) or (shape[axis + offset] != size and _known(shape[axis + offset], size)):
                    have = shape[axis + offset] if axis + offset < len(shape) else 0
                    raise IndexError(f"boolean index did not match indexed array along axis {axis + offset}; size "
                                     f"of axis is {have} but size of corresponding boolean axis is {size}")
        axis += width


def _known(*lengths: Any) -> bool:
    """Whether all ``lengths`` are known: dask writes a length only computing can tell as nan (the one
    value not equal to itself), and checks it when it computes."""
    return all(n == n for n in lengths)


def _canonical_slices(shape: tuple[int, ...], key: Any) -> Any:
    """A basic key with each negative-step slice written with explicit, in-range bounds (dask
    2026.8 selects the wrong elements for some, e.g. ``slice(-3, None, -1)`` on an axis of 2)."""
    parts = _parts(key)
    if not any(k.__class__ is slice and k.step is not None and k.step < 0 for k in parts):
        return key
    consumed = [0 if k is None or k is Ellipsis else 1 for k in parts]
    axis, canonical = 0, []
    for k, width in zip(parts, consumed, strict=True):
        if k is Ellipsis:
            axis += len(shape) - sum(consumed)
        elif k.__class__ is slice and k.step is not None and k.step < 0:
            chosen = range(*k.indices(shape[axis]))
            k = slice(chosen.start, chosen.stop if chosen.stop >= 0 else None, chosen.step) if chosen else slice(0, 0)
        canonical.append(k)
        axis += width
    return tuple(canonical)


def _masked(x: Any, key: Any) -> Any:
    """``x[mask]`` with a dask mask, dask's own; a mask over some of x's leading axes (which dask
    refuses) as a 1-d mask of those axes flattened."""
    mask = key[0] if key.__class__ is tuple and len(key) == 1 else key
    if _selects_nothing(x, mask):  # dask refuses a mask axis of length 0 where x's is longer
        return x.reshape((math.prod(x.shape[:mask.ndim]), *x.shape[mask.ndim:]))[:0]
    if not (_is_dask(mask) and 1 < mask.ndim < x.ndim):
        return _dask_native(x, key)
    _check_mask_shapes(tuple(x.shape), mask)
    return x.reshape((-1, *x.shape[mask.ndim:]))[mask.reshape(-1)]


def _selects_nothing(x: Any, mask: Any) -> bool:
    """Whether ``mask`` is a sole mask with an axis of length 0, each axis of x's length or 0 (the
    standard and NumPy take it: it selects nothing)."""
    shape = getattr(mask, "shape", ())
    return (_is_mask(mask) and 0 in shape and mask.ndim <= x.ndim and _known(*x.shape)
            and all(k in (n, 0) for k, n in zip(shape, x.shape, strict=False)))


def _dask_native(x: Any, key: Any) -> Any:
    _check_mask_shapes(tuple(x.shape), key)
    try:
        return x[key]
    except NotImplementedError as error:
        raise IndexError(
            f"dask cannot index an array lazily with {key!r} ({error}). Index with the boolean mask and "
            f"the other parts of the key in two steps."
        ) from None


def dask_set(x: Any, key: Any, value: Any) -> Any:
    """``x`` with ``x[key]`` replaced by ``value``, lazily, as a new dask array, with NumPy's
    errors: basic keys and a dask mask with a scalar are dask's own; a mask with an array value
    is a ``where`` (:func:`_masked_set`); index arrays scatter into the flattened array at the
    positions :func:`dask_getitem` selects from a lazy grid of flat positions."""
    import numpy as np

    if _selects_nothing(x, key[0] if key.__class__ is tuple and len(key) == 1 else key):
        return x
    if is_basic(key):
        check_integer_bounds(x.shape, key)
        if not _integer_and_reversed(key):
            return _assigned(x, _canonical_slices(tuple(x.shape), key), value)
    elif _lazy_mask(key) or _zero_d_mask(key):
        if getattr(value, "ndim", 0) == 0 and _lazy_mask(key):
            return _assigned(x, key, value)
        return _masked_set(x, key, value)
    if _lazy_indices(key) or not x.size <= DASK_POSITIONS_LIMIT:
        selected = dask_getitem(_grid(x), key)
    else:  # concrete indices: NumPy's positions, nothing to compute
        selected = positions(tuple(x.shape), numpy_key(key, to_host))
    np.broadcast_shapes(tuple(getattr(value, "shape", ())), tuple(selected.shape))  # NumPy's ValueError
    if not selected.size:
        return x
    import dask.array as da

    flat = _assigned(x.reshape(-1), selected.reshape(-1), da.broadcast_to(value, selected.shape).reshape(-1))
    return flat.reshape(x.shape).rechunk(x.chunks)


def _integer_and_reversed(key: Any) -> bool:
    """Whether a basic key has an integer and a negative-step slice, which dask 2026.8's
    assignment refuses with its own IndexError (``x[0, ::-1] = v``); those scatter by position."""
    parts = _parts(key)
    return (any(k.__class__ is slice and k.step is not None and k.step < 0 for k in parts)
            and any(k.__class__ is not slice and k is not None and k is not Ellipsis for k in parts))


def _zero_d_mask(key: Any) -> bool:
    """Whether ``key`` holds a 0-d boolean dask array (``x[flag] = value``)."""
    return any(_is_dask(k) and k.ndim == 0 and k.dtype == bool for k in _parts(key))


def _assigned(x: Any, key: Any, value: Any) -> Any:
    """dask's own lazy assignment, on a copy (``x`` is not changed)."""
    updated = x.copy()
    updated[key] = value
    return updated


def _grid(x: Any) -> Any:
    """The flat position of every element of ``x``, lazily, in ``x``'s shape."""
    import dask.array as da
    import numpy as np

    return da.arange(x.size, dtype=np.int64, chunks=x.reshape(-1).chunks).reshape(x.shape)


def _masked_set(x: Any, key: Any, value: Any) -> Any:
    """``x[mask] = value`` for a dask mask over x's leading axes and an array value, lazily:
    ``where(mask, value, x)`` when one value row fills every selected place, else the values in
    order (the running count of the mask picks each place's row; a count that differs from the
    value's length raises NumPy's ValueError when the graph runs)."""
    import dask.array as da

    parts = [k for k in _parts(key) if k is not Ellipsis]
    if len(parts) != 1 or _parts(key)[0] is not parts[0]:
        raise IndexError("dask assigns an array through a boolean mask lazily only when the mask is the whole key "
                         "(x[mask] = value); for other keys use arraylayer.where(mask, value, x).")
    mask = parts[0]
    _check_mask_shapes(tuple(x.shape), mask)
    rest = tuple(x.shape[mask.ndim:])
    rows = _value_rows(tuple(value.shape), rest)
    spread = mask.reshape(mask.shape + (1,) * len(rest))
    if rows == 1:
        return da.where(spread, value.reshape(value.shape[1:]) if value.ndim == len(rest) + 1 else value, x)
    order = (da.cumsum(mask.reshape(-1)) - 1).reshape(mask.shape)
    if not _known(rows):  # x[x > 0] = y[y > 0]: the value's length is checked when the graph runs
        return da.where(spread, _rows_of_unknown(order, mask.sum(), value, rest), x).rechunk(x.chunks)
    order = da.map_blocks(_rows_checked, order, mask.sum(), rows=rows, dtype=order.dtype)
    values = da.broadcast_to(value, (rows, *rest))[order.reshape(-1)].reshape(mask.shape + rest)
    return da.where(spread, values, x).rechunk(x.chunks)


def _value_rows(shape: tuple[int, ...], rest: tuple[int, ...]) -> int:
    """How many values a value of ``shape`` gives the places a mask selects (each place holds an
    array of shape ``rest``); NumPy's ValueError when it cannot be broadcast to them."""
    import numpy as np

    rows = shape[0] if len(shape) == len(rest) + 1 else 1
    try:
        fits = len(shape) <= len(rest) + 1 and np.broadcast_shapes(shape[len(shape) - len(rest):] if rest else (),
                                                                   rest) == rest
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"shape mismatch: value array of shape {shape} could not be broadcast to indexing result of "
                         f"shape {('nan', *rest)}")
    return rows


def _rows_of_unknown(order: Any, count: Any, value: Any, rest: tuple[int, ...]) -> Any:
    """The value's row for each place of ``order`` (a value of unknown length, gathered whole into
    every task: dask cannot index an array of unknown length lazily)."""
    import dask
    import dask.array as da

    whole = dask.delayed(_gathered_rows, pure=True)(value)
    ndim = order.ndim
    return da.map_blocks(_value_rows_at, order, count, whole, dtype=value.dtype,
                         new_axis=list(range(ndim, ndim + len(rest))) or None,
                         chunks=(*order.chunks, *((n,) for n in rest)))


def _gathered_rows(value: Any) -> Any:
    import numpy as np

    return np.asarray(value)


def _value_rows_at(order: Any, count: Any, whole: Any) -> Any:
    """``whole``'s rows at ``order`` (clipped where the mask is false); one row fills every place;
    NumPy's ValueError when the mask selects other than ``len(whole)`` places."""
    import numpy as np

    rows = len(whole)
    if rows == 1:
        return whole[np.zeros(order.shape, np.intp)]
    picked = _rows_checked(order, count, rows=rows)
    return whole[picked] if rows else np.zeros(order.shape + whole.shape[1:], whole.dtype)


def _rows_checked(order: Any, count: Any, *, rows: int) -> Any:
    """The row of the value for each place (clipped where the mask is false); NumPy's ValueError
    when the mask selects other than ``rows`` places."""
    import numpy as np

    if int(count) != rows:
        raise ValueError(f"NumPy boolean array indexing assignment cannot assign {rows} input values to the "
                         f"{int(count)} output values where the mask is true")
    return np.clip(order, 0, rows - 1)
