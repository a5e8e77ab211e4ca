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

import importlib.util
import logging
import math
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
import scipy.linalg
import test_nn as nn_refs
import test_nn_attention as attention_refs
from conftest import jax_x64, selected_backends

import arraylayer as al
from arraylayer.api import CATEGORIES
from arraylayer.api.elementwise import BINARY, UNARY

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
    if importlib.util.find_spec("jax") is None:
        yield
        return
    with jax_x64(True):
        yield


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
    "floor_divide": [Kink((3.0, 1.5), (0.0, 0.0)), Kink((1.0, 1.0), (0.0, 0.0)), Kink((1.0, 0.0), (0.0, 0.0))],
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


# -- the other differentiable functions -------------------------------------------------------------
class Case(NamedTuple):
    """``function(*args, **constants)`` with arraylayer and ``oracle`` (the same with NumPy), the
    float64 arguments differentiated, and the non-float constants (indices, masks) they use."""

    function: Callable[..., Any]
    oracle: Callable[..., Any]
    args: tuple[np.ndarray, ...]
    constants: dict[str, np.ndarray] = {}


def _random(shape: tuple[int, ...], low: float = -2.0, high: float = 2.0, key: int = 0) -> np.ndarray:
    return np.random.default_rng([SEED, key, *shape]).uniform(low, high, shape)


A, A2, B = _random((3, 4)), _random((3, 4), key=1), _random((4, 2))
COLUMN, V3, V4 = _random((3, 1)), _random((3,)), _random((4,))
SQUARE = _random((3, 3)) + 3 * np.eye(3)  # well conditioned
RHS = _random((3, 2))
VECTORS3 = _random((2, 3))
LOW, HIGH = _random((3, 4), -1.5, -0.5), _random((3, 4), 0.5, 1.5)


def _np_sym(x: np.ndarray) -> np.ndarray:
    return (x + np.swapaxes(x, -1, -2)) / 2


def _al_sym(x: Any) -> Any:
    return al.divide(al.add(x, al.matrix_transpose(x)), 2.0)


_SPD = SQUARE @ SQUARE.T

