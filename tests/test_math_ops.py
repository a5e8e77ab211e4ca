"""keras.ops' math group and core scatter family (arraylayer/models/mathops/, fft.fft2 ...) on every
backend against oracles: jax.lax.top_k, jax.ops.segment_*, SciPy's special functions, NumPy's
linalg and fft, keras' NumPy-backend stft/istft/in_top_k, NumPy's own indexed updates."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al

RNG = np.random.default_rng(40)
GRAD_BACKENDS = ("jax", "torch", "tensorflow")


def host(x):
    return np.asarray(al.to_backend(x, "numpy"))


def on(backend, array):
    """``array`` on ``backend``; 64-bit NumPy values in 32 bits (what every backend holds)."""
    array = np.asarray(array)
    narrow = {np.dtype("float64"): np.float32, np.dtype("int64"): np.int32, np.dtype("complex128"): np.complex64}
    return al.to_backend(array.astype(narrow.get(array.dtype, array.dtype)), backend)


# -- top_k, in_top_k --------------------------------------------------------------------------------
TIES = np.array([[1.0, 3.0, 3.0, np.nan, -np.inf, 3.0], [0.0, 0.0, 0.0, 0.0, np.inf, 2.0]], np.float32)


@pytest.mark.parametrize("k", [0, 1, 3, 6])
@pytest.mark.parametrize("values", [TIES, RNG.integers(-3, 3, (3, 2, 7)).astype(np.int32)], ids=["float", "int"])
def test_top_k_is_jax_lax_top_k(backend, values, k):
    jax = pytest.importorskip("jax")
    if k > values.shape[-1]:
        k = values.shape[-1]
    expected = jax.lax.top_k(values, k)
    got = al.top_k(on(backend, values), k)
    np.testing.assert_array_equal(host(got.values), np.asarray(expected[0]))
    np.testing.assert_array_equal(host(got.indices), np.asarray(expected[1]))
    assert host(got.values).dtype == values.dtype


@pytest.mark.parametrize("k, error", [(7, al.InvalidArgumentError), (-1, al.InvalidArgumentError),
                                      (True, al.InvalidArgumentTypeError), (1.0, al.InvalidArgumentTypeError)])
def test_top_k_refuses_bad_k(backend, k, error):
    with pytest.raises(error, match="k="):
        al.top_k(on(backend, TIES), k)


def test_top_k_refuses_complex_and_scalars(backend):
    with pytest.raises(al.InvalidDtypeError):
        al.top_k(on(backend, np.ones(3, np.complex64)), 1)
    with pytest.raises(al.InvalidArgumentError, match="rank"):
        al.top_k(on(backend, np.float32(1.0)), 1)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_in_top_k_is_keras(backend, k):
    from keras.src.backend.numpy import math as keras_math

    predictions = np.array([[0.1, 0.5, 0.5, 0.2], [0.9, 0.0, 0.3, 0.3], [0.2, 0.2, 0.2, 0.2]], np.float32)
    targets = np.array([2, 3, 0], np.int32)
    expected = keras_math.in_top_k(targets, predictions, k)
    got = host(al.in_top_k(on(backend, targets), on(backend, predictions), k))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, expected)


def test_in_top_k_out_of_range_targets_are_false(backend):
    got = host(al.in_top_k(on(backend, np.array([-1, 4], np.int32)), on(backend, np.ones((2, 4), np.float32)), 4))
    np.testing.assert_array_equal(got, [False, False])
    with pytest.raises(al.InvalidDtypeError):
        al.in_top_k(on(backend, np.array([0.0, 1.0])), on(backend, np.ones((2, 4), np.float32)), 1)


# -- segment reductions -----------------------------------------------------------------------------
SEGMENTS = ("segment_sum", "segment_prod", "segment_max", "segment_min")
IDS = np.array([0, 2, 2, 0, 5, -1, 2, 4], np.int32)  # 1 and 3 empty; 5 and -1 dropped with num_segments=5


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("name", SEGMENTS)
def test_segments_are_jax_ops(backend, name, dtype):
    jax = pytest.importorskip("jax")
    data = (RNG.standard_normal((8, 3)) * 3).round(1).astype(dtype)
    expected = np.asarray(getattr(jax.ops, name)(data, IDS, num_segments=5))
    got = host(getattr(al, name)(on(backend, data), on(backend, IDS), num_segments=5))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("name", SEGMENTS)
def test_segments_count_from_the_ids_where_known(backend, name):
    ids = np.array([0, 3, 1, 1], np.int32)
    data = np.arange(4, dtype=np.float32)
    if backend == "dask":
        with pytest.raises(al.InvalidArgumentError, match="num_segments"):
            getattr(al, name)(on(backend, data), on(backend, ids))
        return
    jax = pytest.importorskip("jax")
    expected = np.asarray(getattr(jax.ops, name)(data, ids, num_segments=4))
    np.testing.assert_allclose(host(getattr(al, name)(on(backend, data), on(backend, ids))), expected)


def test_segments_refuse_bad_input(backend):
    data = on(backend, np.ones((3, 2), np.float32))
    with pytest.raises(al.InvalidDtypeError):
        al.segment_sum(data, on(backend, np.array([0.0, 1.0, 1.0])), num_segments=2)
    with pytest.raises(al.InvalidArgumentError, match="one id per row"):
        al.segment_max(data, on(backend, np.array([0, 1], np.int32)), num_segments=2)
    with pytest.raises(al.InvalidDtypeError):
        al.segment_max(on(backend, np.ones(3, np.complex64)), on(backend, np.zeros(3, np.int32)), num_segments=1)


# -- special functions ------------------------------------------------------------------------------
SPECIAL = {"rsqrt": lambda x: 1 / np.sqrt(x), "erf": None, "erfc": None, "erfinv": None}
POINTS = {"rsqrt": np.array([0.0, 0.01, 0.5, 2.0, 100.0]), "erf": np.linspace(-4, 4, 9),
          "erfc": np.array([-2.0, 0.0, 1.0, 5.0, 9.0]), "erfinv": np.array([-1.0, -0.9, 0.0, 0.3, 0.999, 1.0])}
TOLERANCE = {"float64": 1e-12, "float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2, "int32": 1e-6}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16", "int32"])
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_special_functions_are_scipys(backend, name, dtype):
    special = pytest.importorskip("scipy.special")
    if backend == "jax" and dtype == "float64":
        pytest.importorskip("jax")
        import jax

        if not jax.config.jax_enable_x64:
            pytest.skip("jax without x64 holds no float64 (the backend as configured)")
    points = POINTS[name] if dtype != "int32" else np.array([0, 1, 2, 4]) if name == "rsqrt" else np.array([0, 1])
    x = al.astype(on(backend, points), dtype) if dtype != "float64" else al.to_backend(points, backend)
    exact_input = host(x).astype(np.float64)
    oracle = SPECIAL[name] or getattr(special, name)
    with np.errstate(divide="ignore"):
        expected = oracle(exact_input)
    result = getattr(al, name)(x)
    assert al.as_dtype(result.dtype) == (al.default_float_dtype() if dtype == "int32" else al.as_dtype(dtype))
    got = host(result).astype(np.float64)
    np.testing.assert_allclose(got, expected, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_special_functions_refuse_complex(backend):
    for name in SPECIAL:
        with pytest.raises(al.InvalidDtypeError, match="real"):
            getattr(al, name)(on(backend, np.ones(2, np.complex64)))


def test_logdet_is_numpys_slogdet(backend):
    a = RNG.standard_normal((3, 4, 4))
    x = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4)  # positive definite
    x[2] = RNG.standard_normal((4, 4))  # and a general one
    got = host(al.logdet(on(backend, x.astype(np.float32))))
    np.testing.assert_allclose(got, np.linalg.slogdet(x.astype(np.float32))[1], rtol=1e-4)


# -- fft2 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, complex_input, options", [
    ("fft2", True, {}), ("ifft2", True, {"norm": "ortho"}), ("fft2", False, {"s": (3, 5), "axes": (0, 2)}),
    ("rfft2", False, {}), ("irfft2", True, {"s": (4, 6)})])
def test_fft2_is_numpys(backend, name, complex_input, options):
    x = RNG.standard_normal((3, 4, 5))
    if complex_input:
        x = x + 1j * RNG.standard_normal((3, 4, 5))
    x = x.astype(np.complex64 if complex_input else np.float32)
    got = host(getattr(al.fft, name)(on(backend, x), **options))
    expected = getattr(np.fft, name)(x, **options)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


# -- stft, istft ------------------------------------------------------------------------------------
SIGNAL = RNG.standard_normal((2, 50)).astype(np.float32)


@pytest.mark.parametrize("length, stride, n, window, center", [
    (16, 4, 16, "hann", True), (10, 3, 16, "hamming", False), (8, 8, 8, None, True)])
def test_stft_and_istft_are_keras(backend, length, stride, n, window, center):
    from keras.src.backend.numpy import math as keras_math

    real, imag = keras_math.stft(SIGNAL, length, stride, n, window=window, center=center)
    got = al.stft(on(backend, SIGNAL), length, stride, n, window=window, center=center)
    assert host(got).dtype == np.complex64
    np.testing.assert_allclose(host(got), real + 1j * imag, rtol=1e-4, atol=1e-4)
    expected = keras_math.istft((real, imag), length, stride, n, length=None, window=window, center=center)
    back = host(al.istft(got, length, stride, n, window=window, center=center))
    assert back.dtype == np.float32
    np.testing.assert_allclose(back, expected, rtol=1e-4, atol=1e-4)
    pair = host(al.istft((al.real(got), al.imag(got)), length, stride, n, length=40, window=window, center=center))
    np.testing.assert_allclose(pair, back[..., :40], rtol=1e-5, atol=1e-5)


def test_stft_refuses_bad_input(backend):
    with pytest.raises(al.InvalidDtypeError):
        al.stft(on(backend, np.arange(20)), 4, 2, 4)
    with pytest.raises(al.InvalidArgumentError, match="fft_length"):
        al.stft(on(backend, SIGNAL), 8, 2, 4)
    with pytest.raises(al.InvalidArgumentError, match="window"):
        al.stft(on(backend, SIGNAL), 8, 2, 8, window="kaiser")


# -- scatter, scatter_update, slice_update ----------------------------------------------------------
def test_scatter_adds_duplicates_like_numpy_add_at(backend):
    indices = np.array([[0, 1], [2, 3], [0, 1], [9, 0]], np.int32)  # a duplicate, and one out of bounds (dropped)
    values = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], np.float32)
    expected = np.zeros((3, 4, 2), np.float32)
    np.add.at(expected, (indices[:3, 0], indices[:3, 1]), values[:3])
    got = host(al.scatter(on(backend, indices), on(backend, values), (3, 4, 2)))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)


def test_scatter_update_replaces_and_the_last_duplicate_wins(backend):
    x = RNG.standard_normal((4, 3)).astype(np.float32)
    indices = np.array([[2], [0], [2]], np.int32)
    updates = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], np.int32)
    expected = x.copy()
    for (row,), update in zip(indices, updates, strict=True):
        expected[row] = update
    got = host(al.scatter_update(on(backend, x), on(backend, indices), on(backend, updates)))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, expected)
    point = host(al.scatter_update(on(backend, x), on(backend, np.array([[1, 1]], np.int32)),
                                   on(backend, np.array([0.5], np.float32))))
    expected = x.copy()
    expected[1, 1] = 0.5
    np.testing.assert_array_equal(point, expected)


@pytest.mark.parametrize("start", [(1, 2), (0, 0), (3, 5), (-2, 1)])
def test_slice_update_is_dynamic_update_slice(backend, start):
    jax = pytest.importorskip("jax")
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    block = np.full((2, 3), 7.0, np.float32)
    expected = np.asarray(jax.lax.dynamic_update_slice(x, block, start))
    np.testing.assert_array_equal(host(al.slice_update(on(backend, x), start, on(backend, block))), expected)
    traced = tuple(on(backend, np.int32(s)) for s in start)
    np.testing.assert_array_equal(host(al.slice_update(on(backend, x), traced, on(backend, block))), expected)


def test_updates_refuse_bad_shapes(backend):
    x = on(backend, np.zeros((3, 4), np.float32))
    with pytest.raises(al.InvalidArgumentError, match="shape"):
        al.scatter_update(x, on(backend, np.array([[0]], np.int32)), on(backend, np.ones((1, 3), np.float32)))
    with pytest.raises(al.InvalidArgumentError, match="one start per axis"):
        al.slice_update(x, (0,), on(backend, np.ones((1, 1), np.float32)))
    with pytest.raises(al.InvalidDtypeError):
        al.scatter(on(backend, np.array([[0.5]])), on(backend, np.ones(1, np.float32)), (3,))


# -- gradients --------------------------------------------------------------------------------------
GRADIENTS = {
    "rsqrt": (lambda x: al.sum(al.rsqrt(x)), lambda x: -0.5 * x ** -1.5, np.array([0.5, 1.0, 4.0])),
    "erf": (lambda x: al.sum(al.erf(x)), lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), np.array([-1.0, 0.0, 0.7])),
    "erfc": (lambda x: al.sum(al.erfc(x)), lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x), np.array([-1.0, 0.3])),
    "top_k": (lambda x: al.sum(al.top_k(x, 2).values), lambda x: np.array([0.0, 1.0, 1.0]), np.array([1.0, 3.0, 2.0])),
    "segment_sum": (lambda x: al.sum(al.multiply(al.segment_sum(x, _ids(x), num_segments=2), 3.0)),
                    lambda x: np.full(3, 3.0), np.array([1.0, 2.0, 3.0])),
}


def _ids(x):
    return al.to_backend(np.array([1, 0, 1], np.int32), al.backend_of(x).name)


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_are_the_derivatives(backend, name):
    if backend not in GRAD_BACKENDS:
        pytest.skip(f"{backend} has no autodiff")
    function, derivative, points = GRADIENTS[name]
    got = host(al.grad(function)(on(backend, points.astype(np.float32))))
    np.testing.assert_allclose(got, derivative(points), rtol=1e-5, atol=1e-6)


def test_logdet_gradient_is_the_inverse_transpose(backend):
    if backend not in GRAD_BACKENDS:
        pytest.skip(f"{backend} has no autodiff")
    a = RNG.standard_normal((3, 3))
    x = a @ a.T + 3 * np.eye(3)
    got = host(al.grad(al.logdet)(on(backend, x.astype(np.float32))))
    np.testing.assert_allclose(got, np.linalg.inv(x).T, rtol=1e-4, atol=1e-5)
