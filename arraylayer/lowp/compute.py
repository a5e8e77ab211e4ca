"""The computation rule for the low-precision formats: compute in a wider type, round once.

Every element-wise and statistical function of the standard runs on a low-precision array the
same way on every backend, whatever kernel the framework has: the inputs are decoded to float32
(int32 for int4/uint4/int2/uint2; exact), arraylayer's own float32 (int32) function runs, and a
result in that wide type is rounded once back to the input's format with ml_dtypes' rounding. A NaN
result becomes the format's one positive NaN (the frameworks' float32 functions disagree on the sign
of the NaN they make: NumPy's ``acos(2)`` is ``-nan``). ``nextafter`` gives the format's next value,
as ml_dtypes and JAX do (float32's next value would round back to the input). Bool results stay
bool; results that the function's own rule puts in another type stay there (``sqrt`` of an int4 is float32, as of an int8; ``sum``/``prod``/
``cumulative_*`` of the integer formats accumulate in and return the default int, as for int8).
Integer results wrap into the format (``int4(7) + int4(1)`` is ``-8``), as JAX and ml_dtypes do and
as int8 arithmetic does everywhere.

Promotion is JAX's: two arrays of one format compute; a low-precision array next to an array of any
other dtype is a TypePromotionError naming the ``astype`` to write; a Python scalar is weak and is
rounded to the format first (``x + 0.1`` adds 0.1015625 to a float8_e4m3fn array, as JAX does).

How, so that the bits agree by construction: every format has at most 8 bits, so an element-wise
function of one format is a table of its 2**bits results (2**(2*bits) for two operands: 65,536 at
most), computed once per function and format with arraylayer's NumPy float32 kernel, and
each backend gathers from it with its own ops (eagerly and under jax.jit, torch.compile and
tf.function). The frameworks' own float32 ``log2``, ``hypot``, ``acos`` ... differ from NumPy's by
an ulp here and there, and such an ulp moves a result across a float8 rounding boundary (XLA's
``log2(2**-15)`` is not -15): computing per backend would not give one answer. Reductions (``sum``,
``prod``, ``mean``, ``std``, ``var``, ``max``, ``min``, ``cumulative_*``) compute in float32 (int32)
on the backend and round once; their inputs' float32 sums are exact for short runs of float8 values,
not in general, so a long reduction can differ in the last bit of float32 before the rounding.

:func:`rule_kernel` is what the api layer's :func:`~arraylayer.api.dispatch.kernel` gives for a
low-precision dtype, so ``arraylayer.add`` (and every function above) follows the rule on every
backend; the element-wise planners ask for it once per dtype combination and keep it in their plans.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, Final

import numpy as np

from arraylayer.errors import ScalarOverflowError
from arraylayer.dtypes.function_rules import BINARY, UNARY
from arraylayer.lowp._ops import ops_of
from arraylayer.lowp.casts import cast, decode, decode_table, format_of, native_codes, to_native
from arraylayer.lowp.exact import EXACT, INDEX_VALUED, ZERO_TESTS
from arraylayer.lowp.formats import FORMATS, Format, get_format

__all__ = ["rule_kernel", "wide_name", "FUNCTIONS", "ACCUMULATING"]

#: The statistical functions the rule covers, with the kinds they take (letters as in function_rules).
STATISTICAL: Final = {"sum": "iuf", "prod": "iuf", "cumulative_sum": "iuf", "cumulative_prod": "iuf",
                      "max": "iuf", "min": "iuf", "mean": "iuf", "std": "iuf", "var": "iuf"}
#: Every function :func:`rule_kernel` runs, with the kinds it takes (``EXACT``: order and selection, lowp/exact.py).
FUNCTIONS: Final = {**{n: s.kinds for n, s in UNARY.items()}, **{n: s.kinds for n, s in BINARY.items()}, **STATISTICAL,
                    **EXACT}
#: Functions whose integer result is an accumulator (the default int), not the input's format.
ACCUMULATING: Final = frozenset({"sum", "prod", "cumulative_sum", "cumulative_prod"})
#: Functions whose int32 result stays int32: accumulators and indices.
_KEPT_WIDE: Final = ACCUMULATING | INDEX_VALUED
#: Functions whose result is a tuple of the values (rounded back) and index arrays (kept).
_VALUES_FIRST: Final = frozenset({"unique_counts", "unique_inverse", "unique_all"})


_NAN: Final = float("nan")


def wide_name(f: Format) -> str:
    """The type a format computes in: float32, or int32 for the integer formats."""
    return "float32" if f.is_float else "int32"


def _kind(f: Format) -> str:
    return "f" if f.is_float else "i" if f.signed else "u"


def _widen(ops: Any, x: Any, f: Format) -> Any:
    if f.is_float:
        return decode(x, None, "float32")
    return ops.astype(x, "int32")  # numpy and JAX, the two that store the integer formats, cast exactly


def _zero_keys(ops: Any, x: Any, f: Format) -> Any:
    """uint8 keys that are 0 exactly where ``x`` is zero (+0 or -0), never for float8_e8m0fnu (no zero):
    nonzero reads the codes, as float32 would flush e8m0's 2**-127 to zero on XLA."""
    keys = native_codes(ops, x, f)
    if f.specials == "e8m0":
        return keys | 1
    return keys & ((1 << f.bits) - 1 - f.sign_bit) if f.specials in ("ieee", "fn", "finite") else keys


