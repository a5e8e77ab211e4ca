"""Edge cases where the frameworks disagree: arraylayer's one answer (docs/errors.rst), on every backend.

Oracles: NumPy's results for the valid calls; the Array API standard for the exception types.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import arraylayer as al
from arraylayer.errors import (
    ArrayLayerError,
    AxisError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    OutOfBoundsIndexError,
    ScalarOverflowError,
    TypePromotionError,
)


def values(x):
    return np.asarray(al.to_backend(x, "numpy")).tolist()


@pytest.fixture
def on(backend):
    with al.use_backend(backend):
        yield backend


def test_empty_range_is_empty(on):
    assert tuple(al.arange(5, 0).shape) == (0,) == np.arange(5, 0).shape
    assert tuple(al.arange(0, 5, -1).shape) == (0,)


def test_diagonal_beyond_the_matrix_is_all_zero(on):
    assert values(al.eye(3, 2, k=2**70)) == np.eye(3, 2, k=5).tolist()
    assert values(al.eye(3, 2, k=-(2**70))) == np.eye(3, 2, k=-5).tolist()


def test_diff_with_a_huge_n_is_empty_at_once(on):
    assert tuple(al.diff(al.asarray([1, 2, 4]), n=2**31).shape) == (0,)
    assert values(al.diff(al.asarray([1, 2, 4]), n=1)) == [1, 2]


def test_roll_reduces_the_shift(on):
    assert values(al.roll(al.asarray([1, 2, 3]), 2**70 + 1)) == np.roll([1, 2, 3], (2**70 + 1) % 3).tolist()


@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "int32"])
def test_repeat_takes_narrow_integer_repeats(on, dtype):
    result = al.repeat(al.asarray([1.0, 2.0]), al.asarray([1, 2], dtype=dtype))
    assert values(result) == np.repeat([1.0, 2.0], [1, 2]).tolist()


@pytest.mark.parametrize("axis", [5, -3, (0, 0), (0, 5)])
def test_bad_axes_raise_axis_error_before_any_kernel(on, axis):
    x = al.asarray([[1.0, 2.0], [3.0, 4.0]])
    for f in (al.sum, al.max, al.mean, al.any):
        with pytest.raises(AxisError) as info:
            f(x, axis=axis)
        assert isinstance(info.value, IndexError) and "axis" in str(info.value)


def test_float_axis_is_refused(on):
    with pytest.raises(InvalidArgumentTypeError, match="axis=1.0"):
        al.sum(al.asarray([[1.0]]), axis=1.0)


def test_expand_dims_bad_axis_is_an_index_error(on):
    with pytest.raises(IndexError):
        al.expand_dims(al.asarray([1.0]), axis=5)


def test_vecdot_does_not_broadcast_the_contracted_axis(on):
    with pytest.raises(InvalidArgumentError, match="vecdot"):
        al.vecdot(al.asarray([[1.0, 2.0]]), al.asarray([[1.0], [2.0]]), axis=0)


def test_out_of_bounds_take_is_an_index_error(on):
    x = al.asarray([1.0, 2.0])
    with pytest.raises(OutOfBoundsIndexError, match="5"):
        taken = al.take(x, al.asarray([5]))
        if on == "dask":  # lazy: the indices are checked when the graph runs (docs/scaling.rst)
            taken.compute()
    assert values(al.take(x, al.asarray([1, 0]))) == [2.0, 1.0]


@pytest.mark.parametrize("shape", [(2.5, 3), (-1,), "x", (True, 2), None])
def test_bad_shapes_are_refused(on, shape):
    with pytest.raises(ArrayLayerError) as info:
        al.empty(shape)
    assert isinstance(info.value, (TypeError, ValueError)) and "shape" in str(info.value)


def test_sizes_no_backend_can_allocate_are_refused_before_allocation(on):
    with pytest.raises(InvalidArgumentError, match="more than any backend can allocate"):
        al.zeros((2**31,) * 3)


@pytest.mark.parametrize("obj", [[[1, 2], [3]], "abc", None, object(), b"ab", [1, None]])
def test_non_arrays_are_refused_where_an_array_is_expected(on, obj):
    with pytest.raises(ArrayLayerError):
        al.asarray(obj)
    with pytest.raises(ArrayLayerError):
        al.sum(obj)
    with pytest.raises(ArrayLayerError):
        al.logical_and(obj, al.asarray([True]))


def test_python_ints_where_an_array_is_expected_are_range_checked(on):
    with pytest.raises(ScalarOverflowError):
        al.sum(2**31)
    assert int(values(al.sum(2**31 - 1))) == 2**31 - 1


def test_asarray_refuses_value_changing_conversions_as_full_does(on):
    with pytest.raises(TypePromotionError):
        al.asarray([1.5], dtype="int32")
    with pytest.raises(TypePromotionError):
        al.full((2,), 1.5, dtype="int32")
    assert values(al.asarray([2.0], dtype="int32")) == [2]
    assert values(al.astype(al.asarray([1.5]), "int32")) == [1]


@pytest.mark.parametrize("n", [-1, 1.5, "2", None])
def test_bad_counts_are_refused(on, n):
    with pytest.raises(ArrayLayerError):
        al.diff(al.asarray([1, 2, 3]), n=n)
    with pytest.raises(ArrayLayerError):
        al.repeat(al.asarray([1, 2]), n)


def test_nan_in_sort_and_max(on):
    x = al.asarray([float("nan"), 1.0, -1.0])
    assert values(al.sort(x))[:2] == [-1.0, 1.0] and math.isnan(values(al.sort(x))[2])
    assert math.isnan(values(al.max(x))) and math.isnan(values(al.min(x)))


def test_broadcast_error_names_both_shapes(on):
    with pytest.raises(InvalidArgumentError, match=r"\(2,\).*\(3,\)"):
        al.broadcast_arrays(al.asarray([1.0, 2.0]), al.asarray([1.0, 2.0, 3.0]))


def test_jax_weak_typed_ints_are_range_checked_like_python_ints():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.asarray([1, 2], dtype="int8")
    assert np.asarray(al.add(x, jnp.asarray(5))).tolist() == [6, 7]
    with pytest.raises(ScalarOverflowError, match="1000"):
        al.add(x, jnp.asarray(1000))
    # the weak call above must not leave a plan behind for strong int8 + int32 (the table's int32)
    assert al.add(x, jnp.asarray([5, 6], dtype="int32")).dtype == jnp.int32


def test_broadcast_error_names_both_shapes_on_the_planned_path_too(on):
    x = al.asarray([[1.0, 2.0], [3.0, 4.0]])
    al.add(x, x)  # plans float32 + float32
    with pytest.raises(InvalidArgumentError, match=r"\(2, 2\).*\(3,\)"):
        al.add(x, al.asarray([1.0, 2.0, 3.0]))


def _truncated_power(base: int, exponent: int) -> int:
    """The oracle: the exact value of base ** exponent truncated toward zero (0 for 0 ** -n)."""
    if exponent >= 0:
        return base**exponent
    if base == 0:
        return 0
    return math.trunc(1 / base ** -exponent)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32"])
def test_integer_pow_with_negative_exponents_truncates_alike(on, dtype):
    bases = [2, 1, -1, 0, -3, 5, -1, 1, 3, -2]
    exponents = [-1, -2, -3, -1, -1, 2, -4, 0, 0, 3]
    x, e = al.asarray(bases, dtype=dtype), al.asarray(exponents, dtype=dtype)
    expected = [_truncated_power(b, n) for b, n in zip(bases, exponents, strict=True)]
    assert values(al.pow(x, e)) == expected
    assert al.as_arraylayer_dtype(al.pow(x, e).dtype) == dtype
    assert values(al.pow(x, -1)) == [_truncated_power(b, -1) for b in bases]
    assert al.as_arraylayer_dtype(al.pow(x, -1).dtype) == dtype
    assert values(al.pow(-1, e)) == [_truncated_power(-1, n) for n in exponents]


def test_integer_pow_with_negative_exponents_under_jit():
    jax = pytest.importorskip("jax")
    with al.use_backend("jax"):
        x = al.asarray([2, 1, -1, 0], dtype="int32")
        e = al.asarray([-1, -1, -3, -2], dtype="int32")
        assert values(jax.jit(al.pow)(x, e)) == [0, 1, -1, 0]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_python_scalars_are_rounded_to_half_precision_before_computing(on, dtype):
    """The weak scalar rule: the scalar becomes the array's dtype first. 65535 is inf in float16
    (PyTorch alone used to divide by the exact 65535 and give 2.3e-5)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    half = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    x = al.asarray([1.5, -3.0], dtype=dtype)
    for scalar in (65535, 0.1, 1e-8, 4.0):  # results stay normal numbers (XLA flushes subnormals)
        for _ in range(2):  # the planning call, then the planned one
            got = values(al.astype(al.divide(x, scalar), "float32"))
            with np.errstate(all="ignore"):
                want = (np.asarray([1.5, -3.0], dtype=half) / half(scalar)).astype(np.float32).tolist()
            assert got == want, (scalar, got, want)


