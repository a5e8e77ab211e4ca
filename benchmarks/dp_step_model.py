"""What the data-parallel step benchmarks share: the model, its initial parameters, the batch, the
arraylayer loss, the interleaved timing and rank 0's report (bench_dp_step.py; dp_step_torch.py,
dp_step_jax.py, dp_step_tf.py each build their engine's steps from these).

The model is an MLP (64-256-256-10, tanh, mean squared error) trained with Adam (lr 1e-3), each of
the 2 ranks on its 64 rows of a 128-row batch; every step function returns the step's loss as a float.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import arraylayer as al
import arraylayer.distributed as dist

SIZES = (64, 256, 256, 10)
ROWS = 128
RATE = 1e-3
B1, B2, EPS = 0.9, 0.999, 1e-8  # al.optim.adam's defaults, written out for the native Adams
REPEATS = int(os.environ.get("BENCH_REPEATS", "30"))
WARMUP = 3
#: the marker of rank 0's result line, which bench_dp_step.py's driver reads from the launch's output
MARK = "DPSTEP"


def layers() -> int:
    return len(SIZES) - 1


def initial() -> dict[str, np.ndarray]:
    """The initial parameters (``w{i}`` of shape (in, out), ``b{i}``), the same on every rank and engine."""
    rng = np.random.default_rng(0)
    p = {}
    for i, (m, n) in enumerate(zip(SIZES, SIZES[1:], strict=False)):
        p[f"w{i}"] = (rng.normal(size=(m, n)) / np.sqrt(m)).astype(np.float32)
        p[f"b{i}"] = np.zeros(n, np.float32)
    return p


def batch() -> tuple[np.ndarray, np.ndarray]:
    """This rank's part of the global batch (inputs, targets)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(ROWS, SIZES[0])).astype(np.float32)
    Y = rng.normal(size=(ROWS, SIZES[-1])).astype(np.float32)
    return dist.shard(X), dist.shard(Y)


def forward(p: Any, x: Any, matmul: Callable = al.matmul, tanh: Callable = al.tanh) -> Any:
    """The MLP; ``matmul`` and ``tanh`` default to arraylayer's (the native steps pass their own)."""
    for i in range(layers()):
        x = matmul(x, p[f"w{i}"]) + p[f"b{i}"]
        if i < layers() - 1:
            x = tanh(x)
    return x


def loss_fn(p: Any, x: Any, y: Any) -> Any:
    return al.mean((forward(p, x) - y) ** 2)


def adam_moments(g: Any, m: Any, v: Any, t: Any, sqrt: Callable) -> tuple[Any, Any, Any]:
    """One native Adam update of one leaf: (the parameter's decrement, new m, new v); ``t`` counts from 1."""
    m = B1 * m + (1 - B1) * g
    v = B2 * v + (1 - B2) * g * g
    return RATE * (m / (1 - B1 ** t)) / (sqrt(v / (1 - B2 ** t)) + EPS), m, v


def replicated_adam_step(params: Any, x: Any, y: Any) -> Callable[[], float]:
    """arraylayer's step of the jax and tensorflow worlds: ``dist.replicated_step`` of a
    ``data_parallel`` Adam update from ``params`` (the engine's own arrays), each process on its part."""
    opt = dist.data_parallel(al.optim.adam())

    def update(carry: Any, x: Any, y: Any) -> Any:
        loss, grads = al.value_and_grad(loss_fn)(carry[0], x, y)
        return loss, opt.update(grads, carry[1], carry[0])

    train = dist.replicated_step(update)
    carry = [(params, opt.init(params))]

    def step() -> float:
        loss, carry[0] = train(carry[0], x, y)
        return float(loss)

    return step


def interleaved(cases: dict[str, Callable[[], float]], agree: tuple[str, ...], repeats: int = REPEATS) -> dict[str, Any]:
    """Warm every case up (the losses of the cases named in ``agree`` must agree: the same model from the
    same parameters, the same averaged gradients), then time them step by step, interleaved; the
    medians in ms and the quartiles."""
    for _ in range(WARMUP):
        losses = {name: f() for name, f in cases.items()}
        want = losses[agree[0]]
        for name in agree:
            assert abs(losses[name] - want) <= 1e-4 * max(1.0, abs(want)), (name, losses[name], agree[0], want)
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, f in cases.items():
            start = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - start)
    return {name: {"median_ms": 1e3 * statistics.median(t),
                   "quartiles_ms": [1e3 * q for q in statistics.quantiles(t, n=4)[::2]]} for name, t in times.items()}


def report(backend: str, mode: str, ours: str, native: str, results: dict[str, Any]) -> None:
    """Rank 0 prints one result line (``MARK`` then JSON) with the ratio ``ours`` / ``native``."""
    if dist.rank() == 0:
        ratio = results[ours]["median_ms"] / results[native]["median_ms"]
        line = {"backend": backend, "mode": mode, "ours": ours, "native": native, "ratio": round(ratio, 4),
                "ranks": dist.world_size(), "rows_per_rank": ROWS // dist.world_size(), "repeats": REPEATS,
                "cases": results}
        print(MARK, json.dumps(line), flush=True)
        print(f"{backend} {mode}: " + "  ".join(f"{k} {v['median_ms']:.2f} ms" for k, v in results.items())
              + f"  ratio {ours}/{native} {ratio:.3f}", flush=True)
