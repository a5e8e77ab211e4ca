"""Beyond the standard: the NumPy functions clients look up on any namespace (xarray's rolling,
pad, quantile and round; SciPy's signal and interpolate code): NaN-aware reductions (with NumPy's
``dtype=`` and ``ddof=``), ``pad``, ``sliding_window_view``, ``round(x, decimals)`` and
``quantile``/``nanquantile``.

Each is a composition of the standard functions, so it runs on every backend with arraylayer's
dtype rules, lazily on dask, under jit and autodiff, with no kernel of its own:

* ``nansum``/``nanprod``/``nancumsum``/``nancumprod`` are ``sum``/``prod``/``cumulative_*`` with
  NaN read as 0 (1): the same accumulator dtype (bool and narrow integers: the default int).
* ``nanmean``/``nanvar``/``nanstd`` give the dtype of ``mean``/``var``/``std`` (integer input:
  the default float); ``nanmin``/``nanmax`` x's dtype.
* An all-NaN slice gives NaN (``nanmean``, ``nanmin``, ``nanmax``, ``nanvar``, ``nanstd``; also
  where ``correction`` leaves no degrees of freedom), as NumPy's values, without NumPy's
  RuntimeWarning; ``nanargmin``/``nanargmax`` give -1 there (NumPy raises ValueError, which a lazy
  or traced array cannot do before it is computed).
* ``dtype=`` of ``nanmean``/``nanvar``/``nanstd`` is the floating dtype they compute and return
  in (complex x: complex); ``ddof=`` is NumPy's name for ``correction`` (not both).
* ``sliding_window_view`` gathers the windows (``take`` with an index array, no strided view).
* ``round(x, decimals)`` is NumPy's: ``x * 10**decimals`` rounded half to even and divided back
  for floating input (so ``round(2.675, 2)`` is 2.67 or 2.68 exactly as NumPy's); integers with
  ``decimals < 0`` round to a multiple of ``10**-decimals`` half to even, wrapping as NumPy does.
* ``quantile``/``nanquantile`` sort along the reduced axes and interpolate between two gathered
  neighbours (NumPy's ``method="linear"``); the result is in x's floating dtype (integer input:
  the default float), with one leading axis per ``q`` when ``q`` is a sequence, as NumPy's.
"""

from __future__ import annotations

import math
from typing import Any, Final

from arraylayer.dtypes import Dtype, DtypeLike, as_dtype, iinfo
from arraylayer.errors import AllocationError, InvalidArgumentError, TypePromotionError, UnsupportedDtypeError
from arraylayer import arguments
from arraylayer.api import creation, data_types, elementwise, searching, statistical, utility
from arraylayer.api.dispatch import array_input, kernel

Array = Any
Axis = int | tuple[int, ...] | None

__all__ = [
    "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmin", "nanprod", "nanstd",
    "nanquantile", "nansum", "nanvar", "pad", "quantile", "round",
    "sliding_window_view",
]

#: The names arraylayer adds to the standard's namespace (``arraylayer.api.extensions``).
EXTENSIONS: Final = tuple(__all__)

_PAD_MODES: Final = ("constant", "edge", "reflect", "symmetric", "wrap")


def _filled(x: Array, value: float) -> Array:
    """x with its NaNs replaced by ``value`` (x itself for dtypes that hold no NaN)."""
    _, x, dtype = array_input(x)
    if dtype.category not in ("float", "complex"):
        return x
    return searching.where(elementwise.isnan(x), value, x)


def nansum(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, keepdims: bool = False) -> Array:
    """``sum`` with NaN read as zero."""
    return statistical.sum(_filled(x, 0), axis=axis, dtype=dtype, keepdims=keepdims)


def nanprod(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, keepdims: bool = False) -> Array:
    """``prod`` with NaN read as one."""
    return statistical.prod(_filled(x, 1), axis=axis, dtype=dtype, keepdims=keepdims)


def nancumsum(x: Array, /, *, axis: int | None = None, dtype: DtypeLike | None = None,
              include_initial: bool = False) -> Array:
    """``cumulative_sum`` with NaN read as zero."""
    statistical._cumulative_axis(array_input(x)[1], axis, "nancumsum")
    return statistical.cumulative_sum(_filled(x, 0), axis=axis, dtype=dtype, include_initial=include_initial)


