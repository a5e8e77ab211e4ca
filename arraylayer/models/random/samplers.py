"""The samplers: ``bits``, ``uniform``, ``normal``, ``truncated_normal``, ``randint``, ``bernoulli``,
``categorical``, ``permutation``."""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

from arraylayer import arguments
from arraylayer.api.creation import full_like
from arraylayer.api.data_types import astype, isdtype
from arraylayer.api.elementwise import add, less, log, maximum, minimum, multiply, negative, nextafter
from arraylayer.api.manipulation import moveaxis
from arraylayer.api.searching import argmax
from arraylayer.api.sorting import argsort
from arraylayer.dtypes.defaults import default_float_dtype, default_int_dtype
from arraylayer.dtypes import Dtype, iinfo
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.api.interchange import to_device
from arraylayer.runtime.native import as_arraylayer_dtype
from arraylayer.runtime.registry import get_backend
from arraylayer.models.random.evaluation import _check_shape, _draw
from arraylayer.models.random.threefry import _BOOL, _FLOAT32, _FLOATS, _words
from arraylayer.models.random.word_transforms import _bernoulli_of, _bits_of, _normal_of, _randint_of, _truncated_of, _unit_of

#: half-precision floats, drawn in float32 and rounded once at the end (the same bits everywhere)
_HALVES = (Dtype("bfloat16"), Dtype("float16"))


def _on_device(key: Any, device: Any) -> Any:
    """``key`` on ``device`` (the samplers' ``device=``); the key's own device when None."""
    return key if device is None else to_device(key, device)


def _float_dtype(dtype: Any, fn: str) -> tuple[Any, Any]:
    """(the dtype drawn in, the dtype returned): bfloat16 and float16 are drawn in float32."""
    dtype = default_float_dtype() if dtype is None else as_arraylayer_dtype(dtype)
    if dtype in _FLOATS:
        return dtype, dtype
    if dtype in _HALVES:
        return _FLOATS[0], dtype
    raise InvalidDtypeError(f"{fn}(dtype={dtype}): expected float32, float64, bfloat16 or float16 "
                            f"(default: the default float dtype).")


def _rounded(x: Any, dtype: Any) -> Any:
    """x (drawn in float32) rounded to ``dtype`` when that is a half-precision float."""
    return x if Dtype(x.dtype) == dtype else astype(x, dtype)


def bits(key: Any, shape: Any = (), *, device: Any = None) -> Any:
    """Random 32-bit words (``jax.random.bits``); int64 on PyTorch, uint32 elsewhere."""
    return _draw(_on_device(key, device), _check_shape(shape), _words().public, _bits_of)


def _check_bounds(minval: Any, maxval: Any) -> None:
    """Python-number bounds must be finite with minval < maxval (array bounds are not read)."""
    numbers_given = []
    for name, value in (("minval", minval), ("maxval", maxval)):
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            continue
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise InvalidArgumentTypeError(f"uniform({name}={value!r}): expected a float or an array.")
        if not math.isfinite(arguments.real_float(value, f"uniform: {name}")):
            raise InvalidArgumentError(f"uniform({name}={value}): the bounds must be finite.")
        numbers_given.append(float(value))
    if len(numbers_given) == 2 and not numbers_given[0] < numbers_given[1]:
        raise InvalidArgumentError(f"uniform(minval={minval}, maxval={maxval}): minval must be < maxval.")


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0, *, device: Any = None) -> Any:
    """Uniform floats in ``[minval, maxval)``; float32 is bit-identical to ``jax.random.uniform``
    (eagerly; under XLA a scaled range may differ by one ulp, see docs/random.rst). The bounds are
    Python floats (checked) or arrays broadcasting against ``shape`` (not read)."""
    shape, (drawn, dtype) = _check_shape(shape), _float_dtype(dtype, "uniform")
    _check_bounds(minval, maxval)
    u = _draw(_on_device(key, device), shape, drawn, functools.partial(_unit_of, dtype=drawn))
    if not (_is_number(minval, 0) and _is_number(maxval, 1)):  # max(u * 1 + 0, 0) is u itself
        # Outside the draw: minval and maxval may be arrays that broadcast against the whole shape.
        u = maximum(add(multiply(u, maxval - minval), minval), minval)
    if drawn == dtype:
        return u
    return minimum(astype(u, dtype), _below(maxval, dtype))  # rounding may reach maxval


def _below(maxval: Any, dtype: Any) -> Any:
    """The largest ``dtype`` value below ``maxval`` (a Python float or an array)."""
    if hasattr(maxval, "dtype"):
        top = astype(maxval, dtype)
        return nextafter(top, full_like(top, -math.inf))
    import numpy as np

    top = np.asarray(maxval, np.float32).astype(get_backend("numpy").as_native_dtype(dtype))
    return float(np.nextafter(top, np.asarray(-np.inf, top.dtype)))


def _is_number(x: Any, value: float) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x == value


