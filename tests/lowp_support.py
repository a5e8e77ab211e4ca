"""Helpers of the lowp tests: native arrays of each backend from NumPy ones, and back, and the inputs
(specials, ties, random values) whose casts are compared with ml_dtypes'.

``AL_LOWP_EXHAUSTIVE=1`` (``nox -s lowp``) widens the inputs to every bfloat16 and float16 pattern
and 2**22 random float32 bit patterns; CI's run takes a fixed-seed sample.
"""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np

EXHAUSTIVE = os.environ.get("AL_LOWP_EXHAUSTIVE") == "1"
BACKENDS = ("numpy", "jax", "torch", "tensorflow", "dask")


def native(backend: str, host: np.ndarray):
    """``host`` as an array of ``backend`` with the same dtype (bfloat16 and float64 included)."""
    if backend == "numpy":
        return host
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.asarray(host, dtype=host.dtype)
    if backend == "torch":
        import torch

        if host.dtype == ml_dtypes.bfloat16:
            return torch.from_numpy(host.view(np.int16).copy()).view(torch.bfloat16)
        return torch.from_numpy(host.copy())
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.constant(host)
    if backend == "dask":
        import dask.array as da

        return da.from_array(host, chunks=max(1, host.shape[0] // 3) if host.ndim else ())
    raise ValueError(backend)


def host(x) -> np.ndarray:
    """A native array's values as a NumPy array (bfloat16 kept as ml_dtypes' bfloat16)."""
    if type(x).__module__.startswith("torch"):
        import torch

        if x.dtype == torch.bfloat16:
            return x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        return x.numpy()
    if type(x).__module__.startswith("dask"):
        return np.asarray(x.compute())
    return np.asarray(x)


def ties(format_name: str) -> np.ndarray:
    """Every midpoint between two neighbouring finite values of the format (ml_dtypes' values)."""
    bits = ml_dtypes.finfo(getattr(ml_dtypes, format_name)).bits
    values = np.arange(1 << bits, dtype=np.uint8).view(getattr(ml_dtypes, format_name)).astype(np.float64)
    finite = np.unique(values[np.isfinite(values)])
    return ((finite[1:] + finite[:-1]) / 2).astype(np.float32)  # exact: a few significant bits


SPECIALS = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 3.4e38, -3.4e38, 1e-45, -1e-45,
                     1.2e-38, 2.0**-127, 1.5 * 2.0**-127, 448, 464, 480, 1000, 57344, 61440, 7.5, 7.75, 6, 7],
                    np.float32)
PAYLOADS = np.array([0x7FC00001, 0x7F800001, 0xFFFFFFFF, 0xFFC00000, 0x7FBFFFFF], np.uint32).view(np.float32)


def float32_inputs(format_name: str, seed: int = 0) -> np.ndarray:
    """Specials, NaN payloads, every tie of the format, and random values of every magnitude."""
    rng = np.random.default_rng(seed)
    count = 1 << 22 if EXHAUSTIVE else 3000
    scaled = rng.standard_normal(count) * 10.0 ** rng.integers(-45, 38, count)
    patterns = rng.integers(0, 1 << 32, count // 4, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ties_ = ties(format_name) if format_name.startswith("float") else np.arange(-20, 20, 0.5)
    with np.errstate(over="ignore"):
        return np.concatenate([SPECIALS, PAYLOADS, ties_, -ties_, scaled.astype(np.float32), patterns]).astype(np.float32)


def narrow_inputs(dtype) -> np.ndarray:
    """Every bit pattern of float16/bfloat16 (exhaustive run) or a fixed sample of them."""
    patterns = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    if not EXHAUSTIVE:
        patterns = np.random.default_rng(1).choice(patterns, 4000, replace=False)
    return patterns.view(dtype)
