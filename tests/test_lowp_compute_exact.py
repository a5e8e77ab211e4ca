"""Order and selection on the low-precision formats (arraylayer/lowp/exact.py): clip, where, sort,
argsort, argmax, argmin, searchsorted and unique_values give, on every backend that holds a format, the
bits (the indices) of the oracle: NumPy's own function on the ml_dtypes array widened to float32
(int32), its result cast back with ml_dtypes, a NaN as the format's positive NaN. Never arraylayer.

The inputs are every value of the format (NaN, -0, inf, e8m0's powers of two, fnuz's one NaN included),
shuffled with a fixed seed; CI takes a sample of formats, ``AL_LOWP_EXHAUSTIVE=1`` (``nox -s lowp``) all.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from arraylayer import lowp
from tests import lowp_support
from tests.lowp_support import EXHAUSTIVE
from tests.test_lowp_compute import native, result_host

SAMPLE = ("float8_e4m3fn", "float8_e8m0fnu", "int4", "uint2")  # fnuz: the tests of the special formats below
FORMATS = tuple(lowp.FORMATS) if EXHAUSTIVE else SAMPLE


def _holds(backend, name):
    return lowp.STATUS[backend][name] in ("computed", "stored")


def _wide(x):
    return x.astype(np.float32 if lowp.FORMATS[x.dtype.name].is_float else np.int32)


def _codes(y32, name):
    """The oracle's result in the format, as result_host gives it (codes for floats, int8 for ints)."""
    f = lowp.FORMATS[name]
    fmt = getattr(ml_dtypes, name)
    if f.is_float:
        return np.where(np.isnan(y32), np.float32(np.nan), y32).astype(fmt).view(np.uint8)
    return y32.astype(fmt).astype(np.int8)


def _values(name, seed=0):
    f = lowp.FORMATS[name]
    fmt = getattr(ml_dtypes, name)
    every = np.arange(1 << f.bits, dtype=np.uint8).view(fmt) if f.is_float else \
        np.arange(int(f.min), int(f.max) + 1).astype(fmt)
    return np.random.default_rng(seed).permutation(np.concatenate([every, every]))


def _same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and (got == want).all(), (what, got.tolist(), want.tolist())


