"""The JAX adapter: native dtypes, the x64-dependent valid set, strong typing, devices, interchange."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

import arraylayer as al  # noqa: E402
from arraylayer.runtime.registry import get_backend  # noqa: E402

X64_ONLY = ("int64", "uint64", "float64", "complex128")


@pytest.fixture
def b():
    return get_backend("jax")


def test_class_attributes_and_lazy_import():
    from arraylayer.backends.jax import JaxBackend

    assert (JaxBackend.name, JaxBackend.framework, JaxBackend.extra) == ("jax", "jax", "jax")
    assert JaxBackend.type_roots == ("jax", "jaxlib") and JaxBackend.narrows is True
    code = "import sys, arraylayer.backends.jax; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_native_dtypes_round_trip(b, x64_on):
    assert b.native_dtype_class is np.dtype
    assert b.valid_dtypes() == al.all_dtypes
    for dtype in b.valid_dtypes():
        native = b.as_native_dtype(dtype)
        assert isinstance(native, np.dtype) and native == jnp.dtype(str(dtype))
        assert al.as_dtype(native) is dtype
        assert b.dtype_of(b.asarray([1, 0], dtype)) is dtype


def test_valid_dtypes_follow_x64(b):
    saved = jax.config.jax_enable_x64
    try:
        jax.config.update("jax_enable_x64", False)
        assert set(al.all_dtypes) - set(b.valid_dtypes()) == set(X64_ONLY)
        jax.config.update("jax_enable_x64", True)
        assert b.valid_dtypes() == al.all_dtypes
        jax.config.update("jax_enable_x64", False)
        with jax.enable_x64(True):  # a scoped flag is read too
            assert "float64" in b.valid_dtypes()
        assert "float64" not in b.valid_dtypes()
    finally:
        jax.config.update("jax_enable_x64", saved)
    assert jax.config.jax_enable_x64 == saved  # never changed for the user


@pytest.mark.parametrize("dtype", X64_ONLY)
def test_64_bit_dtype_without_x64_raises_instead_of_narrowing(b, x64_off, dtype):
    with pytest.raises(al.UnsupportedDtypeError, match="jax_enable_x64"):
        b.asarray([1.0], dtype)
    with pytest.raises(al.UnsupportedDtypeError, match="JAX_ENABLE_X64"):
        b.astype(b.asarray([1.0], "float32"), dtype)
    with pytest.raises(al.UnsupportedDtypeError, match="jax_enable_x64"):
        b.as_native_dtype(dtype)
    with pytest.raises(al.UnsupportedDtypeError):
        b.check_valid(al.as_dtype(dtype))
    assert not jax.config.jax_enable_x64


def test_64_bit_dtypes_with_x64(b, x64_on):
    x = b.asarray([1, 2], "float64")
    assert x.dtype == np.float64 and b.dtype_of(b.astype(x, "int64")) is al.int64


@pytest.mark.parametrize("obj", [1, 2.5, True, [1, 2], np.array([1.0, 2.0]), np.float64(3.0)])
def test_asarray_is_strongly_typed(b, obj):
    x = b.asarray(obj, "float32")
    assert x.dtype == np.float32 and not x.weak_type
    weak = jnp.asarray(1.0)
    assert weak.weak_type
    strong = b.asarray(weak, b.dtype_of(weak))
    assert not strong.weak_type and b.dtype_of(strong) is b.dtype_of(weak)


def test_no_copy_when_dtype_and_device_match(b):
    x = b.asarray([1, 2], "int32")
    assert b.asarray(x, "int32") is x
    assert b.asarray(x, "int32", device="cpu") is x
    assert b.astype(x, "int32") is x
    y = b.astype(x, "int8")
    assert y is not x and b.dtype_of(y) is al.int8 and y.tolist() == [1, 2]


def test_bfloat16_round_trip(b):
    import ml_dtypes

    host = np.asarray([1.5, -2.0, 3.0], dtype=ml_dtypes.bfloat16)
    x = b.asarray(host, "bfloat16")
    assert b.dtype_of(x) is al.bfloat16 and not x.weak_type
    back = b.to_numpy(x)
    assert isinstance(back, np.ndarray) and back.dtype == ml_dtypes.bfloat16
    assert back.tolist() == host.tolist()


def test_cpu_placement(b):
    assert "cpu" in b.devices()
    assert all(d == "cpu" or d.split(":")[0] in ("gpu", "tpu") for d in b.devices())
    x = b.asarray([1.0], "float32", device="cpu")
    assert b.device_of(x) == "cpu" and x.devices() == {jax.devices("cpu")[0]}
    assert b.native_device("CPU") == jax.devices("cpu")[0]
    assert b.to_device(x, "cpu") is x


def _has_gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def test_gpu_device_is_placed_or_refused(b):
    x = b.asarray([1.0], "float32", device="cpu")
    if _has_gpu():
        assert "gpu:0" in b.devices()
        y = b.to_device(x, "gpu:0")
        assert b.device_of(y) == "gpu:0" and b.to_device(y, "gpu") is y
        assert b.device_of(b.asarray([1], "int32", device="gpu:0")) == "gpu:0"
        assert b.device_of(b.to_device(y, "cpu")) == "cpu"
    else:
        assert "gpu:0" not in b.devices()
        with pytest.raises(al.DeviceError, match="Available devices: cpu"):
            b.to_device(x, "gpu:0")
        with pytest.raises(al.DeviceError, match="cpu"):
            b.asarray([1.0], "float32", device="gpu:0")
    missing = f"gpu:{len(jax.devices('gpu')) if _has_gpu() else 0}"
    with pytest.raises(al.DeviceError, match="cpu"):
        b.native_device(missing)
    with pytest.raises(al.DeviceError, match="Did you mean gpu:0"):
        b.native_device("cuda:0")


def test_tracers_are_arrays_of_this_backend(b):
    seen = []

    @jax.jit
    def f(t):
        seen.append(isinstance(t, b.array_types))
        u = b.asarray(t, "float32")
        assert u is t  # already strongly typed float32: no conversion
        v = b.asarray(t, "float32", device="cpu")  # placement inside a trace does not raise
        return b.astype(u + v, "int32")

    out = f(jnp.ones(2, dtype=jnp.float32))
    assert seen == [True] and out.dtype == np.int32 and out.tolist() == [2, 2]
    assert al.backend_of(b.asarray([1], "int8")) is b


def test_device_of_a_tracer(b):
    """A tracer has no devices() (JAX raises): under an eager jax.grad it reports the device of
    its concrete value, under jit and vmap JAX's default device, where the trace runs."""
    seen = {}

    def record(name):
        def f(t):
            seen[name] = b.device_of(t)
            return jnp.sum(t)
        return f

    x = jax.device_put(jnp.ones(2), jax.devices("cpu")[0])  # committed to the CPU, whatever the default
    jax.grad(record("grad"))(x)
    jax.jit(record("jit"))(x)
    jax.vmap(record("vmap"))(x)
    with jax.default_device("cpu"):
        jax.jit(record("jit, default 'cpu'"))(x)
    with jax.default_device(jax.devices("cpu")[0]):
        jax.jit(record("jit, default the CPU device"))(x)
    default = b.device_of(jnp.zeros(()))  # an uncommitted array is on the default device
    assert seen == {"grad": "cpu", "jit": default, "vmap": default, "jit, default 'cpu'": "cpu",
                    "jit, default the CPU device": "cpu"}


