"""Functional, splittable random numbers: the same key gives the same numbers on every backend.

The generator is threefry-2x32 (20 rounds, the counter-based generator JAX uses), written once
with arraylayer's own integer operations. A key is a native array of shape ``(2,)`` of the
backend it was made on: ``uint32`` on NumPy, JAX and TensorFlow; ``int64`` holding values in
``[0, 2**32)`` on PyTorch (whose uint32 tensors lack arithmetic). ``key``, ``split``,
``fold_in``, ``bits`` and ``uniform`` (float32) are bit-identical to ``jax.random`` with its
default partitionable threefry; ``normal`` and the others use their own (documented) transforms.
"""

from __future__ import annotations

import math
import numbers
import operator
from typing import Any

import arraylayer as al

from .api import arguments
from .dtypes import Dtype
from .errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli",
           "categorical", "permutation", "truncated_normal"]

_MASK = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
_FLOATS = (Dtype("float32"), Dtype("float64"))
# Backends without uint32 arithmetic keep words in int64 and mask after each step.
_MASKED_BACKENDS = frozenset({"torch"})


def _masked() -> bool:
    return al.current_backend() in _MASKED_BACKENDS


def _word() -> Any:
    return al.int64 if _masked() else al.uint32


def _wrap(x: Any) -> Any:
    return al.bitwise_and(x, _MASK) if _masked() else x


def _rotl(x: Any, r: int) -> Any:
    left = _wrap(al.bitwise_left_shift(x, r))
    return al.bitwise_or(left, al.bitwise_right_shift(x, 32 - r))


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
    name = al.current_backend()
    compiled = _COMPILED.get(name)
    if compiled is None:
        make = _COMPILERS.get(name)
        compiled = _COMPILED[name] = _threefry_rounds if make is None else make(_threefry_rounds)
    return compiled(k0, k1, x0, x1)  # type: ignore[no-any-return]


