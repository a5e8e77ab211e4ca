"""The TensorFlow adapter: dtype maps, the validity probe, arrays, DLPack and devices."""

from __future__ import annotations

import subprocess
import sys

import pytest

tf = pytest.importorskip("tensorflow")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import arraylayer as al  # noqa: E402
from arraylayer.backends.tensorflow import TensorflowBackend  # noqa: E402
from arraylayer.runtime.registry import backend_of, get_backend  # noqa: E402

DTYPES = [str(d) for d in al.all_dtypes]


@pytest.fixture(scope="module")
def b():
    return get_backend("tensorflow")


def host(dtype: str, values=(1, 0, 1)) -> np.ndarray:
    return np.asarray(values, dtype=ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


def computes(dtype: str) -> bool:
    """An attempt, independent of the adapter's probe, at computing with ``dtype`` on the CPU."""
    try:
        with tf.device("/CPU:0"):
            x = tf.convert_to_tensor(host(dtype), dtype=getattr(tf, dtype))
            if dtype == "bool":
                return bool(tf.reduce_all(x == x)) and tf.cast(tf.cast(x, tf.int8), tf.bool).dtype == tf.bool
            total = tf.reduce_sum(x * x + x)
            ok = complex(tf.cast(total, tf.complex128).numpy()) == 4
            if not x.dtype.is_complex:
                ok = ok and bool(tf.reduce_any(x > tf.zeros_like(x)))
            return ok and bool(tf.reduce_all(tf.equal(x, x)))
    except (TypeError, ValueError, tf.errors.OpError):
        return False


def test_class_attributes_and_registry(b):
    assert isinstance(b, TensorflowBackend)
    assert (b.name, b.framework, b.extra, b.narrows) == ("tensorflow", "tensorflow", "tensorflow", True)
    assert b.type_roots == ("tensorflow", "keras")
    assert b.native_dtype_class is tf.dtypes.DType
    assert b.version == tf.__version__


def test_adapter_module_does_not_import_tensorflow():
    code = ("import sys, arraylayer.backends.tensorflow, arraylayer.runtime.registry as r; "
            "r._instance('tensorflow'); assert 'tensorflow' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_load_leaves_tf_config_open():
    code = ("import arraylayer.runtime.registry as r; r.get_backend('tensorflow'); import tensorflow as tf; "
            "cpu = tf.config.list_physical_devices('CPU')[0]; "
            "tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_native_dtypes_cover_all_fifteen(b):
    assert set(b.native_dtypes) == set(al.all_dtypes) | {al.float8_e4m3fn, al.float8_e5m2}  # and its two float8
    for dtype, native in b.native_dtypes.items():  # the float8 types live in tf.dtypes.experimental
        assert native is getattr(tf.dtypes.experimental if dtype.is_low_precision else tf, str(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_native_dtype_round_trip(b, dtype):
    if dtype not in b.valid_dtypes():
        pytest.skip(f"{dtype} is not valid on this TensorFlow")
    native = b.as_native_dtype(dtype)
    assert native == getattr(tf, dtype)
    assert al.as_dtype(native) is al.as_dtype(dtype)
    assert b.dtype_of(b.asarray(host(dtype), al.as_dtype(dtype))) is al.as_dtype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_probe_agrees_with_an_independent_attempt(b, dtype):
    assert (dtype in b.valid_dtypes()) == computes(dtype)


def test_valid_dtypes_cached_and_ordered(b):
    assert b.valid_dtypes() is b.valid_dtypes()
    assert list(b.valid_dtypes()) == [d for d in al.all_dtypes if d in b.valid_dtypes()]


def test_invalid_dtypes_raise_naming_tensorflow_version_and_remedy(b):
    for dtype in set(al.all_dtypes) - set(b.valid_dtypes()):
        with pytest.raises(al.UnsupportedDtypeError, match=f"tensorflow .*{tf.__version__}") as info:
            b.asarray([1, 0], dtype)
        assert "TensorFlow on the CPU has no working" in str(info.value)


def test_invalid_dtype_error_from_a_probe_verdict():
    fake = TensorflowBackend().load()
    fake.valid_dtypes()
    fake._missing = {al.uint32: ("add", "reduce_sum")}
    fake._valid_set = frozenset(d for d in al.all_dtypes if d != "uint32")
    fake._valid = tuple(d for d in al.all_dtypes if d != "uint32")
    with pytest.raises(al.UnsupportedDtypeError) as info:
        fake.asarray([1, 2], al.uint32)
    message = str(info.value)
    assert "uint32" in message and "tensorflow" in message and tf.__version__ in message
    assert "no working add, reduce_sum for uint32" in message and "Cast to int64" in message
    with pytest.raises(al.UnsupportedDtypeError):
        fake.astype(tf.constant([1]), al.uint32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_asarray_is_strongly_typed(b, dtype):
    if dtype not in b.valid_dtypes():
        pytest.skip(f"{dtype} is not valid on this TensorFlow")
    for obj in (host(dtype), host(dtype).tolist(), tf.constant([1, 0, 1], tf.int64)):
        x = b.asarray(obj, al.as_dtype(dtype))
        assert x.dtype == getattr(tf, dtype)
        np.testing.assert_array_equal(b.to_numpy(x), host(dtype))


def test_asarray_python_values_tf_refuses_go_through_numpy(b):
    assert b.to_numpy(b.asarray([1.5, 2.0], al.int32)).tolist() == [1, 2]
    assert b.to_numpy(b.asarray([1, 0], al.bool)).tolist() == [True, False]


def test_asarray_checks_python_int_range(b):
    # tf.constant would wrap (1000 -> -24); the adapter checks, so no caller can forget to
    # (al.sum(2**31) used to return -2147483648 here).
    with pytest.raises(al.ScalarOverflowError):
        b.asarray(1000, al.int8)
    assert b.to_numpy(b.asarray(100, al.int8)) == np.int8(100)


def test_no_copy_when_dtype_and_device_match(b):
    x = tf.constant([1, 2, 3], tf.int16)
    assert b.asarray(x, al.int16) is x
    assert b.asarray(x, al.int16, "cpu") is x
    assert b.astype(x, al.int16) is x
    assert b.to_device(x, "cpu") is x
    v = tf.Variable([1.0, 2.0])
    assert b.asarray(v, al.float32) is v


def test_astype_casts(b):
    x = tf.constant([1.5, -2.5])
    y = b.astype(x, al.int32)
    assert y.dtype == tf.int32 and b.to_numpy(y).tolist() == [1, -2]


def test_bfloat16_round_trip_is_exact(b):
    values = np.asarray([1.0, -2.5, 3.140625, 1e-3, 65280.0], dtype=ml_dtypes.bfloat16)
    x = b.asarray(values, al.bfloat16)
    assert x.dtype == tf.bfloat16
    out = b.to_numpy(x)
    assert out.dtype == ml_dtypes.bfloat16
    assert out.tobytes() == values.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtype_of_tensor_and_variable(b, dtype):
    x = tf.constant(host(dtype), getattr(tf, dtype))
    assert b.dtype_of(x) is al.as_dtype(dtype)
    assert b.dtype_of(tf.Variable(x)) is al.as_dtype(dtype)


def test_dtype_of_a_non_array_dtype_raises(b):
    with pytest.raises(al.InvalidDtypeError):
        b.dtype_of(tf.constant(["a"]))


def test_array_types_cover_eager_symbolic_and_variables(b):
    assert isinstance(tf.constant(1.0), b.array_types)
    assert isinstance(tf.Variable(1.0), b.array_types)
    seen = []

    @tf.function
    def f(x):
        seen.append((isinstance(x, b.array_types), b.dtype_of(x), b.device_of(x)))
        return x

    f(tf.constant([1, 2], tf.uint8))
    assert seen == [(True, al.uint8, "gpu:0" if "gpu:0" in b.devices() else "cpu")]
    assert backend_of(tf.constant(1.0)) is b
    assert backend_of(tf.Variable(1.0)) is b


def test_cpu_device(b):
    assert "cpu" in b.devices()
    assert b.native_device("cpu") == "/CPU:0"
    with tf.device("/CPU:0"):
        x = tf.constant([1.0])
    assert b.device_of(x) == "cpu"
    assert b.device_of(b.asarray([1, 2], al.int64, "cpu")) == "cpu"


def test_unavailable_device_raises_naming_available_ones(b):
    missing = next(f"gpu:{i}" for i in range(64) if f"gpu:{i}" not in b.devices())
    with pytest.raises(al.DeviceError, match="available: cpu") as info:
        b.native_device(missing)
    assert missing in str(info.value)
    with pytest.raises(al.DeviceError):
        b.asarray([1], al.int8, missing)
    with pytest.raises(al.DeviceError):
        b.to_device(tf.constant([1]), missing)
    if "gpu:0" not in b.devices():
        with pytest.raises(al.DeviceError, match="'gpu:0' is not available"):
            b.to_device(tf.constant([1]), "gpu:0")


@pytest.mark.skipif(not tf.config.list_physical_devices("GPU"), reason="needs a GPU")
def test_gpu_placement(b):
    x = b.asarray([1.0, 2.0], al.float32, "gpu:0")
    assert b.device_of(x) == "gpu:0"
    y = b.to_device(x, "cpu")
    assert b.device_of(y) == "cpu" and b.to_device(y, "gpu:0") is not y


def test_from_dlpack_numpy_shares_values(b):
    a = np.arange(6, dtype=np.float64)
    x = b.from_dlpack(a)
    assert b.dtype_of(x) is al.float64
    np.testing.assert_array_equal(b.to_numpy(x), a)


def test_from_dlpack_torch_and_self(b):
    torch = pytest.importorskip("torch")
    x = b.from_dlpack(torch.arange(4, dtype=torch.int32))
    assert b.to_numpy(x).tolist() == [0, 1, 2, 3] and b.dtype_of(x) is al.int32
    assert b.from_dlpack(x) is x


def test_to_numpy(b):
    out = b.to_numpy(tf.Variable([1, 2], dtype=tf.uint16))
    assert isinstance(out, np.ndarray) and out.dtype == np.uint16 and out.tolist() == [1, 2]


def test_probe_marks_a_dtype_with_a_failing_kernel_invalid(monkeypatch):
    import arraylayer.backends.tensorflow as adapter

    real = adapter._probe_ops

    def with_complex_order(tf_module, dtype):
        ops = real(tf_module, dtype)
        if dtype == "complex64":  # TF has no ordering kernel for complex numbers
            ops["less"] = lambda x: tf_module.less(x, x).numpy().tolist() == [False] * 3
        return ops

    monkeypatch.setattr(adapter, "_probe_ops", with_complex_order)
    fake = TensorflowBackend().load()
    assert al.complex64 not in fake.valid_dtypes() and al.complex128 in fake.valid_dtypes()
    assert fake._missing == {al.complex64: ("less",)}
    assert "Cast to complex128" in fake.remedy(al.complex64)


def test_native_and_string_dtypes_are_accepted(b):
    assert b.check_valid(tf.int32) is al.int32
    assert b.asarray([1, 2], tf.float16).dtype == tf.float16
    assert b.astype(tf.constant([1]), "float64").dtype == tf.float64