CASES: dict[str, Case] = {
    # statistical
    "sum": Case(lambda x: al.sum(x, axis=1), lambda x: np.sum(x, axis=1), (A,)),
    "prod": Case(lambda x: al.prod(x, axis=0), lambda x: np.prod(x, axis=0), (A,)),
    "mean": Case(lambda x: al.mean(x), lambda x: np.mean(x), (A,)),
    "std": Case(lambda x: al.std(x, axis=1, correction=1), lambda x: np.std(x, axis=1, ddof=1), (A,)),
    "var": Case(lambda x: al.var(x, axis=0), lambda x: np.var(x, axis=0), (A,)),
    "max": Case(lambda x: al.max(x, axis=1), lambda x: np.max(x, axis=1), (A,)),
    "min": Case(lambda x: al.min(x, axis=1), lambda x: np.min(x, axis=1), (A,)),
    "cumulative_sum": Case(lambda x: al.cumulative_sum(x, axis=1), lambda x: np.cumulative_sum(x, axis=1), (A,)),
    "cumulative_prod": Case(lambda x: al.cumulative_prod(x, axis=1, include_initial=True),
                            lambda x: np.cumulative_prod(x, axis=1, include_initial=True), (A,)),
    # beyond the standard (arraylayer/api/extensions.py): on NaN-free data the nan-reductions are the plain ones
    "nansum": Case(lambda x: al.nansum(x, axis=1), lambda x: np.nansum(x, axis=1), (A,)),
    "nanprod": Case(lambda x: al.nanprod(x, axis=0), lambda x: np.nanprod(x, axis=0), (A,)),
    "nanmean": Case(lambda x: al.nanmean(x, axis=0), lambda x: np.nanmean(x, axis=0), (A,)),
    "nanvar": Case(lambda x: al.nanvar(x, axis=1), lambda x: np.nanvar(x, axis=1), (A,)),
    "nanstd": Case(lambda x: al.nanstd(x, axis=1, ddof=1), lambda x: np.nanstd(x, axis=1, ddof=1), (A,)),
    "nanmax": Case(lambda x: al.nanmax(x, axis=1), lambda x: np.nanmax(x, axis=1), (A,)),
    "nanmin": Case(lambda x: al.nanmin(x, axis=0), lambda x: np.nanmin(x, axis=0), (A,)),
    "nancumsum": Case(lambda x: al.nancumsum(x, axis=1), lambda x: np.nancumsum(x, axis=1), (A,)),
    "nancumprod": Case(lambda x: al.nancumprod(x, axis=1), lambda x: np.nancumprod(x, axis=1), (A,)),
    "pad": Case(lambda x: al.pad(x, 1, "reflect"), lambda x: np.pad(x, 1, "reflect"), (A,)),
    "quantile": Case(lambda x: al.quantile(x, 0.3, axis=1), lambda x: np.quantile(x, 0.3, axis=1), (A,)),
    "nanquantile": Case(lambda x: al.nanquantile(x, 0.7, axis=0), lambda x: np.nanquantile(x, 0.7, axis=0), (A,)),
    "sliding_window_view": Case(lambda x: al.sliding_window_view(x, 2, axis=1),
                                lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, axis=1), (A,)),
    # elementwise, outside the tables
    "clip": Case(lambda x, lo, hi: al.clip(x, lo, hi), np.clip, (A, LOW, HIGH)),
    # linear algebra
    "matmul": Case(al.matmul, np.matmul, (A, B)),
    "matrix_transpose": Case(al.matrix_transpose, np.matrix_transpose, (A,)),
    "tensordot": Case(lambda x, y: al.tensordot(x, y, axes=1), lambda x, y: np.tensordot(x, y, axes=1), (A, B)),
    "vecdot": Case(al.vecdot, np.vecdot, (A, A2)),
    "cholesky": Case(lambda x: al.linalg.cholesky(_al_sym(x)), lambda x: np.linalg.cholesky(_np_sym(x)), (_SPD,)),
    "cross": Case(al.linalg.cross, np.cross, (VECTORS3, VECTORS3[::-1].copy())),
    "det": Case(al.linalg.det, np.linalg.det, (SQUARE,)),
    "diagonal": Case(al.linalg.diagonal, lambda x: np.diagonal(x, axis1=-2, axis2=-1), (A,)),
    "eigh": Case(lambda x: al.linalg.eigh(_al_sym(x)).eigenvalues, lambda x: np.linalg.eigh(_np_sym(x)).eigenvalues,
                 (SQUARE,)),
    "eigvalsh": Case(lambda x: al.linalg.eigvalsh(_al_sym(x)), lambda x: np.linalg.eigvalsh(_np_sym(x)), (SQUARE,)),
    "inv": Case(al.linalg.inv, np.linalg.inv, (SQUARE,)),
    "matrix_norm": Case(al.linalg.matrix_norm, np.linalg.norm, (A,)),
    "matrix_power": Case(lambda x: al.linalg.matrix_power(x, 3), lambda x: np.linalg.matrix_power(x, 3), (SQUARE,)),
    "outer": Case(al.linalg.outer, np.outer, (V3, V4)),
    "pinv": Case(al.linalg.pinv, np.linalg.pinv, (A,)),
    "qr": Case(lambda x: al.abs(al.linalg.qr(x).R), lambda x: np.abs(np.linalg.qr(x).R), (SQUARE,)),
    "slogdet": Case(lambda x: al.linalg.slogdet(x).logabsdet, lambda x: np.linalg.slogdet(x).logabsdet, (SQUARE,)),
    "solve": Case(al.linalg.solve, np.linalg.solve, (SQUARE, RHS)),
    "svd": Case(lambda x: al.linalg.svd(x, full_matrices=False).S, lambda x: np.linalg.svd(x).S, (A,)),
    "svdvals": Case(al.linalg.svdvals, lambda x: np.linalg.svd(x, compute_uv=False), (A,)),
    "trace": Case(al.linalg.trace, np.trace, (SQUARE,)),
    "vector_norm": Case(lambda x: al.linalg.vector_norm(x, axis=1), lambda x: np.linalg.norm(x, axis=1), (A,)),
    # manipulation and indexing
    "astype": Case(lambda x: al.astype(x, "float32"), lambda x: x, (A,)),  # rounding passes the gradient on
    "asarray": Case(lambda x: al.asarray(x), np.asarray, (A,)),
    "broadcast_arrays": Case(lambda x, y: al.stack(al.broadcast_arrays(x, y)),
                             lambda x, y: np.stack(np.broadcast_arrays(x, y)), (COLUMN, V4)),
    "broadcast_to": Case(lambda x: al.broadcast_to(x, (3, 4)), lambda x: np.broadcast_to(x, (3, 4)), (COLUMN,)),
    "concat": Case(lambda x, y: al.concat([x, y], axis=1), lambda x, y: np.concat([x, y], axis=1), (A, A2)),
    "diff": Case(lambda x: al.diff(x, axis=1), lambda x: np.diff(x, axis=1), (A,)),
    "expand_dims": Case(lambda x: al.expand_dims(x, axis=1), lambda x: np.expand_dims(x, 1), (A,)),
    "flip": Case(lambda x: al.flip(x, axis=0), lambda x: np.flip(x, axis=0), (A,)),
    "meshgrid": Case(lambda x, y: al.stack(al.meshgrid(x, y)), lambda x, y: np.stack(np.meshgrid(x, y)), (V3, V4)),
    "moveaxis": Case(lambda x: al.moveaxis(x, 0, 1), lambda x: np.moveaxis(x, 0, 1), (A,)),
    "permute_dims": Case(lambda x: al.permute_dims(x, (1, 0)), lambda x: np.permute_dims(x, (1, 0)), (A,)),
    "transpose": Case(lambda x: al.transpose(x), lambda x: np.transpose(x), (A,)),
    "repeat": Case(lambda x: al.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), (A,)),
    "reshape": Case(lambda x: al.reshape(x, (4, 3)), lambda x: np.reshape(x, (4, 3)), (A,)),
    "roll": Case(lambda x: al.roll(x, 1, axis=1), lambda x: np.roll(x, 1, axis=1), (A,)),
    "sort": Case(lambda x: al.sort(x, axis=1), lambda x: np.sort(x, axis=1), (A,)),
    "squeeze": Case(lambda x: al.squeeze(x, axis=1), lambda x: np.squeeze(x, axis=1), (COLUMN,)),
    "stack": Case(lambda x, y: al.stack([x, y], axis=1), lambda x, y: np.stack([x, y], axis=1), (A, A2)),
    "take": Case(lambda x, i: al.take(x, i, axis=1), lambda x, i: np.take(x, i, axis=1), (A,),
                 {"i": np.array([2, 0, 2, 3])}),  # a repeated index: its gradients add up
    "take_along_axis": Case(lambda x, i: al.take_along_axis(x, i, axis=1),
                            lambda x, i: np.take_along_axis(x, i, axis=1), (A,),
                            {"i": np.array([[0, 0], [3, 1], [2, 2]])}),
    "tile": Case(lambda x: al.tile(x, (2, 1)), lambda x: np.tile(x, (2, 1)), (A,)),
    "tril": Case(al.tril, np.tril, (A,)),
    "triu": Case(al.triu, np.triu, (A,)),
    "unstack": Case(lambda x: al.unstack(x, axis=1)[2], lambda x: x[:, 2], (A,)),
    "where": Case(lambda x, y, c: al.where(c, x, y), lambda x, y, c: np.where(c, x, y), (A, A2), {"c": A > 0}),
    "zeros_like": Case(al.zeros_like, np.zeros_like, (A,)),
    "ones_like": Case(al.ones_like, np.ones_like, (A,)),
    "full_like": Case(lambda x: al.full_like(x, 2.0), lambda x: np.full_like(x, 2.0), (A,)),
}



