"""arraylayer.distributed on 2 CPU processes through the launcher: on torch.distributed's gloo engine
(the default) collectives keep dtypes on every backend, mismatches raise on every rank, a silent rank
times out, a dead rank stops the launch, and 2 ranks on half batches train Adam to the 1-process
parameters; the jax and tensorflow worlds run the same checks on their own engines (jax.distributed,
TensorFlow's collective ops) against NumPy oracles on every dtype."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import arraylayer as al
import arraylayer.distributed as dist

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "distributed_scripts"
BACKENDS = [b for b in ("numpy", "jax", "torch", "tensorflow") if b in al.available_backends()]


def launch(script: str, *args: str, timeout: float = 120, backend: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1")
    env.pop("ARRAYLAYER_BACKEND", None)
    env.pop("TF_CONFIG", None)
    chosen = ["--backend", backend] if backend else []
    return subprocess.run([sys.executable, "-m", "arraylayer", "launch", "--nproc", "2", *chosen, str(SCRIPTS / script),
                           *args], capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)


def test_collectives_keep_dtypes_and_catch_mismatches():
    """Leaves of every installed backend, one after the other in one world (one launch)."""
    done = launch("collectives.py", ",".join(BACKENDS))
    assert done.returncode == 0, done.stdout + done.stderr
    for which in BACKENDS:
        assert f"[rank 0] OK {which}" in done.stdout and f"[rank 1] OK {which}" in done.stdout, (which, done.stdout)


@pytest.mark.parametrize("which", ["torch"])  # jax and tensorflow: in test_the_frameworks_own_engines
def test_two_ranks_on_half_batches_equal_one_process(which):
    done = launch("train.py", which)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(f"OK {which}") == 2


@pytest.mark.parametrize("which", [b for b in ("jax", "tensorflow") if b in BACKENDS])
def test_the_frameworks_own_engines(which):
    """Every dtype, op, gather, broadcast, a mismatch, data_parallel Adam and a timeout on the world's engine."""
    done = launch("engines.py", which, backend=which, timeout=150)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(done.stdout.count(f"[rank {r}] OK {which}") == 2 for r in (0, 1)), done.stdout  # engines.py, train.py
    assert "[rank 0] TIMEOUT" in done.stdout, done.stdout


def test_the_engine_table_and_its_environment():
    from arraylayer.distributed import engines

    assert {b: engines.engine_name(b) for b in (None, "numpy", "torch", "dask", "jax", "tensorflow")} == {
        None: "torch_gloo", "numpy": "torch_gloo", "torch": "torch_gloo", "dask": "torch_gloo",
        "jax": "jax_dist", "tensorflow": "tf_collective"}
    with pytest.raises(al.InvalidArgumentError, match="no distributed engine"):
        dist.initialize(backend="mxnet")
    assert not dist.is_initialized()
    import json

    ports = [7001, 7002, 7003]
    assert engines.load("jax").launch_envs(range(2), 2, "10.0.0.1", ports) == [
        {"ARRAYLAYER_JAX_COORDINATOR": "10.0.0.1:7001"}] * 2
    configs = [json.loads(e["TF_CONFIG"]) for e in engines.load("tensorflow").launch_envs(range(2), 2, "h", ports)]
    assert [c["task"] for c in configs] == [{"type": "worker", "index": 0}, {"type": "worker", "index": 1}]
    assert all(c["cluster"] == {"worker": ["h:7001", "h:7002"]} for c in configs)
    bad = subprocess.run([sys.executable, "-m", "arraylayer", "launch", "--nproc", "2", "--backend", "mxnet", "x.py"],
                         capture_output=True, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert bad.returncode != 0 and "no distributed engine" in bad.stderr


def test_a_dead_rank_stops_the_launch():
    done = launch("fail.py", timeout=60)
    assert done.returncode == 3
    assert "rank 1 failed (exit status 3)" in done.stderr


def test_a_silent_rank_times_out():
    done = launch("timeout.py", timeout=60)
    assert "[rank 0] TIMEOUT" in done.stdout, done.stdout + done.stderr


def test_a_world_of_one_without_environment():
    for name in ("RANK", "WORLD_SIZE", "ARRAYLAYER_RANK", "ARRAYLAYER_WORLD_SIZE"):
        assert name not in os.environ
    import numpy as np

    dist.initialize()
    try:
        assert (dist.rank(), dist.world_size(), dist.local_rank()) == (0, 1, 0)
        x = np.arange(4, dtype=np.int32)
        assert dist.all_reduce(x).dtype == np.int32 and dist.all_reduce(x, "mean").dtype == np.float32
        assert dist.all_gather(x).shape == (1, 4)
        with pytest.raises(al.InvalidArgumentError, match="op must be"):
            dist.all_reduce(x, "prod")
    finally:
        dist.shutdown()
