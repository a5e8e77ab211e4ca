"""int1 (-1 and 0) and uint1 (0 and 1): held by NumPy and dask (ml_dtypes' types), invalid elsewhere with
the same error; explicit casts wrap as ml_dtypes' do, nothing implicit wraps, no implicit promotion."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al

HOLDERS = ("numpy", "dask")
VALUES = np.array([0.0, 1.0, -1.0, 2.0, 3.0, -2.5, 0.75], np.float32)


def _host(x):
    x = x.native if isinstance(x, al.Array) else x
    return np.asarray(x.compute() if hasattr(x, "compute") else x)


@pytest.mark.parametrize("name", ["int1", "uint1"])
def test_one_bit_types_are_held_where_ml_dtypes_holds_them(backend, name):
    with al.use_backend(backend):
        if backend not in HOLDERS:
            with pytest.raises(al.UnsupportedDtypeError, match=r"numpy, dask"):
                al.zeros(2, dtype=name)
            assert name not in map(str, al.valid_low_precision_dtypes)
            return
        ours = _host(al.astype(al.asarray(VALUES), name))
        want = VALUES.astype(getattr(ml_dtypes, name))
        assert ours.dtype == want.dtype and np.array_equal(ours.view(np.uint8), want.view(np.uint8))
        back = _host(al.astype(al.astype(al.asarray(VALUES), name), "float32"))
        assert np.array_equal(back, want.astype(np.float32))  # int1: 1.0 -> -1, 2.0 -> 0 (wraps, explicitly)


def test_int1_has_no_one_and_nothing_implicit_wraps(backend):
    if backend not in HOLDERS:
        pytest.skip(f"{backend} cannot hold int1 (lowp.STATUS)")
    with al.use_backend(backend):
        for make in (lambda: al.ones(3, dtype="int1"), lambda: al.full(3, 1, dtype="int1"),
                     lambda: al.ones_like(al.zeros(2, dtype="int1")), lambda: al.asarray([1, 0], dtype="int1"),
                     lambda: al.eye(2, dtype="int1")):
            with pytest.raises(al.ScalarOverflowError, match="int1"):
                make()
        minus = al.full(2, -1, dtype="int1")
        assert _host(al.astype(minus, "int32")).tolist() == [-1, -1]
        assert _host(al.astype(al.ones(2, dtype="uint1"), "int32")).tolist() == [1, 1]
        assert _host(al.astype(al.eye(2, dtype="uint1"), "int32")).tolist() == [[1, 0], [0, 1]]
        assert _host(al.astype(al.arange(0, -1, -1, dtype="int1"), "int32")).tolist() == [0]  # step, start, stop must fit
        assert _host(al.astype(al.reshape(minus, (2, 1)), "int32")).tolist() == [[-1], [-1]]
        with pytest.raises(al.TypePromotionError, match=r"astype\('int32'\)"):
            al.add(minus, al.asarray([1, 1], dtype="int8"))
        # the rule computes as NumPy + ml_dtypes do (int32, then the format's explicit wrap)
        x = np.array([-1, 0, -1, 0], ml_dtypes.int1)
        y = np.array([-1, -1, 0, 0], ml_dtypes.int1)
        got = _host(al.add(al.asarray(x), al.asarray(y)))
        assert got.dtype == x.dtype and np.array_equal(got.view(np.uint8), (x + y).view(np.uint8))


def test_finfo_like_limits_match_ml_dtypes():
    for name in ("int1", "uint1"):
        info, want = al.iinfo(name), ml_dtypes.iinfo(getattr(ml_dtypes, name))
        assert (info.min, info.max, info.bits) == (want.min, want.max, want.bits)
        assert al.Dtype(name).bits == 1 and al.isdtype(al.Dtype(name), "low precision")
