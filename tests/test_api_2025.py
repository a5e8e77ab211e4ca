"""What the 2024.12 and 2025.12 revisions of the Array API add, on every backend, against NumPy:
``broadcast_shapes``, ``isin``, ``linalg.eig``/``eigvals``, the version strings."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from tests.conftest import make_array
from tests.oracles import assert_close, dtype_name, to_numpy


@pytest.mark.parametrize("shapes", [(), ((2, 3),), ((2, 1), (3,)), ((1,), (4, 1, 5), (1, 5)), ((0, 1), (3,)),
                                    ((2, 0), (1, 0))])
def test_broadcast_shapes_is_numpys(shapes):
    assert al.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)
    assert type(al.broadcast_shapes(*shapes)) is tuple


def test_broadcast_shapes_error_names_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\), \(4,\) do not broadcast"):
        al.broadcast_shapes((2, 3), (4,))


@pytest.mark.parametrize(("dtype1", "dtype2"), [("int32", "int32"), ("int8", "int64"), ("float32", "float32"),
                                                ("uint8", "int16")])
@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_numpy(backend, dtype1, dtype2, invert):
    v1, v2 = [[1, 5, 2], [0, 3, 7]], [2, 7, 9, 2]
    result = al.isin(make_array(backend, dtype1, v1), make_array(backend, dtype2, v2), invert=invert)
    assert dtype_name(backend, result) == "bool"
    np.testing.assert_array_equal(to_numpy(backend, result), np.isin(v1, v2, invert=invert))


def test_isin_with_scalars_and_nan(backend):
    x2 = make_array(backend, "float32", [1.0, float("nan")])
    scalar = al.isin(1.0, x2)
    assert tuple(to_numpy(backend, scalar).shape) == () and bool(to_numpy(backend, scalar))
    np.testing.assert_array_equal(to_numpy(backend, al.isin(x2, 1.0)), [True, False])  # NaN is in nothing


_GENERAL = np.asarray([[2.0, -1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.25, 3.0]])  # a complex pair, one real value


def _sorted(values: np.ndarray) -> np.ndarray:
    return values[np.lexsort((values.imag, np.round(values.real, 3)))]  # a conjugate pair: equal real parts


@pytest.mark.parametrize(("dtype", "result"), [("float32", "complex64"), ("float64", "complex128"),
                                               ("complex64", "complex64")])
def test_eigvals_and_eig(backend, dtype, result):
    x = make_array(backend, dtype, _GENERAL)
    values = al.linalg.eigvals(x)
    w, v = al.linalg.eig(x)
    assert dtype_name(backend, values) == result and dtype_name(backend, w) == result == dtype_name(backend, v)
    expected = _sorted(np.linalg.eigvals(_GENERAL).astype(np.complex128))
    assert_close(_sorted(to_numpy(backend, values)), expected, result, "eigvals")
    assert_close(_sorted(to_numpy(backend, w)), expected, result, "eig values")
    w, v = to_numpy(backend, w), to_numpy(backend, v)
    assert_close(_GENERAL @ v, v * w, result, "x @ v == v * w")  # each column an eigenvector


def test_eig_of_a_non_square_matrix_is_refused(backend):
    with pytest.raises(ValueError, match="square"):
        al.linalg.eig(make_array(backend, "float32", [[1.0, 2.0]]))


def test_versions():
    assert al.__array_api_version__ == "2025.12"
    x = al.Array(np.zeros(2))
    for version in (None, "2023.12", "2024.12", "2025.12"):
        assert x.__array_namespace__(api_version=version) is not None
    with pytest.raises(ValueError, match="2025.12"):
        x.__array_namespace__(api_version="2026.12")


def test_multi_array_results_are_tuples(backend):
    x, y = make_array(backend, "int32", [1, 2, 3]), make_array(backend, "int32", [4, 5])
    assert type(al.meshgrid(x, y)) is tuple and len(al.meshgrid(x, y, indexing="ij")) == 2
    assert type(al.broadcast_arrays(x, make_array(backend, "int32", [[1], [2]]))) is tuple
    assert al.meshgrid() == () and al.broadcast_arrays() == ()


@pytest.mark.parametrize("axis", [0, -1, (0, 2), (-1, 0), (1, -2)])
def test_expand_dims_takes_tuples(backend, axis):
    values = np.arange(6, dtype=np.int16).reshape(2, 3)
    result = al.expand_dims(make_array(backend, "int16", values), axis=axis)
    np.testing.assert_array_equal(to_numpy(backend, result), np.expand_dims(values, axis))


@pytest.mark.parametrize(("axis", "error"), [((0, 0), ValueError), ((0, -4), ValueError), (4, IndexError),
                                             ((0, 5), IndexError)])
def test_expand_dims_refuses_repeated_or_out_of_range_axes(backend, axis, error):
    with pytest.raises(error, match="expand_dims"):
        al.expand_dims(make_array(backend, "int16", [[1, 2, 3]]), axis=axis)


def test_empty_ranges_and_narrow_repeat_counts(backend):
    with al.use_backend(backend):
        assert tuple(to_numpy(backend, al.arange(5, 0, 1)).shape) == (0,)
        assert tuple(to_numpy(backend, al.arange(0, 5, -2)).shape) == (0,)
    counts = make_array(backend, "int8", [1, 0, 2])
    result = al.repeat(make_array(backend, "int8", [4, 5, 6]), counts)
    np.testing.assert_array_equal(to_numpy(backend, result), [4, 6, 6])


def test_complex_expm1_has_the_standards_special_values(backend):
    inf, nan = float("inf"), float("nan")
    values = [complex(inf, 0), complex(-inf, inf), complex(inf, inf), complex(-inf, nan), complex(nan, 0),
              complex(0.5, -1.0)]
    expected = [complex(inf, 0), complex(-1, 0), complex(inf, nan), complex(-1, 0), complex(nan, 0),
                complex(np.expm1(0.5 - 1j))]
    result = to_numpy(backend, al.expm1(make_array(backend, "complex128", values)))
    np.testing.assert_allclose(result.real, [e.real for e in expected], rtol=1e-12)
    for got, want in zip(result.imag[[0, 1, 3, 4]], [0.0, 0.0, 0.0, 0.0], strict=True):
        assert got == want
    assert np.isnan(result.imag[2])


def test_floor_divide_at_infinities_has_the_standards_values(backend):
    inf = float("inf")
    x1 = [inf, inf, -inf, 1.0, -1.0, 1.0, -1.0, -5.0, 7.0]
    x2 = [2.0, -2.0, 2.0, inf, inf, -inf, -inf, 3.0, -3.0]
    expected = [inf, -inf, -inf, 0.0, -0.0, -0.0, 0.0, -2.0, -3.0]  # the last two: Python's //
    result = to_numpy(backend, al.floor_divide(make_array(backend, "float32", x1), make_array(backend, "float32", x2)))
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))
    assert np.isnan(to_numpy(backend, al.floor_divide(make_array(backend, "float32", [inf]), inf)))


def test_complex_log1p_has_the_standards_special_values(backend):
    inf, nan = float("inf"), float("nan")
    values = [complex(inf, nan), complex(-inf, nan), complex(nan, inf), complex(0.5, -1.0)]
    result = to_numpy(backend, al.log1p(make_array(backend, "complex128", values)))
    assert result.real[:3].tolist() == [inf, inf, inf] and np.isnan(result.imag[:3]).all()
    np.testing.assert_allclose(result[3], np.log1p(0.5 - 1j), rtol=1e-12)
