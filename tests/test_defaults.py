"""Default dtypes, their setters and scopes, default_dtype and infer_dtype."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al


def test_out_of_the_box_defaults():
    assert al.default_int_dtype() is al.int32
    assert al.default_uint_dtype() is al.uint32
    assert al.default_float_dtype() is al.float32
    assert al.default_complex_dtype() is al.complex64


@pytest.mark.parametrize(
    ("getter", "setter", "scope", "value"),
    [("default_int_dtype", "set_default_int_dtype", "use_default_int_dtype", "int64"),
     ("default_uint_dtype", "set_default_uint_dtype", "use_default_uint_dtype", "uint64"),
     ("default_float_dtype", "set_default_float_dtype", "use_default_float_dtype", "float64"),
     ("default_complex_dtype", "set_default_complex_dtype", "use_default_complex_dtype", "complex128")],
)
def test_setters_and_scopes(getter, setter, scope, value):
    before = getattr(al, getter)()
    with getattr(al, scope)(value):
        assert getattr(al, getter)() == value
    assert getattr(al, getter)() is before
    assert getattr(al, setter)(value) == value
    assert getattr(al, getter)() == value


@pytest.mark.parametrize(
    ("setter", "bad"),
    [("set_default_int_dtype", "uint8"), ("set_default_int_dtype", "float32"),
     ("set_default_uint_dtype", "int32"), ("set_default_float_dtype", "int64"),
     ("set_default_float_dtype", "complex64"), ("set_default_complex_dtype", "float64")],
)
def test_setters_reject_the_wrong_kind(setter, bad):
    before = al.default_int_dtype(), al.default_uint_dtype(), al.default_float_dtype()
    with pytest.raises(al.InvalidDtypeError, match="choose one of"):
        getattr(al, setter)(bad)
    assert (al.default_int_dtype(), al.default_uint_dtype(), al.default_float_dtype()) == before


def test_scope_wins_over_a_process_change_inside_it():
    with al.use_default_float_dtype("float16"):
        al.set_default_float_dtype("float64")
        assert al.default_float_dtype() == "float16"
    assert al.default_float_dtype() == "float64"


def test_default_dtype_follows_the_seed_order():
    # 1. explicit dtype
    assert al.default_dtype(dtype="int8", item=1.5) is al.int8
    assert al.default_dtype(dtype=np.float16) is al.float16
    # 2. an array's dtype
    assert al.default_dtype(item=np.ones(2, np.uint16)) is al.uint16
    # 3. a relevant scalar's default
    assert al.default_dtype(item=3) is al.int32
    assert al.default_dtype(item=3.0) is al.float32
    assert al.default_dtype(item=3j) is al.complex64
    assert al.default_dtype(item=True) is al.bool
    assert al.default_dtype(item=[[1], [3.5]]) is al.float32
    # 4. the global default (float)
    assert al.default_dtype() is al.float32
    with al.use_default_dtypes(int="int64", float="float64"):
        assert al.default_dtype(item=3) is al.int64
        assert al.default_dtype() is al.float64


@pytest.mark.parametrize("item", ["abc", b"ab", {1: 2}, {1}, object(), [1, "a"]])
def test_default_dtype_refuses_what_is_not_array_like(item):
    with pytest.raises(al.InvalidArgumentTypeError, match="^item"):
        al.default_dtype(item=item)
    with pytest.raises(al.InvalidArgumentTypeError, match="is not"):
        al.infer_dtype(None, 1, item)


def test_default_dtype_refuses_a_ragged_list():
    with pytest.raises(al.InvalidArgumentError, match="ragged"):
        al.default_dtype(item=[1, [2, 3.5]])
    with pytest.raises(al.InvalidArgumentError, match="ragged"):
        al.infer_dtype(None, [[1], [1, 2]])


def test_default_dtype_as_native_is_the_numpy_dtype():
    assert al.default_dtype(item=2.0, as_native=True) == np.dtype("float32")
    assert al.default_dtype(dtype="bfloat16", as_native=True).name == "bfloat16"


def test_infer_dtype():
    assert al.infer_dtype("float16", 1) is al.float16
    assert al.infer_dtype(None, 0, 5, 1) is al.int32
    assert al.infer_dtype(None, 0, 5, 0.5) is al.float32
    assert al.infer_dtype(None, np.ones(2, np.int8), np.ones(2, np.uint8)) is al.int16
    assert al.infer_dtype(None) is al.float32
    with pytest.raises(al.InvalidDtypeError):
        al.infer_dtype("flaot32")
