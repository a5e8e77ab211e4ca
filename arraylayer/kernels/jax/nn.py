"""Neural-network kernels of the JAX backend (see arraylayer/models/nn.py): XLA's own convolution and
windowed reductions (``jax.lax``), which JAX differentiates. Padding arrives as explicit pairs."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

erf = lax.erf
erfc = lax.erfc
erfinv = lax.erf_inv
relu = jax.nn.relu
sigmoid = jax.nn.sigmoid


def concrete(x: Any) -> Any:
    """x's values as a NumPy array; None for a tracer (inside jit or grad), whose values are unknown."""
    return None if isinstance(x, jax.core.Tracer) else np.asarray(x)


_SPACE = "DHW"  # the spatial letters of lax's dimension numbers, the last n of them for n axes


def conv(x: Any, kernel: Any, strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
         dilation: tuple[int, ...], channels_last: bool, groups: int = 1) -> Any:
    space = _SPACE[3 - len(strides):]
    numbers = ((f"N{space}C", f"{space}IO", f"N{space}C") if channels_last
               else (f"NC{space}", f"OI{space}", f"NC{space}"))
    return lax.conv_general_dilated(x, kernel, strides, padding, rhs_dilation=dilation, dimension_numbers=numbers,
                                    feature_group_count=groups,
                                    precision=lax.Precision.HIGHEST)  # float32 on a GPU too, not TF32


def conv2d(x: Any, kernel: Any, strides: tuple[int, int], padding: tuple[tuple[int, int], ...],
           dilation: tuple[int, int], channels_last: bool) -> Any:
    return conv(x, kernel, strides, padding, dilation, channels_last)


def _layout(window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> tuple[Any, ...]:
    if channels_last:
        return (1, *window, 1), (1, *strides, 1), ((0, 0), *padding, (0, 0))
    return (1, 1, *window), (1, 1, *strides), ((0, 0), (0, 0), *padding)


def max_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    dims, steps, pads = _layout(window, strides, padding, channels_last)
    return lax.reduce_window(x, -jnp.inf, lax.max, dims, steps, pads)  # a Python init: JAX sees max, differentiable


#: half precision summed in float32 and rounded once, as the other backends' kernels sum it (XLA's own
#: reduce_window adds in the input's dtype: 12 bfloat16 ulps off in 3-d); the converts fuse into the window
_WIDENED_SUMS = (jnp.float16, jnp.bfloat16)


def sum_pool(x: Any, window: tuple[int, ...], strides: tuple[int, ...], padding: Any, channels_last: bool) -> Any:
    dims, steps, pads = _layout(window, strides, padding, channels_last)
    if x.dtype in _WIDENED_SUMS:
        return lax.reduce_window(x.astype(jnp.float32), 0.0, lax.add, dims, steps, pads).astype(x.dtype)
    return lax.reduce_window(x, 0.0, lax.add, dims, steps, pads)


def einsum(subscripts: str, *operands: Any) -> Any:
    """jax.numpy's einsum; operands share one dtype (the api promotes)."""
    return jnp.einsum(subscripts, *operands)


complex_from_parts = lax.complex
