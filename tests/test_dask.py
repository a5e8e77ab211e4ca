"""The dask backend: lazy by construction, no extra work in the graph, NumPy's dtypes and values,
chunks, interchange with every backend.

The rest of the suite runs on dask too (the ``backend`` fixture); this file checks what is
particular to a lazy, chunked backend. Computations are counted with a dask callback.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import arraylayer as al

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from conftest import make_array  # noqa: E402
from dask.callbacks import Callback  # noqa: E402
from test_bad_input import FUNCTIONS, materialise, valid_arguments  # noqa: E402


class Computations(Callback):
    """Counts the graphs dask computes while active (``with Computations() as counted:``)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def _start(self, dsk: Any) -> None:
        self.count += 1

    def __enter__(self) -> Computations:
        super().__enter__()
        return self


def _leaves(result: Any) -> list[Any]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _call(backend: str, name: str) -> Any:
    with al.use_backend(backend):
        args, kwargs = valid_arguments(name, FUNCTIONS[name])
        return FUNCTIONS[name](*materialise(args), **{k: materialise(v) for k, v in kwargs.items()})


def _outcome(backend: str, name: str) -> Any:
    """The result of the valid call, or the arraylayer error it raises."""
    try:
        return _call(backend, name)
    except al.ArrayLayerError as error:
        return error


# -- lazy by construction ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_no_function_computes_and_results_are_numpys(name):
    """Every public function, called on dask arrays, computes nothing and returns dask arrays whose
    values and dtypes, once computed, are the NumPy backend's for the same call."""
    with Computations() as counted:
        lazy = _outcome("dask", name)
    assert counted.count == 0, f"{name} computed {counted.count} graph(s)"
    expected = _outcome("numpy", name)
    if isinstance(expected, al.ArrayLayerError):  # the suite's generic arguments do not suit every function
        assert type(lazy) is type(expected), (name, lazy, expected)
        return
    for got, want in zip(_leaves(lazy), _leaves(expected), strict=True):
        if not isinstance(want, np.ndarray):  # dtype utilities, namespace info: no arrays to compare
            assert type(got) is type(want), (name, got, want)
            continue
        assert isinstance(got, da.Array), (name, type(got))
        assert al.Dtype(got.dtype) is al.Dtype(want.dtype)
        if not name.startswith("empty"):  # uninitialised values
            np.testing.assert_array_equal(got.compute(), want)


def test_a_chain_of_calls_builds_one_graph_and_computes_nothing():
    x = da.random.default_rng(0).random((1000, 100), chunks=(250, 100)).astype(np.float32)
    y = da.arange(100, dtype=np.int8, chunks=50)
    with Computations() as counted:
        result = al.mean(al.add(al.multiply(x, 2), y), axis=0)
        checked = al.add(y, 100)  # a Python int is checked from its value: 100 fits int8
        with pytest.raises(al.ScalarOverflowError):
            al.add(y, 1000)  # does not fit int8: refused from the Python value, nothing computed
    assert counted.count == 0
    assert isinstance(result, da.Array) and result.dtype == np.float32 and checked.dtype == np.int8
    # float32 sums in dask's chunk order, not NumPy's pairwise order: a few ulps apart
    np.testing.assert_allclose(result.compute(), np.mean(x.compute() * 2 + y.compute(), axis=0), rtol=1e-5)


def test_values_that_decide_a_shape_follow_dasks_unknown_lengths():
    host = np.array([[3.0, np.nan, 1.0], [0.0, 3.0, np.nan]], np.float32)
    x = da.from_array(host, chunks=1)
    with Computations() as counted:
        values = al.unique_values(x)
        rows, cols = al.nonzero(x)
        masked = al.Array(x)[al.Array(x) > 0.5].native
    assert counted.count == 0
    for lazy in (values, rows, masked):
        assert math.isnan(lazy.shape[0])  # known once computed, dask's convention
    np.testing.assert_array_equal(values.compute(), np.sort(np.unique_values(host)))  # NaNs stay distinct
    np.testing.assert_array_equal(rows.compute(), np.nonzero(host)[0])
    np.testing.assert_array_equal(cols.compute(), np.nonzero(host)[1])
    np.testing.assert_array_equal(masked.compute(), host[host > 0.5])


def test_out_of_bounds_indices_raise_arraylayers_error_when_computed():
    x = da.arange(5, chunks=2)
    with Computations() as counted:
        taken = al.take(x, da.from_array(np.array([0, 7]), chunks=1))
    assert counted.count == 0
    with pytest.raises(al.OutOfBoundsIndexError, match="holds 7"):
        taken.compute()


# -- no extra work in the graph ------------------------------------------------------------------------
def _tasks(x: Any) -> int:
    return len(dict(x.__dask_graph__()))


X = da.ones((400, 300), dtype=np.float32, chunks=(100, 100))
Y = da.ones((400, 300), dtype=np.float32, chunks=(100, 100))
I8 = da.ones((400, 300), dtype=np.int8, chunks=(100, 100))
M = da.ones((300, 50), dtype=np.float32, chunks=(100, 50))

