"""Adam on a linear model: 2 ranks with half the batch each against 1 process on the whole batch."""

import sys

import numpy as np

import arraylayer as al
import arraylayer.distributed as dist

backend = sys.argv[1]
dist.initialize(timeout=20)
rng = np.random.default_rng(0)
X, Y = rng.normal(size=(16, 5)).astype(np.float32), rng.normal(size=(16, 1)).astype(np.float32)


def loss(p, x, y):
    return al.mean((al.matmul(x, p["w"]) + p["b"] - y) ** 2)


def train(opt, x, y):
    p = {"w": al.to_backend(np.zeros((5, 1), np.float32), backend), "b": al.to_backend(np.zeros(1, np.float32), backend)}
    state = opt.init(p)
    for _ in range(25):
        p, state = opt.update(al.grad(loss)(p, x, y), state, p)
    return {k: al.to_backend(v, "numpy") for k, v in p.items()}


xb, yb = al.to_backend(X, backend), al.to_backend(Y, backend)
mine = train(dist.data_parallel(al.optim.adam(0.05)), dist.shard(xb), dist.shard(yb))
whole = train(al.optim.adam(0.05), xb, yb)
for k in mine:
    assert np.max(np.abs(mine[k] - whole[k])) <= 2e-5, (k, mine[k], whole[k])
gathered = dist.all_gather(mine)
assert all(np.array_equal(gathered[k][0], gathered[k][1]) for k in mine)
print("OK", backend)
