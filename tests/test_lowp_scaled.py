"""Scaled float8: quantize/dequantize per tensor and per axis against a NumPy + ml_dtypes oracle, and
scaled_matmul with the same bits on every backend, eagerly and under jax.jit / torch.compile /
tf.function."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from arraylayer import lowp
from arraylayer.errors import InvalidArgumentError
from tests.lowp_support import EXHAUSTIVE, host, native

RNG = np.random.default_rng(7)
A = (RNG.standard_normal((6, 32)) * 10.0 ** RNG.integers(-2, 3, (6, 1))).astype(np.float32)
B = (RNG.standard_normal((32, 5)) * 10.0 ** RNG.integers(-2, 3, (1, 5))).astype(np.float32)
A[2] = 0  # an all-zero row: its scale is 1


def oracle_quantize(x, name, axis):
    """The documented rule in NumPy: amax * float32(1 / max), 1 where amax is 0; saturating cast."""
    f = lowp.FORMATS[name]
    reduced = None if axis is None else tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    amax = np.max(np.abs(x), axis=reduced, keepdims=axis is not None)
    scale = np.where(amax > 0, amax * np.float32(1 / f.max), np.float32(1)).astype(np.float32)
    scaled = np.clip(x / scale, -f.max, f.max)
    return scaled.astype(getattr(ml_dtypes, name)).view(np.uint8), scale


def codes(q, name):
    return host(lowp.encode(lowp.decode(q), name)) if lowp.format_of(q) else host(q)


@pytest.mark.parametrize("axis", [None, 0, 1, -1] if EXHAUSTIVE else [None, 0, -1])
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"] if EXHAUSTIVE else ["float8_e4m3fn", "float4_e2m1fn"])
def test_quantize_and_dequantize(backend, name, axis):
    want_codes, want_scale = oracle_quantize(A, name, axis)
    q, scale = lowp.quantize(native(backend, A), name, axis=axis)
    assert (codes(q, name) == want_codes).all()
    assert (host(scale) == want_scale).all() and host(scale).shape == want_scale.shape
    values = want_codes.view(getattr(ml_dtypes, name)).astype(np.float32) * want_scale
    back = lowp.dequantize(q, scale, None if lowp.format_of(q) else name)
    assert (host(back) == values).all()


def _matmul(a, b):
    qa, sa = lowp.quantize(a, "float8_e4m3fn", axis=0)
    qb, sb = lowp.quantize(b, "float8_e5m2", axis=1)
    return lowp.scaled_matmul(qa, sa, qb, sb, "float8_e4m3fn", "float8_e5m2")


def test_scaled_matmul_same_bits_on_every_backend(backend):
    reference = _matmul(A, B)  # NumPy
    qa, sa = oracle_quantize(A, "float8_e4m3fn", 0)
    qb, sb = oracle_quantize(B, "float8_e5m2", 1)
    exact = qa.view(ml_dtypes.float8_e4m3fn).astype(np.float64) @ qb.view(ml_dtypes.float8_e5m2).astype(np.float64)
    np.testing.assert_allclose(reference, exact * sa * sb, rtol=1e-5, atol=1e-30)
    assert (host(_matmul(native(backend, A), native(backend, B))).view(np.uint32) == reference.view(np.uint32)).all()


def test_scaled_matmul_compiled(backend):
    reference = _matmul(A, B)
    if backend == "jax":
        import jax

        run = jax.jit(_matmul)
    elif backend == "torch":
        import torch

        torch._dynamo.reset()
        run = torch.compile(_matmul, fullgraph=True)
    elif backend == "tensorflow":
        import tensorflow as tf

        run = tf.function(_matmul, autograph=False)
    else:
        pytest.skip(f"{backend} has no compiler")
    got = host(run(native(backend, A), native(backend, B)))
    assert (got.view(np.uint32) == reference.view(np.uint32)).all()


def test_scales_along_the_contracted_axis_are_refused():
    qa, _ = lowp.quantize(A, "float8_e4m3fn")
    qb, _ = lowp.quantize(B, "float8_e4m3fn")
    with pytest.raises(InvalidArgumentError, match=r"a_scale has shape \(1, 32\)"):
        lowp.scaled_matmul(qa, np.ones((1, 32), np.float32), qb, np.float32(1))
    with pytest.raises(InvalidArgumentError, match="axis=2"):
        lowp.amax_scale(A, "float8_e4m3fn", axis=2)