@pytest.mark.parametrize("name", FORMATS)
def test_order_and_selection_give_the_oracle_bits(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    x, y = _values(name, 1), _values(name, 2)
    x32, y32 = _wide(x), _wide(y)
    finite = x[~np.isnan(x32)] if x32.dtype.kind == "f" else x
    lo, hi = np.sort(finite)[len(finite) // 4], np.sort(finite)[3 * len(finite) // 4]
    condition = np.random.default_rng(3).random(x.shape) < 0.5
    bx, by = native(backend, x), native(backend, y)
    index = {"argsort", "argmax", "argmin", "searchsorted"}
    sorted_x = np.sort(x32, kind="stable")
    cases = {
        "clip": (al.clip(bx, native(backend, np.full(x.shape, lo)), native(backend, np.full(x.shape, hi))),
                 np.clip(x32, _wide(np.asarray(lo)), _wide(np.asarray(hi)))),
        "clip with scalars": (al.clip(bx, float(lo) if x32.dtype.kind == "f" else int(lo), None),
                              np.maximum(x32, _wide(np.asarray(lo)))),
        "where": (al.where(lowp_support.native(backend, condition), bx, by), np.where(condition, x32, y32)),
        "sort": (al.sort(bx), sorted_x),
        "argsort": (al.argsort(bx), np.argsort(x32, kind="stable")),
        "argmax": (al.argmax(bx), np.argmax(x32)),
        "argmin": (al.argmin(bx), np.argmin(x32)),
        "searchsorted": (al.searchsorted(al.sort(bx), by), np.searchsorted(sorted_x, y32)),
        "unique_values": (al.unique_values(bx), np.unique(x32, equal_nan=False)),
    }
    for what, (got, want) in cases.items():
        if what in index:
            _same(lowp_support.host(got), want, what)
        else:
            assert lowp.format_of(got) == name, (what, got.dtype)
            got, want = result_host(got, name), _codes(want, name)
            if what == "unique_values":  # -0 and +0 are one value: which of the two is kept is unspecified
                got, want = _one_zero(got, name), _one_zero(want, name)
            _same(got, want, what)


def _one_zero(codes, name):
    f = lowp.FORMATS[name]
    if f.specials in ("ieee", "fn", "finite"):  # the formats with a -0 (its code: the sign bit alone)
        return np.where(codes == f.sign_bit, 0, codes)
    return codes


def test_nan_and_zero_rules_of_the_special_formats():
    """fnuz has one NaN (code 0x80) and no -0; e8m0 has no zero and no sign: NaN sorts last, is the
    first argmax, and max/maximum keep it (NumPy's float32 rules), as the one NaN of the format."""
    fnuz = np.array([1.0, np.nan, -2.0, 0.0], ml_dtypes.float8_e4m3fnuz)
    assert al.sort(fnuz).view(np.uint8).tolist() == [0xC8, 0x00, 0x40, 0x80]  # -2, 0, 1, NaN (0x80)
    assert int(al.argmax(fnuz)) == 1 and int(al.argmin(fnuz)) == 1
    e8m0 = np.array([4.0, 0.25, np.nan, 1.0], ml_dtypes.float8_e8m0fnu)
    assert al.sort(e8m0).astype(np.float32)[:3].tolist() == [0.25, 1.0, 4.0]
    assert al.sort(e8m0).view(np.uint8)[3] == 0xFF
    assert al.clip(e8m0, 0.5, 2.0).astype(np.float32)[[0, 1, 3]].tolist() == [2.0, 0.5, 1.0]
    assert np.isnan(al.max(e8m0).astype(np.float32))
    e4m3 = np.array([-np.nan, 1.0], ml_dtypes.float8_e4m3fn)  # code 0xFF: a NaN comes out as the positive one
    assert al.where(np.array([True, True]), e4m3, e4m3).view(np.uint8).tolist() == [0x7F, 0x38]


def test_index_results_are_not_rounded_into_the_integer_formats():
    """argsort of 20 int4 values gives indices up to 19 (beyond int4), in the default index dtype."""
    x = (np.arange(20) % 7 - 3).astype(ml_dtypes.int4)
    from arraylayer.api.dispatch import index_dtype

    got = al.argsort(x)
    assert got.dtype == np.dtype(str(index_dtype()))
    assert got.tolist() == np.argsort(x.astype(np.int32), kind="stable").tolist()


@pytest.mark.parametrize("function", ["matmul", "tensordot", "vecdot"])
def test_products_are_refused_naming_scaled_matmul(backend, function):
    with al.use_backend(backend):
        x = al.ones((2, 2), dtype="float8_e4m3fn")
        with pytest.raises(al.UnsupportedDtypeError, match=r"lowp\.scaled_matmul"):
            getattr(al, function)(x, x)


_ORDERING = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "maximum", "minimum")
_PREDICATES = ("isnan", "isinf", "isfinite", "signbit", "abs", "negative")


@pytest.mark.parametrize("name", ["float8_e4m3fnuz", "float8_e8m0fnu"])
def test_comparisons_and_predicates_of_the_nan_special_formats(backend, name):
    """fnuz (one NaN, no -0) and e8m0 (no zero, no sign): comparisons, maximum/minimum and the predicates
    over every code and every pair of codes (a fixed-seed sample of 4096 pairs in CI) give NumPy's float32
    answers on the widened values (element-wise tables)."""
    from tests.test_lowp_compute import _check

    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    every = np.arange(1 << 8, dtype=np.uint8).view(getattr(ml_dtypes, name))  # every code
    x1, x2 = np.repeat(every, len(every)), np.tile(every, len(every))
    if not EXHAUSTIVE:
        pick = np.random.default_rng(5).choice(len(x1), 4096, replace=False)
        x1, x2 = x1[pick], x2[pick]
    failures = [m for fn in _ORDERING if (m := _check(fn, name, backend, x1, x2))]
    failures += [m for fn in _PREDICATES if (m := _check(fn, name, backend, every))]
    assert not failures, failures
