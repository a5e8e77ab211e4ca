"""Run by tests/test_distributed.py under the launcher: the checks on every rank for each backend
named (comma-separated) in one world, printing "OK <backend>" after each."""

import sys

import ml_dtypes
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


DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "bfloat16",
          "float32", "float64", "complex64"]


def rows_of(dtype):
    """Each rank's leaf: uint64 values past 2**63 (max and min need their order), int8 sums that wrap."""
    if dtype == "bool":
        return [np.array([True, q == 0, False]) for q in range(n)]
    if dtype == "uint64":
        return [np.array([2**63 + q, 1, 2**64 - 1 - q], np.uint64) for q in range(n)]
    return [np.array([1, 2 + q, 100 - q], ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype) for q in range(n)]


def every_dtype(backend):
    """On gloo (which lacks int16, uint16, uint32 and uint64): every dtype and op against NumPy, on NumPy
    leaves and the backend's own."""
    for dtype in DTYPES:
        rows = rows_of(dtype)
        stacked = np.stack(rows)
        want = {"sum": np.sum(stacked, axis=0, dtype=stacked.dtype), "max": stacked.max(0), "min": stacked.min(0)}
        ops = [o for o in want if not (dtype == "bool" and o == "sum") and not (dtype.startswith("complex") and o != "sum")]
        wraps = [np.asarray] + [lambda a: al.to_backend(a, backend)] * (al.Dtype(stacked.dtype) in al.valid_dtypes(backend))
        for wrap in wraps:
            leaf = wrap(rows[r])
            got = [(o, dist.all_reduce(leaf, o), want[o]) for o in ops]
            got += [("gather", dist.all_gather(leaf), stacked), ("broadcast", dist.broadcast(leaf, root=1), rows[1])]
            for what, g, w in got:
                g = al.to_backend(g, "numpy")
                assert g.dtype == w.dtype and np.array_equal(g, w), (backend, dtype, what, g, w)


for backend in sys.argv[1].split(","):
    check(backend)
    if backend in ("numpy", "torch"):
        every_dtype(backend)
    dist.barrier()
    print("OK", backend, flush=True)
dist.shutdown()
