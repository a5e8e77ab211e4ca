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


def _bits(x: object) -> np.ndarray:
    return np.asarray(al.to_backend(al.to_device(x, "cpu"), "numpy")).view(np.uint8)


def test_a_cpu_key_draws_on_the_gpu_and_drops_out_gpu_arrays(gpu_backend: str) -> None:
    # found on an H100 (benchmarks/gpu_check.py): jax's compiled draw placed its counters on the
    # default device (the GPU) while a CPU key's words stayed on the CPU ("incompatible devices"); torch's
    # nn.dropout of a CUDA tensor drew its mask on the CPU key's device and failed in `where`.
    # The integer draws are the same bits on the GPU; normal's transform and dropout's division use the
    # GPU's own float32 kernels (measured: a few ulps apart on jax, whose GPU division is not the CPU's)
    key = al.random.key(11, device="cpu")
    x = al.random.normal(al.random.key(2), (64, 65), device="gpu:0")
    for draw in (lambda d: al.random.uniform(key, (4099,), device=d), lambda d: al.random.bernoulli(key, 0.3, (4099,), device=d),
                 lambda d: al.random.randint(key, (4099,), 0, 1000, device=d)):
        on_gpu, on_cpu = draw("gpu:0"), draw("cpu")
        assert al.dev(on_gpu) == "gpu:0" and al.dev(on_cpu) == "cpu"
        np.testing.assert_array_equal(_bits(on_gpu), _bits(on_cpu))
    normal = al.random.normal(key, (4099,), device="gpu:0")
    assert al.dev(normal) == "gpu:0"
    np.testing.assert_allclose(_values(normal), _values(al.random.normal(key, (4099,), device="cpu")), rtol=1e-5)
    dropped, on_cpu = al.nn.dropout(key, x, 0.1), al.nn.dropout(key, al.to_device(x, "cpu"), 0.1)
    assert al.dev(dropped) == "gpu:0"
    np.testing.assert_array_equal(_values(dropped) == 0, _values(on_cpu) == 0)  # the same elements dropped
    np.testing.assert_allclose(_values(dropped), _values(on_cpu), rtol=1e-6)


def _values(x: object) -> np.ndarray:
    return np.asarray(al.to_backend(al.to_device(x, "cpu"), "numpy"))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_float8_casts_inside_torch_compile_keep_ml_dtypes_bits(name: str) -> None:
    # found on an H200 with torch 2.11: inside torch.compile, Inductor's GPU code converts to float8
    # with a saturating conversion (e5m2 overflow gave the largest value, not inf), so the rule's
    # fix-ups of torch's eager cast no longer held; there the encoder takes the portable rule.
    # (The fnuz types cannot be compiled on an NVIDIA GPU at all: docs/low_precision.rst.)
    if not _has_gpu("torch"):
        pytest.skip("torch sees no GPU on this machine")
    import ml_dtypes
    import torch

    from tests.lowp_support import float32_inputs

    values = float32_inputs(name)
    with al.use_backend("torch"):
        encode = torch.compile(lambda x: al.astype(x, name))
        decode = torch.compile(lambda c: al.astype(c, "float32"))
        codes = encode(torch.from_numpy(values).cuda())
        back = decode(codes).cpu().numpy()
    with np.errstate(invalid="ignore", over="ignore"):
        want = values.astype(getattr(ml_dtypes, name))
    assert (codes.view(torch.uint8).cpu().numpy() == want.view(np.uint8)).all()
    assert (back.view(np.uint32) == want.astype(np.float32).view(np.uint32)).all()  # NaNs keep their sign
