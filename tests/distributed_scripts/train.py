"""Adam on a linear model: 2 ranks with half the batch each against 1 process on the whole batch, eagerly
and inside the world's compiler (compiled_steps.py)."""

import os
import sys
import tempfile

import numpy as np
from compiled_steps import compiled_adam, gather_and_broadcast, mixed_reduce, refusals

import arraylayer as al
import arraylayer.distributed as dist


def loss(p, x, y):
    return al.mean((al.matmul(x, p["w"]) + p["b"] - y) ** 2)


def train(opt, x, y, backend):
    p = {"w": al.to_backend(np.zeros((5, 1), np.float32), backend), "b": al.to_backend(np.zeros(1, np.float32), backend)}
    state = opt.init(p)
    for _ in range(25):
        p, state = opt.update(al.grad(loss)(p, x, y), state, p)
    return {k: al.to_backend(v, "numpy") for k, v in p.items()}


def main(backend: str) -> None:
    """Adam, 25 steps: data_parallel on half batches against the whole batch in this process."""
    dist.initialize(timeout=60)  # generous: CI machines are shared
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(16, 5)).astype(np.float32), rng.normal(size=(16, 1)).astype(np.float32)
    xb, yb = al.to_backend(X, backend), al.to_backend(Y, backend)
    mine = train(dist.data_parallel(al.optim.adam(0.05)), dist.shard(xb), dist.shard(yb), backend)
    whole = train(al.optim.adam(0.05), xb, yb, backend)
    for k in mine:
        assert np.max(np.abs(mine[k] - whole[k])) <= 2e-5, (k, mine[k], whole[k])
    gathered = dist.all_gather(mine)
    assert all(np.array_equal(gathered[k][0], gathered[k][1]) for k in mine)
    compiled_adam(backend, dist.shard(xb), dist.shard(yb), mine, 25)
    gather_and_broadcast(backend)
    mixed_reduce(backend)
    refusals(backend)
    # rank 0 writes, every rank returns once the file is whole, and it loads in one process on NumPy
    folder = dist.broadcast(np.frombuffer(tempfile.mkdtemp().encode().ljust(256, b"\0"), np.uint8).copy())
    path = os.path.join(bytes(np.asarray(folder)).rstrip(b"\0").decode(), "run.safetensors")
    dist.save(path, {"params": mine}, step=25)
    tree, step = al.checkpoint.load(path, backend="numpy")
    assert step == 25 and all(np.array_equal(tree["params"][k], mine[k]) for k in mine)
    try:
        dist.save(os.path.join(path, "not-a-folder", "x.safetensors"), {"params": mine})
    except Exception as error:  # rank 0's own error, a DistributedError naming it on the others
        assert (type(error).__name__ == "DistributedError") == (dist.rank() != 0), error
        assert "could not save" in str(error) or dist.rank() == 0, error
    else:
        raise AssertionError("a checkpoint under a file was written")
    print("OK", backend)


if __name__ == "__main__":
    main(sys.argv[1])
    dist.shutdown()  # leave the world before the interpreter exits: gloo's threads abort a process that does not
