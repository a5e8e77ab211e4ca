"""Copies, views and in-place operators of arraylayer.Array on every backend (docs/copies_and_views.rst).

NumPy is the oracle: on NumPy and torch (mutable) ``v op= y`` on a view ``v`` of ``a`` changes ``a``
exactly as NumPy's own operator does on the same view of a NumPy array; on JAX, TensorFlow and dask
(immutable) ``v`` gets NumPy's values and ``a`` stays as it was. The dtype rule of storing a value
(in-place operators and item assignment) and NumPy scalars beside Arrays are tested here too.
"""

from __future__ import annotations

import operator

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al
from arraylayer import Array

MUTABLE = ("numpy", "torch")

# symbol -> (in-place operator, out-of-place operator, dtype of the test arrays)
INPLACE = {
    "+=": (operator.iadd, operator.add, "float32"), "-=": (operator.isub, operator.sub, "float32"),
    "*=": (operator.imul, operator.mul, "float32"), "/=": (operator.itruediv, operator.truediv, "float32"),
    "//=": (operator.ifloordiv, operator.floordiv, "float32"), "%=": (operator.imod, operator.mod, "float32"),
    "**=": (operator.ipow, operator.pow, "float32"), "@=": (operator.imatmul, operator.matmul, "float32"),
    "&=": (operator.iand, operator.and_, "int32"), "|=": (operator.ior, operator.or_, "int32"),
    "^=": (operator.ixor, operator.xor, "int32"), "<<=": (operator.ilshift, operator.lshift, "int32"),
    ">>=": (operator.irshift, operator.rshift, "int32"),
}

# view kind -> (the view of an Array, the same view of a NumPy array); the base is 4 x 4
VIEWS = {
    "slice": (lambda a: a[1:3, 1:3], lambda x: x[1:3, 1:3]),
    "strided": (lambda a: a[::2, 1::2], lambda x: x[::2, 1::2]),
    "reshaped": (lambda a: al.reshape(a[1:3], (2, 2, 2)), lambda x: x[1:3].reshape(2, 2, 2)),
    "transposed": (lambda a: a.T, lambda x: x.T),
    "permuted": (lambda a: al.permute_dims(a[:, 1:3], (1, 0)), lambda x: x[:, 1:3].transpose(1, 0)),
    "row": (lambda a: a[2], lambda x: x[2]),
}


def host(x) -> np.ndarray:
    native = x.native if isinstance(x, Array) else x
    return np.asarray(al.get_backend(al.backend_of(native).name).to_numpy(native))


def operand(n: int, symbol: str, dtype: str) -> np.ndarray:
    """The right operand for a view whose last axis has ``n`` elements: a small matrix for @=, a
    row that broadcasts along the view for the others (small positive values: no overflow)."""
    if symbol == "@=":
        return (np.arange(n * n).reshape(n, n) % 3).astype(dtype)
    return (np.arange(n) % 3 + 1).astype(dtype)


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("symbol", list(INPLACE))
def test_inplace_through_views(backend, symbol, view):
    iop, op, dtype = INPLACE[symbol]
    make_view, numpy_view = VIEWS[view]
    start = np.arange(1, 17).reshape(4, 4).astype(dtype)
    a = Array(make_array(backend, dtype, start.tolist()))
    v = make_view(a)
    other_host = operand(v.shape[-1], symbol, dtype)
    other = Array(make_array(backend, dtype, other_host.tolist()))
    out_of_place = op(Array(make_array(backend, dtype, host(v).tolist())), other)

    oracle = start.copy()
    oracle_view = numpy_view(oracle)
    oracle_view = iop(oracle_view, other_host)  # NumPy writes into the view, hence into oracle

    result = iop(v, other)
    what = f"{view} {symbol} on {backend}"
    assert result is v and v.dtype == dtype, what
    # NumPy's values to the last bit of float32 (XLA's division and TensorFlow's pow may round the
    # other way); the out-of-place operator's values exactly
    np.testing.assert_allclose(host(v), oracle_view, rtol=2e-7, err_msg=what)
    np.testing.assert_array_equal(host(v), host(out_of_place), err_msg=f"{what}: in place != out of place")
    np.testing.assert_allclose(host(a), oracle if backend in MUTABLE else start, rtol=2e-7, err_msg=f"{what}: base")


