"""NumPy's counting and statistics functions beyond the standard: ``average`` (weights),
``bincount``, ``histogram``, ``digitize``, ``corrcoef`` and ``correlate`` (1-d, NumPy's three modes).

Compositions of arraylayer's own functions (as :mod:`arraylayer.api.numpy_style`), so each runs on
every backend with arraylayer's dtype rules, lazily on dask, under jit and autodiff:

* Counts (``bincount``, ``histogram`` without weights) are in the index dtype (the default int),
  found by sorting and ``searchsorted``, not by a scatter; weighted counts sum a one-hot mask, in
  the weights' dtype (integer or bool weights: the default float for ``bincount``, as NumPy's
  float64; ``histogram`` keeps integer weights, as NumPy).
* A result whose length depends on values (``bincount``'s ``max(x) + 1``) needs those values: on a
  lazy (dask) or traced (jit, tf.function, torch.compile) array pass ``length=``, as ``jnp.bincount``.
* Floating results (``average``, ``histogram``'s edges, ``corrcoef``) are in x's float dtype, the
  default float for integers and bool (NumPy: float64; ``corrcoef`` of float32 is float32 here).
* Checks NumPy makes on values (``digitize``'s monotonic bins, weights summing to 0) are made where
  the values are on the host (Python sequences, NumPy arrays); arrays are not read.
"""

from __future__ import annotations

import math
from typing import Any

from arraylayer import arguments
from arraylayer.api import creation, data_types, elementwise, extensions, linalg, searching, sorting, statistical, utility
from arraylayer.api.dispatch import array_input, index_dtype, promoted_inputs
from arraylayer.api.linear_algebra import matmul
from arraylayer.api.numpy_style import zero_padded
from arraylayer.api.manipulation import broadcast_to, concat, expand_dims, flip, permute_dims, reshape
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, UnsupportedDtypeError

Array = Any
Axis = int | tuple[int, ...] | None

__all__ = ["average", "bincount", "corrcoef", "correlate", "digitize", "histogram"]


def _on(x: Array) -> Any:
    """A context creating arrays on x's backend."""
    from arraylayer.runtime.registry import use_backend

    backend, _, _ = array_input(x)
    return use_backend(backend.name)


def _arange(x: Array, n: int, dtype: Any) -> Array:
    backend, _, _ = array_input(x)
    with _on(x):
        return creation.arange(n, dtype=dtype, device=backend.device_of(x))


def _host_values(x: Array) -> Any:
    """x's values as a NumPy array where they are known now, else None (lazy or traced)."""
    backend, native, _ = array_input(x)
    kernels = backend.nn_kernels
    return None if kernels is None else kernels.concrete(native)


def _inexact(x: Array) -> Array:
    """x in its float or complex dtype; bool and integers in the default float."""
    _, x, dtype = array_input(x)
    return x if dtype.category in ("float", "complex") else data_types.astype(x, default_float_dtype())


# -- average --------------------------------------------------------------------------------------

def average(a: Array, /, axis: Axis = None, weights: Array | None = None, returned: bool = False, *,
            keepdims: bool = False) -> Array | tuple[Array, Array]:
    """NumPy's ``average``: ``sum(a * weights) / sum(weights)`` over ``axis`` (``mean`` without
    weights), in the float dtype of a and weights promoted. ``weights`` has a's shape, or is 1-d
    along the one ``axis``. ``returned``: also the sum of weights, broadcast to the result's shape.
    Weights that sum to 0 give NaN or inf (NumPy raises; the sum is not read)."""
    arguments.flag(returned, "returned")
    arguments.flag(keepdims, "keepdims")
    _, a, _ = array_input(a)
    ndim = len(a.shape)
    axes = arguments.axes(axis, ndim)
    if weights is None:
        total = statistical.mean(a, axis=axes, keepdims=keepdims)
        if not returned:
            return total
        count = math.prod(int(n) for n in a.shape) // max(1, math.prod(int(n) for n in total.shape))
        return total, creation.full_like(total, count)
    _, w, _ = array_input(weights)
    if tuple(w.shape) != tuple(a.shape):
        if not isinstance(axes, int) or len(w.shape) != 1 or w.shape[0] != a.shape[axes]:
            raise InvalidArgumentError(
                f"average: weights of shape {tuple(w.shape)} must have a's shape {tuple(a.shape)}, or be 1-d of "
                f"the length of the one axis given (axis=int).")
        w = reshape(w, tuple(-1 if d == axes else 1 for d in range(ndim)))
    _, _, (a, w) = promoted_inputs(_inexact(a), w)
    w = broadcast_to(w, tuple(a.shape))
    scale = statistical.sum(w, axis=axes, keepdims=keepdims)
    total = elementwise.divide(statistical.sum(elementwise.multiply(a, w), axis=axes, keepdims=keepdims), scale)
    return (total, scale) if returned else total


