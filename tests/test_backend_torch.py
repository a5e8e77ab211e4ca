"""The torch adapter: dtypes (and the uint16/32/64 probe), arrays, NumPy/DLPack exchange, devices."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import arraylayer as al  # noqa: E402
from arraylayer.backends import torch as torch_adapter  # noqa: E402
from arraylayer.runtime.registry import backend_of, get_backend  # noqa: E402

PROBED = ("uint16", "uint32", "uint64")


@pytest.fixture
def b():
    return get_backend("torch")


def valid() -> tuple[al.Dtype, ...]:
    return get_backend("torch").valid_dtypes()


def numpy_dtype(d: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16 if d == "bfloat16" else d)


def torch_computes(d: str) -> bool:
    """An independent attempt at arithmetic with a torch dtype."""
    native = getattr(torch, d)
    try:
        x = torch.ones(2, dtype=native) + torch.ones(2, dtype=native)
        y = x * x
        return bool((x < y).all() and (x == x).all()) and int(y.sum()) == 8
    except Exception:
        return False


# -- import, registry, class attributes --------------------------------------------------------
def test_importing_the_adapter_does_not_import_torch():
    code = "import sys, arraylayer.backends.torch; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_class_attributes_and_registry(b):
    assert isinstance(b, torch_adapter.TorchBackend)
    assert (b.name, b.framework, b.extra, b.type_roots, b.narrows) == ("torch", "torch", "torch", ("torch",), True)
    assert b.array_types == (torch.Tensor,)
    assert b.native_dtype_class is torch.dtype
    assert b.version == torch.__version__
    assert backend_of(torch.zeros(1), 3, 1.5) is b


# -- dtypes ------------------------------------------------------------------------------------
def test_every_catalogue_dtype_has_a_torch_object(b):
    float8 = {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"}
    assert set(b.native_dtypes) == set(al.all_dtypes) | {al.Dtype(n) for n in float8}  # and the float8 it stores
    assert set(valid()) >= set(al.all_dtypes) - set(PROBED)


@pytest.mark.parametrize("d", valid())
def test_native_dtype_round_trip(b, d):
    native = b.as_native_dtype(d)
    assert native is getattr(torch, str(d))
    assert al.as_dtype(native) is d
    assert b.dtype_of(torch.zeros(2, dtype=native)) is d


@pytest.mark.parametrize("d", PROBED)
def test_uint_verdict_agrees_with_an_independent_attempt(b, d):
    """Valid where torch computes the dtype itself or every kernel computes it in a wider one."""
    assert (d in b.valid_dtypes()) == (torch_computes(d) or al.as_dtype(d) in b.computes_as)
    if al.as_dtype(d) in b.computes_as:
        assert not torch_computes(d), f"torch {torch.__version__} computes {d}: drop its COMPUTES_AS route"


@pytest.mark.parametrize("d", PROBED)
def test_dtype_of_names_held_uints_even_when_invalid(b, d):
    assert b.dtype_of(torch.from_numpy(np.arange(3, dtype=d))) is al.as_dtype(d)


def test_valid_dtypes_is_cached(b):
    assert b.valid_dtypes() is b.valid_dtypes()


def test_dtype_of_rejects_dtypes_outside_the_catalogue(b):
    with pytest.raises(al.InvalidDtypeError):
        b.dtype_of(torch.zeros(1, dtype=torch.complex32))


@pytest.fixture
def narrowed(monkeypatch):
    """A fresh adapter whose probe finds no uint16/32/64 kernels (whatever this torch has)."""
    monkeypatch.setattr(torch_adapter, "_computes", lambda module, native: False)
    return torch_adapter.TorchBackend().load()


@pytest.mark.parametrize("d, wider", [("uint64", "int64")])  # uint16/uint32 compute in int64 (COMPUTES_AS)
def test_invalid_dtype_error_names_torch_version_and_remedy(narrowed, d, wider):
    assert d not in narrowed.valid_dtypes()
    for call in (lambda: narrowed.asarray([1, 2], d), lambda: narrowed.astype(torch.ones(2), d)):
        with pytest.raises(al.UnsupportedDtypeError) as info:
            call()
        message = str(info.value)
        assert "torch" in message and torch.__version__ in message
        assert wider in message and "another backend" in message


def test_real_invalid_dtypes_raise(b):
    invalid = [d for d in PROBED if d not in b.valid_dtypes()]
    if not invalid:
        pytest.skip(f"torch {torch.__version__} computes with every unsigned dtype")
    for d in invalid:
        with pytest.raises(al.UnsupportedDtypeError, match=torch.__version__.replace("+", r"\+")):
            b.asarray(np.arange(3, dtype=d), d)


def test_a_held_uint_can_be_widened(b):
    x = torch.from_numpy(np.array([0, 65535], dtype=np.uint16))
    assert b.astype(x, "int32").tolist() == [0, 65535]


# -- asarray / astype --------------------------------------------------------------------------
@pytest.mark.parametrize("d", valid())
def test_asarray_of_python_values_and_numpy_has_exactly_the_dtype(b, d):
    native = getattr(torch, str(d))
    for obj in (1, [[0, 1], [1, 0]], np.array([1, 0, 1]), np.float32(1), np.ones((2, 2), numpy_dtype(d))):
        x = b.asarray(obj, d)
        assert isinstance(x, torch.Tensor) and x.dtype == native and b.dtype_of(x) is d


def test_asarray_does_not_copy_a_tensor_of_the_right_dtype_and_device(b):
    x = torch.arange(4, dtype=torch.int16)
    assert b.asarray(x, "int16") is x
    assert b.asarray(x, "int16", "cpu") is x
    y = b.asarray(x, "float32")
    assert y.dtype == torch.float32 and y.tolist() == [0.0, 1.0, 2.0, 3.0]


def test_asarray_shares_memory_with_a_writable_numpy_array_of_the_dtype(b):
    a = np.arange(4, dtype=np.float32)
    x = b.asarray(a, "float32")
    a[0] = 42
    assert x[0].item() == 42


def test_asarray_copies_numpy_arrays_torch_cannot_wrap(b):
    reversed_ = np.arange(4.0)[::-1]
    assert b.asarray(reversed_, "float64").tolist() == [3.0, 2.0, 1.0, 0.0]
    read_only = np.arange(3, dtype=np.int64)
    read_only.flags.writeable = False
    x = b.asarray(read_only, "int64")
    x[0] = 9
    assert read_only[0] == 0


def test_asarray_casts_numpy_arrays(b):
    x = b.asarray(np.array([1.5, -2.5]), "float16")
    assert x.dtype == torch.float16 and x.tolist() == [1.5, -2.5]
    assert b.asarray(np.array([True, False]), "int8").tolist() == [1, 0]


def test_asarray_does_not_wrap_out_of_range_python_ints(b):
    for value, d in ((300, "uint8"), ([1, 300], "uint8"), (2**40, "int32"), (2**63, "int64")):
        with pytest.raises((RuntimeError, ValueError, OverflowError)):
            b.asarray(value, d)


def test_astype(b):
    x = torch.tensor([1.7, -1.7])
    assert b.astype(x, "float32") is x
    assert b.astype(x, al.float32) is x
    y = b.astype(x, "int32")
    assert y.dtype == torch.int32 and y.tolist() == [1, -1]


# -- NumPy and DLPack exchange -----------------------------------------------------------------
@pytest.mark.parametrize("d", valid())
def test_to_numpy_keeps_dtype_and_values(b, d):
    a = np.array([0, 1, 1, 0]).astype(numpy_dtype(d))
    out = b.to_numpy(b.asarray(a, d))
    assert out.dtype == numpy_dtype(d)
    np.testing.assert_array_equal(out.view(np.uint8), a.view(np.uint8))


def test_bfloat16_round_trip_is_bit_exact(b):
    bits = np.arange(2**16, dtype=np.uint16)  # every bit pattern, NaN payloads included
    a = bits.view(ml_dtypes.bfloat16)
    x = b.asarray(a, "bfloat16")
    assert x.dtype == torch.bfloat16
    np.testing.assert_array_equal(b.to_numpy(x).view(np.uint16), bits)
    finite = np.isfinite(a.astype(np.float32))
    np.testing.assert_array_equal(x.float().numpy()[finite], a.astype(np.float32)[finite])


def test_bfloat16_from_float32_rounds_like_ml_dtypes(b):
    a = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    x = b.asarray(a, "bfloat16")
    np.testing.assert_array_equal(b.to_numpy(x).view(np.uint16), a.astype(ml_dtypes.bfloat16).view(np.uint16))


def test_to_numpy_detaches_and_resolves_views(b):
    x = torch.ones(2, requires_grad=True)
    assert b.to_numpy(x).tolist() == [1.0, 1.0]
    z = torch.tensor([1 + 2j]).conj()
    assert b.to_numpy(z).tolist() == [1 - 2j]


def test_from_dlpack_of_numpy_shares_memory(b):
    a = np.arange(4, dtype=np.int32)
    x = b.from_dlpack(a)
    assert x.dtype == torch.int32
    a[1] = 99
    assert x[1].item() == 99


def test_from_dlpack_of_bfloat16_numpy_shares_memory(b):
    a = np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16)
    x = b.from_dlpack(a)
    assert x.dtype == torch.bfloat16
    a[0] = 3.0
    assert x[0].item() == 3.0


# -- devices -----------------------------------------------------------------------------------
def test_cpu_device(b):
    assert b.devices()[0] == "cpu"
    assert b.native_device("cpu") == torch.device("cpu")
    x = torch.zeros(2)
    assert b.device_of(x) == "cpu"
    assert b.to_device(x, "cpu") is x
    assert b.asarray([1, 2], "float32", "cpu").device == torch.device("cpu")


def test_gpu_devices_follow_cuda(b):
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    assert b.devices() == ("cpu", *(f"gpu:{i}" for i in range(count)))
    if count:
        assert b.native_device("gpu:0") == torch.device("cuda", 0)
        x = b.asarray([1.0], "float32", "gpu:0")
        assert b.device_of(x) == "gpu:0" and b.to_device(x, "gpu:0") is x
        assert b.device_of(b.to_device(x, "cpu")) == "cpu"
        np.testing.assert_array_equal(b.to_numpy(x), [1.0])
    else:
        with pytest.raises(al.DeviceError, match="Available devices: cpu"):
            b.native_device("gpu:0")
        with pytest.raises(al.DeviceError):
            b.asarray([1], "float32", "gpu")
    with pytest.raises(al.DeviceError, match="Available devices: cpu"):
        b.native_device(f"gpu:{count}")


def test_unavailable_and_malformed_devices(b):
    for device in ("tpu:0", "cuda:0", "gpu:x"):
        with pytest.raises(al.DeviceError):
            b.to_device(torch.zeros(1), device)


def test_device_of_maps_cuda_devices_to_gpu(b):
    assert b.device_of(SimpleNamespace(device=torch.device("cuda", 1))) == "gpu:1"
    with pytest.raises(al.DeviceError):
        b.device_of(torch.zeros(1, device="meta"))


# -- stored-only accumulators: sum/prod/cumulative_* compute uint16/32/64 in int64 (issue 20) ----------
_TORCH_ACCUMULATE = {"sum": torch.sum, "prod": torch.prod, "cumulative_sum": torch.cumsum,
                     "cumulative_prod": torch.cumprod}


def _torch_accumulates(op, d: str) -> bool:
    """An independent attempt at an accumulation in a torch dtype."""
    try:
        op(torch.ones(3, dtype=torch.uint8), 0, dtype=getattr(torch, d))
        return True
    except Exception:
        return False


@pytest.mark.parametrize("name", sorted(_TORCH_ACCUMULATE))
def test_stored_only_accumulators_are_computed_where_torch_has_no_kernel(b, name):
    """The route is needed (torch itself refuses the accumulator), declared, and gives NumPy's
    wrapped values in the stored dtype; every other kernel still refuses stored-only dtypes."""
    stored = [d for d in PROBED if d not in b.valid_dtypes()]
    if not stored:
        pytest.skip(f"torch {torch.__version__} computes with every unsigned dtype")
    from arraylayer.support import kernel_unsupported_dtypes

    host = np.array([[250, 255, 9], [255, 254, 3]], np.uint8)
    for d in stored:
        assert not _torch_accumulates(_TORCH_ACCUMULATE[name], d), f"torch now has {name} in {d}: drop the route"
        assert al.as_dtype(d) not in kernel_unsupported_dtypes(b, name)
        got = getattr(al, name)(torch.from_numpy(host), axis=1, dtype=d)
        want = getattr(np, name)(host, axis=1, dtype=d)
        assert got.dtype is getattr(torch, d)
        np.testing.assert_array_equal(got.to(torch.int64).numpy().astype(d), want)
    assert al.as_dtype(stored[0]) in kernel_unsupported_dtypes(b, "add")
    held = torch.ones(2, dtype=getattr(torch, stored[0]))
    with pytest.raises(al.UnsupportedDtypeError, match="astype"):
        al.add(held, held)


def test_a_uint8_sum_is_a_stored_uint32_tensor_that_astype_widens(b):
    got = al.sum(torch.tensor([1, 2, 3], dtype=torch.uint8))
    assert got.dtype is torch.uint32 and b.dtype_of(got) is al.as_dtype("uint32")
    assert al.astype(got, "int64").tolist() == 6


# -- uint16/uint32: every kernel computes them in int64 and casts back (api/widened.py) -------------
_WIDE_SAMPLES = {"uint16": [0, 1, 7, 300, 40000, 65535], "uint32": [0, 1, 7, 3_000_000_000, 65536, 4294967295]}
_BINARY = ("add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum", "less", "less_equal",
           "greater", "greater_equal", "equal", "not_equal", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_left_shift", "bitwise_right_shift", "divide", "pow")
_UNARY = ("negative", "positive", "abs", "sign", "bitwise_invert", "square", "sqrt", "isnan", "isfinite",
          "floor", "ceil", "trunc", "round", "sum", "prod", "max", "min", "mean", "argmax", "argmin", "sort",
          "argsort", "flip", "unique_values", "nonzero", "count_nonzero", "cumulative_sum", "cumulative_prod",
          "all", "any", "tril")


def _same(got, want):
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        w = np.asarray(w)
        assert al.as_dtype(g.dtype) is al.as_dtype(w.dtype), (g.dtype, w.dtype)
        if g.is_floating_point():  # the uints are cast to float first: the float kernels may differ by an ulp
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-6)
        else:
            np.testing.assert_array_equal(g.to(torch.int64).numpy() if g.dtype in (torch.uint16, torch.uint32)
                                          else g.numpy(), w)


@pytest.mark.parametrize("d", sorted(_WIDE_SAMPLES))
@pytest.mark.parametrize("name", _BINARY)
def test_computed_as_uints_give_numpys_binary_results(b, d, name):
    """Every pair of samples (wrapping, zero divisors and shift counts past the width included)."""
    if al.as_dtype(d) not in b.valid_dtypes():
        pytest.skip(f"{d} is stored-only on torch {torch.__version__}")
    host = np.array(_WIDE_SAMPLES[d], d)
    x1, x2 = np.repeat(host, host.size), np.tile(host, host.size)
    if name == "pow":
        x2 = x2 % np.array(5, d)
    if name.startswith("bitwise_") and "shift" in name:
        x2 = np.tile(np.array([0, 1, 15, 16, 31, 32], d), host.size)
    with np.errstate(all="ignore"):
        want = getattr(al, name)(x1, x2)
    _same(getattr(al, name)(torch.from_numpy(x1), torch.from_numpy(x2)), want)


@pytest.mark.parametrize("d", sorted(_WIDE_SAMPLES))
@pytest.mark.parametrize("name", _UNARY)
def test_computed_as_uints_give_numpys_results(b, d, name):
    if al.as_dtype(d) not in b.valid_dtypes():
        pytest.skip(f"{d} is stored-only on torch {torch.__version__}")
    host = np.array(_WIDE_SAMPLES[d], d)
    if name == "tril":
        host = np.resize(host, (4, 4))
    _same(getattr(al, name)(torch.from_numpy(host)), getattr(al, name)(host))
