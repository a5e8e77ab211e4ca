"""One data-parallel training step on 2 processes: arraylayer's ``data_parallel`` against torch's DDP.

Run under the launcher (2 ranks on one host, torch's gloo engine):

    python -m arraylayer launch --nproc 2 benchmarks/bench_dp_step.py

The model is the same MLP (64-256-256-10, tanh, mean squared error) from the same initial parameters,
each rank on its 64 rows of a 128-row batch, Adam. arraylayer: ``al.value_and_grad`` then
``dist.data_parallel(al.optim.adam(...)).update`` (the gradient tree all-reduced in one call);
torch: ``DistributedDataParallel`` (bucketed all-reduce overlapped with the backward pass) and
``torch.optim.Adam``. The two are interleaved, step by step, after a warm-up; rank 0 prints the
medians and the ratio (arraylayer / DDP), and arraylayer's step without the all-reduce (plain Adam,
the local part of its cost). All are eager.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

import arraylayer as al
import arraylayer.distributed as dist

SIZES = (64, 256, 256, 10)
ROWS = 128
REPEATS = int(os.environ.get("BENCH_REPEATS", "30"))
RATE = 1e-3


def initial() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    p = {}
    for i, (m, n) in enumerate(zip(SIZES, SIZES[1:])):
        p[f"w{i}"] = (rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)
        p[f"b{i}"] = np.zeros(n, np.float32)
    return p


def forward(p, x):
    layers = len(SIZES) - 1
    for i in range(layers):
        x = al.matmul(x, p[f"w{i}"]) + p[f"b{i}"]
        if i < layers - 1:
            x = al.tanh(x)
    return x


def loss_fn(p, x, y):
    return al.mean((forward(p, x) - y) ** 2)


def arraylayer_step(x, y, parallel=True):
    import torch

    opt = dist.data_parallel(al.optim.adam(RATE)) if parallel else al.optim.adam(RATE)
    carry = [{k: torch.from_numpy(v.copy()) for k, v in initial().items()}]
    carry.append(opt.init(carry[0]))

    def step():
        loss, grads = al.value_and_grad(loss_fn)(carry[0], x, y)
        carry[0], carry[1] = opt.update(grads, carry[1], carry[0])
        return float(loss)

    return step


def ddp_step(x, y):
    import torch
    from torch.nn.parallel import DistributedDataParallel

    p = initial()
    layers = []
    for i in range(len(SIZES) - 1):
        linear = torch.nn.Linear(SIZES[i], SIZES[i + 1])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(p[f"w{i}"].T.copy()))
            linear.bias.copy_(torch.from_numpy(p[f"b{i}"]))
        layers += [linear, torch.nn.Tanh()]
    model = DistributedDataParallel(torch.nn.Sequential(*layers[:-1]))
    opt = torch.optim.Adam(model.parameters(), lr=RATE)

    def step():
        opt.zero_grad()
        loss = torch.mean((model(x) - y) ** 2)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def main() -> None:
    import torch

    dist.initialize(timeout=120)
    rng = np.random.default_rng(1)
    X = torch.from_numpy(rng.normal(size=(ROWS, SIZES[0])).astype(np.float32))
    Y = torch.from_numpy(rng.normal(size=(ROWS, SIZES[-1])).astype(np.float32))
    x, y = dist.shard(X), dist.shard(Y)
    ours, theirs, alone = arraylayer_step(x, y), ddp_step(x, y), arraylayer_step(x, y, parallel=False)
    for _ in range(3):  # warm-up; the two train the same model, so their losses agree
        a, b = ours(), theirs()
        alone()
        assert abs(a - b) <= 1e-4 * max(1.0, abs(b)), (a, b)
    times: dict[str, list[float]] = {"arraylayer": [], "ddp": [], "alone": []}
    for _ in range(REPEATS):
        for name, f in (("arraylayer", ours), ("ddp", theirs), ("alone", alone)):
            start = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - start)
    a, o = statistics.median(times["arraylayer"]), statistics.median(times["ddp"])
    if dist.rank() == 0:
        print(f"torch MLP {'-'.join(map(str, SIZES))}, {ROWS // dist.world_size()} rows/rank: arraylayer "
              f"{1e3 * a:7.2f} ms  DDP {1e3 * o:7.2f} ms  ratio {a / o:5.2f}  (arraylayer without the all_reduce "
              f"{1e3 * statistics.median(times['alone']):7.2f} ms)", flush=True)
    dist.barrier()
    dist.shutdown()


if __name__ == "__main__":
    main()