def nancumprod(x: Array, /, *, axis: int | None = None, dtype: DtypeLike | None = None,
               include_initial: bool = False) -> Array:
    """``cumulative_prod`` with NaN read as one."""
    statistical._cumulative_axis(array_input(x)[1], axis, "nancumprod")
    return statistical.cumulative_prod(_filled(x, 1), axis=axis, dtype=dtype, include_initial=include_initial)


def _refused(name: str, dtype: Dtype, alternative: str = "") -> UnsupportedDtypeError:
    """The refusal of a float low-precision ``dtype`` by a reduction that would mix it with float32."""
    return UnsupportedDtypeError(f"{name} does not compute with {dtype} arrays on any backend; cast first: "
                                 f"arraylayer.astype(x, 'float32'){alternative}.")


def _inexact(name: str, x: Array, complex_ok: bool, dtype: DtypeLike | None = None) -> tuple[Array, Dtype]:
    """x in the dtype the reduction computes and returns in: ``dtype`` (NumPy's keyword) when
    given, which must be floating (complex too where ``complex_ok``, and for complex x); else
    ``mean``'s: integer and bool input in the default float."""
    _, x, found = statistical._floating(name, x, complex_ok)
    if found.is_low_precision:  # its count and quotient would mix the format with float32
        raise _refused(name, found, " (or use arraylayer.mean on non-NaN data)")
    if dtype is None:
        return x, found
    wanted = as_dtype(dtype)
    kinds = ("float", "complex") if complex_ok else ("float",)
    if wanted.category not in kinds or (found.category == "complex" and wanted.category != "complex"):
        raise TypePromotionError(
            f"{name} dtype={dtype!r}: {name} of {found} values computes in a "
            f"{'complex' if found.category == 'complex' else ' or '.join(kinds)} dtype; pass one such as "
            f"dtype={str(found)!r}, or omit dtype.")
    return data_types.astype(x, wanted, copy=False), wanted


def _ddof(name: str, correction: int | float | None, ddof: int | float | None) -> int | float:
    """The standard's ``correction`` or NumPy's ``ddof`` (its name for it), not both; 0 by default."""
    if correction is not None and ddof is not None:
        raise InvalidArgumentError(f"{name} got correction={correction!r} and ddof={ddof!r}: ddof is NumPy's name "
                                   f"for correction; pass one of them.")
    return statistical._correction(0.0 if correction is None and ddof is None else
                                   correction if correction is not None else ddof)


def _count(x: Array, dtype: Dtype, axis: Axis, keepdims: bool) -> Array:
    """The number of x's non-NaN values along ``axis``, in the real dtype of ``dtype``."""
    counted = dtype if dtype.category == "float" else Dtype("float32" if dtype.bits == 64 else "float64")
    present = elementwise.logical_not(elementwise.isnan(x))
    return statistical.sum(present, axis=axis, dtype=counted, keepdims=keepdims)


def _over(total: Array, count: Array) -> Array:
    """``total / count``, NaN where ``count`` is not positive (no division by zero is made, so no
    framework warns)."""
    empty = elementwise.less_equal(count, 0)
    quotient = elementwise.divide(total, searching.where(empty, 1, count))
    return searching.where(empty, math.nan, quotient)


def nanmean(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, keepdims: bool = False) -> Array:
    """``mean`` of the non-NaN values (in ``dtype``, floating, when given); NaN for an all-NaN
    slice (no warning)."""
    x, dtype = _inexact("nanmean", x, True, dtype)
    arguments.flag(keepdims, "keepdims")
    axis = arguments.axes(axis, len(x.shape))
    return _over(nansum(x, axis=axis, keepdims=keepdims), _count(x, dtype, axis, keepdims))


def nanvar(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, correction: int | float | None = None,
           keepdims: bool = False, ddof: int | float | None = None) -> Array:
    """``var`` of the non-NaN values with ``correction`` (or NumPy's ``ddof``; 0 by default), in
    ``dtype`` (floating) when given; NaN where no degree of freedom is left."""
    correction = _ddof("nanvar", correction, ddof)
    x, dtype = _inexact("nanvar", x, False, dtype)
    arguments.flag(keepdims, "keepdims")
    axis = arguments.axes(axis, len(x.shape))
    centred = elementwise.subtract(x, _over(nansum(x, axis=axis, keepdims=True), _count(x, dtype, axis, True)))
    squares = nansum(elementwise.multiply(centred, centred), axis=axis, keepdims=keepdims)
    return _over(squares, elementwise.subtract(_count(x, dtype, axis, keepdims), correction))