# -- counting -------------------------------------------------------------------------------------

def _integer_input(name: str, x: Array) -> tuple[Array, Any]:
    _, x, dtype = array_input(x)
    if dtype.category not in ("bool", "int", "uint"):
        raise UnsupportedDtypeError(f"{name} counts non-negative integers; got {dtype}. Cast with astype (after "
                                    f"rounding) or use histogram for real values.")
    return x, dtype


def _counts_below(ordered: Array, points: Array, side: str) -> Array:
    """How many of the sorted values lie below each point (``side="right"``: at or below)."""
    return searching.searchsorted(ordered, points, side=side)


def _weighted_bins(index: Array, weights: Array, length: int, keep: Array | None = None) -> Array:
    """``sum(weights[index == j])`` for each bin j < length (a one-hot sum, in weights' dtype)."""
    hits = elementwise.equal(expand_dims(index, axis=-1), _arange(index, length, index.dtype))
    if keep is not None:
        hits = elementwise.logical_and(hits, expand_dims(keep, axis=-1))
    _, weights, dtype = array_input(weights)
    return statistical.sum(searching.where(hits, expand_dims(weights, axis=-1), 0), axis=0, dtype=dtype)


def bincount(x: Array, /, weights: Array | None = None, minlength: int = 0, *, length: int | None = None) -> Array:
    """NumPy's ``bincount``: how often each value 0, 1, ... occurs in the 1-d non-negative integer
    ``x`` (with ``weights``: their sums), ``max(max(x) + 1, minlength)`` long; counts in the index
    dtype, weighted sums in the weights' float dtype (integers: the default float).

    ``length`` fixes the result's length instead (values at or past it are not counted): the one
    way on lazy (dask) and traced (jit) arrays, whose values are unknown when the shape is needed."""
    x, dtype = _integer_input("bincount", x)
    if len(x.shape) != 1:
        raise InvalidArgumentError(f"bincount takes a 1-d x, got shape {tuple(x.shape)}; flatten it with ravel.")
    minlength = arguments.count(minlength, "minlength")
    if length is not None:
        size = arguments.count(length, "length")
    else:
        values = _host_values(x)
        if values is None:
            raise InvalidArgumentError("bincount: x's values are not known yet (a lazy or traced array), so the "
                                       "result's length is not either; pass length= (the number of bins).")
        if values.size and int(values.min()) < 0:
            raise InvalidArgumentError(f"bincount: x holds {int(values.min())}; its values must be non-negative.")
        size = max(int(values.max()) + 1 if values.size else 0, minlength)
    index = data_types.astype(x, index_dtype())
    if weights is not None:
        _, w, _ = array_input(weights)
        if tuple(w.shape) != tuple(x.shape):
            raise InvalidArgumentError(f"bincount: weights of shape {tuple(w.shape)} must have x's shape "
                                       f"{tuple(x.shape)}.")
        return _weighted_bins(index, _inexact(w), size)
    ordered = sorting.sort(index)
    edges = _arange(index, size + 1, index.dtype)
    below = _counts_below(ordered, edges, "left")
    return elementwise.subtract(below[1:], below[:-1])


