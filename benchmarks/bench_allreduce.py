"""all_reduce of 1M and 16M float32 values: arraylayer.distributed against the engine's own call.

Run under the launcher, once per engine (2 ranks on one host):

    python -m arraylayer launch --nproc 2 --backend jax benchmarks/bench_allreduce.py
    python -m arraylayer launch --nproc 2 --backend tensorflow benchmarks/bench_allreduce.py
    python -m arraylayer launch --nproc 2 --backend torch benchmarks/bench_allreduce.py

The engine's own call is written here from the framework's public API (jax: a jitted sum over the
global array with a replicated output; TensorFlow: ``CollectiveReduceV2``; torch: ``dist.all_reduce``).
The two are interleaved, call by call, after a warm-up; rank 0 prints the medians and the ratio
(arraylayer / own). arraylayer's extra cost is its signature exchange and the tree handling.
"""

from __future__ import annotations

import itertools
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import arraylayer as al
import arraylayer.distributed as dist

SIZES = (1 << 20, 1 << 24)
REPEATS = int(os.environ.get("BENCH_REPEATS", "7"))


def own_jax(size: int) -> Callable[[Any], Any]:
    import jax
    import jax.numpy as jnp
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = [min((d for d in jax.devices() if d.process_index == p), key=lambda d: d.id) for p in range(size)]
    mesh = Mesh(np.array(devices), ("p",))
    rows, whole = NamedSharding(mesh, PartitionSpec("p")), NamedSharding(mesh, PartitionSpec())
    total = jax.jit(lambda a: jnp.sum(a, axis=0, dtype=a.dtype), out_shardings=whole)
    mine = devices[dist.rank()]

    def call(x: Any) -> Any:
        g = jax.make_array_from_single_device_arrays((size, *x.shape), rows, [jax.device_put(x, mine)[None]])
        return total(g).addressable_data(0).block_until_ready()

    return call


def own_tensorflow(size: int) -> Callable[[Any], Any]:
    import tensorflow as tf

    keys = itertools.count(1 << 28)  # far from arraylayer's instance keys
    device = f"/job:worker/replica:0/task:{dist.rank()}/device:CPU:0"

    def call(x: Any) -> Any:
        with tf.device(device):
            return tf.raw_ops.CollectiveReduceV2(input=x, group_size=size, group_key=4200, instance_key=next(keys),
                                                 ordering_token=[], merge_op="Add", final_op="Id",
                                                 timeout_seconds=60.0).numpy()

    return call


def own_torch(size: int) -> Callable[[Any], Any]:
    import torch.distributed as tdist

    def call(x: Any) -> Any:
        y = x.clone()
        tdist.all_reduce(y)
        return y

    return call


OWN = {"jax": own_jax, "tensorflow": own_tensorflow, "torch": own_torch}


def ready(y: Any) -> Any:
    return al.to_backend(y, "numpy")


def main() -> None:
    world = dist.initialize(timeout=120)
    backend = world.backend or "torch"
    own = OWN[backend](dist.world_size())
    for n in SIZES:
        x = al.to_backend(np.ones(n, np.float32), backend)
        ours = lambda x=x: ready(dist.all_reduce(x))  # noqa: E731
        theirs = lambda x=x: ready(own(x))  # noqa: E731
        assert np.array_equal(ours(), theirs())  # warm-up and check
        times: dict[str, list[float]] = {"arraylayer": [], "own": []}
        for _ in range(REPEATS):
            for name, f in (("arraylayer", ours), ("own", theirs)):
                start = time.perf_counter()
                f()
                times[name].append(time.perf_counter() - start)
        a, o = statistics.median(times["arraylayer"]), statistics.median(times["own"])
        if dist.rank() == 0:
            print(f"{backend:10s} {n:>9d} float32  arraylayer {1e3 * a:8.2f} ms  own {1e3 * o:8.2f} ms  "
                  f"ratio {a / o:5.2f}", flush=True)
    dist.barrier()
    dist.shutdown()


if __name__ == "__main__":
    main()