# -- complex results: the loss differentiates their real and imaginary parts ----------------------
def _al_complex(x: Any, y: Any) -> Any:
    return al.add(al.astype(x, "complex128"), al.multiply(al.astype(y, "complex128"), 1j))


def _al_parts(z: Any) -> Any:
    """A complex result as a real array (its real and imaginary parts stacked); a real one as it is."""
    return al.stack([al.real(z), al.imag(z)]) if al.isdtype(z.dtype, "complex floating") else z


def _np_parts(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag]) if np.iscomplexobj(z) else z


def _fft_case(name: str, complex_input: bool, **options: Any) -> Case:
    """``arraylayer.fft.<name>`` against ``numpy.fft.<name>``, of a complex input built from two
    real arguments (real and imaginary parts) or of a real one."""
    ours, theirs = getattr(al.fft, name), getattr(np.fft, name)
    if complex_input:
        return Case(lambda x, y: _al_parts(ours(_al_complex(x, y), **options)),
                    lambda x, y: _np_parts(theirs(x + 1j * y, **options)), (A, A2))
    return Case(lambda x: _al_parts(ours(x, **options)), lambda x: _np_parts(theirs(x, **options)), (A,))


FFT_CASES = {
    "fft": _fft_case("fft", True, n=6),  # zero padding
    "ifft": _fft_case("ifft", True, axis=0, norm="ortho"),
    "fftn": _fft_case("fftn", True, s=(2, 5), axes=(0, 1)),  # truncation and padding
    "ifftn": _fft_case("ifftn", True, norm="forward"),
    "rfft": _fft_case("rfft", False, n=5),
    "irfft": _fft_case("irfft", True, n=6),  # even: the imaginary parts at 0 and n/2 are dropped
    "rfftn": _fft_case("rfftn", False, axes=(0, 1)),
    "irfftn": _fft_case("irfftn", True, s=(3, 5), axes=(0, 1)),  # odd: only the one at 0 is dropped
    "hfft": _fft_case("hfft", True, n=7, norm="ortho"),
    "ihfft": _fft_case("ihfft", False, axis=0),
    "fft2": _fft_case("fft2", True, s=(2, 5)),
    "ifft2": _fft_case("ifft2", True, norm="ortho"),
    "rfft2": _fft_case("rfft2", False),
    "irfft2": _fft_case("irfft2", True, s=(3, 5)),
    "fftshift": _fft_case("fftshift", False, axes=(1,)),
    "ifftshift": _fft_case("ifftshift", False),
}


# Eigenvalues come in no particular order and eigenvectors with any phase: the cases differentiate
# what does not depend on those (sorted real parts, |imaginary parts|, squared moduli of the vectors),
# of matrices whose eigenvalues stay apart under the finite difference's steps.
_BASIS = _random((3, 3), key=2) + 2 * np.eye(3)
REAL_SPECTRUM = _BASIS @ np.diag([1.0, 2.5, -1.5]) @ np.linalg.inv(_BASIS)
COMPLEX_PAIR = _BASIS @ np.array([[1.0, -2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 3.0]]) @ np.linalg.inv(_BASIS)


def _al_spectrum(w: Any) -> Any:
    return al.concat([al.sort(al.real(w)), al.sort(al.abs(al.imag(w)))])


def _np_spectrum(w: np.ndarray) -> np.ndarray:
    return np.concat([np.sort(w.real), np.sort(np.abs(w.imag))])


def _al_moduli(result: Any) -> Any:
    v = result.eigenvectors
    moduli = al.add(al.square(al.real(v)), al.square(al.imag(v)))
    return al.take(moduli, al.argsort(al.real(result.eigenvalues)), axis=1)


def _np_moduli(result: Any) -> np.ndarray:
    return np.take(np.abs(result.eigenvectors) ** 2, np.argsort(result.eigenvalues.real), axis=1)