def normal(key: Any, shape: Any = (), dtype: Any = None, *, device: Any = None) -> Any:
    """Standard normal floats (inverse-CDF transform of open-interval uniforms)."""
    shape, (drawn, dtype) = _check_shape(shape), _float_dtype(dtype, "normal")
    return _rounded(_draw(_on_device(key, device), shape, drawn, functools.partial(_normal_of, dtype=drawn)), dtype)


def truncated_normal(key: Any, lower: float, upper: float, shape: Any = (),
                     dtype: Any = None, *, device: Any = None) -> Any:
    """Standard normal floats conditioned on ``lower < x < upper`` (inverse CDF).

    An interval above zero is drawn as the negative of its mirror image below zero, where the
    normal CDF keeps its relative precision (above 0 it rounds to 1 and the quantile to NaN)."""
    shape, (drawn, dtype) = _check_shape(shape), _float_dtype(dtype, "truncated_normal")
    lower, upper = (arguments.real_float(b, name) for b, name in ((lower, "lower"), (upper, "upper")))
    if not lower < upper:
        raise InvalidArgumentError(f"truncated_normal(lower={lower}, upper={upper}): lower must be < upper.")
    mirrored = lower > 0
    low, high = (-upper, -lower) if mirrored else (lower, upper)
    x = _draw(_on_device(key, device), shape, drawn,
              functools.partial(_truncated_of, dtype=drawn, lower=low, upper=high))
    return _rounded(negative(x) if mirrored else x, dtype)


def randint(key: Any, shape: Any, minval: int, maxval: int, dtype: Any = None, *,
            device: Any = None) -> Any:
    """Integers in ``[minval, maxval)`` (modulo reduction of 32-bit words; span at most 2**31)."""
    shape = _check_shape(shape)
    dtype = default_int_dtype() if dtype is None else as_arraylayer_dtype(dtype)
    if not isdtype(dtype, "integral"):
        raise InvalidDtypeError(f"randint(dtype={dtype}): expected an integer dtype.")
    for name, v in (("minval", minval), ("maxval", maxval)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidArgumentTypeError(f"randint({name}={v!r}): expected an int.")
    info = iinfo(dtype)
    if not (info.min <= minval < maxval <= info.max + 1) or maxval - minval > 2**31:
        raise InvalidArgumentError(
            f"randint(minval={minval}, maxval={maxval}, dtype={dtype}): need minval < maxval, both "
            f"within {dtype} and a span of at most 2**31.")
    return _draw(_on_device(key, device), shape, dtype,
                 functools.partial(_randint_of, dtype=dtype, minval=minval, span=maxval - minval))


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, *, device: Any = None) -> Any:
    """Booleans that are True with probability ``p``: a Python float in [0, 1], or a floating
    array of the key's backend (broadcast against ``shape``, which defaults to p's shape; its
    values are not read, so p < 0 gives False and p > 1 True)."""
    key = _on_device(key, device)
    if hasattr(p, "dtype") and hasattr(p, "shape"):
        if not isdtype(Dtype(p.dtype), "real floating"):
            raise InvalidArgumentTypeError(f"bernoulli(p of dtype {Dtype(p.dtype)}): p must be floating.")
        shape = tuple(p.shape) if shape is None else _check_shape(shape)
        drawn = Dtype(p.dtype) if Dtype(p.dtype) in _FLOATS else _FLOATS[0]
        return less(_draw(key, shape, drawn, functools.partial(_unit_of, dtype=drawn)), p)
    shape = () if shape is None else _check_shape(shape)
    p = arguments.real_float(p, "p")
    if not 0.0 <= p <= 1.0:
        raise InvalidArgumentError(f"bernoulli(p={p}): p must lie in [0, 1].")
    return _draw(key, shape, _BOOL, functools.partial(_bernoulli_of, p=p))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None, *, device: Any = None) -> Any:
    """Indices drawn with probabilities softmax(logits) along ``axis`` (Gumbel-max); ``logits``
    is a real floating array of at least one dimension."""
    if not hasattr(logits, "dtype") or getattr(logits, "ndim", 0) < 1:
        raise InvalidArgumentTypeError(
            "categorical(logits): expected a floating array with at least one axis (the categories).")
    if not isdtype(Dtype(logits.dtype), "real floating"):
        raise InvalidDtypeError(f"categorical(logits of dtype {Dtype(logits.dtype)}): logits must be real "
                                f"floating; cast first, e.g. arraylayer.astype(logits, 'float32').")
    axis = arguments.axis(axis, logits.ndim, "axis")
    batch = tuple(logits.shape[:axis] + logits.shape[axis + 1:])
    shape = batch if shape is None else _check_shape(shape)
    u = _draw(_on_device(key, device), (*shape, logits.shape[axis]), _FLOAT32,
              functools.partial(_unit_of, dtype=_FLOATS[0], open_low=True))
    gumbel = negative(log(negative(log(u))))
    moved = moveaxis(logits, axis, -1)
    return argmax(add(astype(moved, _FLOAT32), gumbel), axis=-1)


def permutation(key: Any, n: int, *, device: Any = None) -> Any:
    """A random permutation of ``range(n)`` (argsort of random words)."""
    (n,) = _check_shape((n,), "n")
    return argsort(bits(key, (n,), device=device), stable=True)
