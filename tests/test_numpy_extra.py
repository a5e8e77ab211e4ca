"""keras.ops' remaining NumPy names (arraylayer/api/numpy_extra.py, numpy_windows.py) on every backend: the
same values and result dtype (JAX's dtype where NumPy's float64 or value-based rules differ, checked
against jax.numpy itself), the partition property of argpartition, and arraylayer's errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array
from oracles import dtype_name, to_numpy

import arraylayer as al

F = np.array([[-1.5, 0.0, 2.0, np.nan], [1.0, -np.inf, 27.0, np.inf], [-8.0, 0.25, -0.0, 3.5]], np.float32)
G = np.array([[2.0, 3.0, -1.0, 1.0], [0.5, 5.0, -4.0, 1.0], [3.0, np.inf, 2.0, -0.75]], np.float32)
I = np.array([[12, -18, 0, 7], [2, 2, -5, 1], [0, 35, -21, 64]], np.int32)
J = np.array([[18, 12, 0, 0], [-4, 3, 10, 8], [9, 14, -6, 48]], np.int32)
C = np.array([1 + 1j, -2 + 0j, -1j, 0j, -3 - 4j], np.complex64)
U = np.array([0.0, 0.5, -1.25, 3.0, 10.0, 19.5, 20.0, 21.0, 35.0, -60.0], np.float32)
E = np.array([[3, -2, 0, 130], [1, 7, -150, 2], [0, 1, 2, 3]], np.int32)

#: (function, NumPy's function, the host arguments, extra keywords, the result dtype when it is not
#: NumPy's: JAX's rule, see test_dtypes_are_jaxs)
CASES = [
    ("angle", np.angle, (C,), {}, None),
    ("angle", np.angle, (C,), {"deg": True}, None),
    ("angle", np.angle, (F,), {}, None),
    ("angle", np.angle, (I,), {}, "float32"),
    ("cbrt", np.cbrt, (F,), {}, None),
    ("cbrt", np.cbrt, (I,), {}, "float32"),
    ("fabs", np.fabs, (F,), {}, None),
    ("fabs", np.fabs, (I,), {}, "float32"),
    ("fmod", np.fmod, (F, G), {}, None),
    ("fmod", np.fmod, (I, J), {}, None),
    ("fmod", np.fmod, (I, -5), {}, None),
    ("gcd", np.gcd, (I, J), {}, None),
    ("gcd", np.gcd, (I.astype(np.int8), J.astype(np.uint8) % 100), {}, None),
    ("gcd", np.gcd, (I.astype(np.int64) * 1_000_003, J.astype(np.int64) * 999_983), {}, None),
    ("lcm", np.lcm, (I, J), {}, None),
    ("lcm", np.lcm, (I.astype(np.uint8) % 50, J.astype(np.uint8) % 40), {}, None),
    ("ldexp", np.ldexp, (F, E), {}, None),
    ("ldexp", np.ldexp, (F.astype(np.float16), E // 10), {}, None),
    ("ldexp", np.ldexp, (I, E // 10), {}, "float32"),
    ("sinc", np.sinc, (F,), {}, None),
    ("sinc", np.sinc, (I,), {}, "float32"),
    ("i0", np.i0, (U,), {}, None),
    ("i0", np.i0, (U.astype(np.float64),), {}, None),
    ("i0", np.i0, (U.astype(np.float16)[:7],), {}, None),
    ("i0", np.i0, (I,), {}, "float32"),
    ("vander", np.vander, (I[2],), {}, "int32"),
    ("vander", np.vander, (F[2],), {"N": 5, "increasing": True}, "float32"),
    ("vander", np.vander, (F[2],), {"N": 0}, "float32"),
    ("trapezoid", np.trapezoid, (F[2],), {}, None),
    ("trapezoid", np.trapezoid, (G,), {"axis": 0, "dx": 0.5}, None),
    ("trapezoid", np.trapezoid, (G, I[0]), {}, "float32"),
    ("trapezoid", np.trapezoid, (G, F), {"axis": -1}, None),
    ("trapezoid", np.trapezoid, (I,), {}, "float32"),
    ("trapezoid", np.trapezoid, (G[:, :1],), {}, None),
    ("append", np.append, (I, J), {}, None),
    ("append", np.append, (I, J), {"axis": 1}, None),
    ("append", np.append, (I, F), {"axis": 0}, "float32"),
]

#: the Python-number forms NumPy promotes by value: (function, NumPy's function, host, scalar, JAX's dtype)
SCALARS = [
    ("append", np.append, I[0], 1.5, "float32"),
    ("append", np.append, F[0], 2, "float32"),
    ("fmod", np.fmod, F, 1.5, "float32"),
    ("gcd", np.gcd, I, 6, "int32"),
]


def _arrays(backend, hosts):
    return [make_array(backend, str(h.dtype), h) if isinstance(h, np.ndarray) else h for h in hosts]


def _close(backend, got, want, name):
    with np.errstate(all="ignore"):
        rtol = 2e-3 if want.dtype == np.float16 else 1e-5  # (NumPy's float16 i0 is 1 ulp off; this one rounds once)
        np.testing.assert_allclose(to_numpy(backend, got).astype(want.dtype), want, rtol=rtol, atol=1e-6,
                                   equal_nan=True, err_msg=name)


@pytest.mark.parametrize(("name", "reference", "hosts", "keywords", "dtype"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_values_and_dtype_are_numpys(backend, name, reference, hosts, keywords, dtype):
    got = getattr(al, name)(*_arrays(backend, hosts), **keywords)
    with np.errstate(all="ignore"):
        want = np.asarray(reference(*hosts, **keywords))
    assert tuple(got.shape) == want.shape, name
    _close(backend, got, want, name)
    assert dtype_name(backend, got) == (dtype or str(want.dtype)), name


@pytest.mark.parametrize(("name", "reference", "host", "scalar", "dtype"), SCALARS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(SCALARS)])
def test_python_numbers_are_weak(backend, name, reference, host, scalar, dtype):
    got = getattr(al, name)(make_array(backend, str(host.dtype), host), scalar)
    with np.errstate(all="ignore"):
        _close(backend, got, np.asarray(reference(host, scalar)), name)
    assert dtype_name(backend, got) == dtype


def test_signed_zeros_and_exact_cubes(backend):
    """cbrt keeps -0.0 and is within an ulp of NumPy's in float64; fmod's result has x1's sign, exactly
    (-1e-30 mod 1 is -1e-30, not 1 - 1e-30 rounded)."""
    x = make_array(backend, "float64", [27.0, -64.0, -0.0, 1e-300, 2.0])
    got = to_numpy(backend, al.cbrt(x))
    np.testing.assert_allclose(got, np.cbrt(np.array([27.0, -64.0, -0.0, 1e-300, 2.0])), rtol=4e-16)
    assert np.signbit(got[2])
    got = to_numpy(backend, al.fmod(make_array(backend, "float64", [-1e-30, 7.5, -7.5, -5.0]),
                                    make_array(backend, "float64", [1.0, -2.0, 2.0, np.inf])))
    np.testing.assert_array_equal(got, np.fmod([-1e-30, 7.5, -7.5, -5.0], [1.0, -2.0, 2.0, np.inf]))


SPLITS = [
    ("split", (3,), {}, 0), ("split", ([1, 4],), {}, 0), ("split", ([2, -1, 9],), {"axis": 1}, 0),
    ("array_split", (4,), {}, 0), ("array_split", (5,), {"axis": 1}, 0), ("array_split", ([0, 0, 2],), {}, 0),
    ("hsplit", (5,), {}, 0), ("hsplit", ([3],), {}, 1), ("vsplit", (3,), {}, 0), ("dsplit", (2,), {}, 2),
]


@pytest.mark.parametrize(("name", "args", "keywords", "rank"), SPLITS, ids=[f"{c[0]}-{i}" for i, c in enumerate(SPLITS)])
def test_splits_are_numpys(backend, name, args, keywords, rank):
    host = {0: np.arange(30, dtype=np.float32).reshape(6, 5), 1: np.arange(6, dtype=np.int32),
            2: np.arange(24, dtype=np.int32).reshape(2, 3, 4)}[rank]
    got = getattr(al, name)(make_array(backend, str(host.dtype), host), *args, **keywords)
    want = getattr(np, name)(host, *args, **keywords)
    assert isinstance(got, list) and len(got) == len(want)
    for part, expected in zip(got, want, strict=True):
        assert tuple(part.shape) == expected.shape and dtype_name(backend, part) == str(expected.dtype)
        np.testing.assert_array_equal(to_numpy(backend, part), expected)


def test_select_is_numpys(backend):
    x, y = make_array(backend, "float32", F), make_array(backend, "int8", I.astype(np.int8))
    got = al.select([x > 1, x < 0, al.isnan(x)], [x, y, 7], default=-1)
    want = np.select([F > 1, F < 0, np.isnan(F)], [F, I.astype(np.int8), 7], default=-1)
    assert dtype_name(backend, got) == "float32"
    np.testing.assert_array_equal(to_numpy(backend, got), want)
    row = al.select([x[0] > 0], [y], default=0)  # (broadcast: a row condition against a matrix)
    np.testing.assert_array_equal(to_numpy(backend, row), np.select([F[0] > 0], [I.astype(np.int8)], default=0))
    assert dtype_name(backend, row) == "int8"


def test_unravel_index_is_numpys(backend):
    flat = np.array([0, 5, 23, 17, 11], np.int32)
    got = al.unravel_index(make_array(backend, "int32", flat), (2, 3, 4))
    want = np.unravel_index(flat, (2, 3, 4))
    assert isinstance(got, tuple) and len(got) == 3
    for part, expected in zip(got, want, strict=True):
        assert dtype_name(backend, part) == "int32"  # (NumPy: intp; JAX: the indices' dtype)
        np.testing.assert_array_equal(to_numpy(backend, part), expected)
    wrapped = al.unravel_index(make_array(backend, "int32", [-1, -24, 99, -99]), (2, 3, 4))
    # JAX's rule for indices NumPy refuses: negative ones count from the end, others are clipped
    expected = np.unravel_index(np.clip(np.where(np.array([-1, -24, 99, -99]) < 0,
                                                 np.array([-1, -24, 99, -99]) + 24, [-1, -24, 99, -99]), 0, 23), (2, 3, 4))
    for part, want_part in zip(wrapped, expected, strict=True):
        np.testing.assert_array_equal(to_numpy(backend, part), want_part)


@pytest.mark.parametrize("kth", [0, 2, -1, [1, 4]])
def test_argpartition_partitions(backend, kth):
    host = np.array([[5.0, -1.0, 3.0, 3.0, 0.5, 9.0], [2.0, 2.0, -7.0, 1.0, 8.0, 0.0]], np.float32)
    got = to_numpy(backend, al.argpartition(make_array(backend, "float32", host), kth))
    assert got.shape == host.shape
    values, ordered = np.take_along_axis(host, got, axis=-1), np.sort(host, axis=-1)
    for row in range(2):
        assert sorted(got[row]) == list(range(6))  # a permutation
        for k in np.atleast_1d(kth) % 6:
            assert values[row, k] == ordered[row, k]
            assert (values[row, :k] <= values[row, k]).all() and (values[row, k + 1:] >= values[row, k]).all()
    flat = to_numpy(backend, al.argpartition(make_array(backend, "float32", host), 3, axis=None))
    assert np.take(host, flat)[3] == np.sort(host, axis=None)[3]


def test_windows_and_geomspace_are_numpys(backend):
    with al.use_backend(backend):
        for name in ("bartlett", "blackman", "hamming", "hanning"):
            for m in (0, 1, 2, 7, 12):
                got = getattr(al, name)(m)
                assert dtype_name(backend, got) == "float32" and tuple(got.shape) == (m,)
                np.testing.assert_allclose(to_numpy(backend, got), getattr(np, name)(m), rtol=1e-6, atol=1e-7)
        for m, beta in ((1, 3.0), (6, 0.0), (9, 5.0), (16, 14.0), (5, 30.0)):
            np.testing.assert_allclose(to_numpy(backend, al.kaiser(m, beta)), np.kaiser(m, beta), rtol=2e-6, atol=1e-7)
        assert dtype_name(backend, al.hamming(4, dtype=al.float64)) == "float64"
        cases = [((1.0, 1000.0, 4), {}), ((-2.0, -0.02, 5), {"endpoint": False}), ((3.0, 7.0, 6), {}),
                 ((1.0, 1000.0, 4), {"dtype": "int32"}), ((2.0, 2.0, 1), {}), ((5.0, 8.0, 0), {})]
        for args, keywords in cases:
            got = al.geomspace(*args, **keywords)
            want = np.geomspace(*args, **{k: np.int32 if v == "int32" else v for k, v in keywords.items()})
            assert dtype_name(backend, got) == ("int32" if keywords.get("dtype") else "float32")
            np.testing.assert_allclose(to_numpy(backend, got), want, rtol=1e-5)
        np.testing.assert_array_equal(to_numpy(backend, al.geomspace(3.0, 7.0, 6))[[0, -1]], [3.0, 7.0])


def test_dtypes_are_jaxs(x64_off):
    """Where the dtype above is not NumPy's, it is jax.numpy's (x64 off: its default float is float32)."""
    jnp = pytest.importorskip("jax.numpy")
    for name, _, hosts, keywords, dtype in CASES:
        if dtype is not None:
            assert str(getattr(jnp, name)(*hosts, **keywords).dtype) == dtype, name
    for name, _, host, scalar, dtype in SCALARS:
        assert str(getattr(jnp, name)(host, scalar).dtype) == dtype, name
    assert str(jnp.unravel_index(np.int32([5]), (2, 3))[0].dtype) == "int32"
    assert str(jnp.hamming(4).dtype) == str(al.hamming(4).dtype) == "float32"


BAD = [
    (lambda x, i: al.split(x, 4), al.InvalidArgumentError),
    (lambda x, i: al.split(x, 0), al.InvalidArgumentError),
    (lambda x, i: al.split(x, 1.5), al.InvalidArgumentTypeError),
    (lambda x, i: al.split(x, 2, axis=3), al.AxisError),
    (lambda x, i: al.vsplit(x[0], 2), al.InvalidArgumentError),
    (lambda x, i: al.dsplit(x, 2), al.InvalidArgumentError),
    (lambda x, i: al.hsplit(x[0, 0], 1), al.InvalidArgumentError),
    (lambda x, i: al.fabs(al.astype(x, al.complex64)), al.UnsupportedDtypeError),
    (lambda x, i: al.gcd(x, x), al.UnsupportedDtypeError),
    (lambda x, i: al.lcm(i, x), al.UnsupportedDtypeError),
    (lambda x, i: al.ldexp(x, x), al.UnsupportedDtypeError),
    (lambda x, i: al.angle(x, deg=1), al.InvalidArgumentTypeError),
    (lambda x, i: al.hamming(4.0), al.InvalidArgumentTypeError),
    (lambda x, i: al.blackman(4, dtype=al.int32), al.UnsupportedDtypeError),
    (lambda x, i: al.kaiser(4, "wide"), al.InvalidArgumentTypeError),
    (lambda x, i: al.geomspace(0.0, 10.0, 3), al.InvalidArgumentError),
    (lambda x, i: al.geomspace(-1.0, 10.0, 3), al.InvalidArgumentError),
    (lambda x, i: al.vander(x), al.InvalidArgumentError),
    (lambda x, i: al.vander(x[0], N=-1), al.InvalidArgumentError),
    (lambda x, i: al.trapezoid(x, x[0, :3]), al.InvalidArgumentError),
    (lambda x, i: al.unravel_index(x, (2, 2)), al.UnsupportedDtypeError),
    (lambda x, i: al.unravel_index(i, (0, 3)), al.InvalidArgumentError),
    (lambda x, i: al.select([x], [x]), al.InvalidArgumentTypeError),
    (lambda x, i: al.select([x > 0], [x, x]), al.InvalidArgumentError),
    (lambda x, i: al.select([], []), al.InvalidArgumentError),
    (lambda x, i: al.argpartition(x, 4), al.InvalidArgumentError),
    (lambda x, i: al.argpartition(x, 1, axis=2), al.AxisError),
    (lambda x, i: al.append(x, x[0], axis=0), al.ArrayLayerError),
]


@pytest.mark.parametrize(("call", "error"), BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_arguments_raise_arraylayers_errors(backend, call, error):
    with pytest.raises(error):
        call(make_array(backend, "float32", F[:, :4].reshape(3, 4)), make_array(backend, "int32", I))