def _narrow(ops: Any, y: Any, f: Format) -> Any:
    if f.is_float:  # one NaN: the frameworks' float32 functions disagree on the sign of the NaN they make
        return cast(ops.where(ops.isnan(y), _NAN, y), f)
    return ops.astype(y, f.name)  # wraps, as ml_dtypes and XLA define the cast (9 -> -7 for int4)


def _scalar(value: Any, f: Format, name: str) -> Any:
    """A Python scalar next to an array of ``f``: weak, converted to the format first (JAX's rule)."""
    if type(value) is bool:
        return value
    if f.is_float and type(value) in (int, float):
        import ml_dtypes

        return float(np.asarray(value, np.float32).astype(getattr(ml_dtypes, f.name)).astype(np.float32))
    if not f.is_float and type(value) is int:
        if not f.min <= value <= f.max:
            raise ScalarOverflowError(
                f"{name}: the Python int {value} does not fit {f.name} ({int(f.min)} to {int(f.max)}); "
                f"cast the array to a wider integer type first (astype(x, 'int32'))."
            )
        return value
    return value  # an int format next to a float scalar: computed as int32 with it (the default float)


@cache
def _table(fn: str, format: str, arity: int) -> tuple[np.ndarray, bool]:
    """``fn``'s results for every code (every pair of codes) of ``format``, by the rule, on NumPy:
    the result codes (uint8) where the result is in the format, else the result values; and which."""
    import ml_dtypes

    from arraylayer.runtime.registry import get_backend

    f = FORMATS[format]
    count = 1 << f.bits
    codes = np.arange(count, dtype=np.uint8)
    inexact = not f.is_float and (UNARY.get(fn) or BINARY[fn]).rule == "inexact"  # int4 in sqrt: float32
    values = decode(codes, f, "float32" if inexact else wide_name(f))
    inputs = (values,) if arity == 1 else (np.repeat(values, count), np.tile(values, count))
    with np.errstate(all="ignore"):
        if fn == "nextafter" and f.is_float:  # the next value of the format, not of float32 (ml_dtypes' and JAX's)
            fmt = getattr(ml_dtypes, format)
            result = np.nextafter(*(i.astype(fmt) for i in inputs)).astype(np.float32)
        else:
            result = np.asarray(get_backend("numpy").kernels[fn](*inputs))
    if result.dtype.name != wide_name(f) or inexact:
        return result, False
    if f.is_float:
        result = np.where(np.isnan(result), np.float32(np.nan), result)
    narrowed = result.astype(getattr(ml_dtypes, format))
    return (narrowed.view(np.uint8) if f.bits == 8 else native_codes_numpy(narrowed, f)), True


def native_codes_numpy(x: np.ndarray, f: Format) -> np.ndarray:
    """The codes of an ml_dtypes array of a format narrower than a byte (one per byte, masked)."""
    return x.view(np.uint8) & np.uint8((1 << f.bits) - 1)


def _scalar_code(value: Any, f: Format) -> int:
    import ml_dtypes

    return int(native_codes_numpy(np.asarray([value], np.float32 if f.is_float else np.int32)
                                  .astype(getattr(ml_dtypes, f.name)), f)[0])


def _tabulated(fn: str, f: Format, args: tuple[Any, ...]) -> Any:
    """``fn`` of one or two operands of ``f`` (arrays, or a Python scalar already checked to fit) by
    one gather from a table cached on the array's device, indexed by the operands' keys (their codes;
    on TensorFlow, which has no bitcast of its float8 arrays, their float16 bits shifted: :func:`_half_keys`)."""
    arity = len(args)
    array = next(a for a in args if hasattr(a, "dtype"))
    ops = ops_of(array)
    host = ops.host(array, f.name)
    if host is not None:  # eager on the CPU: NumPy's gather over the same bytes (_ops.TorchOps.host)
        hosts = tuple(host if a is array else ops.host(a, f.name) if hasattr(a, "dtype") else a for a in args)
        if not any(h is None for h in hosts):
            return ops.from_host(_tabulated(fn, f, hosts), f.name)
    half = _half_key_table(f.name) if ops.name == "tensorflow" else None
    by_half = half is not None
    bits = half[1] if by_half else f.bits
    index = None
    for a in args:
        if hasattr(a, "dtype"):
            key = _half_keys(ops, a, f) if by_half else native_codes(ops, a, f)
        else:
            code = _scalar_code(a, f)
            key = int(half[0][code]) if by_half else code
        index = key if index is None else ops.pair(index, key, bits)
    values = _keyed_table(fn, f.name, arity, by_half)
    name = f"{fn}:{f.name}:{arity}:{'half' if by_half else 'code'}"
    gathered = ops.take(ops.table((name, values.dtype.name), lambda _n, _d: values, array), index)
    if not _table(fn, f.name, arity)[1]:
        return gathered
    return ops.astype(gathered, f.name) if by_half else to_native(gathered, f)


