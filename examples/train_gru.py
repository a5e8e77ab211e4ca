"""A recurrent example: a character-level GRU, written once, trained on jax, torch and tensorflow with
the same losses, and scored on NumPy.

The corpus is train_transformer.py's small grammar (generated, nothing downloaded). The model: a
character embedding, ``arraylayer.layers.gru`` (its loop over time is ``arraylayer.scan``: a lax scan
under ``jax.jit``, a ``tf.while_loop`` under ``tf.function``, a Python loop in eager torch) and a
dense head; the loss ``nn.cross_entropy`` of the next character; Adam with gradient clipping. Every
backend starts from the same weights (one key) and sees the same batches. jax runs under ``jax.jit``,
tensorflow under ``tf.function``, torch eagerly (``--compile-torch`` puts it under ``torch.compile``:
minutes on 2 cores). At the end, NumPy, which has no autodiff, computes the loss of each backend's
trained parameters on a held-out batch: the fourth backend agrees too.

The check: every step's loss agrees across the backends within ``--rtol`` (1e-4; the same float32
arithmetic in other orders differs by a few ulps, which training amplifies little in 150 steps), and
so do the held-out losses on NumPy. Exit status 1 if anything disagrees.

Usage::

    python examples/train_gru.py                    # jax, torch, tensorflow; about 40 s of CPU
    python examples/train_gru.py --steps 60 --backends jax,torch
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

import arraylayer as al
from arraylayer import layers
from arraylayer.runtime.compilers import compiler
from arraylayer.runtime.logs import quiet_framework_logs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_transformer import corpus, encode  # noqa: E402 - the same generated text

TRAINED = ("jax", "torch", "tensorflow")
SEED = 0


@dataclass(frozen=True)
class Config:
    steps: int = 150
    features: int = 32
    hidden: int = 64
    length: int = 24
    batch: int = 16
    rate: float = 1e-2
    clip: float = 1.0


def init_params(config: Config, vocabulary: int) -> dict[str, Any]:
    """Weights from one key, on the active backend (the same numbers on every backend)."""
    k = al.random.split(al.random.key(SEED), 3)
    return {"embed": layers.embedding.init(k[0], vocabulary, config.features, stddev=0.1),
            "gru": layers.gru.init(k[1], config.features, config.hidden),
            "head": layers.dense.init(k[2], config.hidden, vocabulary)}


def loss_of(params: dict[str, Any], x: Any, y: Any) -> Any:
    """Mean next-character cross-entropy of ids ``x`` (batch, length) against ``y``."""
    ys, _ = layers.gru.apply(params["gru"], layers.embedding.apply(params["embed"], x))
    return al.nn.cross_entropy(layers.dense.apply(params["head"], ys), y)


def optimizer(config: Config) -> al.optim.Optimizer:
    T = al.transforms
    return al.optim.from_transforms(T.clip_by_global_norm(config.clip), T.scale_by_adam(),
                                    T.scale_by_learning_rate(config.rate))


def make_step(config: Config):
    opt = optimizer(config)

    def train_step(params: dict[str, Any], state: Any, x: Any, y: Any) -> tuple[Any, Any, Any]:
        loss, grads = al.value_and_grad(loss_of)(params, x, y)
        params, state = opt.update(grads, state, params)
        return params, state, loss

    return train_step


def batches(ids: np.ndarray, config: Config, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets (count, batch, length): windows at starts drawn on NumPy, shared by all."""
    with al.use_backend("numpy"):
        starts = np.asarray(al.random.randint(al.random.key(seed), (count, config.batch), 0,
                                              len(ids) - config.length - 1))
    windows = starts[..., None] + np.arange(config.length)
    return ids[windows], ids[windows + 1]


def train(backend: str, config: Config, vocabulary: int, data: tuple[np.ndarray, np.ndarray],
          compiled: bool = True) -> tuple[list[float], Any, float]:
    """Train on ``backend``: the step losses, the final parameters, the seconds taken."""
    step = make_step(config)
    step = compiler(backend)(step) if compiled else step
    began = time.perf_counter()
    losses = []
    with al.use_backend(backend):
        params = init_params(config, vocabulary)
        state = optimizer(config).init(params)
        for x, y in zip(*data, strict=True):
            params, state, loss = step(params, state, al.asarray(x), al.asarray(y))
            losses.append(float(loss))
    return losses, params, time.perf_counter() - began


def held_out_loss(params: Any, data: tuple[np.ndarray, np.ndarray]) -> float:
    """The loss of ``params`` (any backend's) on NumPy, over one held-out batch."""
    with al.use_backend("numpy"):
        host = al.tree_map(lambda leaf: np.asarray(al.backend_of(leaf).to_numpy(leaf)), params)
        return float(loss_of(host, data[0][0], data[1][0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=Config.steps)
    parser.add_argument("--backends", default=",".join(b for b in TRAINED if importlib.util.find_spec(b)))
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--compile-torch", action="store_true", help="torch under torch.compile (minutes)")
    options = parser.parse_args(argv)
    quiet_framework_logs()
    config = Config(steps=options.steps)
    chars, ids = encode(corpus())
    data = batches(ids, config, config.steps, SEED + 1)
    held = batches(ids, config, 1, SEED + 2)
    results = {}
    for backend in options.backends.split(","):
        compiled = backend != "torch" or options.compile_torch
        losses, params, seconds = train(backend, config, len(chars), data, compiled)
        results[backend] = (losses, held_out_loss(params, held))
        print(f"{backend:<11} loss {losses[0]:.4f} -> {losses[-1]:.4f} in {config.steps} steps, {seconds:.1f} s "
              f"({'compiled' if compiled else 'eager'}); held-out loss on numpy {results[backend][1]:.5f}")
    first = next(iter(results.values()))
    worst = max(float(np.max(np.abs(np.subtract(losses, first[0])) / np.abs(first[0]))) for losses, _ in results.values())
    held_worst = max(abs(h - first[1]) / abs(first[1]) for _, h in results.values())
    agree = worst <= options.rtol and held_worst <= options.rtol
    print(f"step losses agree within {worst:.1e} (relative), held-out losses within {held_worst:.1e}: "
          f"{'ok' if agree else f'DISAGREE (rtol {options.rtol})'}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
