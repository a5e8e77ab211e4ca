"""Run by tests/test_distributed.py under ``launch --backend NAME`` (jax, tensorflow): the world's own
engine against NumPy oracles on every dtype it carries (leaves of the backend and NumPy leaves), a
mismatch, data_parallel Adam (eagerly and compiled: train.py), and last a timeout. Prints ``OK NAME`` on every rank."""

import os
import sys
import time

if sys.argv[1] == "jax":  # 2 devices per process: replicated_step then spans 4 devices of 2 processes
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from train import main as train  # noqa: E402

import arraylayer as al  # noqa: E402
import arraylayer.distributed as dist  # noqa: E402

backend = sys.argv[1]
world = dist.initialize(timeout=30)
r, n = dist.rank(), dist.world_size()
assert world.engine.__name__.rsplit(".", 1)[1] == {"jax": "jax_dist", "tensorflow": "tf_collective"}[backend]
# Every rank computes on its own device, which arraylayer names (in a jax world, jax.devices() lists the
# other processes' devices first: the default device is this process's first local one), also in a trace.
assert al.dev(al.zeros(2)) == "cpu"
if backend == "jax":
    import jax

    jax.jit(lambda x: al.arange(2, device=al.dev(x)) + x)(al.zeros(2))
DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "float16", "bfloat16", "float32", "complex64",
          "int64", "uint64", "float64", "complex128"]


def data(dtype: str, rank: int) -> np.ndarray:
    """Rank ``rank``'s leaf: int8 sums wrap, uint64 max needs the top bit, floats are not integers."""
    base = np.array([100, 3, 120, 7, 1, 0], dtype=np.float64) + 5 * rank
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        base = base / 4 - rank
    if dtype.startswith("complex"):
        return (base + 1j * (base[::-1] - rank)).astype(dtype)
    if dtype == "uint64":
        return np.array([2**63 + rank, 2**64 - 1 - rank, 1, 2, 3, 4], dtype=np.uint64)
    return base.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype))


def same(got, want) -> None:
    got = al.to_backend(got, "numpy")
    assert np.dtype(got.dtype) == np.dtype(want.dtype) and np.array_equal(got, want), (got, want)


for dtype in DTYPES:
    rows = np.stack([data(dtype, q) for q in range(n)])
    native = al.Dtype(dtype) in al.valid_dtypes(backend)  # jax: 64-bit with jax_enable_x64 only
    for wrap in [lambda a: al.to_backend(a, backend)] * native + [np.asarray]:  # the backend's, NumPy's leaves
        leaf = wrap(data(dtype, r))
        same(dist.all_reduce(leaf, "sum"), np.sum(rows, axis=0, dtype=rows.dtype))
        if not dtype.startswith("complex"):
            same(dist.all_reduce(leaf, "max"), rows.max(axis=0))
            same(dist.all_reduce(leaf, "min"), rows.min(axis=0))
        mean = dist.all_reduce(leaf, "mean")
        assert al.Dtype(mean.dtype) == al.Dtype(al.mean(wrap(rows[0])).dtype), (dtype, mean.dtype)
        assert np.allclose(al.to_backend(mean, "numpy").astype(np.complex128), rows.astype(np.complex128).mean(axis=0),
                           rtol=1e-2), (dtype, mean)
        same(dist.all_gather({"x": leaf})["x"], rows)
        same(dist.broadcast([leaf], root=1)[0], rows[1])
flags = np.array([True, r == 0, False])
for wrap in (lambda a: al.to_backend(a, backend), np.asarray):
    same(dist.all_reduce(wrap(flags), "max"), np.array([True, True, False]))
    same(dist.all_reduce(wrap(flags), "min"), np.array([True, False, False]))
    same(dist.all_gather(wrap(flags)), np.stack([[True, q == 0, False] for q in range(n)]))
ints = al.to_backend(np.arange(3, dtype=np.int32) + r, backend)
mean = dist.all_reduce(ints, "mean")
assert al.Dtype(mean.dtype) == al.float32 and np.allclose(al.to_backend(mean, "numpy"), np.arange(3) + 0.5)
scalar = dist.all_gather(al.to_backend(np.float32(r), backend))
assert tuple(scalar.shape) == (n,)

for bad in (np.ones(2 + r, np.float32), np.ones(2, [np.float32, np.int32][r])):  # shape, then dtype
    try:
        dist.all_reduce({"g": al.to_backend(bad, backend)})
        raise AssertionError("mismatch accepted")
    except dist.DistributedMismatchError as error:
        assert "differ" in str(error)
same(dist.all_reduce(al.to_backend(np.ones(2, np.float32), backend)), np.full(2, n, np.float32))  # still in step

train(backend)
dist.barrier()
print("OK", backend, flush=True)
if r == 0:  # rank 1 never calls: a timeout, not a hang
    try:
        dist.all_reduce(np.ones(2, np.float32), timeout=1.5)
        raise AssertionError("no timeout")
    except dist.DistributedTimeoutError:
        print("TIMEOUT", flush=True)
    if backend == "tensorflow":  # its collectives are aborted after a timeout: later ones are refused at once
        started = time.monotonic()
        try:
            dist.all_reduce(np.ones(2, np.float32), timeout=30)
            raise AssertionError("a collective ran after the abort")
        except dist.DistributedError as error:
            assert "aborted" in str(error) and time.monotonic() - started < 5, error
else:
    time.sleep(3)