def nanstd(x: Array, /, *, axis: Axis = None, dtype: DtypeLike | None = None, correction: int | float | None = None,
           keepdims: bool = False, ddof: int | float | None = None) -> Array:
    """``std`` of the non-NaN values with ``correction`` (or NumPy's ``ddof``), in ``dtype``
    (floating) when given; NaN where no degree of freedom is left."""
    correction = _ddof("nanstd", correction, ddof)
    x, _ = _inexact("nanstd", x, False, dtype)
    variance = nanvar(x, axis=axis, correction=correction, keepdims=keepdims)
    root = elementwise.sqrt(variance)
    if root.__class__ is not variance.__class__:  # NumPy's sqrt of a 0-d array is a scalar; std's is an array
        backend, _, dtype = array_input(variance)
        root = backend.asarray(root, dtype)
    return root


def _nan_extreme(name: str, x: Array, axis: Axis, keepdims: bool, filler: float) -> Array:
    _, x, dtype = array_input(x)
    reduce = statistical.max if name == "nanmax" else statistical.min
    if dtype.category != "float":  # complex is refused by max/min; other kinds hold no NaN
        return reduce(x, axis=axis, keepdims=keepdims)
    nan = elementwise.isnan(x)
    found = reduce(searching.where(nan, filler, x), axis=axis, keepdims=keepdims)
    return searching.where(utility.all(nan, axis=axis, keepdims=keepdims), math.nan, found)