EIG_CASES = {
    "eigvals": Case(lambda x, y: al.concat([_al_spectrum(al.linalg.eigvals(x)), _al_spectrum(al.linalg.eigvals(y))]),
                    lambda x, y: np.concat([_np_spectrum(np.linalg.eigvals(x)), _np_spectrum(np.linalg.eigvals(y))]),
                    (REAL_SPECTRUM, COMPLEX_PAIR)),
    "eig": Case(lambda x: _al_moduli(al.linalg.eig(x)), lambda x: _np_moduli(np.linalg.eig(x)), (REAL_SPECTRUM,)),
}
# keras.ops' small NumPy names (arraylayer/api/numpy_more.py)
CASES.update({
    "exp2": Case(al.exp2, np.exp2, (A,)),
    "deg2rad": Case(al.deg2rad, np.deg2rad, (A,)),
    "rad2deg": Case(al.rad2deg, np.rad2deg, (A,)),
    "logaddexp2": Case(al.logaddexp2, np.logaddexp2, (A, A * 0.5)),
    "fmax": Case(al.fmax, np.fmax, (A, A * 0.5 + 0.1)),
    "fmin": Case(al.fmin, np.fmin, (A, A * 0.5 + 0.1)),
    "divide_no_nan": Case(al.divide_no_nan, np.divide, (A, A * 0.5 + 3.0)),
    "flipud": Case(al.flipud, np.flipud, (A,)),
    "fliplr": Case(al.fliplr, np.fliplr, (A,)),
    "rot90": Case(al.rot90, np.rot90, (A,)),
    "ravel": Case(al.ravel, np.ravel, (A,)),
    "swapaxes": Case(lambda x: al.swapaxes(x, 0, 1), lambda x: np.swapaxes(x, 0, 1), (A,)),
    "hstack": Case(lambda x, y: al.hstack([x, y]), lambda x, y: np.hstack([x, y]), (A, A * 2.0)),
    "vstack": Case(lambda x, y: al.vstack([x, y]), lambda x, y: np.vstack([x, y]), (A, A * 2.0)),
    "dstack": Case(lambda x, y: al.dstack([x, y]), lambda x, y: np.dstack([x, y]), (A, A * 2.0)),
    "ptp": Case(lambda x: al.ptp(x, axis=0), lambda x: np.ptp(x, axis=0), (A,)),
    # NumPy's names (numpy_style, numpy_stats)
    "nan_to_num": Case(al.nan_to_num, np.nan_to_num, (A,)),
    "diag": Case(lambda x: al.diag(x, k=1), lambda x: np.diag(x, k=1), (A,)),
    "diagflat": Case(lambda x: al.diagflat(x, k=-1), lambda x: np.diagflat(x, k=-1), (A[:2],)),
    "diagonal": Case(lambda x: al.diagonal(x, offset=1), lambda x: np.diagonal(x, offset=1), (A,)),
    "trace": Case(lambda x: al.trace(x, offset=-1), lambda x: np.trace(x, offset=-1), (A,)),
    "outer": Case(al.outer, np.outer, (A[0], A2[1])),
    "inner": Case(al.inner, np.inner, (A, A2)),
    "kron": Case(al.kron, np.kron, (A[:2, :2], A2[:2])),
    "vdot": Case(al.vdot, np.vdot, (A, A2)),
    "median": Case(lambda x: al.median(x, axis=1), lambda x: np.median(x, axis=1), (A,)),
    "percentile": Case(lambda x: al.percentile(x, 30, axis=0), lambda x: np.percentile(x, 30, axis=0), (A,)),
    "nanmedian": Case(lambda x: al.nanmedian(x, axis=0), lambda x: np.nanmedian(x, axis=0), (A,)),
    "nanpercentile": Case(lambda x: al.nanpercentile(x, 70, axis=1), lambda x: np.nanpercentile(x, 70, axis=1), (A,)),
    "average": Case(lambda x, w: al.average(x, axis=1, weights=w), lambda x, w: np.average(x, axis=1, weights=w),
                    (A, A2 * 0.1 + 1.0)),
    "corrcoef": Case(al.corrcoef, np.corrcoef, (A,)),
    "correlate": Case(lambda x, y: al.correlate(x, y, mode="same"), lambda x, y: np.correlate(x, y, mode="same"),
                      (A[0], A2[1, :3])),
})
# keras.ops' linalg names beyond the standard (arraylayer/api/linalg_more.py) and the mathops compositions
_CHOLESKY = np.linalg.cholesky(_SPD)
CASES.update({
    "solve_triangular": Case(lambda a, b: al.linalg.solve_triangular(a, b, lower=True),
                             lambda a, b: scipy.linalg.solve_triangular(a, b, lower=True), (SQUARE, RHS)),
    "lstsq": Case(al.linalg.lstsq, lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], (A.T.copy(), A2.T.copy())),
    "lu_factor": Case(lambda x: al.linalg.lu_factor(x)[0], lambda x: scipy.linalg.lu_factor(x)[0], (SQUARE,)),
    "cholesky_inverse": Case(al.linalg.cholesky_inverse, lambda x: np.linalg.inv(np.tril(x) @ np.tril(x).T), (_CHOLESKY,)),
    "norm": Case(lambda x: al.linalg.norm(x, ord="nuc"), lambda x: np.linalg.norm(x, ord="nuc"), (A,)),
    "einsum": Case(lambda x, y: al.einsum("ij,jk->ik", x, y), lambda x, y: np.einsum("ij,jk->ik", x, y), (A, B)),
    "cdist": Case(al.cdist, lambda x, y: np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1)), (A, A2)),
    "extract_sequences": Case(lambda x: al.extract_sequences(x, 2, 1),
                              lambda x: np.lib.stride_tricks.sliding_window_view(x, 2, axis=-1), (A,)),
    "slice": Case(lambda x: al.slice(x, (1, -2), (2, 2)), lambda x: x[1:3, 2:4], (A,)),
})
# the rest of keras.ops' numpy group (arraylayer/api/numpy_extra.py); the splits joined again, each part scaled
_CUBE = (3, 2, 2)
CASES.update({
    "split": Case(lambda x: al.concat([p * (i + 1.0) for i, p in enumerate(al.split(x, 2, axis=1))]),
                  lambda x: np.concat([p * (i + 1.0) for i, p in enumerate(np.split(x, 2, axis=1))]), (A,)),
    "array_split": Case(lambda x: al.concat([p * (i + 1.0) for i, p in enumerate(al.array_split(x, 3, axis=1))], axis=1),
                        lambda x: np.concat([p * (i + 1.0) for i, p in enumerate(np.array_split(x, 3, axis=1))], axis=1),
                        (A,)),
    "hsplit": Case(lambda x: al.hsplit(x, [1])[1], lambda x: np.hsplit(x, [1])[1], (A,)),
    "vsplit": Case(lambda x: al.vsplit(x, 3)[2], lambda x: np.vsplit(x, 3)[2], (A,)),
    "dsplit": Case(lambda x: al.dsplit(al.reshape(x, _CUBE), 2)[0], lambda x: np.dsplit(x.reshape(_CUBE), 2)[0], (A,)),
    "append": Case(lambda x, y: al.append(x, y, axis=0), lambda x, y: np.append(x, y, axis=0), (A, A2)),
    "cbrt": Case(al.cbrt, np.cbrt, (A,)),
    "fabs": Case(al.fabs, np.fabs, (A,)),
    "fmod": Case(al.fmod, np.fmod, (A * 3.0, A2 * 0.5 + 1.3)),
    "ldexp": Case(lambda x: al.ldexp(x, 3), lambda x: np.ldexp(x, 3), (A,)),
    "sinc": Case(al.sinc, np.sinc, (A,)),
    "i0": Case(al.i0, np.i0, (A * 4.0,)),
    "i0 asymptotic": Case(al.i0, np.i0, (A + 24.0,)),
    "vander": Case(lambda x: al.vander(x, 4), lambda x: np.vander(x, 4), (V4,)),
    "trapezoid": Case(lambda y, x: al.trapezoid(y, x), lambda y, x: np.trapezoid(y, x), (A, np.sort(V4))),
    "select": Case(lambda x, y: al.select([x > 0.5, y > 0], [x, y * 2.0], default=-1.0),
                   lambda x, y: np.select([x > 0.5, y > 0], [x, y * 2.0], default=-1.0), (A, A2)),
})
CASES.update(FFT_CASES)
CASES.update(EIG_CASES)

