"""Gradients are part of arraylayer's one semantics: ``arraylayer.grad`` of every differentiable
public function gives the same values on jax, torch and tensorflow, at ties and kinks included.

Oracles, never the code under test: a float64 central finite difference of NumPy's own function
at random points (away from kinks) and at ties where the function is smooth; at kinks, the
documented convention (docs/autodiff.rst, "Gradients at kinks and ties"), written out here as
numbers. The elementwise functions come from arraylayer's tables (UNARY/BINARY with their kinds),
so a new row is covered, or named in an exclusion with its reason, automatically; the other
functions are listed below, and a test checks that every public function is either covered or
excluded with a reason. NumPy has no autodiff (UnsupportedOperationError, tested in
test_autodiff.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest

import arraylayer as al
from arraylayer.api import CATEGORIES
from arraylayer.api.elementwise import BINARY, UNARY
from conftest import selected_backends

AUTODIFF_BACKENDS = ("jax", "torch", "tensorflow")
SEED = 11
H = 1e-6  # finite-difference step, in float64
INF, NAN = math.inf, math.nan


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "ad_backend" in metafunc.fixturenames:
        chosen = [b for b in selected_backends(metafunc.config) if b in AUTODIFF_BACKENDS]
        metafunc.parametrize("ad_backend", chosen)


@pytest.fixture(autouse=True)
def _float64_on_jax():
    """The gradients are compared in float64, so JAX runs with jax_enable_x64 (restored after)."""
    try:
        import jax
    except ImportError:
        yield
        return
    saved = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", saved)


# -- running a gradient on a backend ------------------------------------------------------------
def native(backend: str, values: Any) -> Any:
    return al.get_backend(backend).asarray(np.asarray(values, np.float64).tolist(), al.float64)


def host(backend: str, x: Any) -> np.ndarray:
    return np.asarray(al.get_backend(backend).to_numpy(x), np.float64)


def backend_gradient(backend: str, f: Callable[..., Any], args: list[np.ndarray], cotangent: np.ndarray
                     ) -> list[np.ndarray]:
    """The gradient of ``sum(f(*args) * cotangent)`` with respect to every argument, by al.grad."""
    weights = native(backend, cotangent)

    def loss(*xs: Any) -> Any:
        return al.sum(al.multiply(f(*xs), weights))

    grads = al.grad(loss, argnums=tuple(range(len(args))))(*(native(backend, a) for a in args))
    return [host(backend, g) for g in grads]


def finite_difference(f: Callable[..., np.ndarray], args: list[np.ndarray], cotangent: np.ndarray
                      ) -> list[np.ndarray]:
    """The central difference of ``sum(f(*args) * cotangent)``, element by element, in float64."""
    grads = []
    for i, a in enumerate(args):
        g = np.zeros_like(a)
        for index in np.ndindex(a.shape):
            values = []
            for step in (H, -H):
                moved = [x.copy() for x in args]
                moved[i][index] += step
                values.append(np.sum(np.asarray(f(*moved)) * cotangent))
            g[index] = (values[0] - values[1]) / (2 * H)
        grads.append(g)
    return grads


def assert_gradients(got: list[np.ndarray], expected: list[np.ndarray], what: str) -> None:
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        np.testing.assert_allclose(g, np.broadcast_to(e, g.shape), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{what}: gradient of argument {i}")


# -- elementwise functions: from the tables -----------------------------------------------------------
ELEMENTWISE = {name: spec for table in (UNARY, BINARY) for name, spec in table.items()
               if "f" in spec.kinds and spec.rule not in ("bool", "logical")}

ELEMENTWISE_EXCLUDED = {
    "nextafter": "a step to the neighbouring float, not a function of real numbers: no derivative is defined "
                 "(JAX has no differentiation rule for it)",
}

# Where the random points are drawn, per argument (default: (-2, 2)): inside the domain, and for the
# piecewise-constant and periodic functions away from nothing in particular (a jump inside the
# finite-difference step has probability ~1e-6).
DOMAIN: dict[str, tuple[tuple[float, float], ...]] = {
    "acos": ((-0.9, 0.9),), "asin": ((-0.9, 0.9),), "atanh": ((-0.9, 0.9),), "acosh": ((1.2, 3.0),),
    "log": ((0.2, 3.0),), "log1p": ((-0.5, 3.0),), "log2": ((0.2, 3.0),), "log10": ((0.2, 3.0),),
    "sqrt": ((0.2, 3.0),), "reciprocal": ((0.5, 2.0),), "tan": ((-1.2, 1.2),),
    "divide": ((-2.0, 2.0), (0.5, 2.0)), "floor_divide": ((-2.0, 2.0), (0.5, 2.0)),
    "remainder": ((-3.0, 3.0), (0.5, 2.0)), "pow": ((0.5, 2.0), (-2.0, 2.0)),
}


class Kink(NamedTuple):
    """A point (one value per argument) and the documented gradient there (None: the finite
    difference, for ties where the function is smooth)."""

    point: tuple[float, ...]
    gradient: tuple[float, ...] | None


_R = math.sqrt(0.5)
# The conventions of docs/autodiff.rst, as numbers.
KINKS: dict[str, list[Kink]] = {
    "abs": [Kink((0.0,), (0.0,)), Kink((-0.0,), (0.0,))],
    "sign": [Kink((0.0,), (0.0,)), Kink((1.0,), (0.0,))],
    "floor": [Kink((1.0,), (0.0,)), Kink((-2.0,), (0.0,))],
    "ceil": [Kink((1.0,), (0.0,)), Kink((0.0,), (0.0,))],
    "trunc": [Kink((1.0,), (0.0,)), Kink((0.0,), (0.0,))],
    "round": [Kink((0.5,), (0.0,)), Kink((1.0,), (0.0,))],
    "sqrt": [Kink((0.0,), (INF,))],
    "maximum": [Kink((1.0, 1.0), (0.5, 0.5)), Kink((0.0, 0.0), (0.5, 0.5)), Kink((-2.0, -2.0), (0.5, 0.5))],
    "minimum": [Kink((1.0, 1.0), (0.5, 0.5)), Kink((0.0, 0.0), (0.5, 0.5)), Kink((-2.0, -2.0), (0.5, 0.5))],
    "logaddexp": [Kink((1.0, 1.0), (0.5, 0.5)), Kink((0.0, 0.0), (0.5, 0.5)), Kink((-3.0, -3.0), (0.5, 0.5))],
    "hypot": [Kink((1.0, 1.0), (_R, _R)), Kink((-2.0, 2.0), (-_R, _R)), Kink((0.0, 3.0), (0.0, 1.0)),
              Kink((0.0, 0.0), (0.0, 0.0))],
    "atan2": [Kink((1.0, 1.0), None), Kink((0.0, 0.0), (0.0, 0.0))],
    "copysign": [Kink((0.0, 1.0), (0.0, 0.0)), Kink((0.0, -1.0), (0.0, 0.0)), Kink((2.0, -1.0), (-1.0, 0.0)),
                 Kink((2.0, 0.0), (1.0, 0.0))],
    "remainder": [Kink((3.0, 1.5), (1.0, -2.0)), Kink((-3.0, 1.5), (1.0, 2.0)), Kink((1.0, 1.0), (1.0, -1.0))],
    "floor_divide": [Kink((3.0, 1.5), (0.0, 0.0)), Kink((1.0, 1.0), (0.0, 0.0))],
    "pow": [Kink((0.0, 0.0), (0.0, 0.0)), Kink((3.0, 0.0), (0.0, math.log(3.0))), Kink((0.0, 2.0), (0.0, 0.0)),
            Kink((-2.0, 2.0), (-4.0, NAN)), Kink((1.0, 1.0), None)],
    "divide": [Kink((1.0, 1.0), None)],
    "subtract": [Kink((1.0, 1.0), None)],
    "multiply": [Kink((0.0, 0.0), None)],
}


def elementwise_points(name: str) -> list[np.ndarray]:
    rng = np.random.default_rng([SEED, *name.encode()])
    arity = 1 if name in UNARY else 2
    bounds = DOMAIN.get(name, ((-2.0, 2.0),) * arity)
    return [rng.uniform(low, high, 7) for low, high in bounds]


def test_elementwise_tables_are_covered():
    """Every float elementwise function is differentiated below or excluded with a reason."""
    assert set(ELEMENTWISE_EXCLUDED) <= set(ELEMENTWISE)
    assert set(KINKS) <= set(ELEMENTWISE)
    assert all(len(k.point) == (1 if name in UNARY else 2) for name, kinks in KINKS.items() for k in kinks)


@pytest.mark.parametrize("name", sorted(set(ELEMENTWISE) - set(ELEMENTWISE_EXCLUDED)))
def test_elementwise_gradient_at_random_points(ad_backend, name):
    args = elementwise_points(name)
    cotangent = np.random.default_rng(SEED).uniform(0.5, 1.5, args[0].shape)
    expected = finite_difference(getattr(np, name), args, cotangent)
    assert_gradients(backend_gradient(ad_backend, getattr(al, name), args, cotangent), expected, name)


@pytest.mark.parametrize("name", sorted(KINKS))
def test_elementwise_gradient_at_kinks_and_ties(ad_backend, name):
    for kink in KINKS[name]:
        args = [np.array([v]) for v in kink.point]
        cotangent = np.array([1.0])
        if kink.gradient is None:
            expected = finite_difference(getattr(np, name), args, cotangent)
        else:
            expected = [np.array([g]) for g in kink.gradient]
        got = backend_gradient(ad_backend, getattr(al, name), args, cotangent)
        assert_gradients(got, expected, f"{name}{kink.point}")
