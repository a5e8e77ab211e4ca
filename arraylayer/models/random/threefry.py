"""threefry-2x32 written with arraylayer's integer operations: the words of each backend (uint32,
or int32 rounds and int64 keys on PyTorch), the 20 rounds, compiled where a compiler fuses them."""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import (
    add,
    bitwise_and,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
)
from arraylayer.dtypes import Dtype
from arraylayer.runtime.registry import current_backend

_MASK = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


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
_FLOATS = (Dtype("float32"), Dtype("float64"))
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


def _rotl_int32(x: Any, r: int, const: Any) -> Any:
    """_rotl of int32 words with the array's own operators (``const`` unused: Python ints)."""
    return (x << r) | ((x >> (32 - r)) & ((1 << r) - 1))


class _Ops(NamedTuple):
    """The rounds' operations: a wrapping add, xor, and a rotation left by a Python int."""

    add: Any
    xor: Any
    rotl: Any


_API_OPS = _Ops(add, bitwise_xor, _rotl)
#: PyTorch's whole-array rounds (small draws, traced code) in its own operators on the int32
#: words: the same operations as arraylayer's, so the same bits; torch.compile's Dynamo then
#: traces ~110 native operations per draw instead of arraylayer's dispatch around each.
_NATIVE_OPS: dict[str, _Ops] = {"torch": _Ops(operator.add, operator.xor, _rotl_int32)}


def _compile_jax(f: Any, static: tuple[int, ...] = ()) -> Any:
    import jax

    return jax.jit(f, static_argnums=static)


def _compile_tensorflow(f: Any, static: tuple[int, ...] = ()) -> Any:
    import tensorflow as tf

    return tf.function(f, jit_compile=True, reduce_retracing=True)  # Python ints: one trace per value


#: The frameworks whose compiler fuses the ~120 integer operations of threefry into one kernel:
#: the same operations, so the same bits, an order of magnitude faster than one at a time.
#: ``make(f, static)``: ``f`` compiled, its arguments at the positions ``static`` Python ints.
_COMPILERS: dict[str, Any] = {"jax": _compile_jax, "tensorflow": _compile_tensorflow}
_COMPILED: dict[str, Any] = {}


def _threefry(k0: Any, k1: Any, x0: Any, x1: Any) -> tuple[Any, Any]:
    """threefry-2x32 of the counters (x0, x1) under the key words (k0, k1), compiled where the
    backend's compiler fuses it (inside a user's own jit/tf.function it is simply inlined)."""
    name = current_backend()
    make = _COMPILERS.get(name)
    if make is None:  # no cache: one written while torch.compile traces fails its guard next call (a recompile)
        return _threefry_rounds(k0, k1, x0, x1, ops=_NATIVE_OPS.get(name, _API_OPS))
    compiled = _COMPILED.get(name)
    if compiled is None:
        compiled = _COMPILED[name] = make(_threefry_rounds)
    return compiled(k0, k1, x0, x1)  # type: ignore[no-any-return]


def _threefry_rounds(k0: Any, k1: Any, x0: Any, x1: Any, const: Any = _as_is, ops: _Ops = _API_OPS) -> tuple[Any, Any]:
    """threefry-2x32 (20 rounds) written with arraylayer's integer operations (or ``ops``); every
    add wraps modulo 2**32 in the rounds' words (uint32, or int32 on PyTorch). ``const`` gives the
    integer constants (shift counts, masks, round numbers) in the form the caller wants them."""
    plus, xor = ops.add, ops.xor
    ks = (k0, k1, xor(xor(k0, k1), _PARITY))
    x0, x1 = plus(x0, ks[0]), plus(x1, ks[1])
    for group in range(5):
        for r in _ROTATIONS[group % 2]:
            x0 = plus(x0, x1)
            x1 = xor(ops.rotl(x1, r, const), x0)
        x0 = plus(x0, ks[(group + 1) % 3])
        # (x1 + k) + g == x1 + (k + g) modulo 2**32: one pass over x1, the other on a key word.
        x1 = plus(x1, plus(ks[(group + 2) % 3], const(group + 1)))
    return x0, x1