def test_unique_treats_each_nan_as_distinct(on):
    """The Array API's rule (and NumPy's result with equal_nan=False), on every backend."""
    x = al.asarray([math.nan, 1.0, math.nan, 1.0])
    want = np.unique_counts(np.asarray([math.nan, 1.0, math.nan, 1.0]))
    assert str(values(al.unique_values(x))) == str(want.values.tolist()) == "[1.0, nan, nan]"
    assert values(al.unique_counts(x).counts) == [2, 1, 1]


def test_broadcast_error_on_the_planned_array_paths_too(on):
    """Array operators and the Array namespace call the planned kernel directly: a shape mismatch
    there still becomes arraylayer's error naming both shapes, not the framework's."""
    x, y = al.Array(al.asarray([[1.0, 2.0], [3.0, 4.0]])), al.Array(al.asarray([1.0, 2.0, 3.0]))
    xp = x.__array_namespace__()
    assert (x + x).shape == xp.multiply(x, x).shape == (2, 2)  # plans the float32 pair
    for call in (lambda: x + y, lambda: y * x, lambda: xp.multiply(x, y), lambda: xp.add(y, x)):
        with pytest.raises(InvalidArgumentError, match=r"\(2, 2\), \(3,\)|\(3,\), \(2, 2\)"):
            call()


