"""The functions that only move, select or repeat elements, on the low-precision formats.

They make no value, so nothing rounds: the result holds the input's bits (NaN payloads and -0.0
included), which are NumPy's on ml_dtypes arrays, on every backend that stores the format. Each
backend runs them the cheapest way its framework allows (:data:`HOW`):

- ``"native"``: the backend's own kernel on its own array (NumPy and dask on ml_dtypes' types, JAX
  on its own), at the cost of the standard dtypes;
- ``"codes"``: the kernel on a uint8 view of the array, the result viewed back (views: no copy): torch
  (its float8 CPU kernels are few), and JAX for float8_e5m2, e4m3 and e3m4 (XLA's CPU gathers,
  concatenations and selects turn each of their NaNs, sign and payload, into 0x7F; measured with jax
  0.10.2);
- ``"carrier"``: JAX's types narrower than a byte (XLA on the CPU aborts the process in some of their
  kernels: ``concatenate`` of uint2) run as a byte-wide type that holds every value (:data:`CARRIER`:
  int4 as int8, float4_e2m1fn as float8_e4m3fn), one exact conversion each way;
- ``"positions"``: TensorFlow has neither kernels nor a bit cast for its float8 arrays beyond a few
  (:data:`TENSORFLOW_NATIVE`, measured with tensorflow 2.21): the kernel runs on the int32 positions
  of the elements, and one ``tf.gather`` takes the elements from those positions.

``tril`` and ``triu`` write the format's zero (code 0) where they select nothing; float8_e8m0fnu has no
zero, so they refuse it on every backend, as ``eye`` does (:func:`zero_refusal`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arraylayer.dtypes import as_dtype
from arraylayer.lowp.formats import FORMATS

__all__ = ["MOVING", "ZERO_FILLING", "HOW", "CARRIER", "TENSORFLOW_NATIVE", "moving_kernel", "zero_refusal", "has_zero"]

#: The kernels that only move, select or repeat elements.
MOVING: Final = frozenset({
    "broadcast_arrays", "broadcast_to", "concat", "diagonal", "expand_dims", "flip", "meshgrid", "matrix_transpose", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "take", "take_along_axis", "tile", "tril", "triu",
    "unstack",
})
#: Of :data:`MOVING`, the kernels that write a zero where they select no element.
ZERO_FILLING: Final = frozenset({"tril", "triu"})
#: How each backend runs :data:`MOVING` (a backend not named: natively).
HOW: Final[dict[str, str]] = {"numpy": "native", "dask": "native", "jax": "native", "torch": "codes",
                              "tensorflow": "positions"}
#: A byte-wide type that holds every value (and -0.0) of each type narrower than a byte, for JAX.
CARRIER: Final[dict[str, str]] = {"float4_e2m1fn": "float8_e4m3fn", "int4": "int8", "int2": "int8", "uint4": "uint8",
                                  "uint2": "uint8"}
#: TensorFlow's kernels that take its float8 arrays as they are (reshape, concat, transpose, gather ...
#: have float8 kernels; reverse, roll, tile, select and fill have none).
TENSORFLOW_NATIVE: Final = frozenset({
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "matrix_transpose", "meshgrid", "moveaxis",
    "permute_dims", "reshape", "squeeze", "stack", "take", "take_along_axis", "unstack",
})


def has_zero(format: str) -> bool:
    """Whether the format holds 0 (every one but float8_e8m0fnu, whose values are powers of two)."""
    return FORMATS[format].specials != "e8m0"


def zero_refusal(name: str, format: str) -> str:
    """The UnsupportedDtypeError message of a function that needs the zero of a format without one."""
    return (f"{name} needs zeros, and {format} has no zero (its values are powers of two and NaN); "
            f"{name} refuses it on every backend. Make the array in float32 and cast the result: "
            f"arraylayer.astype(..., '{format}') (0 becomes NaN there, as ml_dtypes casts it).")


def moving_kernel(backend: Any, name: str, dtype: Any) -> Callable[..., Any]:
    """``backend``'s kernel ``name`` (of :data:`MOVING`) for arrays of the low-precision ``dtype``."""
    run = backend.kernels[name]
    how = HOW.get(backend.name, "native")
    if backend.name == "jax" and dtype.name in CARRIER:
        how = "carrier"  # XLA on the CPU aborts the process in some kernels of the types narrower than a byte
    elif backend.name == "jax" and FORMATS[dtype.name].specials == "ieee":
        how = "codes"  # XLA's CPU gathers and concatenations give every NaN of these formats as 0x7F
    if how == "native" or (how == "positions" and name in TENSORFLOW_NATIVE):
        return run
    native = backend.native_dtypes[dtype]
    if how == "codes":
        return _through_codes(run, native, FORMATS[dtype.name])
    if how == "carrier":
        return _through_carrier(run, native, backend.native_dtypes[as_dtype(CARRIER[dtype.name])])
    return _through_positions(run, native, name in ZERO_FILLING)