@pytest.mark.parametrize("symbol", ["+=", "*=", "@="])
def test_inplace_keeps_the_native_object_on_mutable_backends(backend, symbol):
    iop = INPLACE[symbol][0]
    x = make_array(backend, "float32", [[1.0, 2.0], [3.0, 4.0]])
    other = make_array(backend, "float32", [[2.0, 0.0], [1.0, 1.0]])
    a = Array(x)
    alias = Array(x)  # another Array of the same native array
    iop(a, other)
    assert (a.native is x) == (backend in MUTABLE)
    same = np.array_equal(host(alias), host(a))
    assert same == (backend in MUTABLE), f"{symbol} on {backend}: the other Array of the same buffer"


def test_inplace_sees_its_own_operand_before_writing(backend):
    """``x += x.T`` reads x.T before any element is written, as NumPy does with overlapping operands."""
    start = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    a = Array(make_array(backend, "float32", start.tolist()))
    a += a.T
    np.testing.assert_array_equal(host(a), start + start.T)


def test_masked_selection_is_a_copy_everywhere(backend):
    """A boolean mask selects a copy on every backend, NumPy included (dask's has an unknown length)."""
    start = np.arange(6.0)
    a = Array(make_array(backend, "float64", start.tolist()))
    v = a[a > 2.0]
    v += 1.0
    np.testing.assert_array_equal(host(v), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(host(a), start)


@pytest.mark.parametrize(("value", "error"), [(1.5, al.TypePromotionError), (1000, al.ScalarOverflowError),
                                              (2j, al.TypePromotionError)])
def test_inplace_refusals_change_nothing(backend, value, error):
    start = np.arange(1, 9, dtype=np.int8).reshape(2, 4)
    a = Array(make_array(backend, "int8", start.tolist()))
    v = a[:, 1:3]
    for iop in (operator.iadd, operator.imul):
        with pytest.raises(error):
            iop(v, value)
    np.testing.assert_array_equal(host(v), start[:, 1:3])
    np.testing.assert_array_equal(host(a), start)


def test_inplace_refuses_integer_narrowing_and_kind_changes(backend):
    a = Array(make_array(backend, "int16", [1, 2, 3]))
    for other, dtype in ((make_array(backend, "int32", [1, 1, 1]), "int32"),
                         (make_array(backend, "float32", [1, 1, 1]), "float32")):
        with pytest.raises(al.TypePromotionError, match=f"from int16 to {dtype}"):
            a += other
    f = Array(make_array(backend, "float32", [1, 2, 3]))
    with pytest.raises(al.TypePromotionError, match="from float32 to complex64"):
        f *= make_array(backend, "complex64", [1, 1, 1])
    np.testing.assert_array_equal(host(a), [1, 2, 3])
    np.testing.assert_array_equal(host(f), [1, 2, 3])


def test_inplace_rounds_within_float_and_complex(backend):
    """float32 += float64 values: the float64 result rounded to float32, as NumPy's own operator."""
    third = [1 / 3, 2 / 3, 1e-9]
    a = Array(make_array(backend, "float32", [1.0, 2.0, 3.0]))
    a += make_array(backend, "float64", third)
    want = np.array([1.0, 2.0, 3.0], np.float32)
    want += np.array(third)
    assert a.dtype == "float32"
    np.testing.assert_array_equal(host(a), want)
    c = Array(make_array(backend, "complex64", [1.0, 2.0]))
    c *= make_array(backend, "float64", [1 / 3, 3.0])
    assert c.dtype == "complex64"
    np.testing.assert_array_equal(host(c), np.array([1 / 3, 6.0], np.complex64))


def test_reversed_slice_on_torch_is_a_copy():
    """torch has no negative strides: ``a[::-1]`` is gathered, so a write through it stays there."""
    torch = pytest.importorskip("torch")
    a = Array(torch.arange(4.0))
    v = a[::-1]
    v += 1
    assert a.native.tolist() == [0.0, 1.0, 2.0, 3.0] and v.native.tolist() == [4.0, 3.0, 2.0, 1.0]


def test_tf_variable_is_assigned_in_place():
    tf = pytest.importorskip("tensorflow")
    variable = tf.Variable([1.0, 2.0])
    a = Array(variable)
    a *= 3.0
    assert a.native is variable and variable.numpy().tolist() == [3.0, 6.0]


def test_torch_leaf_that_requires_grad():
    torch = pytest.importorskip("torch")
    leaf = torch.ones(3, requires_grad=True)
    a = Array(leaf)
    with pytest.raises(al.UnsupportedOperationError, match="no_grad"):
        a -= 0.5
    assert leaf.tolist() == [1.0, 1.0, 1.0]
    with torch.no_grad():
        a -= 0.5  # an optimiser's update
    assert a.native is leaf and leaf.tolist() == [0.5, 0.5, 0.5]


@pytest.mark.parametrize("key", [0, slice(None, None, -1), (Array(np.array([True, False, True])),)])
def test_torch_setitem_on_a_leaf_that_requires_grad(key):
    torch = pytest.importorskip("torch")
    leaf = torch.ones(3, requires_grad=True)
    a = Array(leaf)
    with pytest.raises(al.UnsupportedOperationError, match="no_grad"):
        a[key] = 4.0
    assert leaf.tolist() == [1.0, 1.0, 1.0]
    with torch.no_grad():
        a[key] = 4.0
    want = np.ones(3)
    want[key if not isinstance(key, tuple) else np.array([True, False, True])] = 4.0
    assert a.native is leaf and leaf.tolist() == want.tolist()
    with pytest.raises(IndexError):  # torch's other refusals are not relabelled
        Array(torch.ones(3))[5] = 1.0


def test_torch_autograd_through_writes_into_views():
    """Writes into tensors that autograd has saved (y *= x after y was used, y *= y) keep the graph
    right: y = 2x; y[0] += 3 x1; y *= x; y *= y; the gradient of sum(y) by hand."""
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = Array(x) * 2.0
    v = y[0:1]
    v += Array(x)[1:2] * 3.0
    y *= Array(x)
    y *= y
    al.sum(y).native.backward()
    x0, x1 = 1.0, 2.0
    y0, y1 = (2 * x0 + 3 * x1) * x0, 2 * x1 * x1
    assert y.native.tolist() == [y0**2, y1**2]
    assert x.grad.tolist() == [2 * y0 * (4 * x0 + 3 * x1), 2 * y0 * 3 * x0 + 2 * y1 * 4 * x1]


def test_read_only_numpy_array():
    x = np.ones(3, np.float32)
    x.flags.writeable = False
    a = Array(x)
    with pytest.raises(al.InvalidArgumentError, match="read-only"):
        a += 1
    with pytest.raises(al.InvalidArgumentError, match="read-only"):
        a[0] = 2.0
    assert x.tolist() == [1.0, 1.0, 1.0]


# -- item assignment: the same dtype rule ------------------------------------------------------------
def test_assignment_rounds_float64_into_float32(backend):
    """SciPy's Akima1DInterpolator: ``m = xp.empty(n)`` (float32) then ``m[2:-2] = float64 values``."""
    values = [1 / 3, 2 / 3, 1e-9]
    m = Array(make_array(backend, "float32", [0.0] * 5))
    m[1:4] = Array(make_array(backend, "float64", values))
    assert m.dtype == "float32"
    np.testing.assert_array_equal(host(m), np.array([0.0, *values, 0.0], np.float32))
    c = Array(make_array(backend, "complex64", [0.0, 0.0]))
    c[...] = make_array(backend, "complex128", [1 / 3 + 1j, 2.0])
    np.testing.assert_array_equal(host(c), np.array([1 / 3 + 1j, 2.0], np.complex64))


@pytest.mark.parametrize(("into", "value"), [("int8", "int16"), ("int32", "int64"), ("uint8", "int8"),
                                               ("int32", "float32"), ("float32", "complex64"), ("bool", "int8")])
def test_assignment_refuses_integer_narrowing_and_kind_changes(backend, into, value):
    m = Array(make_array(backend, into, [1, 0, 1]))
    with pytest.raises(al.TypePromotionError, match=f"into an? {into} array"):
        m[0:2] = make_array(backend, value, [0, 1])
    np.testing.assert_array_equal(host(m), np.array([1, 0, 1], into))


# -- NumPy scalars beside Arrays ------------------------------------------------------------------------
@pytest.mark.parametrize("scalar", [np.float64(2.5), np.int64(4), np.float32(2.5), np.int8(-3), np.bool_(True)])
def test_numpy_scalar_is_a_0d_array_of_its_dtype(backend, scalar):
    a = Array(make_array(backend, "float32", [1.0, 2.0]))
    want_dtype = al.result_type("float32", str(scalar.dtype))
    want = np.array([1.0, 2.0], np.float32).astype(str(want_dtype)) * np.asarray(scalar).astype(str(want_dtype))
    for got in (a * scalar, scalar * a):
        assert isinstance(got, Array) and got.dtype == want_dtype, f"{scalar!r} on {backend}"
        assert al.backend_of(got.native).name == backend
        np.testing.assert_array_equal(host(got), want)


def test_numpy_scalar_in_place_and_assignment(backend):
    a = Array(make_array(backend, "float32", [1.0, 2.0]))
    a *= np.float64(1 / 3)
    assert a.dtype == "float32"
    np.testing.assert_array_equal(host(a), np.array([1.0, 2.0], np.float32) * np.float32(1 / 3))
    a[0] = np.float64(7.0)
    assert host(a).tolist()[0] == 7.0
    i = Array(make_array(backend, "int32", [1, 2]))
    with pytest.raises(al.TypePromotionError):
        i += np.float32(1.0)
    with pytest.raises(al.TypePromotionError):
        i[0] = np.int64(3)
    assert host(i).tolist() == [1, 2]


def test_numpy_scalar_next_to_native_arrays_in_functions(backend):
    """Functions take a NumPy scalar as the NumPy array it is: beside another backend's native
    arrays that is a mismatch (wrap them in arraylayer.Array, or pass a Python number)."""
    x = make_array(backend, "float32", [1.0, 2.0])
    if backend == "numpy":
        assert al.multiply(x, np.int64(4)).dtype == np.float32
    else:
        with pytest.raises(al.BackendMismatchError, match="NumPy scalar"):
            al.multiply(x, np.int64(4))


# -- SciPy, which relies on both (SCIPY_ARRAY_API=1 is set by tests/conftest.py) ------------------------
def expect_failure(request, reason: str) -> None:
    """Run the test, and require it to fail (a strict xfail): the limit is real, and a fix shows."""
    request.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))