# arraylayer.models.nn: oracles are tests/test_nn.py's float64 formulas and loops
IMAGES, KERNEL = _random((2, 5, 4, 2), key=7), _random((3, 2, 2, 3), key=8)
QKV = tuple(_random((1, 3, 2, 4), key=k) for k in (10, 11, 12))  # (batch, sequence, heads, head_dim)
_SQRT2 = math.sqrt(2.0)
_ERF = np.vectorize(math.erf)
CASES.update({
    "nn.relu": Case(al.nn.relu, lambda x: np.maximum(x, 0), (A,)),
    "nn.gelu": Case(al.nn.gelu, lambda x: 0.5 * x * (1 + _ERF(x / _SQRT2)), (A,)),
    "nn.sigmoid": Case(al.nn.sigmoid, nn_refs.ref_sigmoid, (A,)),
    "nn.silu": Case(al.nn.silu, lambda x: x * nn_refs.ref_sigmoid(x), (A,)),
    "nn.softplus": Case(al.nn.softplus, lambda x: np.log1p(np.exp(x)), (A,)),
    "nn.softmax": Case(lambda x: al.nn.softmax(x, axis=1), lambda x: nn_refs.ref_softmax(x, 1), (A,)),
    "nn.log_softmax": Case(lambda x: al.nn.log_softmax(x, axis=0), lambda x: np.log(nn_refs.ref_softmax(x, 0)), (A,)),
    "nn.logsumexp": Case(lambda x: al.nn.logsumexp(x, axis=1), lambda x: nn_refs.ref_logsumexp(x, 1), (A,)),
    "nn.cross_entropy": Case(lambda x, labels: al.nn.cross_entropy(x, labels),
                             lambda x, labels: nn_refs.ref_cross_entropy(x, labels), (A,),
                             {"labels": np.array([0, 3, 1])}),
    "nn.mse": Case(al.nn.mse, lambda p, t: np.mean((p - t) ** 2), (A, A2)),
    "nn.layer_norm": Case(al.nn.layer_norm, nn_refs.ref_layer_norm, (A, V4, _random((4,), key=9))),
    "nn.embedding": Case(lambda t, ids: al.nn.embedding(t, ids), lambda t, ids: t[ids], (A,),
                         {"ids": np.array([[2, 0], [2, 1]])}),  # a repeated row: its gradients add up
    "nn.conv2d": Case(lambda x, k: al.nn.conv2d(x, k, 1, "SAME"),
                      lambda x, k: nn_refs.ref_conv2d(x, k, 1, "SAME", 1), (IMAGES, KERNEL)),
    "nn.max_pool2d": Case(lambda x: al.nn.max_pool2d(x, 2), lambda x: nn_refs.ref_pool(x, 2, 2, "VALID", "max"),
                          (IMAGES,)),
    "nn.avg_pool2d": Case(lambda x: al.nn.avg_pool2d(x, 3, 2, "SAME"),
                          lambda x: nn_refs.ref_pool(x, 3, 2, "SAME", "avg"), (IMAGES,)),
    # causal, no mask: the fused kernels on torch and jax; with a mask: the composed form everywhere
    "nn.dot_product_attention": Case(lambda q, k, v: al.nn.dot_product_attention(q, k, v, causal=True),
                                     lambda q, k, v: attention_refs.ref_attention(q, k, v, causal=True), QKV),
    "nn.dot_product_attention masked": Case(
        lambda q, k, v, mask: al.nn.dot_product_attention(q, k, v, mask=mask, scale=0.7),
        lambda q, k, v, mask: attention_refs.ref_attention(q, k, v, mask, scale=0.7), QKV,
        {"mask": attention_refs.MASK[:1, :, :3, :3]}),
    "nn.cross_entropy ignore_index label_smoothing": Case(
        lambda x, labels: al.nn.cross_entropy(x, labels, ignore_index=-1, label_smoothing=0.2),
        lambda x, labels: np.sum(np.where(labels >= 0, attention_refs.ref_losses(x, labels, 0.2), 0.0)) / 2, (A,),
        {"labels": np.array([0, -1, 3])}),
})

