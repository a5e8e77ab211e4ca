"""Run by tests/test_distributed.py under the launcher: the checks on every rank for each backend
named (comma-separated) in one world, printing "OK <backend>" after each."""

import sys

import numpy as np

import arraylayer as al
import arraylayer.distributed as dist

dist.initialize(timeout=20)
r, n = dist.rank(), dist.world_size()


def check(backend):
    xp = lambda a: al.to_backend(np.asarray(a), backend)  # noqa: E731
    tree = {"i": xp(np.arange(3, dtype=np.int32) + r), "f": xp(np.full(2, r + 1.0, np.float32)), "b": xp(np.array([r == 0]))}
    s = dist.all_reduce({"i": tree["i"], "f": tree["f"]}, "sum")
    assert al.Dtype(s["i"].dtype) == al.int32 and np.array_equal(al.to_backend(s["i"], "numpy"), [1, 3, 5])
    m = dist.all_reduce(tree["i"], "mean")
    assert al.Dtype(m.dtype) == al.float32 and np.allclose(al.to_backend(m, "numpy"), [0.5, 1.5, 2.5])
    assert np.array_equal(al.to_backend(dist.all_reduce(tree["b"], "max"), "numpy"), [True])
    assert np.array_equal(al.to_backend(dist.all_reduce(tree["f"], "min"), "numpy"), [1.0, 1.0])
    g = dist.all_gather(tree["f"])
    assert tuple(g.shape) == (2, 2) and np.array_equal(al.to_backend(g, "numpy"), [[1, 1], [2, 2]])
    b = dist.broadcast(tree, root=1)
    assert np.array_equal(al.to_backend(b["i"], "numpy"), [1, 2, 3])
    assert np.array_equal(al.to_backend(dist.shard(xp(np.arange(8, dtype=np.int32)), 0), "numpy"), np.arange(4) + 4 * r)
    try:
        dist.shard(xp(np.arange(7, dtype=np.int32)))
        raise AssertionError("uneven shard accepted")
    except al.InvalidArgumentError:
        pass
    try:  # rank 1 sends another shape: both ranks raise
        dist.all_reduce(xp(np.ones(2 + r, np.float32)))
        raise AssertionError("mismatch accepted")
    except dist.DistributedMismatchError as error:
        assert "differ" in str(error)


for backend in sys.argv[1].split(","):
    check(backend)
    dist.barrier()
    print("OK", backend, flush=True)
dist.shutdown()
