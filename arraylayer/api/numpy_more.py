"""More NumPy names model code reaches for (keras.ops' numpy group): small compositions of the
standard functions, so each runs on every backend with arraylayer's dtype rules, lazily on dask
and under jit and autodiff, with no kernel of its own.

* Element-wise: ``exp2`` (``pow(2.0, x)``: integer input gives the default float, as ``exp``),
  ``deg2rad``/``rad2deg``, ``fmax``/``fmin`` (NaN only where both are NaN), ``heaviside``,
  ``isposinf``/``isneginf``, ``isreal``, ``logaddexp2``, ``divide_no_nan`` (keras': 0 where the
  divisor is 0).
* Shape: ``flipud``/``fliplr``, ``rot90``, ``hstack``/``vstack``/``dstack``, ``ravel``, ``swapaxes``.
* Creation and reductions: ``identity``, ``tri``, ``logspace``, ``ptp``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import creation, data_types, elementwise, manipulation, searching, statistical
from arraylayer.dtypes import DtypeLike
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError

Array = Any

__all__ = [
    "deg2rad", "divide_no_nan", "dstack", "exp2", "fliplr", "flipud", "fmax", "fmin", "heaviside", "hstack",
    "identity", "isneginf", "isposinf", "isreal", "logaddexp2", "logspace", "ptp", "rad2deg", "ravel", "rot90",
    "swapaxes", "tri", "vstack",
]

_LOG2: Final = 0.6931471805599453  # log(2)
_DEGREE: Final = 0.017453292519943295  # pi / 180


def exp2(x: Array, /) -> Array:
    """``2 ** x`` element-wise (integer and bool input: the default float, as ``exp``)."""
    return elementwise.pow(2.0, x)


def deg2rad(x: Array, /) -> Array:
    """Degrees to radians: ``x * pi / 180``."""
    return elementwise.multiply(x, _DEGREE)


def rad2deg(x: Array, /) -> Array:
    """Radians to degrees: ``x * 180 / pi``."""
    return elementwise.divide(x, _DEGREE)


def fmax(x1: Array, x2: Array, /) -> Array:
    """The element-wise maximum, ignoring a NaN when the other value is a number (NumPy's ``fmax``)."""
    return searching.where(elementwise.isnan(x2), x1, searching.where(elementwise.isnan(x1), x2,
                                                                         elementwise.maximum(x1, x2)))


def fmin(x1: Array, x2: Array, /) -> Array:
    """The element-wise minimum, ignoring a NaN when the other value is a number (NumPy's ``fmin``)."""
    return searching.where(elementwise.isnan(x2), x1, searching.where(elementwise.isnan(x1), x2,
                                                                         elementwise.minimum(x1, x2)))


def heaviside(x1: Array, x2: Array, /) -> Array:
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0`` and NaN where x1 is NaN, in the
    promoted dtype of x1 and x2."""
    dtype = data_types.result_type(x1, x2)
    x1, x2 = data_types.astype(creation.asarray(x1), dtype), data_types.astype(creation.asarray(x2), dtype)
    step = searching.where(elementwise.greater(x1, 0), 1.0,
                             searching.where(elementwise.less(x1, 0), 0.0, x2))
    return searching.where(elementwise.isnan(x1), x1, step)


def isposinf(x: Array, /) -> Array:
    """True where x is +inf."""
    return elementwise.logical_and(elementwise.isinf(x), elementwise.greater(x, 0))


def isneginf(x: Array, /) -> Array:
    """True where x is -inf."""
    return elementwise.logical_and(elementwise.isinf(x), elementwise.less(x, 0))


def isreal(x: Array, /) -> Array:
    """True where the imaginary part is 0 (everywhere for real input)."""
    return elementwise.equal(elementwise.imag(x), 0)


def logaddexp2(x1: Array, x2: Array, /) -> Array:
    """``log2(2**x1 + 2**x2)``, computed as ``logaddexp`` in base e without overflow."""
    return elementwise.divide(elementwise.logaddexp(elementwise.multiply(x1, _LOG2),
                                                    elementwise.multiply(x2, _LOG2)), _LOG2)


def divide_no_nan(x1: Array, x2: Array, /) -> Array:
    """``x1 / x2``, and 0 where ``x2`` is 0 (keras' ``divide_no_nan``; no warning, no NaN from 0/0)."""
    zero = elementwise.equal(x2, 0)
    quotient = elementwise.divide(x1, searching.where(zero, elementwise.add(elementwise.multiply(x2, 0), 1), x2))
    return searching.where(zero, elementwise.multiply(quotient, 0), quotient)


def flipud(m: Array, /) -> Array:
    """``m`` reversed along axis 0 (at least 1-d)."""
    _at_least(m, 1, "flipud")
    return manipulation.flip(m, axis=0)


def fliplr(m: Array, /) -> Array:
    """``m`` reversed along axis 1 (at least 2-d)."""
    _at_least(m, 2, "fliplr")
    return manipulation.flip(m, axis=1)


def rot90(m: Array, /, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Array:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (from the first towards the second)."""
    k = arguments.integer(k, "k") % 4
    if not isinstance(axes, (tuple, list)) or len(axes) != 2:
        raise InvalidArgumentError(f"rot90: axes must be two axes, got {axes!r}.")
    _at_least(m, 2, "rot90")
    first, second = (arguments.axis(a, m.ndim, "axes") for a in axes)
    if first == second:
        raise InvalidArgumentError(f"rot90: axes must be two different axes, got {axes!r}.")
    if k == 0:
        return m
    if k == 2:
        return manipulation.flip(manipulation.flip(m, axis=first), axis=second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return manipulation.permute_dims(manipulation.flip(m, axis=second), tuple(order))
    return manipulation.flip(manipulation.permute_dims(m, tuple(order)), axis=second)


def hstack(tup: Sequence[Array], /) -> Array:
    """The arrays joined along axis 1 (axis 0 for 1-d arrays), as NumPy's ``hstack``."""
    arrays = _sequence(tup, "hstack")
    return manipulation.concat(arrays, axis=0 if all(a.ndim == 1 for a in arrays) else 1)


def vstack(tup: Sequence[Array], /) -> Array:
    """The arrays, made at least 2-d (1-d: one row), joined along axis 0."""
    arrays = [a if a.ndim >= 2 else manipulation.reshape(a, (1, -1)) for a in _sequence(tup, "vstack")]
    return manipulation.concat(arrays, axis=0)


def dstack(tup: Sequence[Array], /) -> Array:
    """The arrays, made at least 3-d ((n,) -> (1, n, 1); (m, n) -> (m, n, 1)), joined along axis 2."""
    def three_d(a: Array) -> Array:
        if a.ndim == 1:
            return manipulation.reshape(a, (1, -1, 1))
        return manipulation.expand_dims(a, axis=-1) if a.ndim == 2 else a
    return manipulation.concat([three_d(a) for a in _sequence(tup, "dstack")], axis=2)


def ravel(a: Array, /) -> Array:
    """``a`` as a 1-d array (row-major)."""
    return manipulation.reshape(a, (-1,))


def swapaxes(a: Array, axis1: int, axis2: int, /) -> Array:
    """``a`` with ``axis1`` and ``axis2`` exchanged."""
    a = a if hasattr(a, "ndim") else creation.asarray(a)
    order = list(range(a.ndim))
    first, second = arguments.axis(axis1, a.ndim, "axis1"), arguments.axis(axis2, a.ndim, "axis2")
    order[first], order[second] = order[second], order[first]
    return manipulation.permute_dims(a, tuple(order))


def identity(n: int, /, *, dtype: DtypeLike | None = None, device: str | None = None) -> Array:
    """The ``n`` x ``n`` identity matrix (the default float dtype unless ``dtype`` says)."""
    return creation.eye(n, dtype=dtype, device=device)


def tri(N: int, /, M: int | None = None, k: int = 0, *, dtype: DtypeLike | None = None,  # noqa: N803 - NumPy's names
        device: str | None = None) -> Array:
    """An ``N`` x ``M`` matrix with ones at and below diagonal ``k``, zeros above."""
    return creation.tril(creation.ones((N, N if M is None else M), dtype=dtype, device=device), k=k)


def logspace(start: float, stop: float, /, num: int = 50, *, endpoint: bool = True, base: float = 10.0,
             dtype: DtypeLike | None = None, device: str | None = None) -> Array:
    """``base ** linspace(start, stop, num)``: ``num`` numbers spaced evenly on a log scale."""
    exponents = creation.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, device=device)
    return elementwise.pow(base, exponents)


def ptp(a: Array, /, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Array:
    """Peak to peak: ``max - min`` along ``axis`` (in a's dtype)."""
    spread = elementwise.subtract(statistical.max(a, axis=axis, keepdims=keepdims),
                                  statistical.min(a, axis=axis, keepdims=keepdims))
    return creation.asarray(spread)  # (NumPy's subtract of two 0-d arrays gives a scalar)


def _sequence(tup: Any, function: str) -> list[Array]:
    """The arrays of a stack function's sequence argument (a non-empty list or tuple)."""
    if not isinstance(tup, (list, tuple)) or not tup:
        raise InvalidArgumentError(f"{function}: expects a non-empty list or tuple of arrays, got {type(tup).__name__}.")
    loose = [type(a).__name__ for a in tup if not hasattr(a, "ndim")]
    if loose:
        raise InvalidArgumentTypeError(f"{function}: expects arrays, got {', '.join(loose)}; pass arrays "
                                       f"(al.asarray(...)), as concat does.")
    return list(tup)


def _at_least(m: Array, ndim: int, function: str) -> None:
    if getattr(m, "ndim", 0) < ndim:
        raise InvalidArgumentError(f"{function}: expects an array of at least {ndim} dimensions, "
                                   f"got {getattr(m, 'ndim', 0)}.")
