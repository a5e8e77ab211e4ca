"""replicated_step: several devices in one process (jax: 2 host devices; TensorFlow: 2 logical CPUs;
torch: its one device) train an MLP with Adam to what one device gives on the whole batch. Each runs in
a subprocess, since the device count is fixed when the framework starts."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import arraylayer as al
import arraylayer.distributed as dist

ROOT = pathlib.Path(__file__).resolve().parent.parent
BACKENDS = [b for b in ("jax", "tensorflow", "torch") if b in al.available_backends()]


@pytest.mark.parametrize("which", BACKENDS)
def test_two_devices_equal_one_device_on_the_whole_batch(which):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1")
    env.pop("XLA_FLAGS", None)
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "distributed_scripts" / "devices.py"), which],
                          capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"OK {which}" in done.stdout


def test_one_device_collectives_return_their_input_with_the_dtype_rules():
    x = np.arange(4, dtype=np.int32)
    mean = dist.replicated_step(lambda carry, b: dist.all_reduce(b, "mean"))(None, x)
    assert mean.dtype == al.mean(x).dtype and np.array_equal(mean, x.astype(mean.dtype))
    assert dist.replicated_step(lambda carry, b: dist.all_gather(b))(None, x).shape == (1, 4)
    assert not dist.is_initialized()  # no world is joined for a replicated step


def test_bad_arguments_are_named():
    with pytest.raises(al.InvalidArgumentError, match="callable"):
        dist.replicated_step(3)
    with pytest.raises(al.InvalidArgumentError, match="batch argument"):
        dist.replicated_step(lambda carry: carry)(None)