# -- histogram and digitize -----------------------------------------------------------------------

def _host_edges(name: str, bins: Any) -> Any:
    """Host bin edges (a sequence or NumPy array) as a 1-d float64 NumPy array, checked increasing."""
    import numpy as np

    edges = np.asarray(bins, dtype=np.float64)
    if edges.ndim != 1 or edges.size < 2 or not np.all(np.diff(edges) >= 0):
        raise InvalidArgumentError(f"{name}: bins={bins!r} must be an int or a 1-d increasing sequence of at least "
                                   f"two edges.")
    return edges


def _range(range: Any) -> tuple[float, float] | None:  # noqa: A002 - NumPy's name
    if range is None:
        return None
    if not isinstance(range, (tuple, list)) or len(range) != 2:
        raise InvalidArgumentError(f"histogram: range={range!r} must be a pair (low, high) of real numbers.")
    low, high = (arguments.real_float(v, "range") for v in range)
    if not (math.isfinite(low) and math.isfinite(high)) or low > high:
        raise InvalidArgumentError(f"histogram: range={range!r} must be finite with low <= high.")
    return (low - 0.5, high + 0.5) if low == high else (low, high)


def _uniform_edges(x: Array, bins: int, bounds: tuple[float, float] | None, dtype: Any) -> Array:
    """``bins + 1`` evenly spaced edges from the range (or x's min to max, widened by 0.5 each way
    when equal), as NumPy's ``linspace``: ``first + i * step``, the last edge exactly the end."""
    import numpy as np

    backend, _, _ = array_input(x)
    device = backend.device_of(x)
    if bounds is not None or x.shape[0] == 0:
        low, high = bounds or (0.0, 1.0)
        with _on(x):  # from the host: NumPy computes these edges in float64
            return creation.asarray(np.linspace(low, high, bins + 1).tolist(), dtype=dtype, device=device)
    low, high = statistical.min(x), statistical.max(x)
    same = elementwise.equal(low, high)
    low, high = searching.where(same, elementwise.subtract(low, 0.5), low), \
        searching.where(same, elementwise.add(high, 0.5), high)
    step = elementwise.divide(elementwise.subtract(high, low), bins)
    steps = _arange(x, bins + 1, dtype)
    edges = elementwise.add(elementwise.multiply(steps, step), low)
    return searching.where(elementwise.equal(steps, bins), high, edges)


