"""Array indexing and item assignment follow NumPy on every backend (NumPy is the oracle).

TensorFlow's own indexing has no integer arrays or 0-d masks and JAX clamps out-of-bounds
integers; through ``arraylayer.Array`` both give NumPy's results and NumPy's IndexError.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from ndindex.tests.helpers import ndindices

import arraylayer as al

BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

KEYS = {
    "int": 0, "negative int": -1, "two ints": (1, 2), "slice then int": (slice(None), 1),
    "ellipsis": (Ellipsis, 1), "none": (None, 0), "strided slice": (slice(1, None, 2),),
    "integer array": np.array([1, 0]), "two integer arrays": (np.array([0, 1]), np.array([2, 0])),
    "2-d integer array": (slice(None), np.array([[0, 1], [1, 2]])),
    "int and integer array": (0, np.array([2, 0, 1])), "mask": BASE > 10,
    "0-d mask true": np.array(True), "0-d mask false": np.array(False), "True": True, "False": False,
    "mask on axis 1": (slice(None), np.array([True, False, True])),
    "reversed": slice(None, None, -1), "reversed stride": (Ellipsis, slice(None, 0, -2)),
    "numpy bool": np.False_, "none and bool": (None, True), "numpy int": np.int64(1),
    "none and 0-d mask": (Ellipsis, None, np.array(False)),
}
OUT_OF_BOUNDS = {"int": 5, "second int": (0, 7), "third int": (0, 0, 9), "negative": (Ellipsis, -5),
                 "integer array": (np.array([3]),), "too many": (0, 0, 0, 0)}


def as_arrays(key):
    """The key with every NumPy array as an arraylayer Array of the active backend (integer arrays
    as int32, arraylayer's index dtype, which every backend holds; NumPy makes int64 ones)."""
    if isinstance(key, tuple):
        return tuple(as_arrays(k) for k in key)
    if not isinstance(key, np.ndarray):
        return key
    if key.dtype.kind in "iu":
        if key.size and not -(2**31) <= int(key.min()) <= int(key.max()) < 2**31:
            return key  # beyond int32 (out of bounds anyway): the NumPy array itself
        key = key.astype(np.int32)
    return al.Array(al.asarray(key))


@pytest.mark.parametrize("name", list(KEYS))
def test_getitem_matches_numpy(backend, name):
    key = KEYS[name]
    with al.use_backend(backend):
        result = np.asarray(al.Array(al.asarray(BASE))[as_arrays(key)])
    expected = BASE[key]
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("name", list(OUT_OF_BOUNDS))
def test_out_of_bounds_raises_index_error(backend, name):
    key = OUT_OF_BOUNDS[name]
    with pytest.raises(IndexError):
        BASE[key]
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE))
        with pytest.raises(IndexError):
            np.asarray(x[as_arrays(key)])  # dask checks lazy index arrays when the graph runs


def test_arrays_as_slice_bounds(backend):
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE))
        start, stop = al.Array(al.asarray(1)), al.Array(al.asarray(3))
        np.testing.assert_array_equal(np.asarray(x[:, start:stop]), BASE[:, 1:3])


@pytest.mark.parametrize("name", ["int", "two ints", "two integer arrays", "mask", "slice then int",
                                  "0-d mask true", "int and integer array", "reversed", "reversed stride"])
@pytest.mark.parametrize("value", ["scalar", "array"])
def test_setitem_matches_numpy(backend, name, value):
    key = KEYS[name]
    expected = BASE.copy()
    new = np.float32(-1.0) if value == "scalar" else np.full(expected[key].shape[-1:], -1.0, np.float32)
    expected[key] = new
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE.copy()))
        x[as_arrays(key)] = -1.0 if value == "scalar" else al.Array(al.asarray(new))
        np.testing.assert_array_equal(np.asarray(x), expected)


def test_setitem_out_of_bounds_raises_index_error(backend):
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE.copy()))
        with pytest.raises(IndexError):
            x[0, 7] = 1.0
        with pytest.raises(IndexError):
            x[as_arrays((np.array([2]),))] = 1.0
            np.asarray(x)  # dask checks lazy index arrays when the graph runs


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=ndindices)
def test_generated_keys_match_numpy(backend, key):
    raw = key
    parts = key if isinstance(key, tuple) else (key,)
    # NumPy alone reads an empty boolean array of the wrong shape as an empty integer index
    # (the standard says a mask's shape must match): not an oracle for that key.
    assume(not any(isinstance(k, np.ndarray) and k.dtype == bool and k.size == 0 and k.ndim for k in parts))
    try:
        expected = BASE[raw]
    except IndexError:
        expected = None
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE))
        if expected is None:
            with pytest.raises(IndexError):
                np.asarray(x[as_arrays(raw)])  # dask checks lazy index arrays when the graph runs
        else:
            np.testing.assert_array_equal(np.asarray(x[as_arrays(raw)]), expected)