NOT_DIFFERENTIABLE = {
    **dict.fromkeys(["nn." + name for name in (
        "relu6", "leaky_relu", "elu", "selu", "celu", "softsign", "log_sigmoid", "hard_sigmoid", "hard_silu",
        "hard_tanh", "tanh_shrink", "soft_shrink", "hard_shrink", "threshold", "sparse_plus", "sparse_sigmoid",
        "squareplus", "glu", "sparsemax", "binary_cross_entropy", "categorical_cross_entropy",
        "sparse_categorical_cross_entropy", "ctc_loss", "moments", "normalize", "conv1d", "conv3d", "conv_transpose",
        "depthwise_conv", "separable_conv", "max_pool1d", "avg_pool1d", "max_pool3d", "avg_pool3d",
        "adaptive_avg_pool", "adaptive_max_pool", "batch_norm", "group_norm", "instance_norm")],
        "differentiable: its gradient case is in tests/test_nn_agreement.py (against NumPy references by finite differences)"),
    "nn.multi_hot": "integer labels in, a constant out",
    "nn.ctc_decode": "integer labels out; its scores are sums of maxima",
    **dict.fromkeys(["nn." + name for name in (
        "depth_to_space", "space_to_depth", "unfold", "fold", "rms_normalization", "psnr", "polar")],
        "differentiable: its gradient case is in tests/test_nn_more.py (against torch/NumPy references by finite "
        "differences)"),
    **dict.fromkeys(["image." + name for name in (
        "gaussian_blur", "sobel_edges", "ssim", "extract_patches_3d", "scale_and_translate", "perspective_transform",
        "elastic_transform")],
        "differentiable: its gradient case is in tests/test_image_more.py (against SciPy/JAX/NumPy references by "
        "finite differences)"),
    **dict.fromkeys(["image." + name for name in (
        "resize", "rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb", "crop_images", "pad_images", "extract_patches",
        "map_coordinates", "affine_transform")],
        "differentiable: its gradient case is in tests/test_image_ops.py (against NumPy/SciPy/JAX references by finite "
        "differences)"),
    "heaviside": "a step function: its gradient is 0 wherever it is defined",
    **dict.fromkeys(["isposinf", "isneginf", "isreal"], "bool out"),
    **dict.fromkeys(["identity", "tri", "logspace", "bartlett", "blackman", "hamming", "hanning", "kaiser", "geomspace"],
                    "no array input"),
    "angle": "0 or pi on real input: a step function (its gradient is 0 wherever it is defined)",
    **dict.fromkeys(["gcd", "lcm"], "defined for integers only"),
    **dict.fromkeys(["unravel_index", "argpartition"], "integer-valued (indices)"),
    **dict.fromkeys(["argmax", "argmin", "nanargmax", "nanargmin", "argsort", "count_nonzero", "nonzero", "searchsorted", "matrix_rank"],
                    "integer-valued (indices or counts)"),
    **dict.fromkeys(["all", "any"], "bool-valued"),
    **dict.fromkeys(["can_cast", "finfo", "iinfo", "isdtype", "result_type"], "returns dtypes, limits or bools"),
    **dict.fromkeys(["arange", "empty", "eye", "full", "linspace", "ones", "zeros", "fftfreq", "rfftfreq"],
                    "takes no array (Python numbers and shapes only)"),
    "broadcast_shapes": "takes shapes and returns a shape",
    "isin": "bool-valued",
    **dict.fromkeys(["isclose", "allclose"], "bool-valued"),
    **dict.fromkeys(["bincount", "histogram", "digitize"],
                    "integer-valued counts and bin indices (the weighted sums, linear in the weights, are not covered here)"),
    "empty_like": "its values are undefined",
    "from_dlpack": "an interchange of memory, not a computation",
    **dict.fromkeys(["unique_all", "unique_counts", "unique_inverse", "unique_values"],
                    "a shape that depends on the values; the results are mostly indices and counts"),
    "__array_namespace_info__": "returns an inspection object",
    "nn.one_hot": "integer labels in, a constant out",
    "nn.dropout": "the mask / (1 - rate), a function of the key: tests/test_nn.py::test_dropout_gradient",
}


