"""arraylayer.value_and_grad's eager torch path (``torch.autograd.grad`` on detached leaves,
arraylayer/models/autodiff.py) against the path it replaces in plain eager code, ``torch.func``'s
``grad_and_value``, and against analytic NumPy gradients: plain calls, aux, unused inputs,
``torch.no_grad`` around the call, a gradient of a gradient, ``vmap``, a gradient penalty
(tensors requiring grad closed over by the function), and ``torch.compile``.

The path exists on torch only (jax and tensorflow have one engine each: tests/test_autodiff.py)."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer.models import autodiff

torch = pytest.importorskip("torch")

X = np.array([0.3, -1.2, 2.0, 0.7], np.float32)
W = np.array([1.5, -0.5, 2.0, 0.25], np.float32)


def f(a):
    return al.sum(al.multiply(al.sin(a), a))


def df(x):  # d/dx sum(sin(x) x) = cos(x) x + sin(x)
    return np.cos(x) * x + np.sin(x)


def d2f(x):  # d/dx sum(df(x)) = 2 cos(x) - sin(x) x
    return 2 * np.cos(x) - np.sin(x) * x


def test_plain_eager_calls_take_the_autograd_path():
    leaves = [torch.tensor(X)]
    assert autodiff._plain_eager(torch, [(leaves, None)])
    assert not autodiff._plain_eager(torch, [([torch.tensor(X, requires_grad=True)], None)])
    seen = []
    torch.func.vmap(lambda t: seen.append(autodiff._plain_eager(torch, [([t], None)])) or t)(torch.ones(2, 3))
    assert seen == [False]


def test_values_match_grad_and_value_and_numpy():
    def loss(p, x):
        return al.sum(al.multiply(al.sin(al.multiply(p["w"], x)), p["b"][0]))

    params = {"w": torch.tensor(W), "b": [torch.tensor(X)]}
    value, gradient = al.value_and_grad(loss)(params, torch.tensor(X))
    (native_grad, native_value) = torch.func.grad_and_value(
        lambda p: torch.sum(torch.sin(p["w"] * torch.tensor(X)) * p["b"][0]))(params)
    assert value.requires_grad is False and value.item() == native_value.item()
    torch.testing.assert_close(gradient["w"], native_grad["w"], rtol=0, atol=0)
    torch.testing.assert_close(gradient["b"][0], native_grad["b"][0], rtol=0, atol=0)
    np.testing.assert_allclose(gradient["w"].numpy(), X * np.cos(W * X) * X, rtol=1e-6)


def test_aux_unused_inputs_and_constant_outputs():
    x = torch.tensor(X)
    (value, aux), (gx, gy) = al.value_and_grad(
        lambda a, b: (al.sum(al.multiply(a, 2.0)), {"name": "t", "y": al.multiply(a, 3.0)}),
        argnums=(0, 1), has_aux=True)(x, x)
    assert aux["name"] == "t" and not aux["y"].requires_grad and not value.requires_grad
    np.testing.assert_array_equal(aux["y"].numpy(), X * 3)
    np.testing.assert_array_equal(gx.numpy(), np.full(4, 2, np.float32))
    np.testing.assert_array_equal(gy.numpy(), np.zeros(4, np.float32))  # unused: zeros, as grad_and_value gives
    np.testing.assert_array_equal(al.grad(lambda a: al.sum(torch.tensor(X)))(x).numpy(), np.zeros(4, np.float32))


def test_under_no_grad_the_gradient_is_still_computed():
    with torch.no_grad():
        gradient = al.grad(f)(torch.tensor(X))
    np.testing.assert_allclose(gradient.numpy(), df(X), rtol=1e-6)


def test_gradient_of_a_gradient_and_vmap():
    x = torch.tensor(X)
    second = al.grad(lambda a: al.sum(al.grad(f)(a)))(x)
    np.testing.assert_allclose(second.numpy(), d2f(X), rtol=1e-5)
    batched = torch.func.vmap(al.grad(f))(torch.stack([x, x * 2]))
    np.testing.assert_allclose(batched.numpy(), np.stack([df(X), df(X * 2)]), rtol=1e-6)


def test_gradient_penalty_reaches_closed_over_weights():
    """d/dw sum(g(x, w)^2) with g = d/dx sum(sin(x w)) = w cos(x w): 2 g (cos(x w) - w x sin(x w))."""
    w = torch.tensor(W, requires_grad=True)
    gx = al.grad(lambda a: al.sum(al.sin(al.multiply(a, w))))(torch.tensor(X))
    (penalty,) = torch.autograd.grad(torch.sum(gx * gx), w)
    g = W * np.cos(X * W)
    np.testing.assert_allclose(penalty.numpy(), 2 * g * (np.cos(X * W) - W * X * np.sin(X * W)), rtol=1e-5)


def test_inputs_are_left_alone():
    x = torch.tensor(X)
    al.grad(f)(x)
    assert not x.requires_grad and x.grad is None and x.grad_fn is None


def test_compiled_gradient_equals_eager():
    x = torch.tensor(X)
    compiled = torch.compile(al.grad(f), backend="eager")(x)
    np.testing.assert_allclose(compiled.numpy(), al.grad(f)(x).numpy(), rtol=1e-6)