#: 2**44 float32 elements: 64 TiB, which no machine here allocates (and below MAX_ELEMENTS, 2**48)
HUGE = {
    "zeros": lambda: al.zeros((2**44,), dtype="float32"), "ones": lambda: al.ones((2**22, 2**22), dtype="float32"),
    "empty": lambda: al.empty((2**44,), dtype="float32"), "full": lambda: al.full((2**44,), 1.5, dtype="float32"),
    "eye": lambda: al.eye(2**22, dtype="float32"), "arange": lambda: al.arange(2**44, dtype="float32"),
    "linspace": lambda: al.linspace(0.0, 1.0, 2**44, dtype="float32"),
}


@pytest.mark.parametrize("name", HUGE)
def test_a_size_beyond_the_memory_is_one_allocation_error_on_every_backend(on, name):
    """NumPy raised MemoryError, torch and JAX RuntimeError, TensorFlow ResourceExhaustedError;
    dask builds the graph (nothing is allocated until computed)."""
    if al.current_backend() == "dask":
        assert tuple(HUGE[name]().shape)[0] > 2**21
        return
    with pytest.raises(al.AllocationError, match=rf"{name}: an array of shape .* does not fit") as info:
        HUGE[name]()
    assert isinstance(info.value, MemoryError) and isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("integer", ["int8", "int16", "int32"])
def test_float8_plus_an_integer_array_is_the_same_on_every_backend(on, integer):
    """TensorFlow has no native cast from integers to float8: the operand is cast as astype casts
    it (ml_dtypes' rule) on every backend, instead of TensorFlow's UnimplementedError."""
    a = al.asarray([1.0, 2.0, 3.0, -448.0], dtype="float8_e4m3fn")
    i = al.asarray([1, 100, -3, 7], dtype=integer)
    for _ in range(2):  # the planning path, then the stored plan
        got = al.add(a, i)
        assert str(al.Dtype(got.dtype)) == "float8_e4m3fn"
        assert np.asarray(al.to_backend(got, "numpy")).astype(np.float64).tolist() == [2.0, 96.0, 0.0, -448.0]
