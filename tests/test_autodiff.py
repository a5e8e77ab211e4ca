"""arraylayer.grad / value_and_grad: the same call on jax, torch and tensorflow, checked against
analytic gradients; pytrees of parameters; argnums; has_aux; Array wrappers; the errors (NumPy
has no autodiff; non-scalar or non-float outputs; integer inputs)."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import arraylayer as al
from arraylayer import Array

X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
W = np.array([[1.0, -0.5], [0.25, 2.0], [-1.0, 0.5]], np.float32)
B = np.array([0.1, -0.2], np.float32)

Pair = namedtuple("Pair", ["w", "b"])


def arr(backend, values, dtype="float32"):
    """A native array of ``backend`` (from Python values: a NumPy array would stay a NumPy array)."""
    with al.use_backend(backend):
        return al.asarray(np.asarray(values).tolist(), dtype=dtype)


def host(backend, x):
    native = x.native if isinstance(x, Array) else x
    return np.asarray(al.get_backend(backend).to_numpy(native))


def dtype(backend, x):
    native = x.native if isinstance(x, Array) else x
    return str(al.get_backend(backend).dtype_of(native))


def linear_loss(params, x):
    """sum((x @ w + b) ** 2): dw = 2 x^T (x w + b), db = 2 sum(x w + b, axis=0)."""
    y = al.add(al.matmul(x, params["w"]), params["b"])
    return al.sum(al.multiply(y, y))


def expected_linear(x=X, w=W, b=B):
    y = x @ w + b
    return float(np.sum(y * y)), 2 * x.T @ y, 2 * y.sum(axis=0)


@pytest.fixture
def ad_backend(backend):
    """The backends with autodiff (numpy and dask are tested for their error)."""
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no autodiff (see test_numpy_raises_a_clear_error)")
    return backend


def test_value_and_grad_of_a_dict_of_parameters(ad_backend):
    backend = ad_backend
    params = {"w": arr(backend, W), "b": arr(backend, B)}
    value, grads = al.value_and_grad(linear_loss)(params, arr(backend, X))
    want_value, want_w, want_b = expected_linear()
    assert set(grads) == {"w", "b"}
    np.testing.assert_allclose(float(host(backend, value)), want_value, rtol=1e-5)
    np.testing.assert_allclose(host(backend, grads["w"]), want_w, rtol=1e-5)
    np.testing.assert_allclose(host(backend, grads["b"]), want_b, rtol=1e-5)
    assert dtype(backend, value) == dtype(backend, grads["w"]) == "float32"


@pytest.mark.parametrize("container", ["list", "tuple", "namedtuple", "ordereddict", "nested"])
def test_pytrees_of_parameters(ad_backend, container):
    backend = ad_backend
    w, b = arr(backend, W), arr(backend, B)
    params, read = {
        "list": ([w, b], lambda p: (p[0], p[1])),
        "tuple": ((w, b), lambda p: (p[0], p[1])),
        "namedtuple": (Pair(w, b), lambda p: (p.w, p.b)),
        "ordereddict": (OrderedDict(w=w, b=b), lambda p: (p["w"], p["b"])),
        "nested": ({"layer": [(w,), {"bias": b}], "frozen": None}, lambda p: (p["layer"][0][0], p["layer"][1]["bias"])),
    }[container]

    def loss(p, x):
        pw, pb = read(p)
        return linear_loss({"w": pw, "b": pb}, x)

    grads = al.grad(loss)(params, arr(backend, X))
    assert type(grads) is type(params)
    gw, gb = read(grads)
    _, want_w, want_b = expected_linear()
    np.testing.assert_allclose(host(backend, gw), want_w, rtol=1e-5)
    np.testing.assert_allclose(host(backend, gb), want_b, rtol=1e-5)
    if container == "nested":
        assert grads["frozen"] is None


def test_argnums(ad_backend):
    backend = ad_backend
    x, y = arr(backend, [1.0, 2.0]), arr(backend, [3.0, -4.0])

    def f(x, y, scale):
        return al.multiply(al.sum(al.multiply(x, y)), scale)

    gx, gy = al.grad(f, argnums=(0, 1))(x, y, 2.0)
    only_y = al.grad(f, argnums=-2)(x, y, 2.0)
    keyword = al.grad(f)(x, y=y, scale=2.0)  # keyword arguments are passed, never differentiated
    np.testing.assert_allclose(host(backend, gx), [6.0, -8.0])
    np.testing.assert_allclose(host(backend, gy), [2.0, 4.0])
    np.testing.assert_allclose(host(backend, only_y), [2.0, 4.0])
    np.testing.assert_allclose(host(backend, keyword), [6.0, -8.0])
    with pytest.raises(al.GradientError, match="positional argument 3"):
        al.grad(f, argnums=3)(x, y, 2.0)
    with pytest.raises(al.GradientError, match="twice"):
        al.grad(f, argnums=(0, -3))(x, y, 2.0)
    with pytest.raises(al.GradientError, match="argnums"):
        al.grad(f, argnums="x")


def test_has_aux(ad_backend):
    backend = ad_backend
    x = arr(backend, [1.0, 2.0, 3.0])

    def f(x):
        squares = al.multiply(x, x)
        return al.sum(squares), {"squares": squares, "note": "kept"}

    (value, aux), gradient = al.value_and_grad(f, has_aux=True)(x)
    gradient_only, aux_again = al.grad(f, has_aux=True)(x)
    assert float(host(backend, value)) == 14.0
    np.testing.assert_allclose(host(backend, aux["squares"]), [1.0, 4.0, 9.0])
    assert aux["note"] == "kept" and aux_again["note"] == "kept"
    np.testing.assert_allclose(host(backend, gradient), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(host(backend, gradient_only), [2.0, 4.0, 6.0])
    with pytest.raises(al.GradientError, match="pair"):
        al.grad(lambda x: al.sum(x), has_aux=True)(x)


@pytest.mark.parametrize("float_dtype", ["float16", "float32", "float64"])
def test_gradients_keep_the_input_dtype(ad_backend, float_dtype, x64_on):
    backend = ad_backend
    x = arr(backend, [0.5, 1.0, 2.0], float_dtype)
    value, gradient = al.value_and_grad(lambda x: al.sum(al.sin(x)))(x)
    assert dtype(backend, value) == dtype(backend, gradient) == float_dtype
    tolerance = 2e-3 if float_dtype == "float16" else 1e-6
    np.testing.assert_allclose(host(backend, gradient).astype(np.float64), np.cos([0.5, 1.0, 2.0]), rtol=tolerance)


def test_arrays_in_arrays_out(ad_backend):
    backend = ad_backend
    x = Array(arr(backend, [1.0, -2.0]))

    def f(x):
        squares = x * x * 0.5  # operators only: an Array in, an Array out
        return squares[0] + squares[1]

    value, gradient = al.value_and_grad(f)(x)
    params = al.grad(lambda p: (p["x"] ** 2.0)[1])({"x": x, "y": [x]})
    assert isinstance(value, Array) and isinstance(gradient, Array)
    assert float(value) == 2.5
    np.testing.assert_allclose(host(backend, gradient), [1.0, -2.0])
    assert isinstance(params["x"], Array) and isinstance(params["y"][0], Array)
    np.testing.assert_allclose(host(backend, params["x"]), [0.0, -4.0])


def test_python_float_inputs(ad_backend):
    backend = ad_backend
    with al.use_backend(backend):
        gradient = al.grad(lambda a, b: al.multiply(al.multiply(a, a), b), argnums=0)(3.0, arr(backend, 2.0))
    np.testing.assert_allclose(float(host(backend, gradient)), 12.0)


def test_tf_variables():
    tf = pytest.importorskip("tensorflow")
    w = tf.Variable(W)
    gradient = al.grad(linear_loss)({"w": w, "b": tf.constant(B)}, tf.constant(X))
    np.testing.assert_allclose(gradient["w"].numpy(), expected_linear()[1], rtol=1e-5)


def test_torch_tensors_requiring_grad():
    torch = pytest.importorskip("torch")
    w = torch.tensor(W, requires_grad=True)
    gradient = al.grad(linear_loss)({"w": w, "b": torch.tensor(B)}, torch.tensor(X))
    np.testing.assert_allclose(gradient["w"].detach().numpy(), expected_linear()[1], rtol=1e-5)
    assert w.grad is None  # functional: nothing accumulates into .grad


# -- errors ----------------------------------------------------------------------------------------------
def test_numpy_raises_a_clear_error():
    with pytest.raises(al.UnsupportedOperationError) as info:
        al.grad(lambda x: al.sum(x))(np.ones(3, np.float32))
    error = info.value
    assert isinstance(error, NotImplementedError) and isinstance(error, al.ArrayLayerError)
    message = str(error)
    assert "NumPy has no automatic differentiation" in message
    for name in ("jax", "torch", "tensorflow"):
        assert name in message
    with pytest.raises(al.UnsupportedOperationError):
        al.value_and_grad(linear_loss)({"w": W, "b": B}, X)
    with al.use_backend("numpy"), pytest.raises(al.UnsupportedOperationError):  # no arrays: the active backend
        al.grad(lambda a: al.multiply(a, a))(2.0)


def test_dask_raises_a_clear_error_naming_the_alternatives():
    da = pytest.importorskip("dask.array")
    x = da.ones(3, dtype=np.float32, chunks=2)
    with pytest.raises(al.UnsupportedOperationError) as info:
        al.grad(lambda a: al.sum(a))(x)
    message = str(info.value)
    assert "dask has no automatic differentiation" in message
    for alternative in ("jax", "torch", "tensorflow", "to_backend", "batch by batch"):
        assert alternative in message


def test_output_must_be_a_real_float_scalar(ad_backend):
    backend = ad_backend
    x = arr(backend, [1.0, 2.0])
    with pytest.raises(al.GradientError, match=r"scalar \(a 0-d array\).*shape \(2,\)"):
        al.grad(lambda x: al.multiply(x, x))(x)
    with pytest.raises(al.GradientError, match="real floating-point scalar; it returned an int32"):
        al.grad(lambda x: al.astype(al.sum(x), "int32"))(x)
    with pytest.raises(al.GradientError, match="returned str"):
        al.grad(lambda x: "loss")(x)


def test_inputs_must_be_real_floating(ad_backend):
    backend = ad_backend
    with pytest.raises(al.GradientError, match="argument 0 holds an int32 array"):
        al.grad(lambda x: al.sum(al.astype(x, "float32")))(arr(backend, [1, 2], "int32"))
    with pytest.raises(al.GradientError, match="complex64"):
        al.grad(lambda x: al.sum(al.real(x)))(arr(backend, [1, 2], "complex64"))
    with pytest.raises(al.GradientError, match="argument 0 holds str"):
        al.grad(lambda p: al.sum(p[1]))(["name", arr(backend, [1.0])])


def test_grad_takes_a_function():
    with pytest.raises(TypeError, match="function"):
        al.grad(3)