def _threefry_rounds(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """threefry-2x32 (20 rounds) written with arraylayer's integer operations."""
    ks = (k0, k1, al.bitwise_xor(al.bitwise_xor(k0, k1), _PARITY))
    x0, x1 = _wrap(al.add(x0, ks[0])), _wrap(al.add(x1, ks[1]))
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 = _wrap(al.add(x0, x1))
            x1 = al.bitwise_xor(_rotl(x1, r), x0)
        x0 = _wrap(al.add(x0, ks[(group + 1) % 3]))
        x1 = _wrap(al.add(al.add(x1, ks[(group + 2) % 3]), group + 1))
    return x0, x1


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


def _check_key(k: Any) -> tuple[Any, Any]:
    """The key's two words, in the words of the active backend: a key moved from another backend
    (``to_backend``) arrives as that backend's integer dtype and is converted exactly."""
    shape = getattr(k, "shape", None)
    if shape is None or tuple(shape) != (2,):
        raise InvalidArgumentTypeError(
            f"key={k!r}: expected a key made by arraylayer.random.key(seed) (an array of shape (2,)).")
    if al.Dtype(k.dtype) is not _word():
        if not al.isdtype(al.Dtype(k.dtype), "integral"):
            raise InvalidArgumentTypeError(
                f"key of dtype {al.Dtype(k.dtype)}: a key holds two 32-bit words of an integer dtype; "
                f"make it with arraylayer.random.key(seed).")
        k = _wrap(al.astype(k, _word()))
    return k[0], k[1]


def _on_device(key: Any, device: Any) -> Any:
    """``key`` on ``device`` (the samplers' ``device=``); the key's own device when None."""
    return key if device is None else al.to_device(key, device)


def _float_dtype(dtype: Any, fn: str) -> Any:
    dtype = al.default_float_dtype() if dtype is None else al.as_arraylayer_dtype(dtype)
    if dtype not in _FLOATS:
        raise InvalidDtypeError(f"{fn}(dtype={dtype}): expected float32 or float64 (default: the "
                                f"default float dtype).")
    return dtype


def key(seed: int, *, device: Any = None) -> Any:
    """A key from an integer seed, as ``jax.random.key_data(jax.random.key(seed))``."""
    if isinstance(seed, bool) or not isinstance(seed, int) and not hasattr(seed, "__index__"):
        raise InvalidArgumentTypeError(f"key(seed={seed!r}): the seed must be an int, e.g. key(0).")
    seed = operator.index(seed)
    if not -(2**63) <= seed < 2**64:
        raise InvalidArgumentError(f"key(seed={seed}): the seed must fit in 64 bits.")
    seed %= 2**64
    return al.asarray([seed >> 32, seed & _MASK], dtype=_word(), device=device)


def _device(k: Any) -> Any:
    """The key's device; None under a tracer that cannot tell (jax.jit), meaning the default."""
    try:
        return al.dev(k)
    except Exception:
        return None


# High counter words are zero (fewer than 2**32 draws); al.zeros_like cannot run under jax.jit.
def _counters(k: Any, n: int) -> Any:
    return al.arange(n, dtype=_word(), device=_device(k))


def split(key: Any, num: int = 2) -> Any:
    """``num`` new keys, as an array of shape ``(num, 2)`` (``jax.random.split``)."""
    k0, k1 = _check_key(key)
    (num,) = _check_shape((num,), "num")
    lo = _counters(key, num)
    y0, y1 = _threefry(k0, k1, al.bitwise_and(lo, 0), lo)
    return al.stack([y0, y1], axis=-1)


def fold_in(key: Any, data: Any) -> Any:
    """A new key that mixes the 32-bit integer ``data`` into ``key`` (``jax.random.fold_in``).

    ``data`` is an int (Python or NumPy) or a 0-d integer array of the key's backend, traced ones
    included (a step counter inside a compiled training step); its low 32 bits are used."""
    k0, k1 = _check_key(key)
    if isinstance(data, numbers.Integral) and not isinstance(data, bool):
        x = al.asarray([int(data) & _MASK], dtype=_word(), device=_device(key))
    elif hasattr(data, "dtype") and getattr(data, "ndim", None) == 0 and al.isdtype(al.Dtype(data.dtype), "integral"):
        x = al.reshape(_wrap(al.astype(data, _word())), (1,))
    else:
        raise InvalidArgumentTypeError(
            f"fold_in(data={data!r}): data must be an int or a 0-d integer array of the key's backend.")
    y0, y1 = _threefry(k0, k1, al.bitwise_and(x, 0), x)
    return al.concat([y0, y1])


def _bits_pair(key: Any, shape: tuple[int, ...]) -> tuple[Any, Any]:
    k0, k1 = _check_key(key)
    lo = _counters(key, math.prod(shape))
    y0, y1 = _threefry(k0, k1, al.bitwise_and(lo, 0), lo)
    return al.reshape(y0, shape), al.reshape(y1, shape)


def bits(key: Any, shape: Any = (), *, device: Any = None) -> Any:
    """Random 32-bit words (``jax.random.bits``); int64 on PyTorch, uint32 elsewhere."""
    y0, y1 = _bits_pair(_on_device(key, device), _check_shape(shape))
    return al.bitwise_xor(y0, y1)


def _unit(key: Any, shape: tuple[int, ...], dtype: Any, open_low: bool = False) -> Any:
    """Uniform floats in [0, 1) (or (0, 1) when open_low), from the top bits of the words."""
    if dtype == _FLOATS[0]:
        m = al.astype(al.bitwise_right_shift(bits(key, shape), 9), al.float32)
        return al.multiply(al.add(m, 0.5) if open_low else m, 2.0**-23)
    y0, y1 = _bits_pair(key, shape)
    hi = al.astype(al.bitwise_right_shift(y0, 6), _FLOATS[1])
    lo = al.astype(al.bitwise_right_shift(y1, 5), _FLOATS[1])
    m = al.add(al.multiply(hi, 2.0**27), lo)
    return al.multiply(al.add(m, 0.5) if open_low else m, 2.0**-53)


def _bound(value: Any, parameter: str, fn: str) -> float:
    """A finite Python real (``minval``/``maxval``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise InvalidArgumentTypeError(f"{fn}({parameter}={value!r}): expected a Python float.")
    value = float(value)
    if not math.isfinite(value):
        raise InvalidArgumentError(f"{fn}({parameter}={value}): the bounds must be finite.")
    return value


def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: float = 0.0,
            maxval: float = 1.0, *, device: Any = None) -> Any:
    """Uniform floats in ``[minval, maxval)``; float32 is bit-identical to ``jax.random.uniform``
    (eagerly; under XLA a scaled range may differ by one ulp, see docs/random.rst)."""
    shape, dtype = _check_shape(shape), _float_dtype(dtype, "uniform")
    low, high = _bound(minval, "minval", "uniform"), _bound(maxval, "maxval", "uniform")
    if not low < high:
        raise InvalidArgumentError(f"uniform(minval={low}, maxval={high}): minval must be < maxval.")
    u = _unit(_on_device(key, device), shape, dtype)
    if (low, high) == (0.0, 1.0):
        return u
    return al.maximum(al.add(al.multiply(u, high - low), low), low)


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
        result = al.add(al.multiply(result, x), c)
    return result


def _quantile(p: Any) -> Any:
    """The standard normal quantile of p in (0, 1)."""
    q = al.subtract(p, 0.5)
    r = al.multiply(q, q)
    central = al.divide(al.multiply(_poly(_A, r), q), _poly(_B, r))
    tail_p = al.minimum(p, al.subtract(1.0, p))
    t = al.sqrt(al.multiply(al.log(tail_p), -2.0))
    tail = al.divide(_poly(_C, t), _poly(_D, t))
    tail = al.where(al.less(p, 0.5), tail, al.negative(tail))
    return al.where(al.less(tail_p, _P_LOW), tail, central)


def normal(key: Any, shape: Any = (), dtype: Any = None, *, device: Any = None) -> Any:
    """Standard normal floats (inverse-CDF transform of open-interval uniforms)."""
    shape, dtype = _check_shape(shape), _float_dtype(dtype, "normal")
    return _quantile(_unit(_on_device(key, device), shape, dtype, open_low=True))


def truncated_normal(key: Any, lower: float, upper: float, shape: Any = (),
                     dtype: Any = None, *, device: Any = None) -> Any:
    """Standard normal floats conditioned on ``lower < x < upper`` (inverse CDF).

    An interval above zero is drawn as the negative of its mirror image below zero, where the
    normal CDF keeps its relative precision (above 0 it rounds to 1 and the quantile to NaN); the
    probabilities stay strictly inside (0, 1)."""
    shape, dtype = _check_shape(shape), _float_dtype(dtype, "truncated_normal")
    lower, upper = (float(arguments.real_scalar(b, name)) for b, name in ((lower, "lower"), (upper, "upper")))
    if not lower < upper:
        raise InvalidArgumentError(f"truncated_normal(lower={lower}, upper={upper}): lower must be < upper.")
    mirrored = lower > 0
    low, high = (-upper, -lower) if mirrored else (lower, upper)
    cdf_low, cdf_high = (0.5 * math.erfc(-b / math.sqrt(2)) for b in (low, high))
    u = _unit(_on_device(key, device), shape, dtype, open_low=True)
    p = al.add(al.multiply(u, cdf_high - cdf_low), cdf_low)
    info = al.finfo(dtype)
    p = al.clip(p, info.smallest_normal, 1.0 - info.eps / 2)
    x = al.clip(_quantile(p), low, high)
    return al.negative(x) if mirrored else x


def randint(key: Any, shape: Any, minval: int, maxval: int, dtype: Any = None, *,
            device: Any = None) -> Any:
    """Integers in ``[minval, maxval)`` (modulo reduction of 32-bit words; span at most 2**31)."""
    shape = _check_shape(shape)
    dtype = al.default_int_dtype() if dtype is None else al.as_arraylayer_dtype(dtype)
    if not al.isdtype(dtype, "integral"):
        raise InvalidDtypeError(f"randint(dtype={dtype}): expected an integer dtype.")
    for name, v in (("minval", minval), ("maxval", maxval)):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidArgumentTypeError(f"randint({name}={v!r}): expected an int.")
    info = al.iinfo(dtype)
    if not (info.min <= minval < maxval <= info.max + 1) or maxval - minval > 2**31:
        raise InvalidArgumentError(
            f"randint(minval={minval}, maxval={maxval}, dtype={dtype}): need minval < maxval, both "
            f"within {dtype} and a span of at most 2**31.")
    offset = al.remainder(bits(key, shape, device=device), maxval - minval)
    # Two's-complement wrap-around makes cast-then-add exact even when the offset overflows dtype.
    return al.add(al.astype(offset, dtype), minval)


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, *, device: Any = None) -> Any:
    """Booleans that are True with probability ``p``: a Python float in [0, 1], or a floating
    array of the key's backend (broadcast against ``shape``, which defaults to p's shape; its
    values are not read, so p < 0 gives False and p > 1 True)."""
    key = _on_device(key, device)
    if hasattr(p, "dtype") and hasattr(p, "shape"):
        if not al.isdtype(al.Dtype(p.dtype), "real floating"):
            raise InvalidArgumentTypeError(f"bernoulli(p of dtype {al.Dtype(p.dtype)}): p must be floating.")
        shape = tuple(p.shape) if shape is None else _check_shape(shape)
        drawn = al.Dtype(p.dtype) if al.Dtype(p.dtype) in _FLOATS else _FLOATS[0]
        return al.less(_unit(key, shape, drawn), p)
    shape = () if shape is None else _check_shape(shape)
    p = float(arguments.real_scalar(p, "p"))
    if not 0.0 <= p <= 1.0:
        raise InvalidArgumentError(f"bernoulli(p={p}): p must lie in [0, 1].")
    return al.less(_unit(key, shape, al.float32), p)


def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None, *, device: Any = None) -> Any:
    """Indices drawn with probabilities softmax(logits) along ``axis`` (Gumbel-max); ``logits``
    is a real floating array of at least one dimension."""
    if not hasattr(logits, "dtype") or getattr(logits, "ndim", 0) < 1:
        raise InvalidArgumentTypeError(
            "categorical(logits): expected a floating array with at least one axis (the categories).")
    if not al.isdtype(al.Dtype(logits.dtype), "real floating"):
        raise InvalidDtypeError(f"categorical(logits of dtype {al.Dtype(logits.dtype)}): logits must be real "
                                f"floating; cast first, e.g. arraylayer.astype(logits, 'float32').")
    axis = arguments.axis(axis, logits.ndim, "axis")
    batch = tuple(logits.shape[:axis] + logits.shape[axis + 1:])
    shape = batch if shape is None else _check_shape(shape)
    u = _unit(_on_device(key, device), (*shape, logits.shape[axis]), al.float32, open_low=True)
    gumbel = al.negative(al.log(al.negative(al.log(u))))
    moved = al.moveaxis(logits, axis, -1)
    return al.argmax(al.add(al.astype(moved, al.float32), gumbel), axis=-1)


def permutation(key: Any, n: int, *, device: Any = None) -> Any:
    """A random permutation of ``range(n)`` (argsort of random words)."""
    (n,) = _check_shape((n,), "n")
    return al.argsort(bits(key, (n,), device=device), stable=True)
