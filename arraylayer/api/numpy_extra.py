"""The rest of keras.ops' numpy group that model and signal code reaches for: compositions of the
standard functions, so each runs on every backend with arraylayer's (JAX-like) dtype rules, lazily
on dask and under jit and autodiff, with no kernel of its own.

* Splitting and joining: ``split``, ``array_split``, ``hsplit``, ``vsplit``, ``dsplit`` (a list of
  arrays, as NumPy), ``append``.
* Element-wise: ``angle``, ``cbrt``, ``fabs``, ``fmod`` (C's sign rule: the sign of x1), ``gcd``,
  ``lcm`` (integers), ``ldexp``, ``sinc``. (``i0`` and the windows: arraylayer/api/numpy_windows.py.)
* Others: ``geomspace``, ``vander``, ``trapezoid``, ``unravel_index``, ``select``, ``argpartition``.

Where NumPy's result dtype comes from value-based rules or float64 defaults, the dtype is JAX's:
integer input of the inexact functions gives the default float (NumPy: float64), ``vander`` keeps
x's dtype (NumPy: int64 for ints), ``unravel_index`` the indices' dtype (NumPy: intp) and
``argpartition`` the default index dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import (
    creation,
    data_types,
    elementwise,
    indexing,
    manipulation,
    searching,
    sorting,
    statistical,
    utility,
)
from arraylayer.api.dispatch import array_input, not_defined, promoted_inputs
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype, iinfo
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError

Array = Any

__all__ = [
    "angle", "append", "argpartition", "array_split", "cbrt", "dsplit", "fabs", "fmod", "gcd", "geomspace", "hsplit",
    "lcm", "ldexp", "select", "sinc", "split", "trapezoid", "unravel_index", "vander", "vsplit",
]

_PI: Final = math.pi
#: More sections than elements give empty ones (NumPy's rule); beyond this many, only up to the axis' length.
_MAX_EMPTY_SECTIONS: Final = 1024


# -- helpers ----------------------------------------------------------------------------------------

def _on_backend(x: Any) -> Any:
    """The ``use_backend`` context of x's backend (new arrays are created beside x)."""
    from arraylayer.runtime.registry import use_backend

    return use_backend(array_input(x)[0].name)


def _inexact(x: Array, function: str, kinds: str = "biuf") -> Array:
    """x as an array of an inexact dtype: bool and integers in the default float dtype (JAX's rule;
    NumPy gives float64). Kinds outside ``kinds`` are refused."""
    _, x, dtype = array_input(x)
    if dtype.kind not in kinds:
        raise not_defined(function, (dtype,), "real numbers" if "c" not in kinds else "numbers")
    return x if dtype.is_floating or dtype.is_complex else data_types.astype(x, default_float_dtype())


def _positions(backend: Any, device: Any, values: range | list[int]) -> Array:
    """Python ints as a 1-d index array of ``backend`` (int32 unless too long)."""
    values = list(values)
    return backend.asarray(values, Dtype("int32") if len(values) < 2**31 - 1 else Dtype("int64"), device)


# -- split, array_split, hsplit, vsplit, dsplit, append ---------------------------------------------

def _split_bounds(function: str, spec: Any, length: int, equal: bool) -> list[tuple[Any, Any]]:
    """(start, stop) slice bounds of each part: from a number of sections or from split indices."""
    if isinstance(spec, (list, tuple)):
        cuts = [arguments.integer(i, "indices_or_sections") for i in spec]
        return list(zip([0, *cuts], [*cuts, None], strict=True))
    sections = arguments.integer(spec, "indices_or_sections")
    if not 0 < sections <= max(length, _MAX_EMPTY_SECTIONS):
        raise InvalidArgumentError(f"{function}: indices_or_sections={sections} must be a positive number of "
                                   f"sections (at most {max(length, _MAX_EMPTY_SECTIONS)} here: the axis' length or "
                                   f"{_MAX_EMPTY_SECTIONS}) or a list of split indices.")
    if equal and length % sections:
        raise InvalidArgumentError(f"{function}: an axis of length {length} does not split into {sections} equal "
                                   f"sections; use array_split for unequal ones.")
    size, extra = divmod(length, sections)
    stops = [0]
    for i in range(sections):
        stops.append(stops[-1] + size + (1 if i < extra else 0))
    return list(zip(stops[:-1], stops[1:], strict=True))