def histogram(a: Array, /, bins: int | Any = 10, range: tuple[float, float] | None = None,  # noqa: A002
              density: bool = False, weights: Array | None = None) -> tuple[Array, Array]:
    """NumPy's ``histogram`` of flattened ``a``: ``(counts, edges)``. ``bins``: a count of equal bins
    over ``range`` (by default a's min to max), or the edges (increasing; an array of edges is not
    checked). Each bin holds ``edges[i] <= v < edges[i + 1]``, the last one its right edge too;
    values outside and NaN are not counted. Counts in the index dtype, in the weights' dtype with
    ``weights`` (a's shape), in the edges' dtype with ``density`` (counts / total / bin width).
    Edges: a's float dtype (the default float for integers). With ``range=None`` a NaN or inf in
    ``a`` gives NaN edges (NumPy raises; the values are not read)."""
    arguments.flag(density, "density")
    _, a, dtype = array_input(a)
    if dtype.category == "complex":
        raise UnsupportedDtypeError(f"histogram takes real values; got {dtype}. Pass the real part or abs.")
    edge_dtype = dtype if dtype.category == "float" else default_float_dtype()
    x = data_types.astype(reshape(a, (-1,)), edge_dtype)
    bounds = _range(range)
    if isinstance(bins, int) and not isinstance(bins, bool):
        if bins < 1:
            raise InvalidArgumentError(f"histogram: bins={bins} must be at least 1.")
        edges = _uniform_edges(x, bins, bounds, edge_dtype)
    elif hasattr(bins, "shape") and hasattr(bins, "dtype") and not _is_host(bins):
        _, edges, _ = array_input(bins)
        if len(edges.shape) != 1 or edges.shape[0] < 2:
            raise InvalidArgumentError(f"histogram: bins of shape {tuple(edges.shape)} must be 1-d with at least "
                                       f"two edges.")
        edges = data_types.astype(edges, edge_dtype)
    elif isinstance(bins, (list, tuple)) or _is_host(bins):
        with _on(x):
            edges = creation.asarray(_host_edges("histogram", bins).tolist(), dtype=edge_dtype,
                                     device=array_input(x)[0].device_of(x))
    else:
        raise InvalidArgumentTypeError(f"histogram: bins={bins!r} must be an int or a sequence or array of edges.")
    n = int(edges.shape[0]) - 1
    keep = elementwise.logical_and(elementwise.greater_equal(x, edges[0]), elementwise.less_equal(x, edges[-1]))
    if weights is None:
        ordered = sorting.sort(searching.where(keep, x, math.inf))  # NaN and the outside values past every edge
        below = _counts_below(ordered, edges, "left")
        last = _counts_below(ordered, edges[-1:], "right")
        counts = elementwise.subtract(concat([below[1:-1], last]), below[:-1])
    else:
        _, w, _ = array_input(weights)
        if tuple(w.shape) != tuple(a.shape):
            raise InvalidArgumentError(f"histogram: weights of shape {tuple(w.shape)} must have a's shape "
                                       f"{tuple(a.shape)}.")
        index = elementwise.subtract(searching.searchsorted(edges, x, side="right"), 1)
        index = searching.where(elementwise.equal(x, edges[-1]), n - 1, index)
        counts = _weighted_bins(index, reshape(w, (-1,)), n, keep)
    if density:
        widths = elementwise.subtract(edges[1:], edges[:-1])
        counts = data_types.astype(counts, edge_dtype)
        counts = elementwise.divide(elementwise.divide(counts, statistical.sum(counts)), widths)
    return counts, edges


def _is_host(value: Any) -> bool:
    import numpy as np

    return isinstance(value, (np.ndarray, np.generic))


def digitize(x: Array, bins: Array, right: bool = False) -> Array:
    """NumPy's ``digitize``: the index of the bin of each x, ``bins[i - 1] <= x < bins[i]`` for
    increasing bins (``right``: ``bins[i - 1] < x <= bins[i]``; decreasing bins mirrored), in the
    index dtype. Host bins must be monotonic (checked); an array of bins is not read, its direction
    is taken from its ends."""
    import numpy as np

    arguments.flag(right, "right")
    side = "left" if right else "right"
    if isinstance(bins, (list, tuple)) or _is_host(bins):
        edges = np.asarray(bins)
        if edges.ndim != 1 or edges.dtype.kind not in "biuf":
            raise InvalidArgumentError(f"digitize: bins={bins!r} must be a 1-d sequence of real numbers.")
        steps = np.diff(edges.astype(np.float64))
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            raise InvalidArgumentError("digitize: bins must be monotonically increasing or decreasing.")
        backend, _, _ = array_input(x)
        with _on(x):
            bins = creation.asarray(edges.tolist(), device=backend.device_of(array_input(x)[1]))
    _, edges, _ = array_input(bins)
    _, x, _ = array_input(x)
    if len(edges.shape) != 1:
        raise InvalidArgumentError(f"digitize: bins must be 1-d, got shape {tuple(edges.shape)}.")
    rising = searching.searchsorted(edges, x, side=side)
    if edges.shape[0] < 2:
        return rising
    falling = elementwise.subtract(int(edges.shape[0]), searching.searchsorted(flip(edges), x, side=side))
    return searching.where(elementwise.greater(edges[0], edges[-1]), falling, rising)


# -- correlation ----------------------------------------------------------------------------------

