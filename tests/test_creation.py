"""asarray: the same dtype inference, overflow checks, copy rules and devices on every backend."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al


@pytest.mark.parametrize(
    ("obj", "expected"),
    [(1, "int32"), (1.0, "float32"), (1j, "complex64"), (True, "bool"), ([1, 2], "int32"),
     ([1, 2.5], "float32"), ([[1], [2j]], "complex64"), ([True, False], "bool"), ([], "float32")],
)
def test_dtype_inference_is_identical_on_every_backend(backend, obj, expected):
    with al.use_backend(backend) as b:
        x = al.asarray(obj)
        assert al.backend_of(x) is b
        assert b.dtype_of(x) == expected
        assert getattr(x, "weak_type", False) is False  # strongly typed, even on JAX


def test_defaults_drive_inference(backend):
    with al.use_backend(backend) as b, al.use_default_dtypes(int="int16", float="float16"):
        assert b.dtype_of(al.asarray([1, 2])) == "int16"
        assert b.dtype_of(al.asarray(2.5)) == "float16"


def test_explicit_dtype_and_values(backend):
    with al.use_backend(backend) as b:
        for dtype in b.valid_dtypes():
            x = al.asarray([1, 0, 1], dtype=dtype)
            assert b.dtype_of(x) is dtype
            assert np.real(b.to_numpy(x)).astype(np.float64).tolist() == [1.0, 0.0, 1.0]


@pytest.mark.parametrize(("value", "dtype"), [(1000, "int8"), (-1, "uint8"), (2**31, "int32"),
                                              ([1, [2, 70000]], "int16")])
def test_python_ints_that_do_not_fit_raise_on_every_backend(backend, value, dtype):
    with al.use_backend(backend), pytest.raises(al.ScalarOverflowError, match=f"does not fit {dtype}"):
        al.asarray(value, dtype=dtype)


def test_python_int_beyond_the_default_int_raises(backend):
    with al.use_backend(backend), pytest.raises(OverflowError, match="int32"):
        al.asarray(2**40)


def test_arrays_keep_their_backend_dtype_and_identity(backend):
    b = al.get_backend(backend)
    x = b.asarray([1.0, 2.0], al.float16)
    assert al.asarray(x) is x
    assert al.asarray(x, copy=False) is x
    y = al.asarray(x, dtype="float32")
    assert b.dtype_of(y) is al.float32 and al.backend_of(y) is b


def test_copy_rules(backend):
    b = al.get_backend(backend)
    x = b.asarray([1, 2, 3], al.int32)
    copied = al.asarray(x, copy=True)
    assert copied is not x and b.to_numpy(copied).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="copy=False"):
        al.asarray(x, dtype="int64" if "int64" in b.valid_dtypes() else "int16", copy=False)
    with al.use_backend(backend), pytest.raises(ValueError, match="copy=False"):
        al.asarray([1, 2], copy=False)


def test_copy_true_never_shares_memory():
    host = np.arange(3, dtype=np.int32)
    copied = al.asarray(host, copy=True)
    host[0] = 99
    assert copied.tolist() == [0, 1, 2]
    torch = pytest.importorskip("torch")
    tensor = torch.arange(3, dtype=torch.int32)
    cloned = al.asarray(tensor, copy=True)
    tensor[0] = 99
    assert cloned.tolist() == [0, 1, 2]


def test_array_arguments_choose_the_backend_not_the_active_one(backend):
    """Functions with array arguments use the arrays' backend (a NumPy input stays NumPy)..."""
    with al.use_backend(backend):
        assert isinstance(al.zeros_like(np.ones(2, np.float32)), np.ndarray)


def test_asarray_makes_an_array_of_the_chosen_backend(backend):
    """... but asarray is a creation function: inside use_backend it makes an array of that
    backend, moving another backend's array over (issue 11; it used to return it unchanged)."""
    source = np.array([1.5, -2.0], np.float32)
    with al.use_backend(backend) as chosen:
        moved = al.asarray(source)
        assert al.backend_of(moved) is chosen and isinstance(moved, chosen.array_types)
        assert al.Dtype(moved.dtype) == "float32" and chosen.to_numpy(moved).tolist() == [1.5, -2.0]
        assert al.Dtype(al.asarray(source, dtype="int16").dtype) == "int16"


def test_device_argument_and_default_device(backend):
    with al.use_backend(backend) as b:
        assert al.dev(al.asarray([1.0], device="cpu")) == "cpu"
        with al.use_device("cpu"):
            assert al.dev(al.asarray([1.0])) == "cpu"
        missing = next(f"gpu:{i}" for i in range(64) if f"gpu:{i}" not in b.devices())
        with al.use_device(missing), pytest.raises(al.DeviceError, match="vailable"):
            al.asarray([1.0])