def _each(a: Any, is_leaf: Callable[[Any], bool], fn: Callable[[Any], Any]) -> Any:
    """``fn`` on ``a`` where ``is_leaf(a)``, on each item of a list or tuple (nested), else ``a`` as it is:
    the kernels take and give arrays alone or in sequences (``concat``, ``unstack``, ``meshgrid``)."""
    if is_leaf(a):
        return fn(a)
    return type(a)(_each(b, is_leaf, fn) for b in a) if type(a) in (list, tuple) else a


def _of(dtype: Any) -> Callable[[Any], bool]:
    return lambda a: getattr(a, "dtype", None) == dtype


def _through_carrier(run: Callable[..., Any], native: Any, carrier: Any) -> Callable[..., Any]:
    """``run`` on the arrays of ``native`` (in lists too) converted to ``carrier``, which holds each of their
    values exactly (one conversion each way); its results of ``carrier`` converted back."""
    is_native, is_carrier = _of(native), _of(carrier)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        moved = run(*(_each(a, is_native, lambda x: x.astype(carrier)) for a in args), **kwargs)
        return _each(moved, is_carrier, lambda y: y.astype(native))

    return kernel


def _through_codes(run: Callable[..., Any], native: Any, f: Any) -> Callable[..., Any]:
    """``run`` on the uint8 codes of the arrays of ``native`` (in lists too: a view where the framework
    has one); its uint8 results converted back (lowp.casts.native_codes and to_native)."""
    from arraylayer.lowp._ops import ops_of
    from arraylayer.lowp.casts import native_codes, to_native

    is_native = _of(native)

    def is_codes(y: Any) -> bool:
        return hasattr(y, "dtype") and ops_of(y).dtype_name(y) == "uint8"

    def kernel(*args: Any, **kwargs: Any) -> Any:
        moved = run(*(_each(a, is_native, lambda x: native_codes(ops_of(x), x, f)) for a in args), **kwargs)
        return _each(moved, is_codes, lambda y: to_native(y, f))

    return kernel


def _through_positions(run: Callable[..., Any], native: Any, fills: bool) -> Callable[..., Any]:
    """``run`` on the int32 positions of the elements of the arrays of ``native`` (in lists too) in
    their flattened concatenation, then one ``tf.gather`` from it. Where the kernel writes zeros,
    positions count from 1 and position 0 is the format's zero."""
    import tensorflow as tf

    is_native, is_positions = _of(native), _of(tf.int32)

    def kernel(*args: Any, **kwargs: Any) -> Any:
        sources = [tf.cast(tf.zeros([1], tf.float16), native)] if fills else []
        start: list[Any] = [1 if fills else 0]

        def to_positions(a: Any) -> Any:
            size = tf.size(a, out_type=tf.int32)
            sources.append(tf.reshape(a, [-1]))
            positions = tf.reshape(tf.range(start[0], start[0] + size, dtype=tf.int32), tf.shape(a))
            start[0] = start[0] + size
            return positions

        moved = run(*(_each(a, is_native, to_positions) for a in args), **kwargs)
        flat = sources[0] if len(sources) == 1 else tf.concat(sources, 0)
        return _each(moved, is_positions, lambda y: tf.gather(flat, y))

    return kernel