def nanmax(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """``max`` of the non-NaN values; NaN for an all-NaN slice (no warning)."""
    return _nan_extreme("nanmax", x, axis, keepdims, -math.inf)


def nanmin(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """``min`` of the non-NaN values; NaN for an all-NaN slice (no warning)."""
    return _nan_extreme("nanmin", x, axis, keepdims, math.inf)


def _nan_arg_extreme(name: str, x: Array, axis: int | None, keepdims: bool, filler: float) -> Array:
    _, x, dtype = array_input(x)
    find = searching.argmax if name == "nanargmax" else searching.argmin
    if dtype.category != "float":
        return find(x, axis=axis, keepdims=keepdims)
    nan = elementwise.isnan(x)
    found = find(searching.where(nan, filler, x), axis=axis, keepdims=keepdims)
    return searching.where(utility.all(nan, axis=axis, keepdims=keepdims), -1, found)


def nanargmax(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first maximum of the non-NaN values (-1 for an all-NaN slice)."""
    return _nan_arg_extreme("nanargmax", x, axis, keepdims, -math.inf)


def nanargmin(x: Array, /, *, axis: int | None = None, keepdims: bool = False) -> Array:
    """Index of the first minimum of the non-NaN values (-1 for an all-NaN slice)."""
    return _nan_arg_extreme("nanargmin", x, axis, keepdims, math.inf)


# -- pad --------------------------------------------------------------------------------------------

def _pad_widths(pad_width: Any, ndim: int) -> tuple[tuple[int, int], ...]:
    """NumPy's ``pad_width`` forms (``n``, ``(n,)``, ``(before, after)``, one pair per axis) as one
    pair of non-negative ints per axis."""
    def pair(value: Any) -> tuple[int, int]:
        items = value if isinstance(value, (tuple, list)) else (value,)
        if len(items) not in (1, 2):
            raise InvalidArgumentError(f"pad_width={pad_width!r}: each entry is n or (before, after).")
        before, after = (arguments.integer(v, "pad_width") for v in (items * 2)[:2])
        if before < 0 or after < 0:
            raise InvalidArgumentError(f"pad_width={pad_width!r} holds a negative width; widths are >= 0.")
        return before, after

    if isinstance(pad_width, (tuple, list)) and any(isinstance(v, (tuple, list)) for v in pad_width):
        if len(pad_width) == 1:
            return (pair(pad_width[0]),) * ndim
        if len(pad_width) != ndim:
            raise InvalidArgumentError(f"pad_width={pad_width!r} has {len(pad_width)} pairs for an array of {ndim} "
                                       f"axes; pass one (before, after) pair per axis, or one pair for all.")
        return tuple(pair(v) for v in pad_width)
    return (pair(pad_width),) * ndim


def pad(x: Array, pad_width: int | tuple[Any, ...], mode: str = "constant", *,
        constant_values: bool | int | float | complex = 0) -> Array:
    """x padded by ``pad_width`` (NumPy's forms) in x's dtype; ``mode`` is one of NumPy's
    ``"constant"`` (``constant_values``, which must fit x's dtype), ``"edge"``, ``"reflect"``,
    ``"symmetric"``, ``"wrap"``."""
    import numpy as np

    backend, x, dtype = array_input(x)
    if mode not in _PAD_MODES:
        raise InvalidArgumentError(f"pad mode={mode!r} is not one of {', '.join(map(repr, _PAD_MODES))}.")
    widths = _pad_widths(pad_width, len(x.shape))
    known = [(int(n), b, a) for n, (b, a) in zip(x.shape, widths, strict=True) if n is not None and n == n]
    arguments.shape(tuple(n + b + a for n, b, a in known), "the result of pad")  # (dask's NaN lengths: dask checks)
    device = backend.device_of(x)
    from arraylayer.runtime.registry import use_backend
    from arraylayer.api.manipulation import concat

    for axis, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        if mode == "constant":
            with use_backend(backend.name):
                sides = [creation.full(tuple(w if a == axis else n for a, n in enumerate(x.shape)), constant_values,
                                       dtype=dtype, device=device) for w in (before, after)]
            x = concat([sides[0], x, sides[1]], axis=axis)
            continue
        if x.shape[axis] == 0:
            raise InvalidArgumentError(f"pad mode={mode!r} cannot extend axis {axis} of length 0; use mode='constant'.")
        try:
            positions = np.pad(np.arange(int(x.shape[axis])), (before, after), mode=mode)
        except MemoryError:
            raise AllocationError(f"pad: the {int(x.shape[axis]) + before + after} positions of axis {axis} do not fit "
                                  f"in memory; pass smaller widths.") from None
        indices = backend.asarray(positions.tolist(), Dtype("int32") if positions.size < 2**31 else Dtype("int64"),
                                  device)
        x = kernel(backend, "take", dtype)(x, indices, axis=axis)
    return x


# -- sliding_window_view ----------------------------------------------------------------------------

def _windows(window_shape: Any, axis: Any, ndim: int) -> list[tuple[int, int]]:
    """NumPy's ``window_shape``/``axis`` forms as (axis, window length) pairs, in order."""
    windows = tuple(window_shape) if isinstance(window_shape, (tuple, list)) else (window_shape,)
    windows = tuple(arguments.integer(w, "window_shape") for w in windows)
    if axis is None:
        if len(windows) != ndim:
            raise InvalidArgumentError(f"window_shape={window_shape!r} has {len(windows)} entries for an array of "
                                       f"{ndim} axes; pass one per axis, or name the axes with axis=.")
        axis = tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if len(axes) != len(windows):
        raise InvalidArgumentError(f"window_shape={window_shape!r} and axis={axis!r} differ in length; pass one "
                                   f"window length per axis.")
    if any(w < 0 for w in windows):
        raise InvalidArgumentError(f"window_shape={window_shape!r} holds a negative length; lengths are >= 0.")
    return [(arguments.axis(a, ndim), w) for a, w in zip(axes, windows, strict=True)]


def sliding_window_view(x: Array, window_shape: int | tuple[int, ...], axis: int | tuple[int, ...] | None = None
                        ) -> Array:
    """NumPy's ``lib.stride_tricks.sliding_window_view``: every window of ``window_shape`` along
    ``axis`` (all axes by default), the window axes appended last, in x's dtype. A gathered copy
    (no strided view: not every backend has one); lazy on dask."""
    import numpy as np

    from arraylayer.runtime.registry import use_backend
    from arraylayer.api.manipulation import moveaxis, reshape

    backend, x, dtype = array_input(x)
    device = backend.device_of(x)
    for ax, length in _windows(window_shape, axis, len(x.shape)):
        shape = tuple(int(n) for n in x.shape)
        starts = shape[ax] - length + 1
        if starts < 1:
            raise InvalidArgumentError(f"window_shape length {length} along axis {ax} is longer than that axis "
                                       f"({shape[ax]}); pass a window of at most the axis' length.")
        windowed = (*shape[:ax], starts, length, *shape[ax + 1:])
        if 0 in windowed:  # nothing to gather (and dask cannot reshape an empty array)
            with use_backend(backend.name):
                x = moveaxis(creation.zeros(windowed, dtype=dtype, device=device), ax + 1, -1)
            continue
        positions = (np.arange(starts)[:, None] + np.arange(length)).ravel()
        index_dtype = Dtype("int32") if shape[ax] < 2**31 else Dtype("int64")
        gathered = kernel(backend, "take", dtype)(x, backend.asarray(positions.tolist(), index_dtype, device), axis=ax)
        x = moveaxis(reshape(gathered, windowed), ax + 1, -1)
    return x


# -- round ------------------------------------------------------------------------------------------

def round(x: Array, /, decimals: int = 0) -> Array:  # noqa: A001
    """The standard's ``round`` (half to even) at ``decimals`` places (negative: tens, hundreds ...),
    in x's dtype, with NumPy's values."""
    decimals = arguments.integer(decimals, "decimals")
    if decimals == 0:
        return elementwise.round(x)
    _, x, dtype = array_input(x)
    if dtype.category == "bool":
        return elementwise.round(x)  # the standard's error
    if dtype.category == "complex":
        real = round(elementwise.real(x), decimals)  # the two parts rounded apart, as NumPy does
        imag = round(elementwise.imag(x), decimals)
        return elementwise.add(real, elementwise.multiply(imag, 1j))
    if dtype.category == "float":
        if decimals > 0:
            return elementwise.divide(elementwise.round(elementwise.multiply(x, 10.0 ** decimals)), 10.0 ** decimals)
        return elementwise.multiply(elementwise.round(elementwise.divide(x, 10.0 ** -decimals)), 10.0 ** -decimals)
    if decimals > 0:
        return x
    return _round_integer(x, dtype, 10 ** -decimals)


def _round_integer(x: Array, dtype: Dtype, step: int) -> Array:
    """x rounded to a multiple of ``step`` (half to even), wrapping in x's dtype as NumPy does."""
    if step > iinfo(dtype).max:
        return creation.zeros_like(x)
    quotient = elementwise.floor_divide(x, step)
    rest = elementwise.subtract(x, elementwise.multiply(quotient, step))
    gap = elementwise.subtract(step, rest)  # rest - gap compared without overflow
    odd = elementwise.not_equal(elementwise.remainder(quotient, 2), 0)
    up = elementwise.logical_or(elementwise.greater(rest, gap),
                                elementwise.logical_and(elementwise.equal(rest, gap), odd))
    return elementwise.multiply(searching.where(up, elementwise.add(quotient, 1), quotient), step)


# -- quantile ---------------------------------------------------------------------------------------

_QUANTILE_METHODS: Final = ("linear",)


def _quantile_levels(name: str, q: Any) -> tuple[Any, bool]:
    """``q`` (Python numbers, a sequence of them or a NumPy array, of at most one axis) as a 1-D
    float64 NumPy array, and whether it was one number."""
    import numpy as np

    if not isinstance(q, (int, float, list, tuple, np.ndarray, np.generic)) or isinstance(q, bool):
        raise InvalidArgumentError(f"{name}: q={q!r} must be a number in [0, 1] or a sequence or NumPy array of them "
                                   f"(q's values are checked before any computation, so they must be on the host).")
    levels = np.asarray(q, dtype=np.float64)
    if levels.ndim > 1 or not np.all((levels >= 0) & (levels <= 1)):
        raise InvalidArgumentError(f"{name}: q={q!r} must be a number or 1-D sequence of numbers in [0, 1].")
    return levels.reshape(-1), levels.ndim == 0


def _lerp(a: Array, b: Array, t: Array) -> Array:
    """a + (b - a) * t, from b's end where t >= 0.5 (NumPy's interpolation, exact at both ends)."""
    step = elementwise.subtract(b, a)
    from_a = elementwise.add(a, elementwise.multiply(step, t))
    from_b = elementwise.subtract(b, elementwise.multiply(step, elementwise.subtract(1, t)))
    return searching.where(elementwise.greater_equal(t, 0.5), from_b, from_a)


def _quantile(name: str, x: Array, q: Any, axis: Axis, keepdims: bool, method: str, skip_nan: bool,
              middle: bool = False) -> Array:
    """``middle``: NumPy's median (q 0.5): the middle value or the mean of the two middle ones, no
    interpolation, so a middle next to an infinity stays exact."""
    from arraylayer.api.indexing import take_along_axis
    from arraylayer.api.manipulation import permute_dims, reshape
    from arraylayer.api.sorting import sort

    backend, x, dtype = statistical._floating(name, x, complex_ok=False)
    if dtype.is_low_precision:  # its interpolation would round every step in the format, and mix it with float32
        raise _refused(name, dtype)
    arguments.flag(keepdims, "keepdims")
    if method not in _QUANTILE_METHODS:
        raise InvalidArgumentError(f"{name}: method={method!r} is not one of {', '.join(map(repr, _QUANTILE_METHODS))}.")
    levels, one = _quantile_levels(name, q)
    shape, ndim = tuple(x.shape), len(x.shape)
    axis = arguments.axes(axis, ndim)
    reduced = tuple(range(ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    kept = tuple(a for a in range(ndim) if a not in reduced)
    length = math.prod(shape[a] for a in reduced)
    if length == 0:
        raise InvalidArgumentError(f"{name}: the reduced axes {reduced} of x (shape {shape}) hold no values; "
                                   f"a quantile needs at least one.")
    # the reduced axes last, as one: rows of (*kept, length)
    rows = reshape(permute_dims(x, kept + reduced), tuple(shape[a] for a in kept) + (length,))
    nan = elementwise.isnan(rows)
    if skip_nan:  # NaN read as +inf sorts after every value; count says how many values each row has
        rows = searching.where(nan, math.inf, rows)
        count = statistical.sum(elementwise.logical_not(nan), axis=-1, keepdims=True, dtype=dtype)
    else:
        count = float(length)
    ordered = sort(rows, axis=-1)
    device = backend.device_of(x)
    last = elementwise.subtract(count, 1) if skip_nan else count - 1
    position = elementwise.multiply(last, backend.asarray(levels.tolist(), dtype, device))  # (*kept | 1, len(q))
    below = elementwise.floor(position)
    fraction = elementwise.subtract(position, below)
    above = elementwise.minimum(elementwise.add(below, 1), last)
    if middle:
        above = searching.where(elementwise.greater(fraction, 0), above, below)
    index = Dtype("int32") if length < 2**31 else Dtype("int64")
    full = tuple(shape[a] for a in kept) + (len(levels),)

    def gathered(at: Array) -> Array:
        at = backend.astype(elementwise.maximum(at, 0), index)  # an all-NaN row: -1, its value replaced below
        if not skip_nan:
            at = reshape(at, (1,) * len(kept) + (len(levels),))
        from arraylayer.api.manipulation import broadcast_to
        return take_along_axis(ordered, broadcast_to(at, full), axis=-1)

    missing = elementwise.less_equal(count, 0) if skip_nan else utility.any(nan, axis=-1, keepdims=True)
    # a missing row's neighbours read as 0 (not inf - inf, which warns), its value NaN
    below, above = (searching.where(missing, 0.0, gathered(at)) for at in (below, above))
    value = (searching.where(elementwise.greater(fraction, 0), elementwise.divide(elementwise.add(below, above), 2),
                             below) if middle else _lerp(below, above, fraction))
    value = searching.where(missing, math.nan, value)
    # q's axis first, then kept (with ones at the reduced axes for keepdims)
    value = permute_dims(value, (len(kept),) + tuple(range(len(kept))))
    if keepdims:
        value = reshape(value, (len(levels),) + tuple(1 if a in reduced else shape[a] for a in range(ndim)))
    if one:
        value = reshape(value, tuple(value.shape[1:]))
    return value


def quantile(x: Array, /, q: Any, *, axis: Axis = None, keepdims: bool = False, method: str = "linear") -> Array:
    """NumPy's ``quantile`` (``method="linear"``) of x over ``axis`` at the levels ``q`` (host
    numbers in [0, 1]); NaN where a slice holds a NaN."""
    return _quantile("quantile", x, q, axis, keepdims, method, skip_nan=False)


def nanquantile(x: Array, /, q: Any, *, axis: Axis = None, keepdims: bool = False, method: str = "linear") -> Array:
    """``quantile`` of the non-NaN values; NaN for an all-NaN slice (no warning)."""
    return _quantile("nanquantile", x, q, axis, keepdims, method, skip_nan=True)
