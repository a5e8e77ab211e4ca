"""Seams where NumPy-minded client code (xarray, SciPy, array-api-extra) meets arraylayer's Arrays,
in the default suite (issue 39): Dtype objects taken for ``numpy.dtype`` instances, NumPy scalars
in the Array namespace's functions, ``real``/``imag`` of bool arrays, NumPy's ``transpose``."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import arraylayer as al
from tests.conftest import make_array

X = np.array([[1.5, -2.0, 0.25], [4.0, 0.5, -1.0]])


@pytest.mark.parametrize("dtype", al.all_dtypes + al.all_low_precision_dtypes, ids=str)
def test_dtype_is_presented_as_the_numpy_dtype_it_converts_to(dtype):
    pytest.importorskip("ml_dtypes")
    native = np.dtype(dtype)
    assert isinstance(dtype, np.dtype)
    assert type(dtype) is al.Dtype and isinstance(dtype, al.Dtype)
    # still equal to, and hashed as, its name; and equal to the NumPy dtype both ways
    assert dtype == str(dtype) and hash(dtype) == hash(str(dtype)) and {str(dtype): 1}[dtype] == 1
    assert dtype == native and native == dtype
    for attribute in ("type", "str", "byteorder", "names", "fields", "shape", "subdtype", "num", "isnative"):
        assert getattr(dtype, attribute) == getattr(native, attribute), attribute
    assert dtype.itemsize == native.itemsize
    assert not isinstance(dtype, (str, type))
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        dtype.nonsense  # noqa: B018


def test_promotion_keeps_arraylayer_rules_for_numpy_presented_dtypes():
    # NumPy gives float64 for uint64 + int8; arraylayer's lattice (JAX's) the default float, float32
    assert np.promote_types(np.uint64, np.int8) == np.float64
    assert al.promote_types(al.uint64, al.int8) is al.float32
    assert al.result_type(np.ones(2, np.int8), np.ones(2, np.uint8)) is al.int16
    assert al.Dtype(np.dtype("float16")) is al.float16


def test_xarray_maybe_promote_takes_an_array_dtype(backend):
    dtypes = pytest.importorskip("xarray.core.dtypes")
    for values in (X, X.astype(np.int16), X > 0):
        array = al.Array(make_array(backend, str(values.dtype), values))
        promoted, fill = dtypes.maybe_promote(array.dtype)
        expected, expected_fill = dtypes.maybe_promote(values.dtype)
        assert promoted == expected and type(fill) is type(expected_fill)


def test_numpy_scalar_is_a_0d_array_of_the_namespace_backend(backend):
    # xarray's where(cond) passes its fill value as np.float64(nan) to xp.where
    array = al.Array(make_array(backend, "float64", X))
    xp = array.__array_namespace__()
    result = xp.where(array > 0, array, np.float64(np.nan))
    assert type(result) is al.Array and result.dtype is al.float64
    np.testing.assert_array_equal(np.asarray(result), np.where(X > 0, X, np.nan))
    assert type(result.native) is type(array.native)
    total = xp.add(array, np.float32(1.0))
    np.testing.assert_allclose(np.asarray(total), X + np.float32(1.0))


@pytest.mark.parametrize("part", ["real", "imag"])
def test_real_and_imag_of_bool_as_numpy(backend, part):
    values = np.array([[True, False, True]])
    x = make_array(backend, "bool", values)
    expected = getattr(np, part)(values)
    result = getattr(al, part)(x)
    assert al.Dtype(result.dtype) is al.bool
    np.testing.assert_array_equal(np.asarray(result), expected)
    np.testing.assert_array_equal(np.asarray(getattr(al.Array(x), part)), expected)


@pytest.mark.parametrize("axes", [None, (1, 0, 2), [2, 0, 1], (-1, 0, 1)], ids=str)
def test_transpose_as_numpy(backend, axes):
    values = np.arange(24.0).reshape(2, 3, 4)
    x = make_array(backend, "float32", values)
    result = al.transpose(x, axes)
    np.testing.assert_array_equal(np.asarray(result), np.transpose(values, axes))
    xp = importlib.import_module(f"arraylayer.xp.{backend}")
    np.testing.assert_array_equal(np.asarray(xp.transpose(x, axes=axes)), np.transpose(values, axes))


@pytest.mark.parametrize("axes", [(0, 1), (0, 0, 1), (0, 1, 3)], ids=str)
def test_transpose_refuses_what_is_not_a_permutation(backend, axes):
    x = make_array(backend, "float32", np.zeros((2, 3, 4)))
    with pytest.raises((al.InvalidArgumentError, al.AxisError)):
        al.transpose(x, axes)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32"])
def test_infinite_fill_into_an_integer_dtype_is_its_extreme(backend, dtype):
    limits = np.iinfo(dtype)
    with al.use_backend(backend):
        low, high = al.full((2,), -np.inf, dtype=dtype), al.full((2,), np.inf, dtype=dtype)
        like = al.full_like(al.zeros((3,), dtype=dtype), -np.inf)
    assert np.asarray(low).tolist() == [limits.min] * 2 and np.asarray(high).tolist() == [limits.max] * 2
    assert np.asarray(like).tolist() == [limits.min] * 3 and al.Dtype(like.dtype) == dtype
    with al.use_backend(backend), pytest.raises(al.TypePromotionError):
        al.full((2,), np.nan, dtype=dtype)  # NaN has no integer counterpart


def test_array_api_extra_nanmax_of_integers(backend):
    xpx = pytest.importorskip("array_api_extra")
    values = np.array([3, -7, 5, 1], dtype=np.int32)
    x = al.Array(make_array(backend, "int32", values))
    assert int(xpx.nanmax(x)) == values.max() and int(xpx.nanmin(x)) == values.min()


def test_like_functions_keep_unknown_dask_lengths():
    # array-api-extra's nunique: xp.sum(xp.ones_like(counts)) on counts of unknown length
    pytest.importorskip("dask")
    values = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])
    unique = al.unique_values(al.to_backend(values, "dask"))
    assert unique.shape[0] != unique.shape[0]  # nan: not known before computing
    count = len(np.unique(values))
    assert np.asarray(al.ones_like(unique)).tolist() == [1] * count
    assert np.asarray(al.zeros_like(unique, dtype=al.float32)).tolist() == [0.0] * count
    assert np.asarray(al.full_like(unique, 7)).tolist() == [7] * count
    assert al.Dtype(al.ones_like(unique).dtype) is al.Dtype(unique.dtype)
    xpx = pytest.importorskip("array_api_extra")
    assert int(xpx.nunique(al.Array(al.to_backend(values, "dask")))) == count
    assert int(xpx.nunique(al.to_backend(values, "dask"), xp=importlib.import_module("arraylayer.xp.dask"))) == count