def corrcoef(x: Array, y: Array | None = None, rowvar: bool = True) -> Array:
    """NumPy's ``corrcoef``: the Pearson correlation matrix of the variables (x's rows; columns
    with ``rowvar=False``; y's stacked below), clipped to [-1, 1]; a 0-d array for one variable.
    In x's float dtype (integers: the default float); NaN for a constant variable."""
    arguments.flag(rowvar, "rowvar")
    rows = [_variables(x, rowvar)] + ([] if y is None else [_variables(y, rowvar)])
    if len(rows) == 2 and rows[0].shape[1] != rows[1].shape[1]:
        raise InvalidArgumentError(f"corrcoef: x and y need the same number of observations, got "
                                   f"{rows[0].shape[1]} and {rows[1].shape[1]}.")
    _, _, rows = promoted_inputs(*rows)
    m = _inexact(concat(rows, axis=0) if len(rows) == 2 else rows[0])
    centred = elementwise.subtract(m, statistical.mean(m, axis=1, keepdims=True))
    _, _, dtype = array_input(centred)
    complex_ = dtype.category == "complex"
    product = matmul(centred, permute_dims(elementwise.conj(centred) if complex_ else centred, (1, 0)))
    spread = elementwise.sqrt(elementwise.real(linalg.diagonal(product)) if complex_
                              else linalg.diagonal(product))
    c = elementwise.divide(elementwise.divide(product, expand_dims(spread, axis=1)), expand_dims(spread, axis=0))
    if complex_:
        c = elementwise.add(elementwise.clip(elementwise.real(c), -1, 1),
                            elementwise.multiply(elementwise.clip(elementwise.imag(c), -1, 1), 1j))
        c = data_types.astype(c, dtype)
    else:
        c = elementwise.clip(c, -1, 1)
    return reshape(c, ()) if c.shape[0] == 1 else c


def _variables(x: Array, rowvar: bool) -> Array:
    """x as (variables, observations): 1-d is one variable."""
    _, x, dtype = array_input(x)
    if len(x.shape) > 2:
        raise InvalidArgumentError(f"corrcoef takes 1-d or 2-d arrays, got shape {tuple(x.shape)}.")
    if len(x.shape) < 2:
        return reshape(x, (1, -1))
    return x if rowvar else permute_dims(x, (1, 0))


_MODES = ("valid", "same", "full")


def correlate(a: Array, v: Array, /, mode: str = "valid") -> Array:
    """NumPy's ``correlate`` of two 1-d arrays: ``c[k] = sum(a[n + k] * conj(v[n]))``, ``"full"`` at
    every overlap (``len(a) + len(v) - 1``), ``"same"`` the ``max(len)`` centred ones, ``"valid"``
    (the default) where they overlap fully; in the promoted dtype (bool: ``any`` of ``and``).
    Windows are gathered (len(a) x len(v) memory), no FFT."""
    if mode not in _MODES:
        raise InvalidArgumentError(f"correlate: mode={mode!r} is not one of {', '.join(map(repr, _MODES))}.")
    _, dtype, (a, v) = promoted_inputs(a, v)
    if len(a.shape) != 1 or len(v.shape) != 1 or 0 in (a.shape[0], v.shape[0]):
        raise InvalidArgumentError(f"correlate takes two non-empty 1-d arrays, got shapes {tuple(a.shape)} and "
                                   f"{tuple(v.shape)}.")
    n, m = int(a.shape[0]), int(v.shape[0])
    windows = extensions.sliding_window_view(zero_padded(a, m - 1, m - 1), m)  # (n + m - 1, m)
    if dtype.category == "bool":
        full = utility.any(elementwise.logical_and(windows, v), axis=-1)
    elif dtype.category == "complex":
        full = matmul(windows, elementwise.conj(v))
    else:
        full = matmul(windows, v)
    short, size = min(n, m), {"full": n + m - 1, "same": max(n, m), "valid": abs(n - m) + 1}[mode]
    start = {"full": 0, "same": (short - 1) // 2 if n >= m else short // 2, "valid": short - 1}[mode]
    return full[start:start + size]