def test_scipy_oaconvolve_writes_through_views(backend, request):
    """SciPy's overlap-add adds into a slice of its result: right on NumPy and torch; on immutable
    backends the write stays in the slice (the documented limit; SciPy skips JAX for it)."""
    signal = pytest.importorskip("scipy.signal")
    if backend not in MUTABLE:
        expect_failure(request, f"slices are copies on {backend} (docs/copies_and_views.rst): oaconvolve's += is lost")
    rng = np.random.default_rng(0)
    x, k = rng.standard_normal(500), rng.standard_normal(31)
    got = signal.oaconvolve(Array(make_array(backend, "float64", x.tolist())),
                            Array(make_array(backend, "float64", k.tolist())))
    np.testing.assert_allclose(host(got), signal.oaconvolve(x, k), rtol=0, atol=1e-12)


def test_scipy_akima_fills_a_float32_empty_with_float64_values(backend, request):
    """Akima1DInterpolator assigns float64 slopes into ``xp.empty(n)``: float32, arraylayer's default."""
    interpolate = pytest.importorskip("scipy.interpolate")
    if backend == "dask":
        expect_failure(request, "dask: integer-array indexing of an array of unknown length (indexing_dask), "
                                "not the assignment")
    xs = np.linspace(0.0, 10.0, 12)
    ys, at = np.sin(xs), np.linspace(0.5, 9.5, 7)
    arrays = [Array(make_array(backend, "float64", v.tolist())) for v in (xs, ys, at)]
    got = interpolate.Akima1DInterpolator(arrays[0], arrays[1])(arrays[2])
    assert got.dtype == "float64"
    np.testing.assert_allclose(host(got), interpolate.Akima1DInterpolator(xs, ys)(at), rtol=1e-6)


