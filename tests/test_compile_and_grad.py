"""arraylayer's functions inside the frameworks' compilers and under their autodiff: jax.jit,
tf.function and torch.compile(backend="eager", fullgraph=True) give the eager results (dtype and
values) for elementwise functions, matmul and reductions; jax.grad, torch autograd and
tf.GradientTape differentiate through them (checked against analytic gradients)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import arraylayer as al

COMPILED_BACKENDS = ("jax", "torch", "tensorflow")


def compiler(backend: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The framework's compiler: jax.jit, tf.function, torch.compile(fullgraph=True)."""
    if backend == "jax":
        import jax

        return jax.jit
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.function
    import torch

    torch._dynamo.reset()
    return lambda f: torch.compile(f, backend="eager", fullgraph=True)


def native(backend: str, values: Any, dtype: str = "float32") -> Any:
    with al.use_backend(backend):
        return al.asarray(values, dtype=dtype)


def host(backend: str, x: Any) -> np.ndarray:
    return np.asarray(al.get_backend(backend).to_numpy(x))


def dtype(backend: str, x: Any) -> str:
    return str(al.get_backend(backend).dtype_of(x))


X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]
W = [[1.0, -0.5], [0.25, 2.0], [-1.0, 0.5]]
I8 = [[1, 2, 3], [4, 5, 6]]

# name -> (function of (x, w, i), the arrays it needs)
CASES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "add": lambda x, w, i: al.add(x, x),
    "multiply_python_scalar": lambda x, w, i: al.multiply(x, 2.5),
    "maximum_with_zero": lambda x, w, i: al.maximum(x, 0.0),
    "exp_log": lambda x, w, i: al.log(al.add(al.exp(x), 1.0)),
    "mixed_dtypes": lambda x, w, i: al.add(x, i),  # float32 + int8: float32
    "integer_divide": lambda x, w, i: al.divide(i, al.add(i, 1)),  # int8 / int8: the default float
    "compare": lambda x, w, i: al.less(x, 0.5),
    "matmul": lambda x, w, i: al.matmul(x, w),
    "sum_axis": lambda x, w, i: al.sum(x, axis=1),
    "sum_int8": lambda x, w, i: al.sum(i),  # accumulates in the default int
    "mean": lambda x, w, i: al.mean(x, axis=0),
    "max": lambda x, w, i: al.max(x, axis=1, keepdims=True),
    "softmax_cross_entropy": lambda x, w, i: al.mean(al.subtract(
        al.log(al.sum(al.exp(al.matmul(x, w)), axis=1)), al.max(al.matmul(x, w), axis=1))),
}


@pytest.fixture(params=COMPILED_BACKENDS)
def compiled_backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each backend that has a compiler and autodiff (honouring --backend), JAX with its default
    32-bit mode (restored afterwards)."""
    name = request.param
    chosen = request.config.getoption("--backend")
    if chosen and name not in chosen:
        pytest.skip(f"--backend excludes {name}")
    pytest.importorskip(name)
    if name != "jax":
        yield name
        return
    import jax

    saved = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", False)
    try:
        yield name
    finally:
        jax.config.update("jax_enable_x64", saved)


@pytest.mark.parametrize("case", list(CASES))
def test_compiled_equals_eager(compiled_backend, case):
    backend = compiled_backend
    f = CASES[case]
    args = (native(backend, X), native(backend, W), native(backend, I8, "int8"))
    eager = f(*args)
    compiled = compiler(backend)(f)(*args)
    assert dtype(backend, compiled) == dtype(backend, eager), case
    np.testing.assert_allclose(host(backend, compiled), host(backend, eager), rtol=1e-5, atol=1e-6, err_msg=case)


def test_compiled_without_eager_planning_first(compiled_backend):
    """The first call of a function in the process may happen inside the compiled region."""
    backend = compiled_backend

    def f(x, w):
        return al.sum(al.multiply(al.tanh(al.matmul(x, w)), 3.0), axis=0)

    compiled = compiler(backend)(f)(native(backend, X), native(backend, W))
    np.testing.assert_allclose(host(backend, compiled), host(backend, f(native(backend, X), native(backend, W))),
                               rtol=1e-5, atol=1e-6)


# -- gradients through arraylayer functions --------------------------------------------------------
def loss(x: Any, w: Any) -> Any:
    """sum(relu(x @ w) ** 2) / 2 + sum(exp(w))."""
    h = al.maximum(al.matmul(x, w), 0.0)
    return al.add(al.multiply(al.sum(al.multiply(h, h)), 0.5), al.sum(al.exp(w)))


def analytic(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    h = np.maximum(x @ w, 0.0)
    return x.T @ h + np.exp(w)


def native_gradient(backend: str, x: Any, w: Any, compile_it: bool) -> Any:
    """d loss / d w with the framework's own autodiff (its compiler around it when asked)."""
    if backend == "jax":
        import jax

        g = jax.grad(loss, argnums=1)
        return (jax.jit(g) if compile_it else g)(x, w)
    if backend == "tensorflow":
        import tensorflow as tf

        def g(x, w):
            with tf.GradientTape() as tape:
                tape.watch(w)
                value = loss(x, w)
            return tape.gradient(value, w)

        return (tf.function(g) if compile_it else g)(x, w)
    f = compiler("torch")(loss) if compile_it else loss
    w = w.detach().clone().requires_grad_(True)
    f(x, w).backward()
    return w.grad


@pytest.mark.parametrize("compile_it", [False, True], ids=["eager", "compiled"])
def test_native_autodiff_through_arraylayer(compiled_backend, compile_it):
    backend = compiled_backend
    x, w = native(backend, X), native(backend, W)
    gradient = native_gradient(backend, x, w, compile_it)
    assert dtype(backend, gradient) == "float32"
    np.testing.assert_allclose(host(backend, gradient), analytic(np.array(X, np.float32), np.array(W, np.float32)),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("compile_it", [False, True], ids=["eager", "compiled"])
def test_arraylayer_grad_inside_the_compiler(compiled_backend, compile_it):
    backend = compiled_backend
    x, w = native(backend, X), native(backend, W)
    g = al.grad(loss, argnums=1)
    gradient = (compiler(backend)(g) if compile_it else g)(x, w)
    np.testing.assert_allclose(host(backend, gradient), analytic(np.array(X, np.float32), np.array(W, np.float32)),
                               rtol=1e-5, atol=1e-6)


def test_second_order_through_arraylayer(compiled_backend):
    """d2/dx2 of sum(x ** 3) is 6x: grad of grad, on each framework's autodiff."""
    backend = compiled_backend
    x = native(backend, [0.5, -2.0, 3.0])

    def first(x):
        return al.sum(al.pow(x, 3.0))

    def derivative_sum(x):
        return al.sum(al.grad(first)(x))

    second = al.grad(derivative_sum)(x)
    np.testing.assert_allclose(host(backend, second), [3.0, -12.0, 18.0], rtol=1e-6)
