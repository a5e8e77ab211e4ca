"""NumPy functions beyond the standard that clients call on any namespace: ``isclose``/``allclose``,
``nan_to_num``, ``diag``/``diagflat``/``diagonal``/``trace`` (NumPy's axes), ``outer``/``inner``/``kron``/
``vdot`` and ``median``/``percentile``/``nanmedian``/``nanpercentile``. (Counting and statistics:
:mod:`arraylayer.api.numpy_stats`.)

Each is a composition of arraylayer's own functions (as ``extensions`` is), so it runs on every
backend with arraylayer's dtype rules, lazily on dask, under jit and autodiff, with no kernel:

* ``isclose`` compares in the promoted dtype of its two inputs (integer or bool: the default float,
  as NumPy compares them in float64); infinities are compared by ``equal`` only (no ``inf - inf``); ``allclose`` is ``all`` of it, a 0-d bool array (``bool()``
  of it is NumPy's Python bool; a lazy or traced array is not computed until asked).
* ``nan_to_num`` keeps x's dtype; complex x has its two parts replaced apart, as NumPy does.
* ``diagonal``/``trace`` take NumPy's ``axis1=0, axis2=1`` (``linalg``'s take the last two axes).
* ``outer`` flattens its inputs; ``inner`` sums over both last axes; ``kron`` is NumPy's block
  product; ``vdot`` is the conjugated dot product of the flattened inputs; all in the promoted
  dtype (bool inputs: ``logical_and``/``any``, bool out, as NumPy's).
* ``median`` is ``quantile`` at 0.5, ``percentile`` is ``quantile`` at ``q / 100``, and their ``nan``
  forms are ``nanquantile``'s: their dtype (the input's float, the default float for integers).
* ``diagonal``, ``trace`` and ``outer`` here are NumPy's; ``linalg.diagonal``/``trace``/``outer``
  stay the Array API standard's (the last two axes, 1-d vectors).
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes import DtypeLike
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import InvalidArgumentError
from arraylayer import arguments
from arraylayer.api import creation, data_types, elementwise, extensions, linalg, searching, statistical, utility
from arraylayer.api.dispatch import array_input, promoted_inputs
from arraylayer.api.linear_algebra import tensordot
from arraylayer.api.manipulation import moveaxis, reshape

Array = Any
Axis = int | tuple[int, ...] | None

__all__ = ["allclose", "diag", "diagflat", "diagonal", "inner", "isclose", "kron", "median", "nan_to_num",
           "nanmedian", "nanpercentile", "outer", "percentile", "trace", "vdot"]

#: The names this module adds to the main namespace (``arraylayer.api.numpy_style``).
NUMPY_STYLE: Final = tuple(__all__)


def _tolerance(value: Any, name: str) -> float:
    """A non-negative real Python number (``rtol``, ``atol``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise InvalidArgumentError(f"{name}={value!r} must be a non-negative real number.")
    return float(value)


def isclose(a: Array, b: Array, /, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """NumPy's ``isclose``: ``|a - b| <= atol + rtol * |b|`` elementwise (infinities close only to
    themselves; NaN close to NaN only with ``equal_nan``), a bool array."""
    rtol, atol = _tolerance(rtol, "rtol"), _tolerance(atol, "atol")
    arguments.flag(equal_nan, "equal_nan")
    _, dtype, (a, b) = promoted_inputs(a, b)
    if dtype.category not in ("float", "complex"):
        a, b = (data_types.astype(v, default_float_dtype()) for v in (a, b))
    # non-finite pairs are compared by equal alone: zeros in their place keep inf - inf (NaN, a
    # warning on NumPy) out of the arithmetic
    finite = elementwise.logical_and(elementwise.isfinite(a), elementwise.isfinite(b))
    a0, b0 = (searching.where(finite, v, 0) for v in (a, b))
    gap = elementwise.abs(elementwise.subtract(a0, b0))
    bound = elementwise.add(atol, elementwise.multiply(rtol, elementwise.abs(b0)))
    close = elementwise.logical_and(elementwise.less_equal(gap, bound), finite)
    close = elementwise.logical_or(close, elementwise.equal(a, b))
    if equal_nan:
        close = elementwise.logical_or(close, elementwise.logical_and(elementwise.isnan(a), elementwise.isnan(b)))
    return close


def allclose(a: Array, b: Array, /, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> Array:
    """Whether every element of ``isclose(a, b, ...)`` holds: a 0-d bool array."""
    return utility.all(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _replacement(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidArgumentError(f"nan_to_num {name}={value!r} must be a real Python number or None.")
    return float(value)


def nan_to_num(x: Array, /, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Array:
    """x with NaN replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (by default the
    largest and the most negative finite value of x's dtype), in x's dtype; other dtypes as they
    are. ``copy`` is accepted for NumPy's signature (the result is always a new array)."""
    arguments.flag(copy, "copy")
    nan, posinf, neginf = (_replacement(v, n) for v, n in ((nan, "nan"), (posinf, "posinf"), (neginf, "neginf")))
    _, x, dtype = array_input(x)
    if dtype.category == "complex":
        parts = (nan_to_num(part, nan=nan, posinf=posinf, neginf=neginf)
                 for part in (elementwise.real(x), elementwise.imag(x)))
        real, imag = parts
        return data_types.astype(elementwise.add(real, elementwise.multiply(imag, 1j)), dtype)
    if dtype.category != "float":
        return x
    info = data_types.finfo(dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    x = searching.where(elementwise.isnan(x), nan, x)
    infinite = elementwise.isinf(x)
    x = searching.where(elementwise.logical_and(infinite, elementwise.greater(x, 0)), high, x)
    return searching.where(elementwise.logical_and(infinite, elementwise.less(x, 0)), low, x)


# -- diagonals --------------------------------------------------------------------------------------

def diagonal(x: Array, /, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """NumPy's ``diagonal``: the ``offset`` diagonal of the matrices spanned by ``axis1`` and
    ``axis2``, as x's last axis (the other axes in order)."""
    _, x, _ = array_input(x)
    ndim = len(x.shape)
    if ndim < 2:
        raise InvalidArgumentError(f"diagonal needs at least 2 dimensions, got {ndim}.")
    first, second = arguments.axis(axis1, ndim), arguments.axis(axis2, ndim)
    if first == second:
        raise InvalidArgumentError(f"diagonal axis1={axis1!r} and axis2={axis2!r} name the same axis; pass two axes.")
    offset = arguments.integer(offset, "offset")
    return linalg.diagonal(moveaxis(x, (first, second), (-2, -1)), offset=offset)


def trace(x: Array, /, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: DtypeLike | None = None) -> Array:
    """NumPy's ``trace``: the sum of ``diagonal(x, offset, axis1, axis2)``, in ``sum``'s
    accumulator dtype (or ``dtype``)."""
    return statistical.sum(diagonal(x, offset, axis1, axis2), axis=-1, dtype=dtype)


def diag(v: Array, /, k: int = 0) -> Array:
    """NumPy's ``diag``: a 1-d ``v`` as the ``k`` diagonal of a square matrix (zeros elsewhere); a
    2-d ``v``'s ``k`` diagonal, 1-d. In v's dtype."""
    from arraylayer.runtime.registry import use_backend

    backend, v, dtype = array_input(v)
    k = arguments.integer(k, "k")
    if len(v.shape) == 2:
        return linalg.diagonal(v, offset=k)
    if len(v.shape) != 1:
        raise InvalidArgumentError(f"diag needs a 1-d or 2-d array, got {len(v.shape)} dimensions.")
    n = int(v.shape[0])
    size = n + abs(k)
    device = backend.device_of(v)
    with use_backend(backend.name):
        zeros = creation.zeros((size, size), dtype=dtype, device=device)
        if n == 0:
            return zeros
        mask = creation.eye(size, k=k, dtype="bool", device=device)
    values = zero_padded(v, 0, abs(k))  # the diagonal's value by row (k >= 0) or by column (k < 0)
    values = reshape(values, (size, 1) if k >= 0 else (1, size))
    return searching.where(mask, values, zeros)


def zero_padded(v: Array, before: int, after: int) -> Array:
    """1-d v with ``before`` and ``after`` zeros of its dtype (False for bool) at its ends."""
    from arraylayer.api.manipulation import concat
    from arraylayer.runtime.registry import use_backend

    backend, v, dtype = array_input(v)
    with use_backend(backend.name):
        zeros = [creation.zeros((n,), dtype=dtype, device=backend.device_of(v)) for n in (before, after)]
    return concat([zeros[0], v, zeros[1]])


def diagflat(v: Array, /, k: int = 0) -> Array:
    """NumPy's ``diagflat``: flattened ``v`` as the ``k`` diagonal of a square matrix, in v's dtype."""
    _, v, _ = array_input(v)
    return diag(reshape(v, (-1,)), k=k)


# -- products ---------------------------------------------------------------------------------------

def _product(a: Array, b: Array) -> Array:
    """a * b broadcast; ``logical_and`` for bool (NumPy's bool product)."""
    _, dtype, (a, b) = promoted_inputs(a, b)
    return elementwise.logical_and(a, b) if dtype.category == "bool" else elementwise.multiply(a, b)


def outer(a: Array, b: Array, /) -> Array:
    """NumPy's ``outer``: every product of flattened ``a`` with flattened ``b``, (a.size, b.size)."""
    _, a, _ = array_input(a)
    _, b, _ = array_input(b)
    return _product(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def inner(a: Array, b: Array, /) -> Array:
    """NumPy's ``inner``: the sum of products over the last axes of a and b, of shape
    ``a.shape[:-1] + b.shape[:-1]`` (a 0-d operand: the product); numeric arrays."""
    _, a, _ = array_input(a)
    _, b, _ = array_input(b)
    if len(a.shape) == 0 or len(b.shape) == 0:
        return _product(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise InvalidArgumentError(f"inner needs last axes of one length, got shapes {tuple(a.shape)} and "
                                   f"{tuple(b.shape)}.")
    return tensordot(a, b, axes=((len(a.shape) - 1,), (len(b.shape) - 1,)))


def kron(a: Array, b: Array, /) -> Array:
    """NumPy's ``kron``: the block matrix of ``a[i] * b`` (the shorter shape padded with leading
    ones), of shape the product of both shapes."""
    _, a, _ = array_input(a)
    _, b, _ = array_input(b)
    ndim = max(len(a.shape), len(b.shape))
    sa = (1,) * (ndim - len(a.shape)) + tuple(int(n) for n in a.shape)
    sb = (1,) * (ndim - len(b.shape)) + tuple(int(n) for n in b.shape)
    # a as (a0, 1, a1, 1, ...), b as (1, b0, 1, b1, ...): their product interleaves the axes
    spread_a = reshape(a, tuple(n for d in sa for n in (d, 1)))
    spread_b = reshape(b, tuple(n for d in sb for n in (1, d)))
    product = _product(spread_a, spread_b)
    shape = tuple(x * y for x, y in zip(sa, sb, strict=True))
    if 0 in shape:
        _, _, dtype = array_input(product)
        backend, _, _ = array_input(product)
        from arraylayer.runtime.registry import use_backend
        with use_backend(backend.name):
            return creation.zeros(shape, dtype=dtype, device=backend.device_of(product))
    return reshape(product, shape)


def vdot(a: Array, b: Array, /) -> Array:
    """NumPy's ``vdot``: ``sum(conj(a) * b)`` of the flattened inputs (of one size), a 0-d array in
    the promoted dtype (bool: whether any pair is True)."""
    _, a, _ = array_input(a)
    _, b, _ = array_input(b)
    a, b = reshape(a, (-1,)), reshape(b, (-1,))
    if a.shape[0] != b.shape[0]:
        raise InvalidArgumentError(f"vdot needs inputs of one size, got {a.shape[0]} and {b.shape[0]} elements.")
    _, dtype, (a, b) = promoted_inputs(a, b)
    if dtype.category == "bool":
        return utility.any(elementwise.logical_and(a, b))
    return linalg.vecdot(a, b)


# -- median and percentile --------------------------------------------------------------------------

def median(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """NumPy's ``median``: the middle value, or the mean of the two middle ones (not interpolated,
    so exact next to an infinity), in ``quantile``'s dtype; NaN where a slice holds a NaN."""
    return extensions._quantile("median", x, 0.5, axis, keepdims, "linear", skip_nan=False, middle=True)


def _fractions(name: str, q: Any) -> Any:
    """``q`` (host numbers in [0, 100]: one, a 1-d sequence or a NumPy array) as quantile levels."""
    import numpy as np

    if not isinstance(q, (int, float, list, tuple, np.ndarray, np.generic)) or isinstance(q, bool):
        raise InvalidArgumentError(f"{name}: q={q!r} must be a number in [0, 100] or a sequence or NumPy array "
                                   f"of them.")
    levels = np.asarray(q, dtype=np.float64)
    if levels.ndim > 1 or not np.all((levels >= 0) & (levels <= 100)):
        raise InvalidArgumentError(f"{name}: q={q!r} must be a number or 1-D sequence of numbers in [0, 100].")
    fractions = np.minimum(levels / 100.0, 1.0)
    return float(fractions) if levels.ndim == 0 else fractions


def percentile(x: Array, /, q: Any, *, axis: Axis = None, keepdims: bool = False, method: str = "linear") -> Array:
    """NumPy's ``percentile``: ``quantile`` at ``q / 100`` (host numbers in [0, 100])."""
    return extensions._quantile("percentile", x, _fractions("percentile", q), axis, keepdims, method, skip_nan=False)


def nanmedian(x: Array, /, *, axis: Axis = None, keepdims: bool = False) -> Array:
    """NumPy's ``nanmedian``: the median of the non-NaN values (``nanquantile`` at 0.5); NaN for an
    all-NaN slice, without NumPy's warning."""
    return extensions._quantile("nanmedian", x, 0.5, axis, keepdims, "linear", skip_nan=True, middle=True)


def nanpercentile(x: Array, /, q: Any, *, axis: Axis = None, keepdims: bool = False,
                  method: str = "linear") -> Array:
    """NumPy's ``nanpercentile``: ``nanquantile`` at ``q / 100`` (host numbers in [0, 100])."""
    return extensions._quantile("nanpercentile", x, _fractions("nanpercentile", q), axis, keepdims, method,
                                skip_nan=True)
