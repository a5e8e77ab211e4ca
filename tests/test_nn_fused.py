"""nn's fused kernels (arraylayer/models/fused.py) and eager dropout masks (arraylayer/models/dropout_masks.py).

softmax, log_softmax, gelu and layer_norm run the framework's own kernel for float32/float64 on
jax, torch and tensorflow: the values must agree with NumPy's composed form within 1e-5
relatively, gradients with float64 finite differences, compiled results with eager ones, and half
precision must still be the composed form, bit for bit. dropout's masks come from NumPy on the CPU
for numpy and torch: they must be the masks of ``random.bernoulli`` (and of ``jax.random``) bit
for bit, at every rate, including rates at the edge of float32's rounding.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import selected_backends
from test_compile_and_grad import compiler

import arraylayer as al

nn = al.nn
FUSED_BACKENDS = ("jax", "torch", "tensorflow")
RNG = np.random.default_rng(23)
X = RNG.normal(0, 3, (3, 4, 8)).astype(np.float32)
SCALE, OFFSET = (RNG.normal(1, 0.5, 8).astype(np.float32) for _ in range(2))
MASKED = np.where(np.tril(np.ones((4, 8))) > 0, X[0], -np.inf).astype(np.float32)  # attention's causal fill
EXTREME = np.array([[-100.0, -1.0, 0.0, 1.0, 100.0], [100.0, 100.0, -100.0, 0.0, 3.0]], np.float32)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "fused_backend" in metafunc.fixturenames:
        chosen = [b for b in selected_backends(metafunc.config) if b in FUSED_BACKENDS]
        metafunc.parametrize("fused_backend", chosen)


def on(backend: str, values: np.ndarray) -> Any:
    return al.to_backend(values, backend)


def host(x: Any) -> np.ndarray:
    return np.asarray(al.to_backend(x, "numpy"))


#: name -> (function of (backend, x), input)
CASES = {
    "softmax": (lambda b, x: nn.softmax(x), X),
    "softmax_axis0": (lambda b, x: nn.softmax(x, axis=0), X),
    "softmax_masked": (lambda b, x: nn.softmax(x), MASKED),
    "softmax_extreme": (lambda b, x: nn.softmax(x), EXTREME),
    "log_softmax": (lambda b, x: nn.log_softmax(x, axis=-2), X),
    "log_softmax_masked": (lambda b, x: nn.log_softmax(x), MASKED),
    "log_softmax_extreme": (lambda b, x: nn.log_softmax(x), EXTREME),
    "gelu": (lambda b, x: nn.gelu(x), X),
    "gelu_tanh": (lambda b, x: nn.gelu(x, approximate=True), X),
    "layer_norm": (lambda b, x: nn.layer_norm(x), X),
    "layer_norm_affine": (lambda b, x: nn.layer_norm(x, on(b, SCALE), on(b, OFFSET), eps=1e-3), X),
    "layer_norm_two_axes": (lambda b, x: nn.layer_norm(x, axis=(-1, 1)), X),
    "layer_norm_middle_axis": (lambda b, x: nn.layer_norm(x, axis=1), X),  # composed
    "layer_norm_broadcast_scale": (lambda b, x: nn.layer_norm(x, on(b, SCALE[None]), 0.5), X),
    "layer_norm_float64_scale": (lambda b, x: nn.layer_norm(x, on(b, SCALE.astype(np.float64))), X),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_agree_with_numpys_composed_form(backend, name, x64_on):
    f, values = CASES[name]
    expected = f("numpy", values)
    got = f(backend, on(backend, values))
    assert al.as_arraylayer_dtype(got.dtype) == al.as_arraylayer_dtype(expected.dtype)
    np.testing.assert_allclose(host(got), expected, rtol=1e-5, atol=1e-6)


def test_float64_stays_float64(fused_backend, x64_on):
    x = on(fused_backend, X.astype(np.float64))
    for name in ("softmax", "log_softmax", "gelu", "layer_norm"):
        got = getattr(nn, name)(x)
        assert al.as_arraylayer_dtype(got.dtype) == "float64"
        np.testing.assert_allclose(host(got), getattr(nn, name)(X.astype(np.float64)), rtol=1e-12, atol=1e-14)


#: what shows that the framework's own kernel ran: torch's autograd node, a TensorFlow graph op
TORCH_NODES = {"softmax": "SoftmaxBackward0", "log_softmax": "LogSoftmaxBackward0", "gelu": "GeluBackward0",
               "layer_norm": "NativeLayerNormBackward0"}
TF_OPS = {"softmax": "Softmax", "log_softmax": "LogSoftmax"}


@pytest.mark.parametrize("name", sorted(TORCH_NODES))
def test_torch_runs_its_own_kernel(request, name):
    if "torch" not in selected_backends(request.config):
        pytest.skip("torch not selected")
    import torch

    x = torch.tensor(X, requires_grad=True)
    assert type(getattr(nn, name)(x).grad_fn).__name__ == TORCH_NODES[name]
    assert type(nn.layer_norm(x, torch.tensor(SCALE), torch.tensor(OFFSET)).grad_fn).__name__ == TORCH_NODES["layer_norm"]


@pytest.mark.parametrize("name", sorted(TF_OPS))
def test_tensorflow_runs_its_own_kernel(request, name):
    if "tensorflow" not in selected_backends(request.config):
        pytest.skip("tensorflow not selected")
    import tensorflow as tf

    graph = tf.function(getattr(nn, name)).get_concrete_function(tf.constant(X)).graph
    assert TF_OPS[name] in {op.type for op in graph.get_operations()}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_keeps_the_composed_form(backend, dtype):
    """float16/bfloat16 round every step as before: the composed formulas' bits on each backend."""
    x = al.astype(on(backend, X), dtype)
    shifted = al.exp(al.subtract(x, al.max(x, axis=-1, keepdims=True)))
    softmax = al.divide(shifted, al.sum(shifted, axis=-1, keepdims=True))
    assert al.as_arraylayer_dtype(nn.softmax(x).dtype) == dtype
    np.testing.assert_array_equal(host(al.astype(nn.softmax(x), "float32")), host(al.astype(softmax, "float32")))
    centred = al.subtract(x, al.mean(x, axis=-1, keepdims=True))
    normed = al.divide(centred, al.sqrt(al.add(al.mean(al.square(centred), axis=-1, keepdims=True), 1e-5)))
    np.testing.assert_array_equal(host(al.astype(nn.layer_norm(x), "float32")), host(al.astype(normed, "float32")))


