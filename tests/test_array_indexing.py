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
    # dask 2026.8 refuses to assign through these with its own IndexError
    "int then reversed": (0, slice(None, None, -1)), "int between": (Ellipsis, -1, slice(3, 0, -1)),
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
                                  "0-d mask true", "int and integer array", "reversed", "reversed stride",
                                  "int then reversed", "int between"])
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


def matches_numpy(backend, key, convert=lambda key: key):
    """``x[convert(key)]`` on ``backend`` gives ``BASE[key]``, or raises IndexError where NumPy does."""
    parts = key if isinstance(key, tuple) else (key,)
    # NumPy alone reads an empty boolean array of the wrong shape as an empty integer index
    # (the standard says a mask's shape must match): not an oracle for that key.
    assume(not any(isinstance(k, np.ndarray) and k.dtype == bool and k.size == 0 and k.ndim for k in parts))
    try:
        expected = BASE[key]
    except IndexError:
        expected = None
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE))
        if expected is None:
            with pytest.raises(IndexError):
                np.asarray(x[convert(key)])  # dask checks lazy index arrays when the graph runs
            return
        result = np.asarray(x[convert(key)])
    assert result.shape == np.shape(expected)
    np.testing.assert_array_equal(result, expected)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(key=ndindices)
def test_generated_keys_match_numpy(backend, key):
    matches_numpy(backend, key, as_arrays)


def _read_only(a):
    a.flags.writeable = False
    return a


# NumPy index arrays as users make them, used as they are (not converted to Arrays), on axis 1 (size 3).
NUMPY_KEY_LAYOUTS = {
    "reversed": np.array([0, 1, 2])[::-1], "reversed int32": np.array([0, 2], np.int32)[::-1],
    "strided": np.array([2, 0, 1, 0, 0, 2])[::2], "negative values reversed": np.array([-1, 0, -3])[::-1],
    "2-d transposed": np.array([[0, 1], [2, 0]]).T, "read-only": _read_only(np.array([2, 0])),
    "byte-swapped": np.array([2, 0], dtype=np.dtype(np.int64).newbyteorder("S")),
    "uint8": np.array([2, 0], np.uint8), "empty reversed": np.zeros(0, np.intp)[::-1],
    "mask strided": np.array([True, False, False, False, True, False])[::2],
    "mask reversed": np.array([True, False, False])[::-1], "mask read-only": _read_only(np.array([False, True, True])),
}


def _layout_key(name, wrapped):
    """(slice(None), the NumPy key ``name``), the key wrapped in an al.Array (of NumPy) or not."""
    part = NUMPY_KEY_LAYOUTS[name]
    return (slice(None), al.Array(part) if wrapped else part)


@pytest.mark.parametrize("wrapped", [False, True], ids=["numpy", "Array"])
@pytest.mark.parametrize("name", list(NUMPY_KEY_LAYOUTS))
def test_numpy_key_layouts_match_numpy(backend, name, wrapped):
    key = _layout_key(name, wrapped)
    with al.use_backend(backend):
        result = np.asarray(al.Array(al.asarray(BASE))[key])
    expected = BASE[(slice(None), NUMPY_KEY_LAYOUTS[name])]
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)


@pytest.mark.parametrize("wrapped", [False, True], ids=["numpy", "Array"])
@pytest.mark.parametrize("name", ["reversed", "strided", "byte-swapped", "uint8", "mask strided", "mask reversed"])
def test_setitem_with_numpy_key_layouts_matches_numpy(backend, name, wrapped):
    key = _layout_key(name, wrapped)
    expected = BASE.copy()
    expected[(slice(None), NUMPY_KEY_LAYOUTS[name])] = -1.0
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE.copy()))
        x[key] = -1.0
        np.testing.assert_array_equal(np.asarray(x), expected)


def test_a_byte_swapped_array_key_alone_matches_numpy(backend):
    key = np.array([1, 0, 1], dtype=np.dtype(np.int64).newbyteorder("S"))
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE.copy()))
        np.testing.assert_array_equal(np.asarray(x[al.Array(key)]), BASE[key])
        x[al.Array(key)] = -1.0
    expected = BASE.copy()
    expected[key] = -1.0
    np.testing.assert_array_equal(np.asarray(x), expected)



@pytest.mark.parametrize("shape", [(0,), (0, 0), (2, 0), (0, 3), (2, 3, 0), (0, 0, 4)], ids=str)
def test_a_mask_with_an_axis_of_length_0_selects_nothing(backend, shape):
    """A sole mask whose axes are x's lengths or 0 selects nothing, as the standard and NumPy say
    (torch and dask refuse it with their own IndexError); a length of neither stays an IndexError."""
    mask = np.zeros(shape, dtype=bool)
    with al.use_backend(backend):
        x = al.Array(al.asarray(BASE.copy()))
        np.testing.assert_array_equal(np.asarray(x[al.Array(mask)]), BASE[mask])
        x[al.Array(mask)] = -1.0
        np.testing.assert_array_equal(np.asarray(x), BASE)
        with pytest.raises(IndexError):
            x[al.Array(np.zeros((3, 0), dtype=bool))]

def test_mask_transposed_matches_numpy(backend):
    mask = (np.arange(12).reshape(4, 3) % 3 == 0).T  # Fortran-ordered (3, 4) mask over axes 1 and 2
    with al.use_backend(backend):
        result = np.asarray(al.Array(al.asarray(BASE))[:, mask])
    np.testing.assert_array_equal(result, BASE[:, mask])


# 0-d integer keys: each selects one element of its axis and removes the axis, as a Python int does.
ZERO_D_KEYS = {
    "0-d int32 Array": lambda: al.Array(al.asarray(np.int32(1))),
    "0-d uint8 Array": lambda: al.Array(al.asarray(np.uint8(1))),
    "np.int64": lambda: np.int64(1), "np.int32 negative": lambda: np.int32(-1), "np.uint8": lambda: np.uint8(1),
    "0-d NumPy array": lambda: np.array(1),
}


def _as_numpy_key(k):
    return np.asarray(k) if isinstance(k, al.Array) else k


@pytest.mark.parametrize("name", list(ZERO_D_KEYS))
@pytest.mark.parametrize("shape", [(5,), (2, 3)], ids=["1-d", "2-d"])
def test_zero_d_integer_keys_give_numpy_shapes(backend, name, shape):
    base = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    with al.use_backend(backend):
        x = al.Array(al.asarray(base))
        keys = [ZERO_D_KEYS[name]() for _ in shape]
        for key in (keys[0], tuple(keys), (Ellipsis, keys[-1])):
            expected = base[tuple(map(_as_numpy_key, key)) if isinstance(key, tuple) else _as_numpy_key(key)]
            result = x[key]
            assert result.shape == np.shape(expected), (key, result.shape)
            np.testing.assert_array_equal(np.asarray(result), expected)


HIGH_RANK_KEYS = {"all ints": (0, 1) * 5, "ellipsis and int": (Ellipsis, 1), "int": 1,
                  "slices": (slice(None, None, -1), 0, Ellipsis, slice(1, None)), "none": (None, 0, Ellipsis, -1)}


@pytest.mark.parametrize("name", list(HIGH_RANK_KEYS))
def test_basic_keys_on_more_than_8_axes_match_numpy(backend, name):
    """TensorFlow's strided slice handles at most 8 axes (the suite indexes a 28-d reshape)."""
    x = np.arange(2**10, dtype=np.float32).reshape((2,) * 10)
    key = HIGH_RANK_KEYS[name]
    with al.use_backend(backend):
        result = np.asarray(al.Array(al.asarray(x))[key])
    expected = x[key]
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result, expected)