def _split(function: str, ary: Array, spec: Any, axis: int, equal: bool) -> list[Array]:
    backend, ary, _ = array_input(ary)
    ndim = len(ary.shape)
    if ndim == 0:
        raise InvalidArgumentError(f"{function}: expects an array of at least 1 dimension, got a 0-d array.")
    axis = arguments.axis(axis, ndim)
    length = int(ary.shape[axis])
    device = backend.device_of(ary)
    every = range(length)
    return [indexing.take(ary, _positions(backend, device, every[start:stop]), axis=axis)
            for start, stop in _split_bounds(function, spec, length, equal)]


def split(ary: Array, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """``ary`` split along ``axis`` into equal sections (an int, which must divide the axis) or at
    the given indices (a list: ``[2, 3]`` gives ``ary[:2]``, ``ary[2:3]``, ``ary[3:]``), as a list."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary: Array, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Array]:
    """``split``, where n sections of an axis of length l need not be equal: the first ``l % n``
    sections have one element more."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary: Array, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along axis 1 (axis 0 for 1-d arrays)."""
    ndim = len(array_input(ary)[1].shape)
    return _split("hsplit", ary, indices_or_sections, 1 if ndim > 1 else 0, equal=True)


def vsplit(ary: Array, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along axis 0 of an array of at least 2 dimensions."""
    _at_least(ary, 2, "vsplit")
    return _split("vsplit", ary, indices_or_sections, 0, equal=True)


def dsplit(ary: Array, indices_or_sections: int | Sequence[int]) -> list[Array]:
    """``split`` along axis 2 of an array of at least 3 dimensions."""
    _at_least(ary, 3, "dsplit")
    return _split("dsplit", ary, indices_or_sections, 2, equal=True)


def _at_least(ary: Array, ndim: int, function: str) -> None:
    got = len(array_input(ary)[1].shape)
    if got < ndim:
        raise InvalidArgumentError(f"{function}: expects an array of at least {ndim} dimensions, got {got}.")


def append(arr: Array, values: Any, axis: int | None = None) -> Array:
    """``values`` joined after ``arr``: both flattened when ``axis`` is None, else along ``axis``
    (where the other axes must match). A Python number takes part in promotion as a weak scalar
    (``append(int32 array, 1.5)`` is float32, JAX's dtype; NumPy gives float64)."""
    backend, arr, _ = array_input(arr)
    if not hasattr(values, "dtype"):
        dtype = data_types.result_type(arr, values) if type(values) in (bool, int, float, complex) else None
        with _on_backend(arr):
            values = creation.asarray(values, dtype=dtype, device=backend.device_of(arr))
    if axis is None:
        return manipulation.concat([manipulation.reshape(arr, (-1,)), manipulation.reshape(values, (-1,))], axis=0)
    return manipulation.concat([arr, values], axis=arguments.integer(axis, "axis"))


# -- element-wise -----------------------------------------------------------------------------------

def angle(z: Array, /, deg: bool = False) -> Array:
    """The counterclockwise angle of each complex number from the positive real axis, in radians
    (degrees with ``deg=True``): ``atan2(imag(z), real(z))``; real input gives 0 or pi (pi for -0.0)."""
    deg = arguments.flag(deg, "deg")
    _, z, dtype = array_input(z)
    if dtype.is_bool or dtype.is_integer:
        z = data_types.astype(z, default_float_dtype())
    radians = elementwise.atan2(elementwise.imag(z), elementwise.real(z))
    return elementwise.multiply(radians, 180.0 / _PI) if deg else radians


def cbrt(x: Array, /) -> Array:
    """The real cube root, negative for negative x (-0.0 stays -0.0): ``|x| ** (1/3)`` with its sign,
    refined by one Newton step to the dtype's full precision."""
    x = _inexact(x, "cbrt")
    magnitude = elementwise.abs(x)
    root = elementwise.pow(magnitude, 1.0 / 3.0)
    fine = elementwise.logical_and(elementwise.isfinite(root), elementwise.greater(root, 0))
    safe = searching.where(fine, root, 1.0)  # (0, inf and NaN skip the step: no 0/0 there, in values or gradients)
    # the step relative to the root (y - (y^3 - a) / 3y^2 as y + y (a/y^3 - 1) / 3): y^3 - a itself can be
    # subnormal, which XLA flushes to zero
    ratio = elementwise.divide(magnitude, elementwise.multiply(elementwise.multiply(safe, safe), safe))
    refined = elementwise.add(safe, elementwise.multiply(safe, elementwise.divide(elementwise.subtract(ratio, 1.0), 3.0)))
    return elementwise.copysign(searching.where(fine, refined, root), x)


def fabs(x: Array, /) -> Array:
    """The absolute value as a float (integers and bool: the default float dtype). Complex input
    is refused, as NumPy does; use ``abs``."""
    return elementwise.abs(_inexact(x, "fabs"))


def fmod(x1: Array, x2: Array, /) -> Array:
    """The remainder of ``x1 / x2`` with C's sign rule: the sign of the dividend x1 (``remainder``
    takes the divisor's). Integers: x2 == 0 gives 0, as ``remainder``; floats: NaN."""
    _, dtype, (x1, x2) = promoted_inputs(x1, x2)
    if dtype.kind not in "iuf":
        raise not_defined("fmod", (dtype,), "integers or real floating-point numbers")
    rest = elementwise.remainder(x1, x2)
    if dtype.is_unsigned:
        return rest
    # where rest (the divisor's sign) and x1 differ in sign, C's remainder is rest - x2 (exact in floats)
    flipped = elementwise.logical_and(elementwise.not_equal(rest, 0),
                                      elementwise.not_equal(elementwise.less(rest, 0), elementwise.less(x1, 0)))
    result = searching.where(flipped, elementwise.subtract(rest, x2), rest)
    if dtype.is_floating:  # |x1| < |x2|: x1 itself, exactly (also for an infinite x2)
        result = searching.where(elementwise.less(elementwise.abs(x1), elementwise.abs(x2)), x1, result)
    return result


def _integers(x1: Array, x2: Array, function: str) -> tuple[Dtype, Array, Array]:
    """The dtype and ``|x1|``, ``|x2|`` promoted to it, which must be an integer dtype."""
    dtype = data_types.result_type(x1, x2)
    if not dtype.is_integer:
        raise not_defined(function, (dtype,), "integers")
    _, _, (a, b) = promoted_inputs(x1, x2)
    return dtype, elementwise.abs(a), elementwise.abs(b)


def _euclid_steps(dtype: Dtype) -> int:
    """The most remainder steps Euclid's algorithm takes on values of ``dtype`` (Lamé: n steps need
    a value of at least the Fibonacci number F(n+2)), plus one for a first pair in the wrong order."""
    largest, previous, current, steps = iinfo(dtype).max, 1, 2, 1
    while current <= largest:
        previous, current, steps = current, previous + current, steps + 1
    return steps + 1


def gcd(x1: Array, x2: Array, /) -> Array:
    """The greatest common divisor of ``|x1|`` and ``|x2|`` (``gcd(0, 0)`` is 0), for integers; a fixed
    number of Euclid's steps for the dtype, so it also runs traced and lazily."""
    dtype, a, b = _integers(x1, x2, "gcd")
    a, b = manipulation.broadcast_arrays(a, b)
    for _ in range(_euclid_steps(dtype)):
        done = elementwise.equal(b, 0)
        a, b = (searching.where(done, a, b),
                searching.where(done, b, elementwise.remainder(a, searching.where(done, 1, b))))
    return a


def lcm(x1: Array, x2: Array, /) -> Array:
    """The least common multiple of ``|x1|`` and ``|x2|`` (0 when either is 0), for integers."""
    _, a, b = _integers(x1, x2, "lcm")
    divisor = gcd(a, b)
    zero = elementwise.equal(divisor, 0)
    return searching.where(zero, 0, elementwise.multiply(
        elementwise.floor_divide(a, searching.where(zero, 1, divisor)), b))


def ldexp(x1: Array, x2: Array, /) -> Array:
    """``x1 * 2 ** x2`` for integer exponents x2, in x1's float dtype (integer x1: the default
    float). Two factors of ``2 ** (x2 / 2)`` so that a large x2 with a small x1 does not overflow."""
    exponent_dtype = data_types.result_type(x2)
    if not exponent_dtype.is_integer:
        raise not_defined("ldexp", (exponent_dtype,), "integer exponents x2")
    if hasattr(x1, "dtype"):
        x1 = _inexact(x1, "ldexp")
        dtype = array_input(x1)[2]
    else:
        dtype = data_types.result_type(arguments.real_float(x1, "x1"), default_float_dtype())
    if not hasattr(x2, "dtype"):
        with _on_backend(x1):
            x2 = creation.asarray(x2, dtype=exponent_dtype)
    half = elementwise.floor_divide(x2, 2)
    first = elementwise.pow(2.0, data_types.astype(half, dtype))
    second = elementwise.pow(2.0, data_types.astype(elementwise.subtract(x2, half), dtype))
    return data_types.astype(elementwise.multiply(elementwise.multiply(x1, first), second), dtype)


def sinc(x: Array, /) -> Array:
    """The normalized sinc function ``sin(pi x) / (pi x)``, 1 at 0 (in values and in gradients)."""
    x = _inexact(x, "sinc")
    zero = elementwise.equal(x, 0)
    scaled = elementwise.multiply(searching.where(zero, 1.0, x), _PI)
    return searching.where(zero, 1.0, elementwise.divide(elementwise.sin(scaled), scaled))


# -- geomspace, vander, trapezoid, unravel_index, select, argpartition ------------------------------

def geomspace(start: float, stop: float, /, num: int = 50, *, endpoint: bool = True, dtype: DtypeLike | None = None,
              axis: int = 0, device: str | None = None) -> Array:
    """``num`` numbers from ``start`` to ``stop`` (both non-zero, of one sign) spaced evenly on a log scale,
    the ends exactly start and stop. An integer dtype truncates the floats, as NumPy does."""
    low, high = arguments.real_float(start, "start"), arguments.real_float(stop, "stop")
    num = arguments.count(num, "num")
    endpoint = arguments.flag(endpoint, "endpoint")
    arguments.axis(axis, 1)
    if low == 0 or high == 0:
        raise InvalidArgumentError("geomspace: a geometric sequence cannot include zero; pass non-zero start and stop.")
    if (low < 0) != (high < 0):
        raise InvalidArgumentError(f"geomspace: start={low} and stop={high} differ in sign; a real geometric "
                                   f"sequence stays on one side of zero.")
    resolved = default_float_dtype() if dtype is None else as_dtype(dtype)
    compute = resolved if resolved.is_floating else default_float_dtype()
    exponents = creation.linspace(math.log10(abs(low)), math.log10(abs(high)), num, endpoint=endpoint,
                                  dtype=compute, device=device)
    values = elementwise.multiply(elementwise.pow(10.0, exponents), -1.0 if low < 0 else 1.0)
    if num:
        position = creation.arange(num, device=device)
        values = searching.where(elementwise.equal(position, 0), low, values)
        if endpoint:
            values = searching.where(elementwise.equal(position, num - 1), high, values)
    return data_types.astype(values, resolved)


def vander(x: Array, N: int | None = None, increasing: bool = False) -> Array:  # noqa: N803
    """The Vandermonde matrix of 1-d x: column j is ``x ** (N - 1 - j)`` (``x ** j`` when increasing),
    in x's dtype (NumPy: int64 for integer x), built by repeated multiplication as NumPy does."""
    increasing = arguments.flag(increasing, "increasing")
    backend, x, dtype = array_input(x)
    if len(x.shape) != 1:
        raise InvalidArgumentError(f"vander: x must be a 1-d array, got {len(x.shape)} dimensions.")
    if dtype.is_bool:
        raise not_defined("vander", (dtype,), "numbers")
    rows = int(x.shape[0])
    columns = rows if N is None else arguments.count(N, "N")
    if columns == 0:
        with _on_backend(x):
            return creation.zeros((rows, 0), dtype=dtype, device=backend.device_of(x))
    repeated = manipulation.broadcast_to(manipulation.expand_dims(x, axis=1), (rows, columns - 1))
    powers = statistical.cumulative_prod(repeated, axis=1, dtype=dtype, include_initial=True)
    return powers if increasing else manipulation.flip(powers, axis=1)


def trapezoid(y: Array, x: Array | None = None, dx: float = 1.0, axis: int = -1) -> Array:
    """The integral of y along ``axis`` by the trapezoidal rule: at sample points x (1-d of the axis'
    length, or y's shape), else spaced by ``dx``. Integer y gives the default float (NumPy: float64)."""
    backend, y, _ = array_input(y)
    ndim = len(y.shape)
    if ndim == 0:
        raise InvalidArgumentError("trapezoid: y must have at least 1 dimension, got a 0-d array.")
    axis = arguments.axis(axis, ndim)
    length = int(y.shape[axis])
    y = _inexact(y, "trapezoid")
    device = backend.device_of(y)
    upper = indexing.take(y, _positions(backend, device, range(1, length)), axis=axis)
    lower = indexing.take(y, _positions(backend, device, range(length - 1)), axis=axis)
    if x is None:
        spacing: Any = arguments.real_float(dx, "dx")
    else:
        _, x, _ = array_input(x)
        if len(x.shape) == 1:
            if int(x.shape[0]) != length:
                raise InvalidArgumentError(f"trapezoid: x has {int(x.shape[0])} points for an axis of length {length}; "
                                           f"pass one sample point per element.")
            spacing = manipulation.reshape(utility.diff(x), tuple(-1 if a == axis else 1 for a in range(ndim)))
        elif tuple(x.shape) == tuple(y.shape):
            spacing = utility.diff(x, axis=axis)
        else:
            raise InvalidArgumentError(f"trapezoid: x of shape {tuple(x.shape)} is neither 1-d nor y's shape "
                                       f"{tuple(y.shape)}.")
    areas = elementwise.divide(elementwise.multiply(spacing, elementwise.add(upper, lower)), 2.0)
    return statistical.sum(areas, axis=axis)


def unravel_index(indices: Array, shape: Sequence[int]) -> tuple[Array, ...]:
    """The coordinates in an array of ``shape`` of each flat (row-major) index, one array per axis, in
    the indices' dtype. As in JAX (whose values are traced), negative indices count from the end and
    others out of range are clipped; NumPy raises for them."""
    dims = arguments.shape(shape, "shape")
    _, indices, dtype = array_input(indices)
    if not dtype.is_integer:
        raise not_defined("unravel_index", (dtype,), "integer indices")
    size = math.prod(dims)
    if size == 0:
        raise InvalidArgumentError(f"unravel_index: shape={dims} has no elements to index.")
    largest = iinfo(dtype).max
    if not dtype.is_unsigned:
        shifted = elementwise.add(indices, size) if size <= largest else elementwise.multiply(indices, 0)
        indices = searching.where(elementwise.less(indices, 0), shifted, indices)
    rest = elementwise.clip(indices, 0, min(size - 1, largest))
    coordinates = []
    for dim in reversed(dims):
        if dim > largest:  # every index of the dtype lies inside this axis
            coordinates.append(rest)
            rest = elementwise.multiply(rest, 0)
            continue
        coordinates.append(elementwise.remainder(rest, dim))
        rest = elementwise.floor_divide(rest, dim)
    return tuple(reversed(coordinates))


def select(condlist: Sequence[Array], choicelist: Sequence[Any], default: Any = 0) -> Array:
    """Element-wise, the choice of the first true condition (``default`` where none is), broadcast
    together, in the promoted dtype of the choices and the default."""
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        raise InvalidArgumentTypeError("select: condlist and choicelist must be lists (or tuples) of arrays.")
    if len(condlist) != len(choicelist):
        raise InvalidArgumentError(f"select: condlist has {len(condlist)} entries and choicelist {len(choicelist)}; "
                                   f"pass one choice per condition.")
    if not condlist:
        raise InvalidArgumentError("select: condlist is empty; pass at least one condition.")
    for i, condition in enumerate(condlist):
        if not hasattr(condition, "dtype") or not array_input(condition)[2].is_bool:
            raise InvalidArgumentTypeError(f"select: condlist[{i}] must be a bool array; compare first (e.g. x > 0).")
    dtype = data_types.result_type(*choicelist, default)
    result = default
    for condition, choice in zip(reversed(condlist), reversed(choicelist), strict=True):
        result = searching.where(condition, choice, result)
    return data_types.astype(result, dtype)  # (where broadcast conditions, choices and default together)


def argpartition(x: Array, kth: int | Sequence[int], axis: int | None = -1) -> Array:
    """Indices that partition x along ``axis`` around each ``kth`` position: the element at kth is
    the one a sort puts there, none before it is larger and none after it smaller. This returns a
    full (stable) sort's indices, which is one such partition; only the partition is promised."""
    _, x, _ = array_input(x)
    if axis is None:
        x, axis = manipulation.reshape(x, (-1,)), 0
    axis = arguments.axis(axis, len(x.shape))
    length = int(x.shape[axis])
    for k in (kth if isinstance(kth, (list, tuple)) else [kth]):
        k = arguments.integer(k, "kth")
        if not -length <= k < length:
            raise InvalidArgumentError(f"argpartition: kth={k} is out of bounds for an axis of length {length}; "
                                       f"pass a position from {-length} to {length - 1}.")
    return sorting.argsort(x, axis=axis, stable=True)
