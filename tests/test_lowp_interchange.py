"""``to_backend`` moves every low-precision type between every pair of backends that store it with its
bits unchanged (NaN codes and -0 included; a sample of types, all under ``AL_LOWP_EXHAUSTIVE=1``): through DLPack where both frameworks take it (torch and
JAX float8), else through NumPy, torch's bytes as a uint8 view (its NumPy bridge has no float8)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from tests.lowp_support import EXHAUSTIVE

BACKENDS = ("numpy", "jax", "torch", "tensorflow", "dask")
LOW = [str(d) for d in al.all_low_precision_dtypes]
SAMPLE = LOW if EXHAUSTIVE else ["float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float6_e2m3fn", "int4"]


def _every_value(name: str) -> np.ndarray:
    """Every code of an 8-bit type; every value of a narrower one (ml_dtypes' own arrays)."""
    native = getattr(ml_dtypes, name)
    if al.Dtype(name).bits == 8:
        return np.arange(256, dtype=np.uint8).view(native)
    return np.arange(-(1 << 6), 1 << 6).astype(np.float32).astype(native)


def _holders(name: str) -> list[str]:
    found = []
    for backend in BACKENDS:
        with al.use_backend(backend):
            if name in al.valid_low_precision_dtypes:
                found.append(backend)
    return found


@pytest.mark.parametrize("name", SAMPLE)
def test_to_backend_keeps_the_bits_between_every_pair(name):
    host = _every_value(name)
    holders = _holders(name)
    assert {"numpy", "dask"} <= set(holders)
    for source in holders:
        with al.use_backend(source):
            x = al.asarray(host, dtype=name)
        for target in holders:
            y = al.to_backend(x, target)
            assert al.Dtype(y.dtype) is al.Dtype(name), (source, target)
            back = np.asarray(al.to_backend(y, "numpy"))
            assert back.dtype == host.dtype and back.tobytes() == host.tobytes(), (source, target)


def test_an_array_of_a_type_the_target_cannot_store_is_refused():
    with al.use_backend("numpy"):
        x = al.asarray([1, -2, 3], dtype="int4")
    with pytest.raises(al.UnsupportedDtypeError, match="int4.*Use a backend that stores it"):
        al.to_backend(x, "torch")


def test_dlpack_moves_float8_between_torch_and_jax():
    torch = pytest.importorskip("torch")
    jax = pytest.importorskip("jax")
    host = _every_value("float8_e4m3fn")
    with al.use_backend("torch"):
        x = al.Array(al.asarray(host, dtype="float8_e4m3fn"))
    moved = jax.dlpack.from_dlpack(x)  # through Array.__dlpack__
    assert np.asarray(moved).tobytes() == host.tobytes()
    again = torch.from_dlpack(moved)
    assert again.dtype == torch.float8_e4m3fn and again.view(torch.uint8).numpy().tobytes() == host.tobytes()


@pytest.mark.parametrize("wrapped", [False, True], ids=["native", "Array"])
@pytest.mark.parametrize("name", SAMPLE)
def test_from_dlpack_moves_the_bits_between_every_pair(name, wrapped):
    """DLPack has no code for these types (NumPy and TensorFlow refuse them, JAX's reach NumPy as an
    error): ``arraylayer.from_dlpack`` still gives the same bits on every backend that stores the type."""
    host = _every_value(name)
    holders = _holders(name)
    for source in holders:
        with al.use_backend(source):
            x = al.asarray(host, dtype=name)
            x = al.Array(x) if wrapped else x
        for target in holders:
            with al.use_backend(target):
                y = al.from_dlpack(x)
                native = y._native if wrapped else y
                assert al.runtime.registry.backend_of(native).name == target and al.Dtype(y.dtype) is al.Dtype(name)
            back = np.asarray(al.to_backend(native, "numpy"))
            assert back.tobytes() == host.tobytes(), (source, target)


def test_from_dlpack_shares_float8_bytes_between_numpy_and_torch():
    pytest.importorskip("torch")
    host = _every_value("float8_e4m3fn").copy()
    with al.use_backend("torch"):
        shared = al.from_dlpack(host)
    host[0] = host[56]  # written through NumPy, read through torch
    assert np.asarray(al.to_backend(shared, "numpy"))[0].tobytes() == host[56].tobytes()


def test_from_dlpack_copy_false_refuses_a_pair_that_must_copy():
    pytest.importorskip("jax")
    with al.use_backend("jax"):
        x = al.asarray(_every_value("float8_e5m2"), dtype="float8_e5m2")
    with al.use_backend("numpy"), pytest.raises(BufferError, match="copy=None"):
        al.from_dlpack(x, copy=False)


@pytest.mark.parametrize("dtype", ["float32", "float8_e4m3fn"])
def test_from_dlpack_of_a_dask_array_computes_it(backend, dtype):
    """A dask array holds no memory to share: every backend gets its computed values."""
    pytest.importorskip("dask")
    host = _every_value("float8_e4m3fn")[:64].astype(np.float32)
    with al.use_backend("dask"):
        x = al.asarray(host, dtype=dtype)
    with al.use_backend(backend):
        if al.Dtype(dtype).is_low_precision and dtype not in al.valid_low_precision_dtypes:
            with pytest.raises(al.UnsupportedDtypeError):
                al.from_dlpack(x)
            return
        y = al.from_dlpack(x)
    expected = host.astype(al.Dtype(dtype).numpy_dtype)
    assert np.asarray(al.to_backend(y, "numpy")).tobytes() == expected.tobytes()
