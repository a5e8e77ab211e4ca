"""keras.ops' window functions and the Bessel function behind the Kaiser window: compositions of the
standard functions (see arraylayer/api/numpy_extra.py for the rest of the numpy group).

* ``i0``: the modified Bessel function of the first kind, order 0 (integers: the default float).
* Windows of M points, in the default float dtype (NumPy: float64) or ``dtype``: ``bartlett``,
  ``blackman``, ``hamming``, ``hanning``, ``kaiser``.
"""

from __future__ import annotations

import math
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api import creation, data_types, elementwise, searching
from arraylayer.api.dispatch import array_input, not_defined
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import UnsupportedDtypeError

Array = Any

__all__ = ["bartlett", "blackman", "hamming", "hanning", "i0", "kaiser"]

_PI: Final = math.pi


#: I0 for |x| <= _I0_SPLIT: the power series sum_k (x^2/4)^k / (k!)^2, written in u = (x/_I0_SPLIT)^2 so
#: that every coefficient fits float32; above it the asymptotic series e^x / sqrt(2 pi x) * sum_k a_k / x^k.
_I0_SPLIT: Final = 20.0
_I0_SERIES: Final = tuple((_I0_SPLIT ** 2 / 4) ** k / math.factorial(k) ** 2 for k in range(40))
_I0_ASYMPTOTIC: Final = tuple(math.prod((2 * j - 1) ** 2 for j in range(1, k + 1)) / (math.factorial(k) * 8 ** k)
                              for k in range(24))


def _horner(coefficients: tuple[float, ...], u: Array) -> Array:
    total = elementwise.add(elementwise.multiply(u, 0.0), coefficients[-1])
    for c in reversed(coefficients[:-1]):
        total = elementwise.add(elementwise.multiply(total, u), c)
    return total


def i0(x: Array, /) -> Array:
    """The modified Bessel function of the first kind, order 0, of real x (half precision computes in
    float32). A power series up to |x| = 20, the asymptotic series above; both to float64 accuracy."""
    _, x, dtype = array_input(x)
    if dtype.kind not in "biuf":
        raise not_defined("i0", (dtype,), "real numbers")
    if not dtype.is_floating:
        x, dtype = data_types.astype(x, default_float_dtype()), default_float_dtype()
    if dtype.bits < 32:
        x = data_types.astype(x, Dtype("float32"))
    magnitude = elementwise.abs(x)
    near = elementwise.minimum(magnitude, _I0_SPLIT)  # (each branch sees only its own range: no inf gradients)
    far = elementwise.maximum(magnitude, _I0_SPLIT)
    series = _horner(_I0_SERIES, elementwise.square(elementwise.divide(near, _I0_SPLIT)))
    half = elementwise.exp(elementwise.multiply(far, 0.5))  # e^x as a square: no overflow while I0 itself fits
    tail = elementwise.divide(elementwise.multiply(half, _horner(_I0_ASYMPTOTIC, elementwise.reciprocal(far))),
                              elementwise.sqrt(elementwise.multiply(far, 2 * _PI)))
    value = searching.where(elementwise.greater(magnitude, _I0_SPLIT), elementwise.multiply(tail, half), series)
    value = searching.where(elementwise.isinf(magnitude), magnitude, value)  # (inf / inf inside tail)
    return data_types.astype(value, dtype)


# -- windows ----------------------------------------------------------------------------------------

def _window_grid(M: Any, function: str, dtype: DtypeLike | None, device: str | None  # noqa: N803
                 ) -> tuple[int, Array | None, Dtype]:
    """M, the grid ``n / (M - 1)`` for n = 1-M, 3-M, ..., M-1 (from -1 to 1; None when M <= 1) and the dtype."""
    length = arguments.integer(M, "M")
    resolved = default_float_dtype() if dtype is None else as_dtype(dtype)
    if not resolved.is_floating:
        raise UnsupportedDtypeError(f"{function}: dtype={resolved} must be a real floating-point dtype; "
                                    f"windows are real numbers.")
    if length <= 1:
        return length, None, resolved
    grid = creation.arange(1 - length, length, 2, dtype=resolved, device=device)
    return length, elementwise.divide(grid, float(length - 1)), resolved


def _trivial(length: int, dtype: Dtype, device: str | None) -> Array:
    """The window of M <= 1 points: empty, or [1.0]."""
    return creation.ones((max(length, 0),), dtype=dtype, device=device)


def _cosine_window(M: Any, function: str, weights: tuple[float, ...], dtype: DtypeLike | None,  # noqa: N803
                   device: str | None) -> Array:
    """``sum_k weights[k] * cos(k pi r)`` over the grid r from -1 to 1."""
    length, grid, resolved = _window_grid(M, function, dtype, device)
    if grid is None:
        return _trivial(length, resolved, device)
    total = elementwise.add(elementwise.multiply(grid, 0.0), weights[0])
    for k, weight in enumerate(weights[1:], start=1):
        total = elementwise.add(total, elementwise.multiply(elementwise.cos(elementwise.multiply(grid, k * _PI)),
                                                            weight))
    return total


def bartlett(M: int, *, dtype: DtypeLike | None = None, device: str | None = None) -> Array:  # noqa: N803
    """The Bartlett (triangular) window of M points, 0 at both ends and 1 in the middle."""
    length, grid, resolved = _window_grid(M, "bartlett", dtype, device)
    if grid is None:
        return _trivial(length, resolved, device)
    return elementwise.subtract(1.0, elementwise.abs(grid))


def blackman(M: int, *, dtype: DtypeLike | None = None, device: str | None = None) -> Array:  # noqa: N803
    """The Blackman window of M points: ``0.42 - 0.5 cos(2 pi n/(M-1)) + 0.08 cos(4 pi n/(M-1))``."""
    return _cosine_window(M, "blackman", (0.42, 0.5, 0.08), dtype, device)


def hamming(M: int, *, dtype: DtypeLike | None = None, device: str | None = None) -> Array:  # noqa: N803
    """The Hamming window of M points: ``0.54 - 0.46 cos(2 pi n/(M-1))``."""
    return _cosine_window(M, "hamming", (0.54, 0.46), dtype, device)


def hanning(M: int, *, dtype: DtypeLike | None = None, device: str | None = None) -> Array:  # noqa: N803
    """The Hann window of M points: ``0.5 - 0.5 cos(2 pi n/(M-1))``."""
    return _cosine_window(M, "hanning", (0.5, 0.5), dtype, device)


def kaiser(M: int, beta: float, *, dtype: DtypeLike | None = None, device: str | None = None) -> Array:  # noqa: N803
    """The Kaiser window of M points with shape ``beta``: ``i0(beta sqrt(1 - r^2)) / i0(beta)`` for r
    from -1 to 1 (beta = 0: rectangular; larger: narrower)."""
    beta = arguments.real_float(beta, "beta")
    length, grid, resolved = _window_grid(M, "kaiser", dtype, device)
    if grid is None:
        return _trivial(length, resolved, device)
    inside = elementwise.sqrt(elementwise.maximum(elementwise.subtract(1.0, elementwise.square(grid)), 0.0))
    peak = i0(creation.full((), beta, dtype=resolved, device=device))
    return elementwise.divide(i0(elementwise.multiply(inside, beta)), peak)
