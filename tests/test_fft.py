"""arraylayer.fft on every backend against numpy.fft: values, result dtypes (real input of the
complex transforms -> the complex dtype of its precision), ``n``/``s``/``axis``/``axes``/``norm``,
the frequency and shift helpers, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from tests.conftest import make_array
from tests.oracles import assert_close, dtype_name, to_numpy

_REAL = np.asarray([[0.5, -1.25, 2.0, 3.5], [1.0, 0.25, -0.75, 4.0], [2.5, -3.0, 0.125, 1.5]])
_COMPLEX = _REAL + 1j * _REAL[::-1]
_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_ONE_AXIS = [{}, {"n": 6}, {"n": 3, "axis": 0}, {"axis": -2, "norm": "ortho"}, {"n": 2, "norm": "forward"}]
_MANY_AXES = [{}, {"axes": (0,)}, {"s": (4, 3)}, {"s": (2, 5), "axes": (1, 0), "norm": "ortho"},
              {"axes": (-1, -2), "norm": "forward"}]


def _values(dtype: str) -> np.ndarray:
    return _COMPLEX if dtype.startswith("complex") else _REAL


def _check(backend: str, name: str, dtype: str, options: dict, expected_dtype: str) -> None:
    x = make_array(backend, dtype, _values(dtype))
    result = getattr(al.fft, name)(x, **options)
    reference = dict(options)
    if "s" in options and "axes" not in options:  # the standard's (and numpy's) last len(s) axes, explicitly
        reference["axes"] = tuple(range(2 - len(options["s"]), 2))
    expected = getattr(np.fft, name)(_values(dtype).astype(dtype), **reference)
    what = f"fft.{name}({dtype}, {options}) on {backend}"
    assert dtype_name(backend, result) == expected_dtype, what
    assert_close(to_numpy(backend, result), expected, expected_dtype, what)


@pytest.mark.parametrize("options", _ONE_AXIS, ids=str)
@pytest.mark.parametrize("name", ["fft", "ifft"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_complex_one_axis(backend, name, dtype, options):
    _check(backend, name, dtype, options, _COMPLEX_OF.get(dtype, dtype))


@pytest.mark.parametrize("options", _MANY_AXES, ids=str)
@pytest.mark.parametrize("name", ["fftn", "ifftn"])
@pytest.mark.parametrize("dtype", ["float32", "complex128"])
def test_complex_many_axes(backend, name, dtype, options):
    _check(backend, name, dtype, options, _COMPLEX_OF.get(dtype, dtype))


@pytest.mark.parametrize("options", _ONE_AXIS, ids=str)
@pytest.mark.parametrize(("name", "dtype", "result"), [
    ("rfft", "float32", "complex64"), ("rfft", "float64", "complex128"), ("ihfft", "float64", "complex128"),
    ("irfft", "complex64", "float32"), ("irfft", "complex128", "float64"), ("hfft", "complex128", "float64"),
])
def test_real_one_axis(backend, name, dtype, result, options):
    _check(backend, name, dtype, options, result)


@pytest.mark.parametrize("options", _MANY_AXES, ids=str)
@pytest.mark.parametrize(("name", "dtype", "result"), [
    ("rfftn", "float32", "complex64"), ("rfftn", "float64", "complex128"), ("irfftn", "complex128", "float64"),
])
def test_real_many_axes(backend, name, dtype, result, options):
    _check(backend, name, dtype, options, result)


def test_round_trip(backend):
    x = make_array(backend, "float64", _REAL)
    back = al.fft.irfftn(al.fft.rfftn(x, norm="ortho"), s=_REAL.shape, norm="ortho")
    assert_close(to_numpy(backend, back), _REAL, "float64", "irfftn(rfftn(x))")


@pytest.mark.parametrize("n", [1, 4, 7])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies(backend, name, n):
    with al.use_backend(backend):
        result = getattr(al.fft, name)(n, d=0.5, dtype="float64")
        default = getattr(al.fft, name)(n)
    assert al.backend_of(result).name == backend
    assert dtype_name(backend, result) == "float64" and dtype_name(backend, default) == "float32"
    assert_close(to_numpy(backend, result), getattr(np.fft, name)(n, d=0.5), "float64", name)


@pytest.mark.parametrize("axes", [None, 0, (1,), (0, -1)])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts(backend, name, axes):
    values = np.arange(15, dtype=np.int32).reshape(3, 5)
    result = getattr(al.fft, name)(make_array(backend, "int32", values), axes=axes)
    assert dtype_name(backend, result) == "int32"
    np.testing.assert_array_equal(to_numpy(backend, result), getattr(np.fft, name)(values, axes=axes))


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda x: al.fft.fft(x, norm="none"), ValueError, "norm must be one of"),
    (lambda x: al.fft.fft(x, n=0), ValueError, "positive length"),
    (lambda x: al.fft.fft(x, axis=2), IndexError, "out of range"),
    (lambda x: al.fft.fftn(x, s=(2,), axes=(0, 1)), ValueError, "same length"),
    (lambda x: al.fft.fftn(x, axes=(0, 0)), ValueError, "distinct"),
    (lambda x: al.fft.irfft(x), al.UnsupportedDtypeError, "complex floating-point"),
    (lambda x: al.fft.fftfreq(4, dtype="int32"), al.UnsupportedDtypeError, "real floating-point"),
])
def test_errors(backend, call, error, message):
    with pytest.raises(error, match=message):
        call(make_array(backend, "float32", _REAL))


def test_integers_and_half_precision_are_refused(backend):
    with pytest.raises(al.UnsupportedDtypeError, match="floating-point"):
        al.fft.fft(make_array(backend, "int32", [1, 2, 3]))
    with pytest.raises(al.UnsupportedDtypeError, match="float16"):
        al.fft.rfft(make_array(backend, "float16", [1, 2, 3]))


def test_namespaces_have_the_extension(backend):
    import importlib

    xp = importlib.import_module(f"arraylayer.xp.{backend}")
    assert sorted(n for n in dir(xp.fft) if not n.startswith("_")) >= sorted(al.fft.__all__)
    assert al.backend_of(xp.fft.rfftfreq(5)).name == backend


def test_array_wrappers_stay_wrapped(backend):
    x = al.Array(make_array(backend, "float32", _REAL))
    result = al.fft.fft(x)
    assert isinstance(result, al.Array)
    assert_close(to_numpy(backend, result._native),
                 np.fft.fft(_REAL.astype("float32")), "complex64", "fft(Array)")


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda x: al.fft.fft(x, norm=3), al.InvalidArgumentTypeError, "norm=3"),
    (lambda x: al.fft.fft(x, n=2**60), al.InvalidArgumentError, "n=1152921504606846976"),
    (lambda x: al.fft.fft(x, n=1.5), al.InvalidArgumentTypeError, "must be an integer"),
    (lambda x: al.fft.fftn(x, axes=1), al.InvalidArgumentTypeError, "sequence of ints"),
    (lambda x: al.fft.fftn(x, axes=(0, 5)), al.AxisError, "out of range"),
    (lambda x: al.fft.fftn(x[:0]), al.InvalidArgumentError, "length 0"),
    (lambda x: al.fft.fft(x[:, :0]), al.InvalidArgumentError, "length 0"),
    (lambda x: al.fft.fftfreq(4, d=0), al.InvalidArgumentError, "non-zero"),
    (lambda x: al.fft.fftfreq(-1), al.InvalidArgumentError, "count"),
    (lambda x: al.fft.fftshift(x, axes=(0, 0)), al.AxisError, "distinct"),
])
def test_bad_arguments_get_one_arraylayer_error_everywhere(backend, call, error, message):
    """Checked before any kernel runs: the same error type and message on every backend
    (NumPy and PyTorch used to raise their own errors for empty input, JAX and TensorFlow none)."""
    x = make_array(backend, "float32", np.ones((3, 4), np.float32))
    with pytest.raises(error, match=message):
        call(x)


def test_zero_padding_an_empty_axis_works(backend):
    x = make_array(backend, "float32", np.ones((3, 0), np.float32))
    result = al.fft.fft(x, n=4)
    np.testing.assert_allclose(to_numpy(backend, result), np.fft.fft(np.ones((3, 0), np.float32), n=4), atol=1e-6)
