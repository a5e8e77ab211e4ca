"""Scaled dot-product attention (re-exported as ``arraylayer.models.nn.dot_product_attention``).

Shapes follow ``jax.nn.dot_product_attention``: queries ``(batch, T, heads, head_dim)``, keys and
values ``(batch, S, heads, head_dim)``, result ``(batch, T, heads, head_dim)``. The framework's
fused kernel runs where it has one and its result agrees with the composed form (float32: 2e-6
relative, 1e-6 absolute; gradients likewise): ``torch.nn.functional.scaled_dot_product_attention``
and ``jax.nn.dot_product_attention``, without a mask argument and without dropout. Everything else
(NumPy, TensorFlow, dask; a mask; dropout) is composed of arraylayer's functions: logits in the
inputs' dtype, the softmax in float32 for half-precision inputs (as the fused kernels do), a
masked logit replaced by the dtype's lowest finite value through ``where`` (a Python float:
nothing for a compiler to trace), dropout on the weights by arraylayer's keyed masks.
"""

from __future__ import annotations

import math
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.creation import arange, asarray
from arraylayer.api.data_types import astype
from arraylayer.api.elementwise import less_equal, logical_and, multiply
from arraylayer.api.linear_algebra import matmul
from arraylayer.api.manipulation import expand_dims, permute_dims
from arraylayer.api.searching import where
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.models.nn.common import _creating_on, _device, _native, rounded_once
from arraylayer.models.nn.regularization import dropout
from arraylayer.models.nn.softmax_family import softmax
from arraylayer.dtypes.promotion import result_type
from arraylayer.runtime.registry import backend_of

__all__ = ["dot_product_attention"]

#: the lowest finite value of each floating dtype, as Python floats (finfo under torch.compile
#: breaks the graph); a masked logit becomes this, so a row with every key masked stays finite
_LOWEST: Final = {Dtype("float16"): -65504.0, Dtype("bfloat16"): -3.3895313892515355e38,
                  Dtype("float32"): -3.4028234663852886e38, Dtype("float64"): -1.7976931348623157e308}
_HALVES: Final = (Dtype("float16"), Dtype("bfloat16"))
_FLOAT32: Final = Dtype("float32")
_INT32: Final = Dtype("int32")


def _torch_fused(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    import torch.nn.functional as F

    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                         is_causal=causal, scale=scale)
    return out.transpose(1, 2)