class Tie(NamedTuple):
    """Arguments at a tie or kink and the documented gradient (None: the finite difference,
    where the function is smooth there), for a cotangent."""

    args: tuple[np.ndarray, ...]
    gradient: tuple[np.ndarray, ...] | None
    cotangent: np.ndarray | None = None


_ROWS = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, -1.0]])
_WITH_ZEROS = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 0.5]])
TIES: dict[str, list[Tie]] = {
    # a reduction to one of several equal extremes: shared equally among them
    "max": [Tie((_ROWS,), (np.array([[0, 0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0]]),))],
    "min": [Tie((-_ROWS,), (np.array([[0, 0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0]]),)),
            Tie((np.array([[2.0, 2.0], [-1.0, 0.0]]),), (np.array([[0.5, 0.5], [1.0, 0.0]]),))],
    # clip is minimum(maximum(x, min), max): at a bound, half to x and half to the bound
    "clip": [Tie((np.array([-1.0, 0.0, 1.0]), np.full(3, -1.0), np.full(3, 1.0)),
                 (np.array([0.5, 1.0, 0.5]), np.array([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 0.5])))],
    # a stable sort: each position's gradient goes to the input that lands there, equal values in order
    "sort": [Tie((np.array([[2.0, 1.0, 2.0, 1.0]]),), (np.array([[3.0, 1.0, 4.0, 2.0]]),),
                 np.array([[1.0, 2.0, 3.0, 4.0]]))],
    # zeros in products: smooth, the finite difference
    "prod": [Tie((_WITH_ZEROS,), None)],
    "cumulative_prod": [Tie((_WITH_ZEROS,), None)],
    # norms at zero (a cone's tip, like hypot at the origin): 0
    "vector_norm": [Tie((np.array([[0.0, 0.0, 0.0, 0.0], [3.0, 0.0, 4.0, 0.0]]),),
                        (np.array([[0.0, 0.0, 0.0, 0.0], [0.6, 0.0, 0.8, 0.0]]),))],
    "std": [Tie((np.array([[2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0]]),),
                (np.array([[0.0, 0.0, 0.0, 0.0], [-0.5, -0.5, 0.5, 0.5]]) / math.sqrt(3.0),))],
    "matrix_norm": [Tie((np.zeros((3, 4)),), (np.zeros((3, 4)),))],
}


def _constants(backend: str, constants: dict[str, np.ndarray]) -> dict[str, Any]:
    with al.use_backend(backend):
        return {key: al.asarray(value.tolist(), dtype=str(value.dtype)) for key, value in constants.items()}


def _public_functions() -> set[str]:
    modules = (*CATEGORIES, al.linalg, al.fft)
    return {name for module in modules for name in module.__all__
            if callable(getattr(module, name)) and not isinstance(getattr(module, name), type)} | {
        f"nn.{name}" for name in al.nn.__all__} | {f"image.{name}" for name in al.image.__all__}


def test_every_public_function_is_covered_or_excluded_with_a_reason():
    elementwise = set(UNARY) | set(BINARY)
    uncovered = _public_functions() - elementwise - set(CASES) - set(NOT_DIFFERENTIABLE)
    assert not uncovered, f"add a gradient case (or an exclusion with its reason) for {sorted(uncovered)}"
    assert not set(CASES) & set(NOT_DIFFERENTIABLE)
    assert set(TIES) <= set(CASES)


def _case_gradient(backend: str, case: Case, args: tuple[np.ndarray, ...], cotangent: np.ndarray
                   ) -> list[np.ndarray]:
    constants = _constants(backend, case.constants)
    return backend_gradient(backend, lambda *xs: case.function(*xs, **constants), list(args), cotangent)


def _cotangent(case: Case, args: tuple[np.ndarray, ...]) -> np.ndarray:
    shape = np.shape(case.oracle(*args, **case.constants))
    return np.random.default_rng(SEED).uniform(0.5, 1.5, shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_at_random_points(ad_backend, name):
    case = CASES[name]
    cotangent = _cotangent(case, case.args)
    expected = finite_difference(lambda *xs: case.oracle(*xs, **case.constants), list(case.args), cotangent)
    assert_gradients(_case_gradient(ad_backend, case, case.args, cotangent), expected, name)


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "ifftn"])
def test_unitary_fft_keeps_the_energy_and_its_gradient(ad_backend, name):
    """An analytic oracle: with norm="ortho" the transforms are unitary (Parseval), so the energy
    of the spectrum, sum |F(x)|**2, is sum x**2 and its gradient 2 x."""
    transform = getattr(al.fft, name)

    def energy(x: Any) -> Any:
        spectrum = transform(al.astype(x, "complex128"), norm="ortho")
        return al.sum(al.add(al.square(al.real(spectrum)), al.square(al.imag(spectrum))))

    x = _random((3, 4), key=3)
    got = al.grad(energy)(native(ad_backend, x))
    assert_gradients([host(ad_backend, got)], [2 * x], f"energy of {name}")


