"""Functional, splittable random numbers: the same key gives the same numbers on every backend.

The generator is threefry-2x32 (20 rounds, the counter-based generator JAX uses), written once
with arraylayer's own integer operations. A key is a native array of shape ``(2,)`` of the
backend it was made on: ``uint32`` on NumPy, JAX and TensorFlow; ``int64`` holding values in
``[0, 2**32)`` on PyTorch (whose uint32 tensors lack arithmetic). ``key``, ``split``,
``fold_in``, ``bits`` and ``uniform`` (float32) are bit-identical to ``jax.random`` with its
default partitionable threefry; ``normal`` and the others use their own (documented) transforms.

Every sampler is an element-wise function of the generator's words for the counters
``0 .. n-1``; how that one function is evaluated depends on the backend (``_EVALUATORS``):
compiled whole on JAX and TensorFlow, in cache-sized tiles on NumPy and eager PyTorch, and per
chunk (the NumPy tiles inside each task) on dask. Every way gives the same bits.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from typing import Any, NamedTuple

from . import dropout_masks
from .api import arguments
from .api.creation import arange, asarray, empty, full_like
from .api.data_types import astype, isdtype
from .api.elementwise import (
    add,
    bitwise_and,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    clip,
    divide,
    less,
    log,
    maximum,
    minimum,
    multiply,
    negative,
    nextafter,
    remainder,
    sqrt,
    subtract,
)
from .api.manipulation import concat, moveaxis, reshape, stack
from .api.searching import argmax, where
from .api.sorting import argsort
from .context import replaying
from .defaults import default_float_dtype, default_int_dtype
from .dtypes import Dtype, finfo, iinfo
from .errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from .interchange import dev, to_device
from .native import as_arraylayer_dtype
from .registry import current_backend, get_backend, use_backend

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli",
           "categorical", "permutation", "truncated_normal"]

_MASK = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
_FLOATS = (Dtype("float32"), Dtype("float64"))
#: half-precision floats, drawn in float32 and rounded once at the end (the same bits everywhere)
_HALVES = (Dtype("bfloat16"), Dtype("float16"))


class _Words(NamedTuple):
    """The dtypes of a backend's 32-bit words: ``public`` for keys and ``bits``, ``rounds`` for
    the arithmetic of the rounds."""

    public: Dtype
    rounds: Dtype


_UINT32 = Dtype("uint32")
_INT32 = Dtype("int32")
_INT64 = Dtype("int64")
_FLOAT32 = Dtype("float32")
_BOOL = Dtype("bool")
#: PyTorch has no uint32 arithmetic. Its rounds run in int32, whose two's-complement add, xor and
#: left shift give the same 32 bits as uint32 (only the right shift needs a mask, see _shr); its
#: keys and bits stay int64 in [0, 2**32), as documented. Every other backend: uint32 throughout.
_WORDS: dict[str, _Words] = {"torch": _Words(Dtype("int64"), _INT32)}
_UNSIGNED = _Words(_UINT32, _UINT32)


def _words() -> _Words:
    return _WORDS.get(current_backend(), _UNSIGNED)


def _to_rounds(x: Any) -> Any:
    """Public words (a key) as the rounds' words: int64 -> int32 wraps to the same 32 bits."""
    words = _words()
    return x if words.public == words.rounds else astype(x, words.rounds)


def _to_public(x: Any) -> Any:
    """The rounds' words as public words: int32 -> int64 in [0, 2**32) on PyTorch."""
    words = _words()
    return x if words.public == words.rounds else bitwise_and(astype(x, words.public), _MASK)


def _word(value: int) -> int:
    """A Python int in [0, 2**32) as the rounds' word holds it (negative above 2**31 in int32)."""
    return value - 2**32 if value >= 2**31 and _words().rounds == _INT32 else value


def _as_is(value: int) -> int:
    """The rounds' integer constants as Python ints (the default; see _constants)."""
    return value


def _shr(x: Any, r: int, const: Any = _as_is) -> Any:
    """Logical right shift of 32-bit words; int32 words shift in copies of the sign bit, masked off."""
    shifted = bitwise_right_shift(x, const(r))
    return bitwise_and(shifted, const((1 << (32 - r)) - 1)) if _words().rounds == _INT32 else shifted


def _rotl(x: Any, r: int, const: Any) -> Any:
    return bitwise_or(bitwise_left_shift(x, const(r)), _shr(x, 32 - r, const))


def _compile_jax(f: Any) -> Any:
    import jax

    return jax.jit(f)


def _compile_tensorflow(f: Any) -> Any:
    import tensorflow as tf

    return tf.function(f, jit_compile=True, reduce_retracing=True)


