"""The frameworks' own kernels for nn's deterministic functions (softmax, log_softmax, gelu,
layer_norm), one table per backend, built the first time that backend asks.

Each entry takes native arrays of float32 or float64 (nn.py sends nothing else: half precision
keeps arraylayer's composed form, rounded step by step as before) with the arguments already
checked and normalised by nn.py:

* ``softmax(x, axis)``, ``log_softmax(x, axis)``: ``axis`` a non-negative int;
* ``gelu(x, approximate)``: ``approximate`` a bool (tanh form when True);
* ``layer_norm(x, trailing, eps, scale, offset)``: normalise over the last ``trailing`` axes;
  ``scale``/``offset`` are None or native arrays of x's dtype and exactly those axes' shape;
* ``embedding(table, ids)``: rows of a 2-d table at integer ids of the same backend, already
  checked to lie in the table (a gather: exact in any dtype).

Backends without a table (NumPy, dask) and arguments outside these keep the composed form. The
kernels compute the same formulas (shifted by the maximum; biased variance; erf or the tanh form)
in one or a few native operations, so eager code dispatches a handful of operations instead of a
dozen, and compilers see one op they know (TorchInductor, XLA); gradients are the frameworks' own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

__all__ = ["table"]

Kernels = dict[str, Callable[..., Any]]
_SQRT_HALF: Final = 1.0 / math.sqrt(2.0)
_SQRT_2_OVER_PI: Final = math.sqrt(2.0 / math.pi)


def _torch() -> Kernels:
    import torch
    import torch.nn.functional as F

    def layer_norm(x: Any, trailing: int, eps: float, scale: Any, offset: Any) -> Any:
        return F.layer_norm(x, tuple(x.shape[x.ndim - trailing:]), scale, offset, eps)

    index_dtypes = (torch.int32, torch.int64)  # what F.embedding takes (aten::index_select, not aten::index)

    def embedding(table: Any, ids: Any) -> Any:
        return F.embedding(ids if ids.dtype in index_dtypes else ids.long(), table)

    return {"softmax": torch.softmax, "log_softmax": torch.log_softmax, "layer_norm": layer_norm,
            "gelu": lambda x, approximate: F.gelu(x, approximate="tanh" if approximate else "none"),
            "embedding": embedding}


def _jax() -> Kernels:
    import functools

    import jax
    import jax.numpy as jnp

    from arraylayer.kernels.jax._common import true_divide
    from arraylayer.kernels.jax.statistical import mean

    @functools.partial(jax.jit, static_argnums=(1, 2))
    def normalise(x: Any, trailing: int, eps: float) -> Any:
        # true divisions (by the count, by the broadcast root), as NumPy's composed form divides:
        # XLA would multiply by reciprocals (true_divide's docstring)
        axes = tuple(range(x.ndim - trailing, x.ndim))
        centred = x - mean(x, axis=axes, keepdims=True)
        return true_divide(centred, jnp.sqrt(mean(jnp.square(centred), axis=axes, keepdims=True) + eps))

    @functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
    @functools.partial(jax.jit, static_argnums=(1,))
    def softmax(x: Any, axis: int) -> Any:
        # jax.nn.softmax's formula with a true division by the broadcast sum (XLA would multiply by
        # its reciprocal, an ulp off NumPy's quotient in about a sixth of float32 values)
        shifted = jnp.exp(x - jax.lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True)))
        return true_divide(shifted, jnp.sum(shifted, axis=axis, keepdims=True))

    @softmax.defjvp
    def _softmax_jvp(axis: int, primals: tuple[Any], tangents: tuple[Any]) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents  # jax.nn.softmax's own rule
        y = softmax(x, axis)
        return y, y * (t - jnp.sum(y * t, axis=axis, keepdims=True))

    def layer_norm(x: Any, trailing: int, eps: float, scale: Any, offset: Any) -> Any:
        y = normalise(x, trailing, eps)
        y = y if scale is None else y * scale
        return y if offset is None else y + offset

    return {"softmax": softmax,
            "log_softmax": lambda x, axis: jax.nn.log_softmax(x, axis=axis),
            "gelu": lambda x, approximate: jax.nn.gelu(x, approximate=approximate), "layer_norm": layer_norm}


def _tensorflow() -> Kernels:
    import tensorflow as tf

    def layer_norm(x: Any, trailing: int, eps: float, scale: Any, offset: Any) -> Any:
        axes = list(range(x.shape.rank - trailing, x.shape.rank))
        centred = x - tf.reduce_mean(x, axis=axes, keepdims=True)
        variance = tf.reduce_mean(tf.square(centred), axis=axes, keepdims=True)
        y = centred / tf.sqrt(variance + tf.cast(eps, x.dtype))
        y = y if scale is None else y * scale
        return y if offset is None else y + offset

    def gelu(x: Any, approximate: bool) -> Any:
        """nn.gelu's formulas in TensorFlow's operations (tf.nn.gelu's erfc loses digits in float64)."""
        if approximate:
            return 0.5 * x * (1.0 + tf.tanh((x + 0.044715 * (x * x * x)) * _SQRT_2_OVER_PI))
        return 0.5 * x * (1.0 + tf.math.erf(x * _SQRT_HALF))

    return {"softmax": lambda x, axis: tf.nn.softmax(x, axis=axis),
            "log_softmax": lambda x, axis: tf.nn.log_softmax(x, axis=axis), "gelu": gelu, "layer_norm": layer_norm}


#: how each backend's table is made (its framework imported then, not at arraylayer's import)
_BUILDERS: Final[dict[str, Callable[[], Kernels]]] = {"torch": _torch, "jax": _jax, "tensorflow": _tensorflow}
_TABLES: dict[str, Kernels] = {}
_NONE: Final[Kernels] = {}


def table(backend: str) -> Kernels:
    """The fused kernels of ``backend`` by function name; empty where it has none."""
    kernels = _TABLES.get(backend)
    if kernels is None:
        build = _BUILDERS.get(backend)
        kernels = _TABLES[backend] = _NONE if build is None else build()
    return kernels