def _jax_fused(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Any:
    import jax

    # full float32 products on every device: on a GPU XLA's default takes TF32 (found on an H100: a
    # transformer block's loss 4e-5 from the CPU's), as arraylayer's jax matmul already refuses to
    with jax.default_matmul_precision("highest"):
        return jax.nn.dot_product_attention(q, k, v, scale=scale, is_causal=causal)


#: backend -> the fused kernel (native arrays, no mask, no dropout)
FUSED: Final = {"torch": _torch_fused, "jax": _jax_fused}


def _check(q: Any, k: Any, v: Any) -> Dtype:
    for name, x in (("q", q), ("k", k), ("v", v)):
        if getattr(x, "ndim", None) != 4:
            raise InvalidArgumentError(f"nn.dot_product_attention: {name} must be 4-d (batch, sequence, heads, "
                                       f"head_dim); got shape {tuple(getattr(x, 'shape', ()))}.")
    qs, ks, vs = (tuple(int(n) for n in x.shape) for x in (q, k, v))
    if ks != vs[:3] + (ks[3],) or qs[0] != ks[0] or qs[2] != ks[2] or qs[3] != ks[3]:
        raise InvalidArgumentError(f"nn.dot_product_attention: shapes q {qs}, k {ks}, v {vs} do not fit: k and v "
                                   f"share (batch, S, heads), q and k share batch, heads and head_dim.")
    dtype = result_type(q, k, v)
    if dtype.category != "float":
        raise InvalidDtypeError(f"nn.dot_product_attention takes real floating arrays; got {as_dtype(q.dtype)}, "
                                f"{as_dtype(k.dtype)}, {as_dtype(v.dtype)}. Cast first, e.g. arraylayer.astype(q, 'float32').")
    return dtype


def _finite(value: Any, parameter: str) -> float:
    """A finite Python number (a concrete 0-d array read as one)."""
    try:
        number = arguments.real_float(value, parameter)
    except (TypeError, ValueError) as error:  # a traced array: no value to read
        if isinstance(error, InvalidArgumentTypeError):
            raise
        raise InvalidArgumentTypeError(f"nn.dot_product_attention({parameter}=...): a traced array has no value to "
                                       f"read here; pass a Python float.") from None
    if not math.isfinite(number):
        hint = "leave it out for 1 / sqrt(head_dim)" if parameter == "scale" else "a rate in [0, 1)"
        raise InvalidArgumentError(f"nn.dot_product_attention({parameter}={number!r}): pass a finite number ({hint}).")
    return number


def _mask(native: Any, mask: Any) -> Any:
    """The mask as an array of q's backend: bool arrays as they are, lists and Python bools converted."""
    given = _native(mask)[0]
    if isinstance(given, backend_of(native).array_types):
        return given
    if not hasattr(given, "dtype") and not isinstance(given, (bool, list, tuple)):
        raise InvalidArgumentTypeError(f"nn.dot_product_attention(mask={given!r}): pass booleans (an array, a nested "
                                       f"list of True/False or one bool), True where a query may attend a key.")
    with _creating_on(native):
        return asarray(given, device=_device(native))


def _causal(native: Any, queries: int, keys: int) -> Any:
    """(T, S) booleans: query i sees keys 0..i (top-left aligned, as torch and JAX)."""
    with _creating_on(native):
        rows = arange(queries, dtype=_INT32, device=_device(native))
        cols = arange(keys, dtype=_INT32, device=_device(native))
    return less_equal(expand_dims(cols, axis=0), expand_dims(rows, axis=1))


@rounded_once
def dot_product_attention(q: Any, k: Any, v: Any, *, mask: Any = None, causal: bool = False,
                          scale: float | None = None, dropout_rate: float = 0.0, key: Any = None) -> Any:
    """softmax(q k^T * scale, masked) v per batch and head.

    ``mask``: booleans broadcasting to (batch, heads, T, S), True where a query may attend a key (a
    padding mask is ``(arange(S) < lengths[:, None])[:, None, None, :]``): a bool array of any
    backend, a nested list of Python bools or one Python bool, made an array of q's backend (a
    mask of another dtype is refused); ``causal``: query i sees keys 0..i; ``scale``: a finite
    Python number, 1 / sqrt(head_dim) by default (NaN and inf are refused: the fused kernels and the
    composed form disagreed on them). A query with no key to attend gets the mean of the values
    (JAX's convention). ``dropout_rate`` drops attention weights with
    ``arraylayer.models.nn.dropout`` drawn from ``key`` (required then): the same mask on every backend."""
    dtype = _check(q, k, v)
    causal = arguments.flag(causal, "causal")
    head_dim = int(q.shape[3])
    scale = head_dim ** -0.5 if scale is None else _finite(scale, "scale")
    rate = _finite(dropout_rate, "dropout_rate")
    if rate and key is None:
        raise InvalidArgumentError(f"nn.dot_product_attention(dropout_rate={dropout_rate}): pass key= (an "
                                   f"arraylayer.models.random key) to draw the dropout mask, or dropout_rate=0.")
    native, rewrap = _native(q)
    k, v = _native(k)[0], _native(v)[0]
    native, k, v = (astype(x, dtype, copy=False) for x in (native, k, v))
    fused = FUSED.get(backend_of(native).name)
    if fused is not None and mask is None and not rate:
        return rewrap(fused(native, k, v, causal, scale))
    logits = multiply(matmul(permute_dims(native, (0, 2, 1, 3)), permute_dims(k, (0, 2, 3, 1))), scale)
    allowed = None if mask is None else _mask(native, mask)
    if allowed is not None and as_dtype(allowed.dtype).category != "bool":
        raise InvalidDtypeError(f"nn.dot_product_attention(mask of dtype {as_dtype(allowed.dtype)}): the mask holds "
                                f"booleans, True where a query may attend a key.")
    if causal:
        triangle = _causal(native, int(q.shape[1]), int(k.shape[1]))
        allowed = triangle if allowed is None else logical_and(allowed, triangle)
    if allowed is not None:
        logits = where(allowed, logits, _LOWEST[dtype])
    weights = softmax(astype(logits, _FLOAT32) if dtype in _HALVES else logits, axis=-1)
    weights = astype(weights, dtype, copy=False)
    if rate:
        weights = dropout(key, weights, rate)
    return rewrap(permute_dims(matmul(weights, permute_dims(v, (0, 2, 1, 3))), (0, 2, 1, 3)))