#: The frameworks whose compiler fuses the ~120 integer operations of threefry into one kernel:
#: the same operations, so the same bits, an order of magnitude faster than one at a time.
_COMPILERS: dict[str, Any] = {"jax": _compile_jax, "tensorflow": _compile_tensorflow}
_COMPILED: dict[str, Any] = {}


def _threefry(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """threefry-2x32 of the counters (x0, x1) under the key words (k0, k1), compiled where the
    backend's compiler fuses it (inside a user's own jit/tf.function it is simply inlined)."""
    name = current_backend()
    compiled = _COMPILED.get(name)
    if compiled is None:
        make = _COMPILERS.get(name)
        compiled = _COMPILED[name] = _threefry_rounds if make is None else make(_threefry_rounds)
    return compiled(k0, k1, x0, x1)  # type: ignore[no-any-return]


def _threefry_rounds(k0: Any, k1: Any, x0: Any, x1: Any, const: Any = _as_is) -> tuple[Any, Any]:
    """threefry-2x32 (20 rounds) written with arraylayer's integer operations; every add wraps
    modulo 2**32 in the rounds' words (uint32, or int32 on PyTorch). ``const`` gives the integer
    constants (shift counts, masks, round numbers) in the form the caller wants them."""
    ks = (k0, k1, bitwise_xor(bitwise_xor(k0, k1), _PARITY))
    x0, x1 = add(x0, ks[0]), add(x1, ks[1])
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 = add(x0, x1)
            x1 = bitwise_xor(_rotl(x1, r, const), x0)
        x0 = add(x0, ks[(group + 1) % 3])
        # (x1 + k) + g == x1 + (k + g) modulo 2**32: one pass over x1, the other on a key word.
        x1 = add(x1, add(ks[(group + 2) % 3], const(group + 1)))
    return x0, x1


# -- evaluating a draw ------------------------------------------------------------------------
# A draw is transform(y0, y1): an element-wise function of the two threefry output words of each
# counter in [start, stop) (the high counter words are zero: fewer than 2**32 draws).

#: Elements per tile where the rounds run one operation at a time: each of the ~120 operations
#: then reads and writes cache-resident tiles instead of streaming whole arrays through memory.
#: PyTorch's tile is its parallel grain size (32768), so no operation wakes its thread pool.
_TILES: dict[str, int] = {"numpy": 2**16, "torch": 2**15}


def _device(k: Any) -> Any:
    """The key's device; None under a tracer that cannot tell (jax.jit), meaning the default."""
    try:
        return dev(k)
    except Exception:
        return None


def _key_words(key: Any) -> tuple[Any, Any]:
    words = _to_rounds(key)
    return words[0], words[1]


# al.zeros_like cannot run under jax.jit: the high words are and(counters, 0).
def _counters(key: Any, start: int, stop: int) -> Any:
    if stop > 2**31 and _words().rounds == _INT32:  # int32 cannot count that far: wrap from int64
        return astype(arange(start, stop, dtype=_INT64, device=_device(key)), _INT32)
    return arange(start, stop, dtype=_words().rounds, device=_device(key))


def _whole(key: Any, start: int, stop: int, transform: Any, dtype: Any = None) -> Any:
    """The draw for counters [start, stop) in one pass of whole-array operations: the way for
    compilers (jax.jit, tf.function, torch.compile) and for small draws."""
    k0, k1 = _key_words(key)
    lo = _counters(key, start, stop)
    y0, y1 = _threefry(k0, k1, bitwise_and(lo, 0), lo)
    return transform(y0, y1)


def _constants(key: Any) -> Any:
    """The rounds' integer constants as 0-d arrays of the words, each made once per draw: PyTorch
    turns a Python int into a tensor on every operation (~2 us, ~65 times per tile)."""
    made: dict[int, Any] = {}

    def const(value: int) -> Any:
        if value not in made:
            made[value] = asarray(value, dtype=_words().rounds, device=_device(key))
        return made[value]

    return const


def _tiled(key: Any, start: int, stop: int, transform: Any, dtype: Any) -> Any:
    """The draw for counters [start, stop), tile by tile into one preallocated result (eager,
    on the CPU: on an accelerator whole-array operations are faster)."""
    tile = _TILES[current_backend()]
    # under torch.compile (context.replaying) tiles would be traced one by one: whole arrays
    if stop - start <= tile or replaying() or _device(key) != "cpu":
        return _whole(key, start, stop, transform)
    k0, k1 = _key_words(key)
    out = empty((stop - start,), dtype=dtype, device=_device(key))
    const = _constants(key)
    for first in range(start, stop, tile):  # high counter words: 0-d zeros, broadcast by the rounds
        lo = _counters(key, first, min(first + tile, stop))
        y0, y1 = _threefry_rounds(k0, k1, const(0), lo, const)
        out[first - start:first - start + tile] = transform(y0, y1)
    return out


def _numpy_block(bounds: Any, key: Any, *, transform: Any, dtype: Any) -> Any:
    """One dask chunk: the NumPy evaluation (tiled) of counters [start, stop)."""
    start, stop = (int(b) for b in bounds[0])
    with use_backend("numpy"):
        return _tiled(key, start, stop, transform, dtype)


def _blocks(key: Any, start: int, stop: int, transform: Any, dtype: Any) -> Any:
    """dask: one task per chunk (dask's default chunks for ``dtype``) running the NumPy tiles,
    instead of ~120 whole-chunk operations; lazy like any dask array."""
    import dask.array as da
    import numpy as np

    native = np.dtype(str(dtype))
    (sizes,) = da.core.normalize_chunks("auto", (stop - start,), dtype=native)
    ends = start + np.cumsum(sizes, dtype=np.int64)
    bounds = da.from_array(np.stack([ends - np.asarray(sizes, np.int64), ends], axis=1), chunks=(1, 2))
    block = functools.partial(_numpy_block, transform=transform, dtype=dtype)
    return da.blockwise(block, "i", bounds, "ib", da.asarray(key), "k", dtype=native, concatenate=True,
                        adjust_chunks={"i": sizes}, meta=np.empty((0,), native))


#: How each backend evaluates a draw; the others (JAX, TensorFlow) compile it whole.
_EVALUATORS: dict[str, Any] = {"numpy": _tiled, "torch": _tiled, "dask": _blocks}


def _draw(key: Any, shape: tuple[int, ...], dtype: Any, transform: Any) -> Any:
    """``transform(y0, y1)`` for the counters ``0 .. prod(shape)-1``, of ``dtype``, as ``shape``."""
    key = _check_key(key)
    evaluate = _EVALUATORS.get(current_backend(), _whole)
    return reshape(evaluate(key, 0, math.prod(shape), transform, dtype), shape)


def _check_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise InvalidArgumentTypeError(
            f"{name}={shape!r}: expected a tuple of non-negative ints, e.g. (3, 4).") from None
    if any(d < 0 for d in dims):
        raise InvalidArgumentError(f"{name}={shape!r}: dimensions must be non-negative, e.g. (3, 4).")
    return dims


def _check_key(k: Any) -> Any:
    """The key, in the active backend's public words: a key moved from another backend
    (``to_backend``) arrives as that backend's integer dtype and is converted exactly."""
    shape = getattr(k, "shape", None)
    if shape is None or tuple(shape) != (2,):
        raise InvalidArgumentTypeError(
            f"key={k!r}: expected a key made by arraylayer.random.key(seed) (an array of shape (2,)).")
    public = _words().public
    if Dtype(k.dtype) is public:
        return k
    if not isdtype(Dtype(k.dtype), "integral"):
        raise InvalidArgumentTypeError(
            f"key of dtype {Dtype(k.dtype)}: a key holds two 32-bit words of an integer dtype; "
            f"make it with arraylayer.random.key(seed).")
    words = astype(k, public)
    return words if public is _UINT32 else bitwise_and(words, _MASK)


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


def key(seed: int, *, device: Any = None) -> Any:
    """A key from an integer seed, as ``jax.random.key_data(jax.random.key(seed))``."""
    if isinstance(seed, bool) or not isinstance(seed, int) and not hasattr(seed, "__index__"):
        raise InvalidArgumentTypeError(f"key(seed={seed!r}): the seed must be an int, e.g. key(0).")
    seed = operator.index(seed)
    if not -(2**63) <= seed < 2**64:
        raise InvalidArgumentError(f"key(seed={seed}): the seed must fit in 64 bits.")
    seed %= 2**64
    return asarray([seed >> 32, seed & _MASK], dtype=_words().public, device=device)


def _keys_of(y0: Any, y1: Any) -> Any:
    """Keys from the words of each counter: shape (n, 2)."""
    return stack([_to_public(y0), _to_public(y1)], axis=-1)


def split(key: Any, num: int = 2) -> Any:
    """``num`` new keys, as an array of shape ``(num, 2)`` (``jax.random.split``)."""
    key = _check_key(key)
    (num,) = _check_shape((num,), "num")
    eager = dropout_masks.split(current_backend(), key, num)
    return _whole(key, 0, num, _keys_of) if eager is None else eager


def fold_in(key: Any, data: Any) -> Any:
    """A new key that mixes the 32-bit integer ``data`` into ``key`` (``jax.random.fold_in``).

    ``data`` is an int (Python or NumPy) or a 0-d integer array of the key's backend, traced ones
    included (a step counter inside a compiled training step); its low 32 bits are used."""
    key = _check_key(key)
    k0, k1 = _key_words(key)
    if isinstance(data, numbers.Integral) and not isinstance(data, bool):
        x = asarray([_word(int(data) & _MASK)], dtype=_words().rounds, device=_device(key))
    elif hasattr(data, "dtype") and getattr(data, "ndim", None) == 0 and isdtype(Dtype(data.dtype), "integral"):
        x = reshape(astype(data, _words().rounds), (1,))  # the low 32 bits (two's complement)
    else:
        raise InvalidArgumentTypeError(
            f"fold_in(data={data!r}): data must be an int or a 0-d integer array of the key's backend.")
    y0, y1 = _threefry(k0, k1, bitwise_and(x, 0), x)
    return concat([_to_public(y0), _to_public(y1)])


# -- element-wise transforms of the words (the ``transform`` of _draw) ------------------------

def _bits_of(y0: Any, y1: Any) -> Any:
    """The 32-bit words of ``jax.random.bits``, public dtype."""
    return _to_public(bitwise_xor(y0, y1))


def _unit_of(y0: Any, y1: Any, *, dtype: Any, open_low: bool = False) -> Any:
    """Uniform floats in [0, 1) (or (0, 1) when open_low), from the top bits of the words."""
    if dtype == _FLOATS[0]:
        m = astype(_shr(bitwise_xor(y0, y1), 9), _FLOAT32)
        return multiply(add(m, 0.5) if open_low else m, 2.0**-23)
    hi = astype(_shr(y0, 6), _FLOATS[1])
    lo = astype(_shr(y1, 5), _FLOATS[1])
    m = add(multiply(hi, 2.0**27), lo)
    return multiply(add(m, 0.5) if open_low else m, 2.0**-53)


def _normal_of(y0: Any, y1: Any, *, dtype: Any) -> Any:
    return _quantile(_unit_of(y0, y1, dtype=dtype, open_low=True))


def _truncated_of(y0: Any, y1: Any, *, dtype: Any, lower: float, upper: float) -> Any:
    """Normal quantiles of uniforms rescaled to [cdf(lower), cdf(upper)], clipped to the bounds."""
    cdf_low, cdf_high = (0.5 * math.erfc(-b / math.sqrt(2)) for b in (lower, upper))
    u = _unit_of(y0, y1, dtype=dtype, open_low=True)
    p = add(multiply(u, cdf_high - cdf_low), cdf_low)
    info = finfo(dtype)  # strictly inside (0, 1): the quantile of 0 or 1 is infinite (or NaN)
    p = clip(p, info.smallest_normal, 1.0 - info.eps / 2)
    return clip(_quantile(p), lower, upper)


def _randint_of(y0: Any, y1: Any, *, dtype: Any, minval: int, span: int) -> Any:
    offset = remainder(_bits_of(y0, y1), span)
    # Two's-complement wrap-around makes cast-then-add exact even when the offset overflows dtype.
    return add(astype(offset, dtype), minval)


def _bernoulli_of(y0: Any, y1: Any, *, p: float) -> Any:
    return less(_unit_of(y0, y1, dtype=_FLOATS[0]), p)


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
        if not math.isfinite(value):
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


# Acklam's rational approximation of the standard normal quantile function.
_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02,
      1.383577518672690e02, -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02,
      6.680131188771082e01, -1.328068155288572e01, 1.0)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00,
      -2.549732539343734e00, 4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00,
      3.754408661907416e00, 1.0)
_P_LOW = 0.02425


def _poly(coefficients: tuple[float, ...], x: Any) -> Any:
    result = coefficients[0]
    for c in coefficients[1:]:
        result = add(multiply(result, x), c)
    return result


def _quantile(p: Any) -> Any:
    """The standard normal quantile of p in (0, 1)."""
    q = subtract(p, 0.5)
    r = multiply(q, q)
    central = divide(multiply(_poly(_A, r), q), _poly(_B, r))
    tail_p = minimum(p, subtract(1.0, p))
    t = sqrt(multiply(log(tail_p), -2.0))
    tail = divide(_poly(_C, t), _poly(_D, t))
    tail = where(less(p, 0.5), tail, negative(tail))
    return where(less(tail_p, _P_LOW), tail, central)


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
    lower, upper = (float(arguments.real_scalar(b, name)) for b, name in ((lower, "lower"), (upper, "upper")))
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
    p = float(arguments.real_scalar(p, "p"))
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
