"""Placement on a GPU: run where a framework sees one (CI has none; `benchmarks/gpu_check.py` is the
fuller check a session runs on a machine with a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al


def _has_gpu(backend: str) -> bool:
    try:
        if backend == "torch":
            import torch
            return torch.cuda.is_available()
        if backend == "jax":
            import jax
            return any(d.platform == "gpu" for d in jax.devices())
        import tensorflow as tf
        return bool(tf.config.list_physical_devices("GPU"))
    except Exception:  # noqa: BLE001 - framework absent or broken: no GPU for it
        return False


@pytest.fixture(params=["torch", "jax", "tensorflow"])
def gpu_backend(request: pytest.FixtureRequest):
    if not _has_gpu(request.param):
        pytest.skip(f"{request.param} sees no GPU on this machine")
    with al.use_backend(request.param):
        yield request.param


def test_numpy_input_lands_on_the_gpu(gpu_backend: str) -> None:
    # found on an H200 with jax 0.11: a NumPy array came over by DLPack onto the CPU, and
    # jnp.asarray(device=gpu) refused to move the committed array ("incompatible devices")
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = al.asarray(values, device="gpu:0")
    assert al.dev(x) == "gpu:0"
    assert al.dev(al.exp(x)) == "gpu:0"
    np.testing.assert_allclose(np.asarray(al.to_backend(al.to_device(al.exp(x), "cpu"), "numpy")), np.exp(values),
                               rtol=1e-6)


def test_creation_and_results_stay_on_the_gpu(gpu_backend: str) -> None:
    x = al.ones((4, 4), dtype="float32", device="gpu:0")
    for result in (al.add(x, 1), al.sum(x), al.matmul(x, x), al.astype(x, "bfloat16")):
        assert al.dev(result) == "gpu:0"
    with al.use_device("gpu:0"):
        assert al.dev(al.zeros(3)) == "gpu:0"
        assert al.dev(al.random.normal(al.random.key(0), (3,))) == "gpu:0"
    assert al.dev(al.to_device(x, "cpu")) == "cpu"