@cache
def _half_key_table(format: str) -> tuple[np.ndarray, int] | None:
    """``(key of every code, key bits)`` where a code's float16 bits shifted right by 10 - mantissa
    bits tell every value of the format apart (float16 holds them exactly: the 8-bit signed float
    formats but e8m0); None elsewhere."""
    f = FORMATS[format]
    if not f.is_float or f.bits != 8 or not f.signed:
        return None
    values = decode_table(f.name, "float16")
    keys = values.view(np.uint16) >> (10 - f.mantissa_bits)
    finite = ~np.isnan(values)
    exact = (values.astype(np.float64) == decode_table(f.name, "float64"))[finite].all()
    if not exact or len(set(keys[finite].tolist())) != finite.sum():
        return None
    return keys.astype(np.int64), 6 + f.mantissa_bits  # sign, float16's 5 exponent bits, the mantissa


def _half_keys(ops: Any, x: Any, f: Format) -> Any:
    """The int32 keys of a TensorFlow array of ``f``: its exact float16 bits, shifted (3 ops)."""
    tf = ops.tf
    half = tf.bitcast(tf.cast(x, tf.float16), tf.uint16)
    return tf.bitwise.right_shift(tf.cast(half, tf.int32), 10 - f.mantissa_bits)


@cache
def _keyed_table(fn: str, format: str, arity: int, by_half: bool) -> np.ndarray:
    """:func:`_table` indexed by keys: by codes, as it is; by float16 keys (:func:`_half_key_table`), every key
    mapped to its code first, and results in the format given as float16 values (TensorFlow casts them)."""
    table, narrowed = _table(fn, format, arity)
    if not by_half:
        return table
    import ml_dtypes

    f = FORMATS[format]
    bits = _half_key_table(format)[1]
    half = (np.arange(1 << bits, dtype=np.uint16) << (10 - f.mantissa_bits)).view(np.float16)
    with np.errstate(all="ignore"):  # every key's value, cast: its code (any NaN's gives a NaN of its sign)
        code_of_key = half.astype(np.float32).astype(getattr(ml_dtypes, format)).view(np.uint8).astype(np.int64)
    index = code_of_key if arity == 1 else ((code_of_key[:, None] << f.bits) | code_of_key[None, :]).ravel()
    result = table[index]
    return decode_table(format, "float16")[result] if narrowed else result


def _tabulates(fn: str, f: Format, args: tuple[Any, ...]) -> bool:
    """Element-wise, every operand an array of ``f`` or a Python scalar of its kind."""
    if fn not in UNARY and fn not in BINARY:
        return False
    return all(hasattr(a, "dtype") or type(a) is bool or (type(a) is int) or (type(a) is float and f.is_float)
               for a in args)


def rule_kernel(name: str, format: str, run: Callable[..., Any], wide_native: Any, narrow_native: Any
                ) -> Callable[..., Any]:
    """A kernel for arrays of ``format`` by the rule, for the api layer (:func:`arraylayer.api.dispatch.kernel`
    returns it where a backend's kernel is asked for a low-precision dtype): an element-wise function
    gathers from its table; otherwise the array arguments of the format are decoded, ``run`` (the
    backend's kernel, given the wide type) computes, a ``dtype=`` of the format becomes
    ``wide_native``, and a result in the wide type is rounded once back to the format."""
    f = get_format(format)
    wide = wide_name(f)
    elementwise = name in UNARY or name in BINARY
    widen = _zero_keys if name in ZERO_TESTS else _widen

    def kernel(*args: Any, **kwargs: Any) -> Any:
        if elementwise and not kwargs and _tabulates(name, f, args):
            return _tabulated(name, f, tuple(a if hasattr(a, "dtype") else _scalar(a, f, name) for a in args))
        ops = None
        converted = []
        for a in args:
            if hasattr(a, "dtype") and format_of(a) == f.name:
                ops = ops_of(a)
                a = widen(ops, a, f)
            elif isinstance(a, (bool, int, float)):
                a = _scalar(a, f, name)
            converted.append(a)
        if kwargs.get("dtype") is not None and kwargs["dtype"] == narrow_native:
            kwargs = {**kwargs, "dtype": wide_native}
        result = run(*converted, **kwargs)
        if ops is None or (not f.is_float and name in _KEPT_WIDE):
            return result
        if isinstance(result, (tuple, list)) and name in _VALUES_FIRST:  # unique_*: (values, indices ..., counts)
            return (_narrow(ops, result[0], f), *result[1:])
        if hasattr(result, "dtype") and ops.dtype_name(result) == wide:
            return _narrow(ops, result, f)
        return result

    return kernel
