"""The non-elementwise functions on every backend: creation dtype inference, reductions and their
accumulators, index dtypes, manipulation, searching, sorting, sets, linear algebra. Values are
compared with NumPy's on the same data; dtypes must be the same on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_array
from oracles import assert_close, dtype_name, numpy_dtype, to_numpy, valid_dtypes

import arraylayer as al

INDEX = "int32"  # the default index dtype out of the box (the default int)


# -- creation ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("call", "dtype"), [
    (lambda: al.full((2, 3), 1), "int32"),
    (lambda: al.full((2,), 1.0), "float32"),
    (lambda: al.full((2,), True), "bool"),
    (lambda: al.full((2,), 1j), "complex64"),
    (lambda: al.arange(5), "int32"),
    (lambda: al.arange(0, 1, 0.25), "float32"),
    (lambda: al.zeros((2, 2)), "float32"),
    (lambda: al.ones(3, dtype="int8"), "int8"),
    (lambda: al.empty((1,)), "float32"),
    (lambda: al.eye(3), "float32"),
    (lambda: al.eye(2, 4, k=1, dtype="uint8"), "uint8"),
    (lambda: al.linspace(0, 1, 5), "float32"),
    (lambda: al.linspace(0, 1j, 3), "complex64"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_creation_infers_the_same_dtype_everywhere(backend, call, dtype):
    with al.use_backend(backend):
        result = call()
    assert dtype_name(backend, result) == dtype
    assert al.backend_of(result).name == backend


def test_creation_values(backend):
    with al.use_backend(backend):
        np.testing.assert_array_equal(to_numpy(backend, al.arange(2, 11, 3)), np.arange(2, 11, 3))
        np.testing.assert_allclose(to_numpy(backend, al.linspace(0, 1, 4, endpoint=False)), [0, 0.25, 0.5, 0.75])
        np.testing.assert_array_equal(to_numpy(backend, al.eye(2, 3, k=1)), np.eye(2, 3, k=1))
        np.testing.assert_array_equal(to_numpy(backend, al.full((2,), 7, dtype="int16")), [7, 7])
        x = al.asarray([[1, 2], [3, 4]], dtype="float32")
        np.testing.assert_array_equal(to_numpy(backend, al.tril(x)), [[1, 0], [3, 4]])
        np.testing.assert_array_equal(to_numpy(backend, al.triu(x, k=1)), [[0, 2], [0, 0]])
        like = al.full_like(x, 5)
        assert dtype_name(backend, like) == "float32"
        assert dtype_name(backend, al.zeros_like(x, dtype="int8")) == "int8"
        assert tuple(al.ones_like(x).shape) == (2, 2)
        grid = al.meshgrid(al.arange(3), al.arange(2, dtype="int8"))
        assert [tuple(g.shape) for g in grid] == [(2, 3), (2, 3)]
        assert {dtype_name(backend, g) for g in grid} == {"int32"}


def test_creation_refuses_values_its_dtype_cannot_hold(backend):
    with al.use_backend(backend):
        with pytest.raises(al.TypePromotionError):
            al.full((2,), 1.5, dtype="int32")
        with pytest.raises(OverflowError):
            al.full((2,), 300, dtype="int8")
        with pytest.raises(OverflowError):
            al.full_like(al.zeros(2, dtype="uint8"), -1)


def test_creation_honours_the_device(backend):
    with al.use_backend(backend):
        for make in (lambda d: al.zeros(2, device=d), lambda d: al.arange(3, device=d),
                     lambda d: al.full((1,), 2.0, device=d), lambda d: al.eye(2, device=d),
                     lambda d: al.linspace(0, 1, 2, device=d)):
            assert al.dev(make("cpu")) == "cpu"
        with pytest.raises(al.DeviceError):
            al.zeros(2, device="gpu:7")


# -- reductions ---------------------------------------------------------------------------------
def test_integer_sums_accumulate_in_the_default_int(backend):
    ones = make_array(backend, "int8", np.ones((100, 100), dtype=np.int8))
    total = al.sum(ones)
    assert dtype_name(backend, total) == "int32"
    assert int(to_numpy(backend, total)) == 10000  # never a wrapped -56
    small = make_array(backend, "uint8", (200, 100))
    # the default uint, on torch too (which stores uint32 without kernels: computed in int64)
    assert dtype_name(backend, al.sum(small)) == "uint32"
    assert int(to_numpy(backend, al.sum(small))) == 300
    assert int(to_numpy(backend, al.sum(small, dtype="int32"))) == 300
    assert dtype_name(backend, al.prod(make_array(backend, "bool", (True, True)))) == "int32"
    assert dtype_name(backend, al.sum(make_array(backend, "int16", X := (1, 2)), dtype="int16")) == "int16"
    assert X
    cumulative = al.cumulative_sum(make_array(backend, "int8", (100, 100, 100)))
    assert dtype_name(backend, cumulative) == "int32"
    np.testing.assert_array_equal(to_numpy(backend, cumulative), [100, 200, 300])
    initial = al.cumulative_prod(make_array(backend, "int16", (2, 3)), include_initial=True)
    np.testing.assert_array_equal(to_numpy(backend, initial), [1, 2, 6])


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "std", "var", "all", "any"])
def test_reductions_against_numpy(backend, name):
    data = np.array([[1.5, 2.0, -3.0], [4.0, 0.5, 2.0]])
    for dtype in ("float32", "float64", "int32", "int8"):
        if dtype not in valid_dtypes(backend):
            continue
        host = data.astype(numpy_dtype(dtype))
        x = make_array(backend, dtype, host)
        for axis, keepdims in ((None, False), (0, False), (1, True), ((0, 1), False)):
            result = getattr(al, name)(x, axis=axis, keepdims=keepdims)
            work = host.astype(np.float64) if name in ("mean", "std", "var") else host
            want = getattr(np, name)(work, axis=axis, keepdims=keepdims)
            expected = {"all": "bool", "any": "bool"}.get(name) or (
                "float32" if name in ("mean", "std", "var") and dtype.startswith("int") else
                "int32" if name in ("sum", "prod") and dtype == "int8" else dtype)
            assert dtype_name(backend, result) == expected, (name, dtype, axis)
            assert_close(to_numpy(backend, result), np.asarray(want).astype(numpy_dtype(expected)), expected,
                         f"{name} {dtype} axis={axis}")


def test_std_var_correction(backend):
    x = make_array(backend, "float64" if "float64" in valid_dtypes(backend) else "float32", (1.0, 2.0, 4.0, 7.0))
    np.testing.assert_allclose(to_numpy(backend, al.var(x, correction=1)), np.var([1, 2, 4, 7], ddof=1), rtol=1e-6)
    np.testing.assert_allclose(to_numpy(backend, al.std(x, correction=1)), np.std([1, 2, 4, 7], ddof=1), rtol=1e-6)


def test_empty_max_raises_clearly(backend):
    with pytest.raises(ValueError, match="empty"):
        al.max(make_array(backend, "float32", ()))


# -- searching, sorting, sets -------------------------------------------------------------------
def test_index_results_have_the_default_index_dtype(backend):
    x = make_array(backend, "float32", (3.0, 1.0, 2.0, 1.0))
    for result in (al.argmax(x), al.argmin(x), al.argsort(x), al.count_nonzero(x), al.nonzero(x)[0],
                   al.searchsorted(al.sort(x), x), al.unique_counts(x).counts, al.unique_inverse(x).inverse_indices,
                   *al.unique_all(x)[1:]):
        assert dtype_name(backend, result) == INDEX
    with al.use_default_int_dtype("int64"):
        if "int64" in valid_dtypes(backend):
            assert dtype_name(backend, al.argmax(x)) == "int64"


def test_searching_sorting_sets_values(backend):
    host = np.array([3.0, 1.0, 2.0, 1.0, 5.0], dtype=np.float32)
    x = make_array(backend, "float32", host)
    assert int(to_numpy(backend, al.argmax(x))) == 4
    assert int(to_numpy(backend, al.argmin(x))) == 1
    np.testing.assert_array_equal(to_numpy(backend, al.sort(x)), np.sort(host))
    np.testing.assert_array_equal(to_numpy(backend, al.sort(x, descending=True)), np.sort(host)[::-1])
    np.testing.assert_array_equal(to_numpy(backend, al.argsort(x)), np.argsort(host, stable=True))
    # descending and stable: equal elements keep their order
    np.testing.assert_array_equal(to_numpy(backend, al.argsort(x, descending=True)), [4, 0, 2, 1, 3])
    values, indices, inverse, counts = al.unique_all(x)
    np.testing.assert_array_equal(to_numpy(backend, values), [1, 2, 3, 5])
    np.testing.assert_array_equal(to_numpy(backend, indices), [1, 2, 0, 4])
    np.testing.assert_array_equal(to_numpy(backend, inverse), [2, 0, 1, 0, 3])
    np.testing.assert_array_equal(to_numpy(backend, counts), [2, 1, 1, 1])
    np.testing.assert_array_equal(to_numpy(backend, al.unique_values(x)), [1, 2, 3, 5])
    np.testing.assert_array_equal(to_numpy(backend, al.nonzero(make_array(backend, "int8", (0, 3, 0, 1)))[0]), [1, 3])
    assert int(to_numpy(backend, al.count_nonzero(x))) == 5
    s = al.sort(x)
    np.testing.assert_array_equal(to_numpy(backend, al.searchsorted(s, make_array(backend, "float32", (1.0, 4.0)),
                                                                    side="right")), [2, 4])


def test_where_promotes_its_branches(backend):
    condition = make_array(backend, "bool", (True, False, True))
    x = make_array(backend, "int8", (1, 2, 3))
    y = make_array(backend, "float32", (10, 20, 30))
    result = al.where(condition, x, y)
    assert dtype_name(backend, result) == "float32"
    np.testing.assert_array_equal(to_numpy(backend, result), [1, 20, 3])
    assert dtype_name(backend, al.where(condition, x, 0)) == "int8"  # a Python scalar is weak


# -- manipulation and indexing ------------------------------------------------------------------
def test_manipulation_against_numpy(backend):
    host = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    x = make_array(backend, "float32", host)
    cases = {
        "reshape": (al.reshape(x, (6, 4)), host.reshape(6, 4)),
        "permute_dims": (al.permute_dims(x, (2, 0, 1)), np.transpose(host, (2, 0, 1))),
        "transpose": (al.transpose(x), np.transpose(host)),
        "expand_dims": (al.expand_dims(x, axis=1), np.expand_dims(host, 1)),
        "squeeze": (al.squeeze(al.expand_dims(x, axis=0), 0), host),
        "flip": (al.flip(x, axis=1), np.flip(host, 1)),
        "flip all": (al.flip(x), np.flip(host)),
        "moveaxis": (al.moveaxis(x, 0, -1), np.moveaxis(host, 0, -1)),
        "roll": (al.roll(x, 2, axis=2), np.roll(host, 2, axis=2)),
        "roll flat": (al.roll(x, 5), np.roll(host, 5)),
        "tile": (al.tile(x, (1, 2, 1)), np.tile(host, (1, 2, 1))),
        "repeat": (al.repeat(x, 2, axis=0), np.repeat(host, 2, axis=0)),
        "broadcast_to": (al.broadcast_to(x[0], (5, 3, 4)), np.broadcast_to(host[0], (5, 3, 4))),
        "concat": (al.concat([x, x], axis=2), np.concatenate([host, host], axis=2)),
        "concat flat": (al.concat([x, x], axis=None), np.concatenate([host, host], axis=None)),
        "stack": (al.stack([x, x], axis=1), np.stack([host, host], axis=1)),
        "take": (al.take(x, make_array(backend, "int32", (2, 0)), axis=1), np.take(host, [2, 0], axis=1)),
        "matrix_transpose": (al.matrix_transpose(x), np.swapaxes(host, -1, -2)),
        "diff": (al.diff(x, axis=2), np.diff(host, axis=2)),
    }
    for what, (got, want) in cases.items():
        assert_close(to_numpy(backend, got), want, "float32", what)
    parts = al.unstack(x, axis=1)
    assert len(parts) == 3 and all(tuple(p.shape) == (2, 4) for p in parts)
    a, b = al.broadcast_arrays(x, make_array(backend, "int8", np.ones((3, 1), np.int8)))
    assert tuple(a.shape) == tuple(b.shape) == (2, 3, 4) and dtype_name(backend, b) == "int8"
    indices = make_array(backend, "int32", np.zeros((2, 3, 1), np.int32))
    assert_close(to_numpy(backend, al.take_along_axis(x, indices, axis=2)), host[:, :, :1], "float32", "take_along")


def test_joining_promotes(backend):
    a = make_array(backend, "int8", (1, 2))
    b = make_array(backend, "float32", (3, 4))
    assert dtype_name(backend, al.concat([a, b])) == "float32"
    assert dtype_name(backend, al.stack([a, a])) == "int8"


def test_take_needs_integer_indices(backend):
    x = make_array(backend, "float32", (1, 2, 3))
    with pytest.raises(al.UnsupportedDtypeError):
        al.take(x, make_array(backend, "float32", (0, 1)))


# -- linear algebra -----------------------------------------------------------------------------
def test_matmul_family_promotes(backend):
    a = make_array(backend, "int8", np.arange(6, dtype=np.int8).reshape(2, 3))
    b = make_array(backend, "float32", np.ones((3, 2), np.float32))
    result = al.matmul(a, b)
    assert dtype_name(backend, result) == "float32"
    np.testing.assert_allclose(to_numpy(backend, result), np.arange(6).reshape(2, 3) @ np.ones((3, 2)))
    v = make_array(backend, "float32", (1.0, 2.0, 3.0))
    assert float(to_numpy(backend, al.vecdot(v, v))) == 14.0
    np.testing.assert_allclose(to_numpy(backend, al.tensordot(a, b, axes=1)), np.arange(6).reshape(2, 3) @ np.ones((3, 2)))
    np.testing.assert_allclose(to_numpy(backend, al.linalg.outer(v, v)), np.outer([1, 2, 3], [1, 2, 3]))
    np.testing.assert_allclose(to_numpy(backend, al.linalg.cross(v, make_array(backend, "float32", (0, 0, 1.0)))),
                               np.cross([1, 2, 3], [0, 0, 1]))



def test_cross_broadcasts_all_but_the_compute_axis(backend):
    """linalg.cross broadcasts the other axes (a (4, 3) with a (1, 4, 3), as the suite draws), a
    negative axis counts from the end of both; a non-negative one needs one rank."""
    a_host = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    b_host = (np.arange(12, dtype=np.float32).reshape(1, 4, 3) % 5)[..., ::-1].copy()
    a, b = make_array(backend, "float32", a_host), make_array(backend, "float32", b_host)
    np.testing.assert_array_equal(to_numpy(backend, al.linalg.cross(a, b)), np.cross(a_host, b_host))
    np.testing.assert_array_equal(to_numpy(backend, al.linalg.cross(b, a, axis=-1)), np.cross(b_host, a_host))
    c_host, d_host = a_host.T.copy(), b_host[0].T.copy()
    c, d = make_array(backend, "float32", c_host), make_array(backend, "float32", d_host)
    np.testing.assert_array_equal(to_numpy(backend, al.linalg.cross(c, d, axis=0)), np.cross(c_host, d_host, axis=0))
    with pytest.raises(al.InvalidArgumentError, match="negative axis"):
        al.linalg.cross(a, b, axis=1)
    with pytest.raises(al.InvalidArgumentError, match="3 elements"):
        al.linalg.cross(make_array(backend, "float32", b_host[..., :2]), make_array(backend, "float32", a_host[..., :2]))

def test_linalg_extension_against_numpy(backend):
    host = np.array([[4.0, 1.0], [1.0, 3.0]], dtype=np.float32)
    x = make_array(backend, "float32", host)
    checks = {
        "det": (al.linalg.det(x), np.linalg.det(host)),
        "inv": (al.linalg.inv(x), np.linalg.inv(host)),
        "cholesky": (al.linalg.cholesky(x), np.linalg.cholesky(host)),
        "eigvalsh": (al.linalg.eigvalsh(x), np.linalg.eigvalsh(host)),
        "svdvals": (al.linalg.svdvals(x), np.linalg.svd(host, compute_uv=False)),
        "solve": (al.linalg.solve(x, make_array(backend, "float32", np.eye(2, dtype=np.float32))), np.linalg.inv(host)),
        "pinv": (al.linalg.pinv(x), np.linalg.pinv(host)),
        "matrix_norm": (al.linalg.matrix_norm(x), np.linalg.norm(host)),
        "vector_norm": (al.linalg.vector_norm(x, ord=1), np.abs(host).sum()),
        "trace": (al.linalg.trace(x), np.trace(host)),
        "diagonal": (al.linalg.diagonal(x), np.diagonal(host)),
        "matrix_power": (al.linalg.matrix_power(x, 3), np.linalg.matrix_power(host, 3)),
    }
    for what, (got, want) in checks.items():
        np.testing.assert_allclose(to_numpy(backend, got), want, rtol=1e-4, atol=1e-5, err_msg=what)
    sign, logabsdet = al.linalg.slogdet(x)
    np.testing.assert_allclose(float(to_numpy(backend, sign)) * np.exp(float(to_numpy(backend, logabsdet))),
                               np.linalg.det(host), rtol=1e-4)
    q, r = al.linalg.qr(x)
    np.testing.assert_allclose(to_numpy(backend, al.matmul(q, r)), host, rtol=1e-4, atol=1e-5)
    u, s, vh = al.linalg.svd(x, full_matrices=False)
    np.testing.assert_allclose(to_numpy(backend, u) * to_numpy(backend, s) @ to_numpy(backend, vh), host, rtol=1e-4,
                               atol=1e-5)
    values, vectors = al.linalg.eigh(x)
    np.testing.assert_allclose(to_numpy(backend, values), np.linalg.eigvalsh(host), rtol=1e-4)
    assert int(to_numpy(backend, al.linalg.matrix_rank(x))) == 2
    assert dtype_name(backend, al.linalg.matrix_rank(x)) == INDEX


def test_linalg_of_integers_uses_the_default_float(backend):
    x = make_array(backend, "int32", np.array([[2, 0], [0, 2]], np.int32))
    result = al.linalg.inv(x)
    assert dtype_name(backend, result) == "float32"
    np.testing.assert_allclose(to_numpy(backend, result), [[0.5, 0], [0, 0.5]])
    assert dtype_name(backend, al.linalg.trace(make_array(backend, "int8", np.eye(2, dtype=np.int8)))) == "int32"


# -- data-type functions ------------------------------------------------------------------------
def test_astype_and_isdtype(backend):
    x = make_array(backend, "float32", (1.7, -1.7))
    y = al.astype(x, "int16")
    assert dtype_name(backend, y) == "int16"
    np.testing.assert_array_equal(to_numpy(backend, y), [1, -1])
    same = al.astype(x, "float32", copy=False)
    assert same is x
    assert al.astype(x, "float32") is not x
    with pytest.raises(al.TypePromotionError, match="imaginary"):
        al.astype(make_array(backend, "complex64", (1, 2)), "float32")
    assert al.isdtype(al.float32, "real floating") and al.isdtype("int8", ("bool", "integral"))
    assert not al.isdtype("uint8", "signed integer") and al.isdtype("float32", "float32")
    with pytest.raises(al.InvalidDtypeError):
        al.isdtype("float32", "floaty")


def test_namespace_info(backend):
    with al.use_backend(backend):
        info = al.__array_namespace_info__()
        assert set(info.dtypes()) == set(valid_dtypes(backend))
        assert set(info.dtypes(kind="integral")) <= {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                                      "uint64"}
        assert info.default_dtypes()["real floating"] == "float32"
        assert "cpu" in info.devices() and info.default_device() == "cpu"
        assert set(info.capabilities()) == {"boolean indexing", "data-dependent shapes", "max dimensions"}
    assert al.__array_api_version__ == "2025.12"
