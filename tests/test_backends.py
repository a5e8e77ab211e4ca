"""Backend selection, inference, native dtypes, valid sets, devices and interchange, on every backend."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from conftest import selected_backends

import arraylayer as al
from arraylayer.runtime.registry import BACKEND


@pytest.fixture(autouse=True)
def _restore_backend():
    saved = BACKEND.process
    yield
    BACKEND.process = saved


def test_registry_lists_the_builtin_backends():
    assert set(al.available_backends()) >= {"numpy", "jax", "torch", "tensorflow"}
    assert set(al.installed_backends()) >= {"numpy"}
    assert al.current_backend() == "numpy"


def test_unknown_backend_names_the_registered_ones():
    with pytest.raises(al.UnknownBackendError, match="registered backends: numpy, jax, torch, tensorflow"):
        al.set_backend("pytorch")
    assert al.current_backend() == "numpy"


def test_backend_whose_framework_is_missing_names_the_pip_extra():
    from arraylayer.backends.numpy import NumpyBackend

    class MissingBackend(NumpyBackend):
        name = "missing"
        framework = "arraylayer_no_such_framework"
        extra = "missing"

    al.register_backend("missing", MissingBackend)
    try:
        with pytest.raises(al.BackendNotInstalledError, match=r'pip install "arraylayer\[missing\]"'):
            al.set_backend("missing")
        assert "missing" not in al.installed_backends()
    finally:
        from arraylayer.runtime import registry

        registry._REGISTERED.pop("missing")
        registry._INSTANCES.pop("missing", None)


def test_third_party_backend_through_an_entry_point(tmp_path, monkeypatch):
    """A fifth backend is one module plus one entry point; nothing in arraylayer changes."""
    (tmp_path / "fifth_backend.py").write_text(textwrap.dedent("""
        from arraylayer.backends.numpy import NumpyBackend

        class FifthBackend(NumpyBackend):
            name = "fifth"
    """))
    dist = tmp_path / "fifth_backend-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fifth-backend\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[arraylayer.backends]\nfifth = fifth_backend:FifthBackend\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from arraylayer.runtime import registry

    monkeypatch.setattr(registry, "_entry_points_read", False)
    try:
        assert "fifth" in al.available_backends()
        with al.use_backend("fifth") as backend:
            assert al.current_backend() == "fifth" and backend.asarray([1, 2], al.int8).dtype == np.int8
    finally:
        registry._REGISTERED.pop("fifth", None)
        registry._INSTANCES.pop("fifth", None)


def test_selecting_numpy_imports_no_other_framework():
    code = textwrap.dedent("""
        import sys, arraylayer as al
        al.set_backend("numpy")
        al.get_backend().asarray([1, 2], al.int8)
        al.backend_of(1.0, [2])
        print(sorted(m for m in ("torch", "jax", "tensorflow") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_arraylayer_loads_no_toolkit_module_until_one_is_used():
    """The model toolkit (models/) loads on first use: ``import arraylayer`` pays for the namespace only,
    and each way of reaching the toolkit gives the one module object."""
    code = textwrap.dedent("""
        import sys, arraylayer as al
        print(sorted(m for m in sys.modules if m.startswith("arraylayer.models")))
        import arraylayer.optim
        from arraylayer import layers
        from arraylayer.checkpoint import save
        print(arraylayer.optim is al.optim is sys.modules["arraylayer.models.optim"], layers is al.layers,
              save is al.checkpoint.save, al.scan is sys.modules["arraylayer.models.flow"].scan,
              "vmap" in dir(al), al.map is sys.modules["arraylayer.models.flow"].map)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True True True True True True"]


def test_set_backend_and_use_backend(backend):
    al.set_backend(backend)
    assert al.current_backend() == backend
    with al.use_backend("numpy") as inner:
        assert al.current_backend() == "numpy" and inner.name == "numpy"
    assert al.current_backend() == backend
    x = al.get_backend().asarray([1.0, 2.0], al.float32)
    assert al.backend_of(x).name == backend


def test_threads_each_on_their_own_backend_never_cross_talk(request):
    names = selected_backends(request.config)
    errors: list = []

    def work(name):
        with al.use_backend(name) as backend:
            for i in range(10_000):
                if al.current_backend() != name:
                    errors.append((name, al.current_backend()))
                    return
                if i % 500 == 0:
                    x = al.get_backend().asarray([1, 2], al.int32)
                    if al.backend_of(x) is not backend:
                        errors.append((name, type(x)))
                        return

    threads = [threading.Thread(target=work, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert al.current_backend() == "numpy"


def test_backend_of_infers_from_arrays_and_rejects_mixtures(backend):
    b = al.get_backend(backend)
    x = b.asarray([1, 2], al.float32)
    assert al.backend_of(x) is b
    assert al.backend_of(1.0, x, [3]) is b
    assert al.backend_of(1.0, 2) is al.get_backend()
    if backend != "numpy":
        with pytest.raises(al.BackendMismatchError, match=f"numpy.*{backend}|{backend}.*numpy"):
            al.backend_of(np.ones(2), x)


def test_native_dtypes_round_trip(backend):
    with al.use_backend(backend) as b:
        assert al.NativeDtype is b.native_dtype_class
        for dtype in b.valid_dtypes():
            native = al.as_native_dtype(dtype)
            assert isinstance(native, al.NativeDtype)
            assert al.as_arraylayer_dtype(native) is dtype
            assert getattr(al, f"native_{dtype}") == native
            assert b.dtype_of(b.asarray([1, 0], dtype)) is dtype


def test_native_names_are_dtypes_before_any_backend():
    assert al.NativeDtype is al.Dtype
    assert al.native_float32 is al.float32


def test_valid_and_invalid_sets_partition_and_drive_attributes(backend):
    with al.use_backend(backend) as b:
        valid, invalid = al.valid_dtypes, al.invalid_dtypes
        assert set(valid) | set(invalid) == set(al.all_dtypes) and not set(valid) & set(invalid)
        assert al.valid_int_dtypes == tuple(d for d in al.all_int_dtypes if d in valid)
        assert al.invalid_float_dtypes == tuple(d for d in al.all_float_dtypes if d not in valid)
        for dtype in valid:
            assert getattr(al, str(dtype)) is dtype
        for dtype in invalid:
            with pytest.raises(AttributeError, match=f"{backend} backend"):
                getattr(al, str(dtype))
            with pytest.raises(al.UnsupportedDtypeError, match=backend):
                b.asarray([1], dtype)
    for dtype in al.all_dtypes:  # back under numpy, everything is there again
        assert getattr(al, str(dtype)) is dtype


def test_valid_dtypes_really_compute(backend):
    """Every dtype declared valid supports creation, a cast and a round trip to NumPy."""
    b = al.get_backend(backend)
    for dtype in b.valid_dtypes():
        x = b.asarray([1, 0, 1], dtype)
        assert b.dtype_of(x) is dtype
        host = b.to_numpy(x)
        assert al.as_dtype(host.dtype) is dtype
        assert np.real(host).astype(np.float64).tolist() == [1.0, 0.0, 1.0]
        other = al.complex64 if dtype.is_complex else al.float32
        assert b.dtype_of(b.astype(x, other)) is other


def test_cpu_device(backend):
    b = al.get_backend(backend)
    x = b.asarray([1.0], al.float32, device="cpu")
    assert al.dev(x) == "cpu" and "cpu" in b.devices()
    assert al.to_device(x, "cpu") is x


def test_unavailable_and_malformed_devices(backend):
    b = al.get_backend(backend)
    x = b.asarray([1.0], al.float32)
    missing = next(f"gpu:{i}" for i in range(64) if f"gpu:{i}" not in b.devices())
    with pytest.raises(al.DeviceError, match="cpu"):
        al.to_device(x, missing)
    with pytest.raises(al.DeviceError, match="Did you mean gpu:0"):
        al.to_device(x, "cuda:0")


def test_default_device_setting():
    assert al.default_device() is None
    with al.use_device("GPU"):
        assert al.default_device() == "gpu:0"
    al.set_default_device("cpu")
    assert al.default_device() == "cpu"
    al.set_default_device(None)
    with pytest.raises(al.DeviceError):
        al.set_default_device("npu:0")


INTERCHANGE_DTYPES = ["bool", "int8", "uint8", "int32", "int64", "bfloat16", "float16", "float32",
                      "float64", "complex64"]


def test_to_backend_keeps_dtype_and_values(backend, target):
    source, dest = al.get_backend(backend), al.get_backend(target)
    for name in INTERCHANGE_DTYPES:
        dtype = al.as_dtype(name)
        if dtype not in source.valid_dtypes() or dtype not in dest.valid_dtypes():
            continue
        x = source.asarray([1, 0, 1, 1], dtype)
        y = al.to_backend(x, target)
        assert al.backend_of(y) is dest, (backend, target, name)
        assert dest.dtype_of(y) is dtype, (backend, target, name)
        assert np.real(dest.to_numpy(y)).astype(np.float64).tolist() == [1, 0, 1, 1], (backend, target, name)



def test_promote_types_of_inputs_on_every_backend(backend):
    with al.use_backend(backend) as b:
        x8 = b.asarray([1, 2], al.int8)
        h16 = b.asarray([0.5, 1.5], al.float16)
        a, c = al.promote_types_of_inputs(x8, 3)
        assert (b.dtype_of(a), b.dtype_of(c)) == (al.int8, al.int8) and a is x8
        a, c = al.promote_types_of_inputs(x8, h16)
        assert (b.dtype_of(a), b.dtype_of(c)) == (al.float16, al.float16)
        assert b.to_numpy(a).tolist() == [1.0, 2.0]
        a, c = al.promote_types_of_inputs(2, 2.5)  # scalars only: the active backend, default float
        assert al.backend_of(a) is b and b.dtype_of(a) is al.float32 and b.dtype_of(c) is al.float32
        with pytest.raises(al.ScalarOverflowError):
            al.promote_types_of_inputs(x8, 300)
        if backend != "numpy":
            with pytest.raises(al.BackendMismatchError):
                al.promote_types_of_inputs(x8, np.ones(2, np.int8))