def test_gradients_through_complex_values_are_quiet(ad_backend, caplog):
    """Nothing is logged or warned while gradients flow back through complex values to real
    inputs (TensorFlow's own gradients of casts and eig log, once per call, that the imaginary
    part is discarded: keeping the real part is the gradient of a real input)."""
    def loss(x: Any, m: Any) -> Any:
        spectrum = al.fft.fft(al.astype(x, "complex128"))
        largest = al.max(al.real(al.linalg.eigvals(m)))
        vectors = al.linalg.eig(m).eigenvectors
        return al.add(al.add(al.sum(al.real(spectrum)), largest), al.sum(al.real(al.multiply(vectors, al.conj(vectors)))))

    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        for _ in range(2):
            al.grad(loss, argnums=(0, 1))(native(ad_backend, V4), native(ad_backend, REAL_SPECTRUM))
    assert [str(w.message) for w in warned] == []
    assert caplog.messages == []


@pytest.mark.parametrize("compile_it", [False, True], ids=["eager", "compiled"])
def test_complex_values_on_the_way_inside_the_compiler(ad_backend, compile_it):
    """The fft and eig gradients under jax.jit, tf.function and torch.compile(fullgraph=True),
    against analytic values: the energy of a unitary fft has gradient 2x; the largest eigenvalue
    of an upper triangular matrix, 3 = m[1, 1] here, has gradient u v^T / (u . v) with the left
    eigenvector u = (0, 1) and the right one v = (1, 1)."""
    def loss(x: Any, m: Any) -> Any:
        spectrum = al.fft.fft(al.astype(x, "complex128"), norm="ortho")
        energy = al.sum(al.add(al.square(al.real(spectrum)), al.square(al.imag(spectrum))))
        return al.add(energy, al.max(al.real(al.linalg.eigvals(m))))

    x, m = np.array([1.0, -2.0, 0.5]), np.array([[2.0, 1.0], [0.0, 3.0]])
    g = al.grad(loss, argnums=(0, 1))
    gx, gm = (compiled(ad_backend, g) if compile_it else g)(native(ad_backend, x), native(ad_backend, m))
    assert_gradients([host(ad_backend, gx), host(ad_backend, gm)], [2 * x, np.array([[0.0, 0.0], [1.0, 1.0]])],
                     "fft energy and largest eigenvalue")


@pytest.mark.parametrize("name", sorted(TIES))
def test_gradient_at_ties_and_kinks(ad_backend, name):
    case = CASES[name]
    for tie in TIES[name]:
        cotangent = np.ones(np.shape(case.oracle(*tie.args))) if tie.cotangent is None else tie.cotangent
        if tie.gradient is None:
            expected = finite_difference(case.oracle, list(tie.args), cotangent)
        else:
            expected = list(tie.gradient)
        assert_gradients(_case_gradient(ad_backend, case, tie.args, cotangent), expected, f"{name} at {tie.args}")


# -- the rules inside the frameworks' compilers ----------------------------------------------------------
def compiled(backend: str, f: Callable[..., Any]) -> Callable[..., Any]:
    """jax.jit, tf.function, torch.compile(fullgraph=True): a graph break would raise."""
    if backend == "jax":
        import jax

        return jax.jit(f)
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.function(f)
    import torch

    torch._dynamo.reset()
    return torch.compile(f, backend="eager", fullgraph=True)


def kinky_loss(x: Any, y: Any) -> Any:
    """Every input at a tie or kink of several functions with their own rules."""
    terms = [al.maximum(x, y), al.minimum(x, y), al.hypot(x, y), al.logaddexp(x, y), al.clip(x, -1.0, 1.0),
             al.floor_divide(x, 1.5), al.remainder(x, 1.5), al.abs(x), al.atan2(al.subtract(x, y), y)]
    return al.add(al.sum(al.stack(terms)), al.std(al.subtract(x, y)))


@pytest.mark.parametrize("compile_it", [False, True], ids=["eager", "compiled"])
def test_the_rules_hold_inside_the_compiler(ad_backend, compile_it):
    x = np.array([1.0, 0.0, -1.0, 3.0])
    g = al.grad(kinky_loss, argnums=(0, 1))
    gx, gy = (compiled(ad_backend, g) if compile_it else g)(native(ad_backend, x), native(ad_backend, x))
    hypot = np.sign(x) * _R  # x / hypot(x, x); 0 at the origin
    atan2 = np.where(x == 0, 0.0, 1 / np.where(x == 0, 1, x))  # d atan2(x - y, y) at x == y: 1/y for x, -1/y for y
    expected_x = 0.5 + 0.5 + hypot + 0.5 + np.array([0.5, 1.0, 0.5, 0.0]) + 0.0 + 1.0 + np.sign(x) + atan2
    expected_y = 0.5 + 0.5 + hypot + 0.5 - atan2
    assert_gradients([host(ad_backend, gx), host(ad_backend, gy)], [expected_x, expected_y], "kinky_loss")
