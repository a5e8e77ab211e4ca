"""The low-precision rule of the model toolkit: a function of float8, float6 or float4 arrays
computes in float32 and rounds its results once (docs/low_precision.rst, "Models").

The frameworks have no float8 convolution, pooling, erf, sigmoid ... (torch and TensorFlow raise
their own errors, NumPy's einsum refuses the type) and JAX computes some of them natively in float8
with roundings of its own. :func:`rounded_once` gives every backend one answer, the one the
element-wise rule gives (``arraylayer.lowp.compute``): the arguments of the format are widened to
float32 exactly, the function runs on them with the framework's own float32 operations, and each
float32 result is rounded once back to the format with ml_dtypes' rounding (a NaN becomes the
format's one positive NaN). Wherever the frameworks' float32 results agree, the bits do.

Nothing else changes: float16 and bfloat16 compute natively (a framework's half-precision kernels
are its fast path on an accelerator), integer arguments stay as they are, and a float8 array beside
an array of another float dtype raises the TypePromotionError promotion gives.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, Final

from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import isnan
from arraylayer.api.searching import where
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.dtypes.promotion import result_type
from arraylayer.models.tree import tree_flatten

__all__ = ["rounded_once"]

_FLOAT32: Final = Dtype("float32")


def _low_float(leaves: Iterable[Any], trees: bool = False) -> Dtype | None:
    """The low-precision float dtype of the floating arrays among ``leaves``, or None. Floating arrays
    of another dtype beside it raise promotion's TypePromotionError (nothing is widened silently);
    in a tree (``trees``) they give None: each leaf then computes in its own dtype."""
    found = None
    floating = []
    for leaf in leaves:
        dtype = getattr(leaf, "dtype", None)
        if dtype is None:
            continue
        dtype = as_dtype(dtype)
        if dtype.category == "float":
            floating.append(dtype)
            if dtype.is_low_precision:
                found = dtype
    if found is not None and any(d != found for d in floating):
        if trees:
            return None
        result_type(*floating)  # raises: no implicit promotion path
    return found


def _any_low(values: Iterable[Any]) -> bool:
    """Whether an array of a float8/6/4 dtype is among ``values`` (the short check of the common
    case; :func:`_low_float` then decides, and raises where it must)."""
    for value in values:
        dtype = getattr(value, "dtype", None)
        if dtype is not None:
            d = as_dtype(dtype)
            if d.is_low_precision and d.category == "float":
                return True
    return False


def _widened(value: Any, dtype: Dtype) -> Any:
    """An array of ``dtype`` as float32 (exact: every float8/6/4 value is a float32); others as they are."""
    if getattr(value, "dtype", None) is not None and as_dtype(value.dtype) == dtype:
        return astype(value, "float32")
    return value


def _rounded(value: Any, dtype: Dtype) -> Any:
    """A float32 array rounded once to ``dtype`` (one positive NaN); others as they are."""
    if getattr(value, "dtype", None) is not None and as_dtype(value.dtype) == _FLOAT32:
        return astype(where(isnan(value), float("nan"), value), dtype)
    return value


def _each(function: Callable[[Any, Dtype], Any], tree: Any, dtype: Dtype) -> Any:
    leaves, rebuild = tree_flatten(tree)
    return rebuild([function(leaf, dtype) for leaf in leaves])


def rounded_once(function: Callable[..., Any], *, trees: bool = False) -> Callable[..., Any]:
    """``function`` by the low-precision rule (module docstring). Its arguments and results are arrays
    (tuples and named tuples of results are rounded leaf by leaf); with ``trees`` they are parameter
    trees (an optimizer's ``update(grads, state, params)``), searched and rebuilt leaf by leaf; a tree
that mixes a float8/6/4 dtype with other floats computes each leaf in its own dtype, as it would
without this rule (its outputs could not be told apart to round back)."""

    @functools.wraps(function)
    def computed(*args: Any, **kwargs: Any) -> Any:
        if trees:
            dtype = _low_float(tree_flatten((args, kwargs))[0], trees=True)
        elif not kwargs:  # the common case, kept short (an activation's cost is a few microseconds)
            if not _any_low(args):
                return function(*args)
            dtype = _low_float(args)
        elif not _any_low((*args, *kwargs.values())):
            return function(*args, **kwargs)
        else:
            dtype = _low_float((*args, *kwargs.values()))
        if dtype is None:
            return function(*args, **kwargs)
        if trees:
            args, kwargs = _each(_widened, (args, kwargs), dtype)
        else:
            args, kwargs = [_widened(a, dtype) for a in args], {k: _widened(v, dtype) for k, v in kwargs.items()}
        return _each(_rounded, function(*args, **kwargs), dtype)

    return computed
