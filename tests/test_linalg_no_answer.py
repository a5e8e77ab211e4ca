"""Linear algebra on inputs without an answer: one outcome per situation on every backend.

Eagerly, a singular matrix to invert or solve with, a matrix that is not positive definite to
factorise, and NaN or inf to decompose raise ``arraylayer.LinAlgError`` (NumPy's own outcome, which
is the oracle: it raises ``numpy.linalg.LinAlgError`` for each of these); dask raises when the
result is computed. Under jax.jit, torch.compile and tf.function, where an exception cannot depend
on values, each such matrix of a stack gives NaN and the others NumPy's answer. Boolean input is
refused on every backend. ``det``/``slogdet`` of a singular matrix and ``pinv`` have answers.
"""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from tests.conftest import make_array

SINGULAR = [[1.0, 2.0], [2.0, 4.0]]
INDEFINITE = [[1.0, 2.0], [2.0, 1.0]]
WITH_NAN = [[np.nan, 1.0], [1.0, 1.0]]
WITH_INF = [[1.0, np.inf], [0.0, 1.0]]
GOOD = [[2.0, 1.0], [1.0, 3.0]]

#: name -> (arraylayer call, NumPy's call: the oracle)
CALLS = {
    "inv": (al.linalg.inv, np.linalg.inv),
    "solve": (lambda x: al.linalg.solve(x, x), lambda x: np.linalg.solve(x, x)),
    "cholesky": (al.linalg.cholesky, np.linalg.cholesky),
    "matrix_power": (lambda x: al.linalg.matrix_power(x, -2), lambda x: np.linalg.matrix_power(x, -2)),
    "eigh": (lambda x: al.linalg.eigh(x)[0], lambda x: np.linalg.eigh(x)[0]),
    "eigvalsh": (al.linalg.eigvalsh, np.linalg.eigvalsh),
    "eigvals": (al.linalg.eigvals, np.linalg.eigvals),
    "svd": (lambda x: al.linalg.svd(x)[1], lambda x: np.linalg.svd(x)[1]),
    "svdvals": (al.linalg.svdvals, np.linalg.svdvals),
    "qr": (lambda x: al.linalg.qr(x)[1], lambda x: np.linalg.qr(x)[1]),
    "pinv": (al.linalg.pinv, np.linalg.pinv),
}

#: (function, input, the problem the message names)
NO_ANSWER = [
    ("inv", SINGULAR, "singular"), ("solve", SINGULAR, "singular"), ("matrix_power", SINGULAR, "singular"),
    ("cholesky", SINGULAR, "not positive definite"), ("cholesky", INDEFINITE, "not positive definite"),
    *[(name, matrix, "NaN or inf") for name in CALLS for matrix in (WITH_NAN, WITH_INF)],
]


def _computed(result):
    return result.compute() if hasattr(result, "dask") else result


@pytest.mark.parametrize(("name", "matrix", "problem"), NO_ANSWER)
def test_eager_no_answer_raises_linalg_error(backend, name, matrix, problem):
    call, oracle = CALLS[name]
    if problem != "NaN or inf":  # NumPy raises for these; for NaN it raises in svd, eig and inv only
        with pytest.raises(np.linalg.LinAlgError):
            oracle(np.asarray(matrix))
    with pytest.raises(al.LinAlgError, match=rf"linalg\.{name}: the input .*{problem}") as caught:
        _computed(call(make_array(backend, "float64", matrix)))
    assert isinstance(caught.value, ValueError)


def test_dask_raises_at_compute():
    pytest.importorskip("dask")
    lazy = al.linalg.inv(make_array("dask", "float64", SINGULAR))  # building the graph checks nothing
    with pytest.raises(al.LinAlgError, match="singular"):
        lazy.compute()


@pytest.mark.parametrize("name", ["det", "slogdet", "pinv"])
def test_singular_matrices_that_have_an_answer(backend, name):
    x = make_array(backend, "float64", SINGULAR)
    if name == "det":
        assert float(np.asarray(_computed(al.linalg.det(x)))) == 0.0
    elif name == "slogdet":
        sign, logabsdet = (np.asarray(_computed(r)) for r in al.linalg.slogdet(x))
        assert sign == 0 and logabsdet == -np.inf
    else:
        np.testing.assert_allclose(np.asarray(_computed(al.linalg.pinv(x))), np.linalg.pinv(np.asarray(SINGULAR)))


BOOL_CALLS = ["inv", "cholesky", "eigh", "eigvalsh", "eigvals", "svd", "svdvals", "qr", "pinv", "solve"]


@pytest.mark.parametrize("name", [*BOOL_CALLS, "det", "slogdet", "matrix_rank", "matrix_norm", "vector_norm",
                                  "matrix_power"])
def test_bool_input_is_refused(backend, name):
    x = make_array(backend, "bool", [[True, False], [False, True]])
    call = CALLS[name][0] if name in CALLS else getattr(al.linalg, name)
    if name == "matrix_power":
        call = lambda a: al.linalg.matrix_power(a, 2)  # noqa: E731
    with pytest.raises(al.UnsupportedDtypeError, match=rf"linalg\.{name} is not defined for bool"):
        call(x)


def _compilers():
    """(name, native array maker, compile) for each installed compiler."""
    found = []
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        found.append(("jax.jit", lambda a: jnp.asarray(a), jax.jit))
    except ImportError:
        pass
    try:
        import torch

        found.append(("torch.compile", torch.asarray, lambda f: torch.compile(f, backend="eager", fullgraph=True)))
    except ImportError:
        pass
    try:
        import tensorflow as tf

        found.append(("tf.function", tf.constant, tf.function))
    except ImportError:
        pass
    return found


COMPILERS = _compilers()


@pytest.mark.parametrize(("compiler", "make", "compile_"), COMPILERS, ids=[c[0] for c in COMPILERS])
@pytest.mark.parametrize(("name", "matrix", "problem"), NO_ANSWER)
def test_compiled_no_answer_gives_nan_for_that_matrix_only(compiler, make, compile_, name, matrix, problem):
    stack = np.array([matrix, GOOD])
    got = np.asarray(compile_(CALLS[name][0])(make(stack)))
    assert np.isnan(got[0]).all(), f"{compiler}: {name} of a matrix without an answer should be NaN: {got[0]}"
    np.testing.assert_allclose(got[1], CALLS[name][1](np.array(GOOD)), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("compiler", "make", "compile_"), COMPILERS, ids=[c[0] for c in COMPILERS])
def test_compiled_matrix_rank_of_nan_is_minus_one(compiler, make, compile_):
    got = np.asarray(compile_(al.linalg.matrix_rank)(make(np.array([WITH_NAN, SINGULAR]))))
    assert got.tolist() == [-1, 1]
