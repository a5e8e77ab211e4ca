"""0-d results are 0-d arrays, and unique values come back sorted, on every backend.

numpy's reductions return numpy scalars (``np.float64`` is no ndarray), and numpy >= 2.3's
``unique_values`` hashes and leaves its order unspecified; NumPy (sorted) is the oracle here.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array
from oracles import to_numpy, valid_dtypes

import arraylayer as al

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "std", "var", "argmax", "argmin", "count_nonzero"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_full_reduction_is_zero_d_native_array(backend, name):
    with al.use_backend(backend):
        x = al.asarray([[3.0, 1.0, 2.0], [0.5, 4.0, 1.5]])
        result = getattr(al, name)(x)
        assert isinstance(result, type(x))
        assert tuple(result.shape) == ()
        assert float(np.asarray(result)) == pytest.approx(float(getattr(np, name)(np.asarray(x))))


def test_boolean_and_linalg_reductions_are_zero_d_arrays(backend):
    with al.use_backend(backend):
        mask = al.asarray([True, False])
        vector = al.asarray([3.0, 4.0])
        matrix = al.asarray([[2.0, 0.0], [0.0, 3.0]])
        results = [al.all(mask), al.any(mask), al.vecdot(vector, vector), al.linalg.vector_norm(vector),
                   al.linalg.matrix_norm(matrix), al.linalg.det(matrix), al.linalg.trace(matrix),
                   al.linalg.matrix_rank(matrix)]
        for result in results:
            assert isinstance(result, type(matrix))
            assert tuple(result.shape) == ()
        assert [float(np.asarray(r)) for r in results] == pytest.approx(
            [0, 1, 25, 5, np.sqrt(13), 6, 5, 2])


def test_unique_values_sorted_like_numpy_unique(backend):
    values = np.random.default_rng(7).integers(0, 1000, 5000).astype(np.int32)
    with al.use_backend(backend):
        x = al.asarray(values)
        expected = np.unique(values)  # sorted by definition
        np.testing.assert_array_equal(np.asarray(al.unique_values(x)), expected)
        np.testing.assert_array_equal(np.asarray(al.unique_counts(x).values), expected)
        np.testing.assert_array_equal(np.asarray(al.unique_inverse(x).values), expected)
        np.testing.assert_array_equal(np.asarray(al.unique_all(x).values), expected)


def test_unique_keeps_each_nan_distinct(backend):
    """The standard: NaNs compare unequal, so each is its own unique value (sorted last)."""
    with al.use_backend(backend):
        x = al.asarray([3.0, float("nan"), 1.0, 3.0, float("nan")])
        values = np.asarray(al.unique_values(x))
        np.testing.assert_array_equal(values, np.array([1.0, 3.0, np.nan, np.nan], np.float32))
        counts = al.unique_counts(x)
        np.testing.assert_array_equal(np.asarray(counts.counts), [1, 2, 1, 1])


COMPLEX_INPUT = [1 + 1j, complex("nan"), 2 - 1j, 0j, complex(-0.0, 0.0), 1 + 1j, complex(0.0, -0.0), complex(1, float("nan"))]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_unique_of_complex_arrays(backend, dtype):
    """The standard defines unique_* for complex input (torch and TensorFlow have no kernel): equal
    values (signed zeros too) once, each value with a NaN part distinct; the oracle is NumPy's
    count of each value and first occurrence, whatever the order of the unique values."""
    if dtype not in valid_dtypes(backend):
        pytest.skip(f"{dtype} is not a dtype of {backend} as configured")
    data = np.array(COMPLEX_INPUT, dtype).reshape(2, 4)
    with al.use_backend(backend):
        x = al.asarray(data)
        values, indices, inverse, counts = (np.asarray(r) for r in al.unique_all(x))
        assert values.dtype == np.dtype(dtype) and values.shape == (5,)
        flat = data.reshape(-1)
        np.testing.assert_array_equal(values, flat[indices])
        np.testing.assert_array_equal(indices[np.argsort(indices)], [0, 1, 2, 3, 7])
        np.testing.assert_array_equal(values[inverse], data)  # NaN == NaN in assert_array_equal
        expected = {0: 2, 1: 1, 2: 1, 3: 3, 7: 1}  # by first occurrence (0j, -0j, 0-0j alike)
        assert dict(zip(indices.tolist(), counts.tolist(), strict=True)) == expected
        np.testing.assert_array_equal(np.sort(np.asarray(al.unique_values(x))), np.sort(values))
        np.testing.assert_array_equal(np.asarray(al.unique_counts(x).counts), counts)
        np.testing.assert_array_equal(np.asarray(al.unique_inverse(x).inverse_indices), inverse)


def test_all_and_any_read_a_complex_value_by_both_parts(backend):
    """A complex value is true where it is non-zero, imaginary part included (NumPy's answer; jax 0.10's
    own all/any read the real part only: the official suite's test_all, 50 examples, found it)."""
    host = np.array([[0 + 1j, 0 - 1.456e16j], [1 + 0j, 0j]], np.complex64)
    x = make_array(backend, "complex64", host)
    for function, oracle in ((al.all, np.all), (al.any, np.any)):
        for axis in (None, 0, 1):
            got = np.asarray(to_numpy(backend, function(x, axis=axis)))
            np.testing.assert_array_equal(got, oracle(host, axis=axis), err_msg=f"{function.__name__} axis={axis}")
