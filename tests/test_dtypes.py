"""The dtype catalogue: Dtype construction, native dtypes, kinds, tuples, finfo/iinfo."""

from __future__ import annotations

import copy
import pickle

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al

NAMES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]


def test_fifteen_dtypes_are_attributes_and_singletons():
    assert [str(d) for d in al.all_dtypes] == NAMES
    for name in NAMES:
        dtype = getattr(al, name)
        assert isinstance(dtype, al.Dtype) and not isinstance(dtype, str)
        assert dtype == name and name == dtype and hash(dtype) == hash(name)
        assert al.Dtype(name) is dtype
        assert pickle.loads(pickle.dumps(dtype)) is dtype


@pytest.mark.parametrize("name", NAMES)
def test_dtype_is_an_object_equal_to_its_name(name):
    dtype = getattr(al, name)
    other = next(n for n in NAMES if n != name)
    assert not (dtype != name) and dtype != other and other != dtype and dtype != getattr(al, other)
    assert {name: 1}[dtype] == 1 and {dtype: 2}[name] == 2  # tables keyed either way keep working
    assert dtype in NAMES and name in al.all_dtypes
    assert (dtype == 3) is False and dtype != None  # noqa: E711 - other types are not equal
    assert str(dtype) == name and repr(dtype) == f"arraylayer.{name}" and dtype.name == name
    assert f"{dtype:>12}|" == f"{name:>12}|" and "{}".format(dtype) == name  # noqa: UP032
    assert copy.copy(dtype) is dtype and copy.deepcopy([dtype])[0] is dtype
    assert not hasattr(dtype, "dtype")  # "has .dtype" means "is an array" throughout arraylayer
    for attribute in ("kind", "name", "whatever"):  # one instance shared by everything: immutable
        with pytest.raises(AttributeError):
            setattr(dtype, attribute, "x")
    assert dtype.name == name


@pytest.mark.parametrize("name", NAMES)
def test_kind_letter_itemsize_and_char_match_numpy(name):
    dtype = getattr(al, name)
    native = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    # NumPy's letter by meaning: ml_dtypes says 'V' for bfloat16, arraylayer 'f' (a real floating type)
    assert dtype.kind == ("f" if name == "bfloat16" else native.kind)
    assert dtype.itemsize == native.itemsize and dtype.char == native.char
    assert dtype.category == {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}[dtype.kind]


@pytest.mark.parametrize("name", NAMES)
def test_conversion_to_numpy_dtype(name):
    dtype = getattr(al, name)
    native = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    assert dtype.numpy_dtype == native and type(dtype.numpy_dtype) is type(native)
    assert np.dtype(dtype) == native  # NumPy 2.4 reads __numpy_dtype__
    assert native == dtype and dtype == native  # through NumPy's own comparison
    assert np.zeros(2, dtype=dtype).dtype == native


@pytest.mark.parametrize("name", NAMES)
def test_numpy_dtype_objects_and_scalar_types_resolve(name):
    native = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    assert al.Dtype(native) is getattr(al, name)
    assert al.Dtype(native.type) is getattr(al, name)


def test_framework_dtype_objects_resolve(backend):
    module = {"numpy": "numpy", "jax": "jax.numpy", "torch": "torch", "tensorflow": "tensorflow", "dask": "numpy"}[backend]
    framework = pytest.importorskip(module)
    for name in NAMES:
        attr = "bool_" if (backend, name) in {("numpy", "bool"), ("jax", "bool"), ("dask", "bool")} else name
        native = getattr(framework, attr, None)
        if native is None:
            continue  # e.g. numpy has no bfloat16 attribute (covered by ml_dtypes above)
        assert al.Dtype(native) is getattr(al, name), (backend, name, native)


def test_python_types_map_to_defaults():
    assert al.Dtype(bool) is al.bool
    assert al.Dtype(int) is al.default_int_dtype() is al.int32
    assert al.Dtype(float) is al.float32
    assert al.Dtype(complex) is al.complex64
    with al.use_default_dtypes(int="int64", float="float64", complex="complex128"):
        assert (al.Dtype(int), al.Dtype(float), al.Dtype(complex)) == ("int64", "float64", "complex128")


def test_misspelt_name_suggests_the_nearest():
    with pytest.raises(al.InvalidDtypeError, match=r"Did you mean 'float32'") as info:
        al.Dtype("flaot32")
    assert "complex128" in str(info.value)  # the valid names are listed
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", ["float", "int", "torch.float32", "", "Float32", 3, 2.5, None, [1], object()])
def test_invalid_values_raise_invalid_dtype_error(bad):
    with pytest.raises(al.InvalidDtypeError, match="is not an arraylayer dtype"):
        al.Dtype(bad)


def test_unsupported_native_dtype_is_named():
    torch = pytest.importorskip("torch")
    with pytest.raises(al.InvalidDtypeError, match="complex32"):
        al.Dtype(torch.complex32)


def test_an_array_is_not_a_dtype():
    with pytest.raises(al.InvalidDtypeError, match="looks like an array"):
        al.Dtype(np.ones(2))


