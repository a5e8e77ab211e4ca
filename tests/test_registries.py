"""Registries cannot be corrupted, and everyday mistakes get messages that name the fix."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al
from arraylayer.runtime.backend import Backend


# -- dtype aliases ---------------------------------------------------------------------------------
@pytest.mark.parametrize("native", ["int32", "float32", "flaot32", int, float, bool, complex])
def test_names_and_python_types_cannot_be_aliased(native):
    with pytest.raises(al.InvalidDtypeError, match="cannot be aliased"):
        al.register_dtype_alias(native, "float32")
    # promotion is what it was (jax.numpy.promote_types: int32 + int8 -> int32)
    assert al.promote_types("int32", "int8") == "int32"
    assert al.Dtype("int32") is al.int32


def test_an_alias_cannot_change_its_meaning():
    assert al.Dtype(np.dtype("float32")) is al.float32  # resolved once: now an alias
    with pytest.raises(al.InvalidDtypeError, match="already means float32"):
        al.register_dtype_alias(np.dtype("float32"), "int8")
    assert al.Dtype(np.dtype("float32")) is al.float32
    al.register_dtype_alias(np.dtype("float32"), "float32")  # the same meaning again is fine


def test_a_new_native_object_can_be_aliased():
    class MyDtype:
        pass

    marker = MyDtype()
    al.register_dtype_alias(marker, "int16")
    assert al.Dtype(marker) is al.int16


# -- backends ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "where_to", "match"), [
    (None, "pkg.mod:Cls", "identifier-like string"),
    ("", "pkg.mod:Cls", "identifier-like string"),
    ("my backend", "pkg.mod:Cls", "identifier-like string"),
    ("numpy", "pkg.mod:Cls", "built-in backend"),
    ("mine", 3, "target is a subclass"),
    ("mine", "pkg.mod", "target is a subclass"),
    ("mine", "pkg.mod:", "target is a subclass"),
    ("mine", int, "target is a subclass"),
])
def test_malformed_registrations_are_refused(name, where_to, match):
    before = al.available_backends()
    with pytest.raises(al.UnknownBackendError, match=match):
        al.register_backend(name, where_to)
    assert al.available_backends() == before
    assert set(al.installed_backends()) <= set(before)


def test_a_well_formed_registration_is_kept():
    from arraylayer.runtime import registry

    class Mine(Backend):  # abstract: never instantiated here
        pass

    try:
        al.register_backend("mine_for_test", Mine)
        al.register_backend("mine_by_path", "mypackage.adapter:MyBackend")
        assert {"mine_for_test", "mine_by_path"} <= set(al.available_backends())
    finally:
        registry._REGISTERED.pop("mine_for_test", None)
        registry._REGISTERED.pop("mine_by_path", None)


# -- did you mean ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("call", "hint"), [
    (lambda: al.set_backend("pytorch"), "Did you mean 'torch'?"),
    (lambda: al.use_backend("jaxx").__enter__(), "Did you mean 'jax'?"),
    (lambda: al.get_backend("tensorflw"), "Did you mean 'tensorflow'?"),
    (lambda: al.set_dtype_promotion("stict"), "Did you mean 'strict'?"),
    (lambda: al.dtype_promotion("array-api").__enter__(), "Did you mean 'array_api'?"),
    (lambda: al.Dtype("flaot32"), "Did you mean 'float32'?"),
])
def test_misspelt_names_get_the_nearest_one(call, hint):
    with pytest.raises(ValueError) as error:
        call()
    assert hint in str(error.value)


# -- misleading messages, fixed ------------------------------------------------------------------------
def test_a_list_where_a_dtype_is_expected_says_so():
    with pytest.raises(al.InvalidDtypeError, match=r"\['float32'\] is not an arraylayer dtype: a dtype was expected, got a list"):
        al.Dtype(["float32"])


def test_to_backend_of_a_list_names_the_fix(backend):
    with pytest.raises(al.BackendMismatchError, match=r"x is a list .*arraylayer.asarray"):
        al.to_backend([1, 2], backend)


def test_a_numpy_scalar_next_to_another_backend_is_named_as_a_scalar(backend):
    if backend == "numpy":
        pytest.skip("a NumPy scalar is a NumPy array: nothing to mix with")
    x = make_array(backend, "float32")
    with pytest.raises(al.BackendMismatchError, match=r"A NumPy scalar \(numpy.float32 1.0\)") as error:
        al.add(x, np.float32(1.0))
    assert "float(x)" in str(error.value)


def test_valid_dtypes_can_be_asked_about_a_backend(backend):
    with al.use_backend(backend):
        expected_valid, expected_invalid = al.valid_dtypes, al.invalid_float_dtypes
    assert al.valid_dtypes(backend) == expected_valid
    assert al.invalid_float_dtypes(backend) == expected_invalid
    assert al.valid_dtypes == al.all_dtypes  # the default backend (numpy) holds every dtype


@pytest.mark.parametrize(("value", "dtype"), [(1.0, "float32"), (1j, "complex64"), (1, "int32"), (True, "bool")])
def test_dtype_queries_accept_python_scalars(value, dtype):
    assert al.dtype_bits(value) == al.dtype_bits(dtype)
    if dtype.startswith(("float", "complex")):
        assert al.finfo(value) == al.finfo(dtype)
    elif dtype == "int32":
        assert (al.iinfo(value).min, al.iinfo(value).max) == (-2**31, 2**31 - 1)
