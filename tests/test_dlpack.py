"""DLPack exchange between every pair of backends, through Arrays and native arrays."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer.runtime.registry import available_backends

SOURCE = np.arange(6, dtype=np.float32).reshape(2, 3)
CPU = (1, 0)  # DLPack's (kDLCPU, 0)


@pytest.fixture(params=["numpy", "torch", "jax", "tensorflow"])
def producer(request):
    if request.param not in available_backends():
        pytest.skip(f"{request.param} is not installed")
    return request.param


@pytest.mark.parametrize("wrapped", [True, False], ids=["Array", "native"])
def test_round_trip_between_backends(backend, producer, wrapped):
    with al.use_backend(producer):
        source = al.Array(al.asarray(SOURCE))
    with al.use_backend(backend):
        result = al.from_dlpack(source if wrapped else source._native)
        native = result._native if isinstance(result, al.Array) else result
        assert al.runtime.registry.backend_of(native).name == backend
        np.testing.assert_array_equal(np.asarray(result), SOURCE)


@pytest.mark.parametrize("options", [{}, {"max_version": (1, 0)}, {"dl_device": CPU}, {"copy": False},
                                     {"copy": True}], ids=str)
def test_dlpack_options_accepted(backend, options):
    with al.use_backend(backend):
        x = al.Array(al.asarray(SOURCE))
        assert x.__dlpack_device__() == CPU
        capsule = x.__dlpack__(**options)
        assert type(capsule).__name__ == "PyCapsule"



@pytest.mark.parametrize("max_version", [(0, 0), (0, 5), (2, 0)], ids=str)
def test_any_max_version_gets_a_capsule(backend, max_version):
    """The standard lets a producer answer max_version with a capsule of another version; a DLPack
    0.x consumer gets the legacy, unversioned capsule it reads (JAX alone refuses to be asked for
    less than 0.5)."""
    with al.use_backend(backend):
        capsule = al.Array(al.asarray(SOURCE)).__dlpack__(max_version=max_version)
    assert type(capsule).__name__ == "PyCapsule"
    if max_version[0] == 0:
        assert '"dltensor"' in repr(capsule), capsule

def test_dlpack_to_another_device_is_buffer_error(backend):
    with al.use_backend(backend):
        x = al.Array(al.asarray(SOURCE))
        with pytest.raises(BufferError):
            x.__dlpack__(dl_device=(2, 0))  # kDLCUDA: no such device here, and no copy across


def test_from_dlpack_copy_true_does_not_share(backend):
    with al.use_backend(backend):
        source = al.Array(al.asarray(SOURCE.copy()))
        copied = al.from_dlpack(source, copy=True)
        source[0, 0] = 100.0
        assert float(np.asarray(copied)[0, 0]) == 0.0
