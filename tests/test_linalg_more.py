"""keras.ops' linalg names beyond the standard (arraylayer/api/linalg_more.py), ``einsum`` and the math
names ``cdist``, ``extract_sequences``, ``view_as_complex``/``view_as_real`` (arraylayer/models/mathops/)
against SciPy, NumPy, torch and keras' NumPy backend on every backend: values, result dtype, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from conftest import make_array
from oracles import dtype_name, jax_promote, to_numpy

import arraylayer as al

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 4))
B = RNG.standard_normal((4, 3))
TALL = RNG.standard_normal((5, 3))
WIDE = RNG.standard_normal((3, 5))


def _on(backend, dtype, host):
    return make_array(backend, dtype, host)


def _close(backend, got, want, dtype, rtol=None):
    rtol = rtol or (2e-4 if dtype in ("float32", "complex64") else 1e-10)
    assert dtype_name(backend, got) == dtype
    np.testing.assert_allclose(to_numpy(backend, got), want, rtol=rtol, atol=rtol)


# -- solve_triangular, lstsq, cholesky_inverse --------------------------------------------------

@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("rhs", [B, B[:, 0]], ids=["matrix", "vector"])
def test_solve_triangular_is_scipys(backend, lower, rhs):
    a = A + 4 * np.eye(4)  # well-conditioned; the other triangle is noise scipy ignores
    got = al.linalg.solve_triangular(_on(backend, "float32", a), _on(backend, "float32", rhs), lower=lower)
    want = scipy.linalg.solve_triangular(a.astype(np.float32), rhs.astype(np.float32), lower=lower)
    _close(backend, got, want, "float32")


def test_solve_triangular_of_integers_is_the_default_float(backend):
    a = np.array([[2, 0], [1, 4]])
    got = al.linalg.solve_triangular(_on(backend, "int32", a), _on(backend, "int32", [2, 9]), lower=True)
    _close(backend, got, scipy.linalg.solve_triangular(a, [2, 9], lower=True), str(al.default_float_dtype()))


@pytest.mark.parametrize(("a", "rcond"), [(TALL, None), (WIDE, None), (TALL, 0.5)], ids=["tall", "wide", "rcond"])
def test_lstsq_is_numpys_solution(backend, a, rcond):
    b = RNG.standard_normal((a.shape[0], 2))
    got = al.linalg.lstsq(_on(backend, "float64", a), _on(backend, "float64", b), rcond=rcond)
    want = np.linalg.lstsq(a, b, rcond=rcond)[0]
    _close(backend, got, want, "float64", rtol=1e-8)
    vector = al.linalg.lstsq(_on(backend, "float64", a), _on(backend, "float64", b[:, 0]), rcond=rcond)
    _close(backend, vector, np.linalg.lstsq(a, b[:, 0], rcond=rcond)[0], "float64", rtol=1e-8)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_is_torchs(backend, upper):
    spd = A @ A.T + 4 * np.eye(4)
    factor = np.linalg.cholesky(spd)
    factor = factor.T if upper else factor
    noisy = factor + (np.tril(np.ones((4, 4)), -1) if upper else np.triu(np.ones((4, 4)), 1))  # not read
    got = al.linalg.cholesky_inverse(_on(backend, "float64", noisy), upper=upper)
    want = torch.cholesky_inverse(torch.tensor(factor), upper=upper).numpy()
    _close(backend, got, want, "float64", rtol=1e-9)
    np.testing.assert_allclose(want, np.linalg.inv(spd), rtol=1e-9)


# -- lu_factor ---------------------------------------------------------------------------------

SINGULAR = A.copy()
SINGULAR[:, 0] = 0.0  # a zero pivot: LAPACK leaves the column unscaled
TIES = A.copy()
TIES[:, 0] = [1.0, -1.0, 1.0, -1.0]  # equal magnitudes: the first row wins
LU_CASES = {  # (4x4 float64 mostly: one shape and dtype, so jax compiles each step once)
    "square": (A, "float64"),
    "tall": (TALL, "float64"),
    "wide": (WIDE, "float64"),
    "singular": (SINGULAR, "float64"),
    "ties": (TIES, "float64"),
    "complex": (A + 1j * RNG.standard_normal((4, 4)), "complex128"),
}


@pytest.mark.parametrize("case", LU_CASES)
@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")
def test_lu_factor_is_scipys(backend, case):
    host, dtype = LU_CASES[case]
    lu, piv = al.linalg.lu_factor(_on(backend, dtype, host))
    want_lu, want_piv = scipy.linalg.lu_factor(host.astype(dtype))
    _close(backend, lu, want_lu, dtype, rtol=1e-5 if dtype == "float32" else 1e-10)
    assert dtype_name(backend, piv) == "int32"
    np.testing.assert_array_equal(to_numpy(backend, piv), want_piv)


def test_lu_factor_of_a_stack_is_per_matrix(backend):
    stack = RNG.standard_normal((2, 3, 3))
    lu, piv = al.linalg.lu_factor(_on(backend, "float64", stack))
    for i in range(2):
        want_lu, want_piv = scipy.linalg.lu_factor(stack[i])
        np.testing.assert_allclose(to_numpy(backend, lu)[i], want_lu, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(to_numpy(backend, piv)[i], want_piv)


# -- norm --------------------------------------------------------------------------------------

X3 = RNG.standard_normal((2, 3, 4))
NORM_CASES = [
    (A, {}), (A, {"ord": "fro"}), (A, {"ord": "nuc"}), (A, {"ord": np.inf}), (A, {"ord": -np.inf}),
    (A, {"ord": 1}), (A, {"ord": -1}), (A, {"ord": 2}), (A, {"ord": -2}), (A, {"keepdims": True}),
    (A[0], {}), (A[0], {"ord": 0}), (A[0], {"ord": 3}), (A[0], {"ord": np.inf}), (A[0], {"ord": -np.inf}),
    (A[0], {"ord": 1, "keepdims": True}), (X3, {}), (X3, {"axis": 1}), (X3, {"axis": -1, "ord": 0.5}),
    (X3, {"axis": (0, 2)}), (X3, {"axis": (2, 0), "ord": 1, "keepdims": True}), (X3, {"axis": (1, 2), "ord": "nuc"}),
    (X3, {"axis": (0, 1), "ord": -np.inf}),
]


@pytest.mark.parametrize(("host", "keywords"), NORM_CASES, ids=[f"{c[0].ndim}d-{i}" for i, c in enumerate(NORM_CASES)])
def test_norm_is_numpys(backend, host, keywords):
    got = al.linalg.norm(_on(backend, "float64", host), **keywords)
    _close(backend, got, np.linalg.norm(host, **keywords), "float64", rtol=1e-9)


def test_norm_of_complex_is_real_and_of_integers_the_default_float(backend):
    z = A + 1j * B[:, :1]
    _close(backend, al.linalg.norm(_on(backend, "complex64", z), ord="nuc"), np.linalg.norm(z, ord="nuc"), "float32")
    got = al.linalg.norm(_on(backend, "int32", [[3, 4], [0, 0]]))
    _close(backend, got, 5.0, str(al.default_float_dtype()))


@pytest.mark.parametrize(("call", "error"), [
    (lambda x: al.linalg.norm(x, ord="fro", axis=0), al.InvalidArgumentError),
    (lambda x: al.linalg.norm(x, ord=3), al.InvalidArgumentError),
    (lambda x: al.linalg.norm(x, axis=(0, 0)), al.InvalidArgumentError),
    (lambda x: al.linalg.norm(x, axis=3), al.AxisError),
    (lambda x: al.linalg.norm(x[None], ord=1), al.InvalidArgumentError),
    (lambda x: al.linalg.solve_triangular(x[:, :3], x), al.InvalidArgumentError),
    (lambda x: al.linalg.lstsq(x, x[:2]), al.InvalidArgumentError),
    (lambda x: al.linalg.lstsq(x, x, rcond=-1.0), al.InvalidArgumentTypeError),
    (lambda x: al.linalg.lu_factor(x[0]), al.InvalidArgumentError),
    (lambda x: al.linalg.cholesky_inverse(x[:, :3]), al.InvalidArgumentError),
    (lambda x: al.linalg.lu_factor(al.greater(x, 0)), al.UnsupportedDtypeError),
])
def test_bad_linalg_arguments_raise_arraylayers_errors(backend, call, error):
    with pytest.raises(error):
        call(_on(backend, "float32", A))


# -- einsum ------------------------------------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 2)]), ("ij,kj", [(3, 4), (2, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]), ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]), ("bij,bjk,bkl->bil", [(2, 2, 3), (2, 3, 2), (2, 2, 2)]), ("ij", [(2, 3)]),
]


@pytest.mark.parametrize(("subscripts", "shapes"), EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_is_numpys(backend, subscripts, shapes):
    hosts = [RNG.standard_normal(shape) for shape in shapes]
    got = al.einsum(subscripts, *[_on(backend, "float32", h) for h in hosts])
    _close(backend, got, np.einsum(subscripts, *[h.astype(np.float32) for h in hosts]), "float32")


@pytest.mark.parametrize(("first", "second"), [("int8", "int8"), ("int8", "uint8"), ("int32", "int16"), ("bool", "bool"),
                                               ("float16", "float32"), ("int32", "float32"), ("uint8", "uint8"),
                                               ("float16", "float16"), ("bool", "int32")])
def test_einsum_dtype_is_the_promoted_one_with_numpys_values(backend, first, second):
    x = RNG.integers(0, 2, (3, 4)) if first == "bool" else RNG.integers(-60 if first[0] != "u" else 0, 60, (3, 4))
    y = RNG.integers(0, 2, (4, 2)) if second == "bool" else RNG.integers(-60 if second[0] != "u" else 0, 60, (4, 2))
    dtype = jax_promote(first, second)
    got = al.einsum("ij,jk->ik", _on(backend, first, x.astype(first)), _on(backend, second, y.astype(second)))
    want = np.einsum("ij,jk->ik", x.astype(first).astype(dtype), y.astype(second).astype(dtype))  # wraps like numpy
    assert dtype_name(backend, got) == dtype
    np.testing.assert_allclose(to_numpy(backend, got).astype(np.float64), want.astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize(("subscripts", "shapes"), [
    ("ij,jk->ik", [(3, 4), (3, 2)]), ("ij,jk", [(3, 4)]), ("ijk", [(3, 4)]), ("ij->ii", [(3, 3)]),
    ("ij->k", [(3, 3)]), ("i.j", [(3, 3)]), ("i1", [(3, 3)]),
])
def test_bad_einsum_subscripts_raise_invalid_argument(backend, subscripts, shapes):
    with pytest.raises(al.InvalidArgumentError):
        al.einsum(subscripts, *[_on(backend, "float32", np.ones(s)) for s in shapes])


def test_einsum_subscripts_must_be_a_string(backend):
    with pytest.raises(al.InvalidArgumentTypeError):
        al.einsum(_on(backend, "float32", np.ones((2, 2))), _on(backend, "float32", np.ones((2, 2))))


# -- cdist, extract_sequences, view_as_complex / view_as_real ----------------------------------

@pytest.mark.parametrize("p", [2.0, 1.0, 0.0, 3.0, float("inf")])
def test_cdist_is_torchs(backend, p):
    x1 = RNG.standard_normal((2, 5, 3)).astype(np.float32)
    x2 = RNG.standard_normal((1, 4, 3)).astype(np.float32)
    x2[0, 0] = x1[0, 0]  # a zero distance, and coordinates equal for p=0
    got = al.cdist(_on(backend, "float32", x1), _on(backend, "float32", x2), p=p)
    want = torch.cdist(torch.tensor(x1), torch.tensor(np.broadcast_to(x2, (2, 4, 3)).copy()), p=p).numpy()
    _close(backend, got, want, "float32", rtol=1e-5)


def test_cdist_of_integers_is_the_default_float_and_bad_input_is_refused(backend):
    got = al.cdist(_on(backend, "int32", [[0, 0], [3, 4]]), _on(backend, "int32", [[0, 0]]))
    _close(backend, got, [[0.0], [5.0]], str(al.default_float_dtype()))
    with pytest.raises(al.InvalidArgumentError):
        al.cdist(_on(backend, "float32", np.ones((2, 3))), _on(backend, "float32", np.ones((2, 2))))
    with pytest.raises(al.InvalidArgumentTypeError):
        al.cdist(_on(backend, "float32", np.ones((2, 3))), _on(backend, "float32", np.ones((2, 3))), p=-1.0)


@pytest.mark.parametrize(("length", "stride"), [(4, 3), (3, 1), (10, 2), (1, 4), (5, 5)])
def test_extract_sequences_is_keras(backend, length, stride):
    from keras.src.backend.numpy import math as keras_math

    host = np.arange(30.0, dtype=np.float32).reshape(3, 10)
    got = al.extract_sequences(_on(backend, "float32", host), length, stride)
    want = keras_math.extract_sequences(host, length, stride)
    assert dtype_name(backend, got) == "float32"
    np.testing.assert_array_equal(to_numpy(backend, got), want)


def test_extract_sequences_refuses_windows_longer_than_the_axis(backend):
    with pytest.raises(al.InvalidArgumentError):
        al.extract_sequences(_on(backend, "float32", np.ones(4)), 5, 1)
    with pytest.raises(al.InvalidArgumentError):
        al.extract_sequences(_on(backend, "float32", np.ones(4)), 2, 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_view_as_complex_and_back_are_torchs(backend, dtype):
    host = np.array([[1.0, -2.0], [np.inf, 0.0], [0.0, -np.inf], [np.nan, 3.0]], dtype=dtype)[None].repeat(2, 0)
    got = al.view_as_complex(_on(backend, dtype, host))
    want = torch.view_as_complex(torch.tensor(host)).numpy()
    assert dtype_name(backend, got) == str(want.dtype)
    np.testing.assert_array_equal(to_numpy(backend, got), want)
    back = al.view_as_real(got)
    assert dtype_name(backend, back) == dtype
    np.testing.assert_array_equal(to_numpy(backend, back), torch.view_as_real(torch.tensor(want)).numpy())


def test_view_as_complex_and_real_refuse_what_torch_refuses(backend):
    with pytest.raises(al.InvalidArgumentError):
        al.view_as_complex(_on(backend, "float32", np.ones((2, 3))))
    with pytest.raises(al.InvalidDtypeError):
        al.view_as_real(_on(backend, "float32", np.ones((2, 2))))
    with pytest.raises(al.InvalidDtypeError):
        al.view_as_complex(_on(backend, "float16", np.ones((2, 2))))


def test_the_array_namespaces_leave_keras_lstsq_out(backend):
    """Array-API clients read xp.linalg.lstsq as NumPy's four-tuple (SciPy's savgol_filter unpacks it);
    arraylayer's is keras.ops' solution only, so the namespaces do not offer it (al.linalg does)."""
    import importlib

    for module in (f"arraylayer.xp.{backend}", f"arraylayer.xp.arrays.{backend}"):
        xp = importlib.import_module(module)
        assert not hasattr(xp.linalg, "lstsq") and hasattr(xp.linalg, "norm"), module
    assert callable(al.linalg.lstsq)