def test_scipy_tanhsinh_multiplies_arrays_by_numpy_scalars(backend, request):
    """scipy.integrate.tanhsinh scales Arrays by NumPy integers (np.int64) inside its loop."""
    integrate = pytest.importorskip("scipy.integrate")
    if backend == "dask":
        expect_failure(request, "dask: indexing with a dask integer array of unknown chunks (indexing_dask)")
    lower, upper = (Array(make_array(backend, "float64", v)) for v in (0.0, 1.0))
    got = integrate.tanhsinh(al.exp, lower, upper).integral
    assert isinstance(got, Array) and got.dtype == "float64"
    np.testing.assert_allclose(host(got), np.e - 1, rtol=1e-14)


def test_inplace_on_a_0d_result_held_as_a_numpy_scalar(backend):
    """A 0-d result (NumPy gives a scalar, np.bool_, for 0-d input) takes ``|=`` and ``+=`` like any
    Array: the new value, NumPy's (the official suite's helpers do this)."""
    with al.use_backend(backend):
        x = al.Array(al.asarray(1.5 + 0j))
        mask = al.isnan(x)
        mask |= al.isnan(x) == al.isnan(x)
        total = al.abs(x)
        total += 1.0
    assert bool(np.asarray(mask)) is True
    assert float(np.asarray(total)) == 2.5