# -- gradients, in float32 against float64 finite differences ------------------------------------------
GRADIENT_CASES = {
    "softmax": lambda x: nn.softmax(x, axis=1),
    "log_softmax": nn.log_softmax,
    "gelu": nn.gelu,
    "gelu_tanh": lambda x: nn.gelu(x, approximate=True),
    "layer_norm": lambda x: nn.layer_norm(x, axis=(-2, -1)),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_float32_gradients(fused_backend, name, x64_on):
    f, x = GRADIENT_CASES[name], X[:2, :3, :5] / 3
    weights = RNG.standard_normal(x.shape)

    def loss(a: Any) -> Any:
        return al.sum(al.multiply(f(a), on(al.backend_of(a).name, weights.astype(np.float32))))

    got = host(al.grad(loss)(on(fused_backend, x)))
    x64, h = x.astype(np.float64), 1e-6
    expected = np.zeros_like(x64)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x64)
        step[i] = h
        expected[i] = (np.sum(f(x64 + step) * weights) - np.sum(f(x64 - step) * weights)) / (2 * h)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def _model(x: Any, scale: Any, offset: Any) -> Any:
    h = nn.gelu(nn.layer_norm(x, scale, offset), approximate=True)
    return al.add(nn.softmax(h, axis=1), al.add(nn.log_softmax(h), nn.gelu(h)))