@pytest.mark.parametrize(
    ("name", "kind", "bits"),
    [("bool", "bool", 8), ("int8", "int", 8), ("int64", "int", 64), ("uint16", "uint", 16),
     ("bfloat16", "float", 16), ("float16", "float", 16), ("float64", "float", 64),
     ("complex64", "complex", 64), ("complex128", "complex", 128)],
)
def test_kind_and_width(name, kind, bits):
    dtype = al.Dtype(name)
    assert dtype.category == kind and dtype.bits == bits and dtype.itemsize == bits // 8
    assert al.dtype_bits(dtype) == bits
    native = np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)
    assert dtype.itemsize == native.itemsize
    assert dtype.is_bool == (kind == "bool") == al.is_bool_dtype(dtype)
    assert dtype.is_integer == (kind in ("int", "uint")) == al.is_int_dtype(dtype)
    assert dtype.is_unsigned == (kind == "uint") == al.is_uint_dtype(dtype)
    assert dtype.is_floating == (kind == "float") == al.is_float_dtype(dtype)
    assert dtype.is_complex == (kind == "complex") == al.is_complex_dtype(dtype)
    assert dtype.is_numeric == (kind != "bool") == al.is_numeric_dtype(dtype)


def test_kind_queries_accept_arrays_and_scalars():
    assert al.is_float_dtype(np.ones(2, np.float16)) and al.is_int_dtype(np.ones(2, np.uint8))
    assert al.is_float_dtype(1.5) and al.is_int_dtype(3) and al.is_bool_dtype(True)
    assert al.is_complex_dtype(1j) and not al.is_int_dtype(True)
    assert al.dtype_bits(np.ones(2, np.int16)) == 16


def test_tuples_partition_the_dtypes():
    assert al.all_numeric_dtypes == tuple(d for d in al.all_dtypes if d != "bool")
    assert set(al.all_int_dtypes) == {d for d in NAMES if "int" in d}
    assert set(al.all_uint_dtypes) == {d for d in NAMES if d.startswith("uint")}
    assert set(al.all_float_dtypes) == {"bfloat16", "float16", "float32", "float64"}
    assert set(al.all_complex_dtypes) == {"complex64", "complex128"}
    for kind in ("", "numeric_", "int_", "uint_", "float_", "complex_"):
        assert getattr(al, f"valid_{kind}dtypes") == getattr(al, f"all_{kind}dtypes")
        assert getattr(al, f"invalid_{kind}dtypes") == ()


@pytest.mark.parametrize("name", ["bfloat16", "float16", "float32", "float64"])
def test_finfo_matches_ml_dtypes_and_numpy(name):
    native = ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)
    expected = ml_dtypes.finfo(native)
    info = al.finfo(name)
    assert info.dtype is al.Dtype(name) and info.bits == expected.bits
    assert info.eps == float(expected.eps) and info.max == float(expected.max)
    assert info.min == float(expected.min) and info.smallest_normal == float(expected.smallest_normal)


def test_finfo_of_complex_describes_the_real_part():
    assert al.finfo("complex64") == al.finfo("float32")
    assert al.finfo(np.ones(2, np.complex128)).dtype is al.float64


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_iinfo_matches_numpy(name):
    expected = np.iinfo(name)
    info = al.iinfo(name)
    assert (info.min, info.max, info.bits, info.dtype) == (expected.min, expected.max, expected.bits, name)


def test_finfo_iinfo_reject_the_wrong_kind():
    with pytest.raises(al.InvalidDtypeError, match="use arraylayer.iinfo"):
        al.finfo("int8")
    with pytest.raises(al.InvalidDtypeError, match="use arraylayer.finfo"):
        al.iinfo("float32")
    with pytest.raises(al.InvalidDtypeError):
        al.iinfo("bool")


def test_native_dtypes_never_capture_python_ints():
    """tf.int32 hashes as 3 and compares equal to 3; caching it must not make 3 a dtype."""
    tf = pytest.importorskip("tensorflow")
    assert al.Dtype(tf.int32) is al.int32 and al.Dtype(tf.int32) is al.int32
    with pytest.raises(al.InvalidDtypeError):
        al.Dtype(3)
    assert al.result_type(np.ones(2, np.int8), 3) is al.int8
    assert al.result_type(3, 3) is al.int32


@pytest.mark.parametrize(("word", "default", "configured"), [
    ("float", "float32", {"float": "float64"}), ("int", "int32", {"int": "int64"}),
    ("complex", "complex64", {"complex": "complex128"}), ("uint", "uint32", {"uint": "uint64"}),
])
def test_a_kind_word_suggests_the_default_dtype_of_that_kind(word, default, configured):
    """``dtype="float"`` is a user reaching for the default float, not float64 (the nearest spelling)."""
    with pytest.raises(al.InvalidDtypeError, match=rf"Did you mean '{default}' \(the default {word} dtype"):
        al.Dtype(word)
    with al.use_default_dtypes(**configured), pytest.raises(al.InvalidDtypeError,
                                                           match=rf"Did you mean '{configured[word]}'"):
        al.zeros(2, dtype=word.capitalize())