@pytest.mark.parametrize("transform", [jax.jit, jax.vmap], ids=["jit", "vmap"])
def test_like_functions_inside_a_trace(transform):
    """zeros_like/ones_like/full_like take the place of x from device_of, tracers included."""
    x = jnp.arange(3.0)
    made = transform(lambda t: (al.zeros_like(t), al.ones_like(t), al.full_like(t, 2.5)))(x)
    assert [np.asarray(m).tolist() for m in made] == [[0.0] * 3, [1.0] * 3, [2.5] * 3]


def test_from_dlpack_shares_values(b):
    host = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = b.from_dlpack(host)
    assert isinstance(x, b.array_types) and b.dtype_of(x) is al.float32
    assert np.array_equal(b.to_numpy(x), host)
    back = np.from_dlpack(x)
    assert np.array_equal(back, host)


def test_x64_off_in_a_fresh_process():
    """With the flag untouched (off by default), the valid set lacks the 64-bit dtypes."""
    code = textwrap.dedent("""
        import arraylayer as al
        from arraylayer.runtime.registry import get_backend
        b = get_backend("jax")
        print(",".join(str(d) for d in al.all_dtypes if d not in b.valid_dtypes()))
    """)
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == ",".join(X64_ONLY)


def test_promotion_to_a_dtype_jax_cannot_hold_raises_with_the_remedy(x64_off):
    """Promoting jax arrays to float64 (the default float here) never narrows silently."""
    import jax.numpy as jnp

    import arraylayer as al

    x = jnp.ones(2, dtype=jnp.int32)
    with al.use_default_float_dtype("float64"), pytest.raises(al.UnsupportedDtypeError, match="jax_enable_x64"):
        al.promote_types_of_inputs(x, 1.5)
    a, b = al.promote_types_of_inputs(x, 1.5)  # the float32 default is fine
    assert a.dtype == jnp.float32 and b.dtype == jnp.float32 and not b.weak_type
