"""arraylayer on a real dask.distributed cluster: a LocalCluster of worker processes on this machine.

The workloads (reductions, an MLP's forward pass over many batches, a tall-skinny matmul, a
cumulative sum across chunks) are written with arraylayer functions on dask arrays, run on the
workers, and must equal the same calls on NumPy. The cluster is shut down at the end and no
worker process may be left behind.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import arraylayer as al

distributed = pytest.importorskip("distributed")
psutil = pytest.importorskip("psutil")

WORKERS = 2


def _start_cluster(workers: int) -> Any:
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=logging.ERROR)


def _children() -> set[int]:
    """This process's child processes, but multiprocessing's resource tracker: one per interpreter,
    started with the first worker and kept until the interpreter exits, by design."""
    return {p.pid for p in psutil.Process().children(recursive=True)
            if "resource_tracker" not in " ".join(p.cmdline())}


def _gone(pids: set[int], seconds: float = 20.0) -> set[int]:
    """The processes of ``pids`` still alive after waiting up to ``seconds``."""
    deadline = time.monotonic() + seconds
    alive = set(pids)
    while alive and time.monotonic() < deadline:
        alive = {pid for pid in alive if _running(pid)}
        time.sleep(0.2)
    return alive


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not a zombie); one that exits between the checks is not."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    before = _children()
    cluster = _start_cluster(WORKERS)
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()
    leaked = _gone(_children() - before)
    assert not leaked, f"worker processes left behind: {leaked}"


def _on_workers(client: Any, lazy: Any) -> tuple[Any, set[str]]:
    """``lazy`` computed by the cluster, and the workers that ran its tasks."""
    with distributed.get_task_stream(client) as stream:
        value = client.compute(lazy).result()
    return value, {task["worker"] for task in stream.data}


def _both(make: Any, host: dict[str, np.ndarray], chunks: dict[str, Any]) -> tuple[Any, Any]:
    """``make(**arrays)`` on dask arrays (chunked as given) and on the NumPy arrays themselves."""
    lazy = {name: al.to_backend(value, "dask", chunks=chunks[name]) for name, value in host.items()}
    return make(**lazy), make(**host)


def test_the_cluster_has_worker_processes(client):
    workers = client.scheduler_info()["workers"]
    assert len(workers) == WORKERS
    pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == WORKERS and all(pid in _children() for pid in pids)


def test_reductions(client):
    rng = np.random.default_rng(0)
    host = {"x": rng.standard_normal((4000, 50)).astype(np.float32), "i": rng.integers(-100, 100, 4000, dtype=np.int8)}

    def reductions(x: Any, i: Any) -> tuple[Any, ...]:
        return (al.sum(x, axis=0), al.mean(x), al.std(x, axis=1), al.max(x), al.sum(i), al.prod(al.abs(i[:5])),
                al.argmax(x, axis=0), al.count_nonzero(i))

    lazy, expected = _both(reductions, host, {"x": (500, 50), "i": 500})
    for got, want in zip(lazy, expected, strict=True):
        value, workers = _on_workers(client, got)
        assert al.Dtype(got.dtype) is al.Dtype(want.dtype)  # int8 sums in the default int, as on NumPy
        # float32 sums of 4000 values in another order: equal to ~1e-6 of the sum of magnitudes
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=2e-3)
        assert workers


def test_mlp_forward_pass_over_many_batches(client):
    rng = np.random.default_rng(1)
    host = {"x": rng.standard_normal((8192, 16)).astype(np.float32),
            "w1": rng.standard_normal((16, 32)).astype(np.float32) / 4, "b1": np.zeros(32, np.float32),
            "w2": rng.standard_normal((32, 3)).astype(np.float32) / 6, "b2": np.zeros(3, np.float32)}

    def forward(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
        hidden = al.maximum(al.add(al.matmul(x, w1), b1), 0.0)
        logits = al.add(al.matmul(hidden, w2), b2)
        shifted = al.subtract(logits, al.max(logits, axis=1, keepdims=True))
        return al.subtract(shifted, al.log(al.sum(al.exp(shifted), axis=1, keepdims=True)))

    chunks = {"x": (256, 16), "w1": -1, "b1": -1, "w2": -1, "b2": -1}  # 32 batches of 256 rows
    lazy, expected = _both(forward, host, chunks)
    assert len(lazy.chunks[0]) == 32
    value, workers = _on_workers(client, lazy)
    assert value.dtype == np.float32
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)
    assert len(workers) == WORKERS  # the batches were spread over both workers


def test_tall_skinny_matmul(client):
    rng = np.random.default_rng(2)
    host = {"a": rng.standard_normal((40000, 8)).astype(np.float64)}

    def gram(a: Any) -> Any:
        return al.matmul(al.matrix_transpose(a), a)

    lazy, expected = _both(gram, host, {"a": (5000, 8)})
    value, _ = _on_workers(client, lazy)
    np.testing.assert_allclose(value, expected, rtol=1e-10)


def test_cumulative_sum_across_chunks(client):
    host = {"x": np.arange(1, 10001, dtype=np.int16)}

    def running(x: Any) -> Any:
        return al.cumulative_sum(x, include_initial=True)

    lazy, expected = _both(running, host, {"x": 999})
    value, _ = _on_workers(client, lazy)
    assert value.dtype == expected.dtype  # int16 accumulates in the default int on both
    np.testing.assert_array_equal(value, expected)


def test_a_cluster_shuts_down_without_leaving_processes():
    before = _children()
    cluster = _start_cluster(1)
    with distributed.Client(cluster) as connected:
        started = _children() - before
        assert started  # the worker (and its nanny) are processes of their own
        assert int(al.sum(al.to_backend(np.ones(10, np.int32), "dask", chunks=3)).compute()) == 10
        assert connected.status == "running"
    cluster.close()
    assert not _gone(started), "processes of a closed LocalCluster are still running"