#: (arraylayer call, the same computation written with dask.array)
SAME_GRAPH = {
    "add": (lambda: al.add(X, Y), lambda: X + Y),
    "multiply by a weak scalar": (lambda: al.multiply(X, 2.5), lambda: X * np.float32(2.5)),
    "exp": (lambda: al.exp(X), lambda: da.exp(X)),
    "sum": (lambda: al.sum(X, axis=0), lambda: da.sum(X, axis=0)),
    "mean": (lambda: al.mean(X), lambda: da.mean(X)),
    "max": (lambda: al.max(X, axis=1), lambda: da.max(X, axis=1)),
    "matmul": (lambda: al.matmul(X, M), lambda: X @ M),
    "where": (lambda: al.where(X > 0.5, X, Y), lambda: da.where(X > 0.5, X, Y)),
    "concat": (lambda: al.concat([X, Y], axis=0), lambda: da.concatenate([X, Y], axis=0)),
    "reshape": (lambda: al.reshape(X, (4, 100, 300)), lambda: X.reshape((4, 100, 300))),
    "promotion int8 + float32": (lambda: al.add(I8, X), lambda: I8.astype(np.float32) + X),
    "cumulative_sum": (lambda: al.cumulative_sum(X, axis=0), lambda: da.cumsum(X, axis=0)),
}


@pytest.mark.parametrize("case", sorted(SAME_GRAPH))
def test_arraylayer_adds_no_tasks_to_dasks_own_graph(case):
    """Where dtypes agree arraylayer adds no task; a cast appears only where promotion needs one."""
    ours, theirs = SAME_GRAPH[case]
    assert _tasks(ours()) == _tasks(theirs()), case


# -- chunks ----------------------------------------------------------------------------------------------
def test_creation_takes_chunks_and_chooses_them_without():
    with al.use_backend("dask"):
        assert al.zeros((4, 6), chunks=2).chunks == ((2, 2), (2, 2, 2))
        assert al.full((5,), 1.5, chunks=(2,)).chunks == ((2, 2, 1),)
        assert al.arange(10, chunks=4).chunks == ((4, 4, 2),)
        assert al.eye(3, 4, chunks=2).chunks == ((2, 1), (2, 2))
        assert al.linspace(0, 1, 5, chunks=2).chunks == ((2, 2, 1),)
        assert al.asarray([[1, 2], [3, 4]], chunks=1).chunks == ((1, 1), (1, 1))
        default = al.ones((10**4, 10**4))  # dask's "auto": chunks of about 128 MiB
        assert default.dtype == np.float32 and len(default.chunks[0]) > 1
        np.testing.assert_array_equal(al.eye(3, 4, k=1, chunks=2).compute(), np.eye(3, 4, k=1, dtype=np.float32))
    x = da.ones((6, 4), chunks=(3, 2))
    assert al.zeros_like(x).chunks == x.chunks  # x's own chunks
    assert al.ones_like(x, chunks=-1).chunks == ((6,), (4,))


@pytest.mark.parametrize("bad", ["abc", -3, 1.5, (2, 2, 2), ((1, 1),)])
def test_bad_chunks_name_the_fix(bad):
    with al.use_backend("dask"), pytest.raises(al.InvalidArgumentError, match="Pass an int"):
        al.zeros((4, 5), chunks=bad)


def test_chunks_on_an_unchunked_backend_is_an_error(backend):
    if backend == "dask":
        pytest.skip("dask takes chunks")
    with al.use_backend(backend), pytest.raises(al.InvalidArgumentError, match="not chunked"):
        al.zeros(3, chunks=2)


# -- interchange ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "bfloat16", "complex64", "bool"])
def test_to_dask_and_back_keeps_dtype_and_values(backend, dtype):
    if backend == "dask":
        pytest.skip("the round trip is from another backend")
    source = make_array(backend, dtype, [1, 0, 1, 1, 0])
    lazy = al.to_backend(source, "dask", chunks=2)
    assert isinstance(lazy, da.Array) and lazy.chunks == ((2, 2, 1),)
    assert al.Dtype(lazy.dtype) == dtype
    if dtype not in al.valid_dtypes(backend):  # torch's uint16: stored, not computed with
        with pytest.raises(al.UnsupportedDtypeError, match=dtype):
            al.to_backend(lazy, backend)
        return
    back = al.to_backend(lazy, backend)  # computed on the way out
    assert al.backend_of(back).name == backend and al.Dtype(back.dtype) == dtype
    np.testing.assert_array_equal(al.to_backend(back, "numpy"), make_array("numpy", dtype, [1, 0, 1, 1, 0]))


def test_dask_is_an_installed_backend_with_every_dtype():
    assert "dask" in al.installed_backends()
    assert al.valid_dtypes("dask") == al.valid_dtypes("numpy")
    assert al.backend_of(da.ones(2)).name == "dask"


def test_a_dask_array_in_use_backend_of_another_backend_is_moved_by_asarray():
    if "torch" not in al.installed_backends():
        pytest.skip("torch not installed")
    x = da.arange(4, dtype=np.int16, chunks=2)
    with al.use_backend("torch"):
        moved = al.asarray(x)
    assert al.backend_of(moved).name == "torch" and al.Dtype(moved.dtype) == "int16"


def test_the_computation_counter_counts():
    """The counting method is sound: computing a result is one graph."""
    with Computations() as counted:
        dask.compute(da.ones(3) + 1)
    assert counted.count == 1

