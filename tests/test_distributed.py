"""arraylayer.distributed on 2 CPU processes through the launcher (torch.distributed's gloo engine):
collectives keep dtypes on every backend, mismatches raise on every rank, a silent rank times out, a
dead rank stops the launch, and 2 ranks on half batches train Adam to the 1-process parameters."""

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


def launch(script: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "arraylayer", "launch", "--nproc", "2", str(SCRIPTS / script), *args],
                          capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)


@pytest.mark.parametrize("which", BACKENDS)
def test_collectives_keep_dtypes_and_catch_mismatches(which):
    done = launch("collectives.py", which)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"[rank 0] OK {which}" in done.stdout and f"[rank 1] OK {which}" in done.stdout


@pytest.mark.parametrize("which", ["torch", "jax"])
def test_two_ranks_on_half_batches_equal_one_process(which):
    done = launch("train.py", which)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(f"OK {which}") == 2


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