def test_compiled_equals_eager(fused_backend):
    args = [on(fused_backend, a) for a in (X, SCALE, OFFSET)]
    eager = host(_model(*args))
    np.testing.assert_allclose(host(compiler(fused_backend)(_model)(*args)), eager, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(eager, _model(X, SCALE, OFFSET), rtol=1e-5, atol=1e-5)


# -- dropout masks -----------------------------------------------------------------------------------------
#: rates whose keep probability lies just above a multiple of 2**-23 (float32 rounds it down onto the
#: multiple) or exactly on one, plus tiny ones (1 - rate rounds to 1 in float32) and ordinary ones
RATES = (0.1, 0.25, 0.5, 1 / 3, 0.9, 1e-9, 1 - (3 * 2**21 + 2**-8) * 2**-23, 1 - 5 * 2**-23, 0.999999)
SHAPES = ((16, 32, 64), (7,), (3, 0), (70001,))


def _bernoulli_mask(backend: str, seed: int, shape: tuple[int, ...], p: float) -> np.ndarray:
    with al.use_backend(backend):
        return host(al.random.bernoulli(al.random.key(seed), p, shape))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dropout_masks_are_bernoullis(backend, shape):
    for seed, rate in enumerate(RATES):
        with al.use_backend(backend):
            key = al.random.key(seed)
        x = on(backend, np.ones(shape, np.float32))
        kept = host(nn.dropout(key, x, rate)) != 0
        np.testing.assert_array_equal(kept, _bernoulli_mask("numpy", seed, shape, 1.0 - rate), err_msg=f"rate {rate}")


def test_dropout_masks_are_jax_randoms(backend, x64_off):
    """The oracle is jax.random.bernoulli with JAX's 32-bit defaults (with x64 on it draws float64
    uniforms for a Python float p, other bits), so x64 is off whatever an earlier test left."""
    jax = pytest.importorskip("jax")
    shape = (5, 300)
    for seed, rate in enumerate(RATES[:5]):
        with al.use_backend(backend):
            key = al.random.key(seed)
        kept = host(nn.dropout(key, on(backend, np.ones(shape, np.float32)), rate)) != 0
        np.testing.assert_array_equal(kept, np.asarray(jax.random.bernoulli(jax.random.key(seed), 1.0 - rate, shape)))


def test_dropout_values_and_gradient(backend):
    with al.use_backend(backend):
        key = al.random.key(7)
    x = on(backend, X)
    dropped = host(nn.dropout(key, x, 0.3))
    kept = _bernoulli_mask("numpy", 7, X.shape, 0.7)
    # the oracle is NumPy's division (JAX's own divide by a scalar multiplies by the reciprocal,
    # one ulp off; dropout divides by a mask array, so every backend has NumPy's bits)
    np.testing.assert_array_equal(dropped, np.where(kept, X / np.float32(0.7), 0.0))
    if backend in FUSED_BACKENDS:
        grad = host(al.grad(lambda a: al.sum(nn.dropout(key, a, 0.3)))(x))
        np.testing.assert_allclose(grad, np.where(kept, 1 / 0.7, 0.0), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_dropout_has_the_same_bits_on_every_backend(backend, dtype, x64_on):
    """One division by a mask of 1 - rate and inf everywhere: NumPy's x / float(1 - rate) where
    kept, a zero of x's sign where dropped (the bits compared, so -0.0 is not 0.0)."""
    if dtype not in al.valid_dtypes(backend):
        pytest.skip(f"{backend} has no {dtype}")
    x = np.concatenate([X.ravel(), [0.0, -0.0, 1e-30, -4e4]]).astype(dtype)
    with al.use_backend(backend):
        key = al.random.key(5)
    dropped = host(nn.dropout(key, on(backend, x), 0.3))
    kept = _bernoulli_mask("numpy", 5, x.shape, 0.7)
    expected = np.where(kept, x / np.dtype(dtype).type(0.7), x * np.dtype(dtype).type(0.0))
    assert dropped.dtype == expected.dtype and not kept.all() and kept.any()
    np.testing.assert_array_equal(dropped.view(f"u{x.itemsize}"), expected.view(f"u{x.itemsize}"))


def test_dropout_on_torch_as_the_first_use_of_numpy():
    """A fresh interpreter whose first arraylayer call is torch's eager dropout (dropout_masks
    imports NumPy only when it makes a mask)."""
    pytest.importorskip("torch")
    code = ("import arraylayer as al, torch\n"
            "al.set_backend('torch')\n"
            "y = al.nn.dropout(al.random.key(1), torch.tensor([-1.0, 2.0, -3.0, 4.0, 0.5, -0.5]), 0.5)\n"
            "print(y.tolist())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 0, done.stderr[-2000:]
    expected = np.where(_bernoulli_mask("numpy", 1, (6,), 0.5), [-2.0, 4.0, -6.0, 8.0, 1.0, -1.0], [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0])
    assert done.stdout.strip() == str(expected.tolist())


def test_compiled_dropout_has_the_eager_bits(fused_backend):
    with al.use_backend(fused_backend):
        key = al.random.key(12)
    x = on(fused_backend, X)
    eager = host(nn.dropout(key, x, 0.25))
    compiled = host(compiler(fused_backend)(lambda k, a: nn.dropout(k, a, 0.25))(key, x))
    np.testing.assert_array_equal(compiled.view(np.uint32), eager.view(np.uint32))


def test_compiled_dropout_has_the_eager_mask(fused_backend):
    with al.use_backend(fused_backend):
        key = al.random.key(11)

    def dropped(k: Any, x: Any) -> Any:
        return nn.dropout(k, x, 0.4)

    x = on(fused_backend, np.ones((4, 50), np.float32))
    np.testing.assert_array_equal(host(compiler(fused_backend)(dropped)(key, x)) != 0, _bernoulli_mask("numpy", 11, (4, 50), 0.6))


def test_a_bad_key_still_gets_arraylayers_error(backend):
    x = on(backend, X)
    with pytest.raises(al.InvalidArgumentTypeError, match="key"):
        nn.dropout(on(backend, np.zeros(3, np.int64 if backend != "jax" else np.int32)), x, 0.5)
    with pytest.raises(al.InvalidArgumentTypeError, match="key"):
        nn.dropout(on(backend, np.zeros(2, np.float32)), x, 0.5)


def test_rates_cover_the_rounding_edges():
    """The edge rates above really sit where float64 and float32 comparisons of the uniform differ."""
    p = 1 - RATES[6]
    assert float(np.float32(p)) != p and math.ceil(p * 2**23) != math.ceil(float(np.float32(p)) * 2**23)
