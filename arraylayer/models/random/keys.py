"""Keys: ``key``, ``split`` and ``fold_in``, bit-identical to ``jax.random``."""

from __future__ import annotations

import numbers
import operator
from typing import Any

from arraylayer.models import dropout_masks
from arraylayer.api.creation import asarray
from arraylayer.api.data_types import astype, isdtype
from arraylayer.api.elementwise import bitwise_and
from arraylayer.api.manipulation import concat, reshape
from arraylayer.dtypes import Dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.runtime.registry import current_backend
from arraylayer.models.random.evaluation import _check_key, _check_shape, _device, _key_words, _whole
from arraylayer.models.random.threefry import _MASK, _threefry, _to_public, _word, _words
from arraylayer.models.random.word_transforms import _keys_of


def key(seed: int, *, device: Any = None) -> Any:
    """A key from an integer seed, as ``jax.random.key_data(jax.random.key(seed))``."""
    if isinstance(seed, bool) or not isinstance(seed, int) and not hasattr(seed, "__index__"):
        raise InvalidArgumentTypeError(f"key(seed={seed!r}): the seed must be an int, e.g. key(0).")
    seed = operator.index(seed)
    if not -(2**63) <= seed < 2**64:
        raise InvalidArgumentError(f"key(seed={seed}): the seed must fit in 64 bits.")
    seed %= 2**64
    return asarray([seed >> 32, seed & _MASK], dtype=_words().public, device=device)


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
