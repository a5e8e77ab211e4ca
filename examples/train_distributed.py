"""The main job's transformer trained data-parallel on 2 processes, on each of jax, torch and
tensorflow, with the same losses and parameters as one process on the whole batch.

The model, its loss, its optimizer (clip by global norm, Adam, weight decay, warm-up + cosine
schedule) and its batches are those of ``examples/train_transformer.py``, imported from it. For each
backend this script runs:

* **one process**: the whole batch of 32 windows per step;
* **two processes**, started by arraylayer's launcher (``python -m arraylayer launch --nproc 2
  --backend B``): each rank takes its half of every batch with ``arraylayer.distributed.shard``,
  computes its gradients, and ``data_parallel(optimizer)`` averages them over the ranks before the
  update, as DDP does. Rank 0 writes its losses (the mean of the ranks' losses) and parameters.

Then it checks, per backend, that every step's loss agrees with the one-process run within
``--rtol`` (1e-4) and the final parameters within ``--atol`` (2e-5): the two runs compute the same
float32 sums in another order (two half-batch means averaged instead of one mean), so they differ
by a few ulps (measured: losses within 1.4e-7 relatively after 25 steps). The attention's key biases
are left out of the parameter check (:func:`noise_only` says why). It exits with status 1 if
anything disagrees.

The gradients are computed by each framework's compiler (``jax.jit``, ``tf.function``; torch runs
eagerly on one thread, as in the transformer job), the all-reduce runs between the compiled
gradient and the compiled update (collectives inside a compiled step are issue 41's next step),
and the engine is the one ``arraylayer.distributed`` uses for the backend (docs/distributed.rst).

Usage::

    python examples/train_distributed.py                           # jax, torch, tensorflow; 25 steps
    python examples/train_distributed.py --backends torch --steps 10
    python -m arraylayer launch --nproc 2 --backend jax examples/train_distributed.py --backends jax --rank-job OUT.npz
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import arraylayer as al  # noqa: E402
import arraylayer.distributed as dist  # noqa: E402
from arraylayer.runtime.compilers import compiler  # noqa: E402
from arraylayer.runtime.logs import quiet_framework_logs  # noqa: E402
from train_transformer import Config, batches, corpus, encode, init_params, logits_of, optimizer  # noqa: E402

BACKENDS = ("jax", "torch", "tensorflow")
EAGER = frozenset({"torch"})  # torch.compile takes minutes on 2 CPU cores for this model


def parts(config: Config, backend: str) -> tuple[Callable[..., Any], Callable[..., Any], al.optim.Optimizer]:
    """The compiled gradient, the compiled update and the optimizer of ``backend``."""
    plain = optimizer(config)

    def loss_fn(params: Any, x: Any, y: Any) -> Any:
        return al.nn.cross_entropy(logits_of(params, x, config.heads), y)

    def gradient(params: Any, x: Any, y: Any) -> tuple[Any, Any]:
        return al.value_and_grad(loss_fn)(params, x, y)

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        return plain.update(grads, state, params)

    wrap = (lambda f: f) if backend in EAGER else compiler(backend)
    return wrap(gradient), wrap(update), plain


def train(config: Config, backend: str, world: int) -> tuple[list[float], dict[str, Any]]:
    """Train ``config.steps`` steps on this process's share of every batch; the losses (averaged
    over the ranks) and the final parameters as NumPy arrays."""
    chars, ids = encode(corpus())
    xs, ys = batches(ids, config)
    gradient, update, opt = parts(config, backend)
    losses = []
    with al.use_backend(backend):
        params = init_params(config, len(chars))
        state = opt.init(params)
        for x, y in zip(xs, ys, strict=True):
            if world > 1:
                x, y = dist.shard(x), dist.shard(y)
            loss, grads = gradient(params, al.asarray(x), al.asarray(y))
            if world > 1:  # what dist.data_parallel(optimizer).update does first, here outside the compiled update
                grads, loss = dist.all_reduce((grads, loss), "mean")
            params, state = update(grads, state, params)
            losses.append(float(loss))
    return losses, al.tree_map(lambda leaf: np.asarray(al.to_backend(leaf, "numpy")), params)


def flat(params: Any) -> dict[str, np.ndarray]:
    """The parameters as ``{"blocks/0/attention/k/b": array, ...}``, the form an ``.npz`` file holds."""
    return {"/".join(map(str, path)): leaf for path, leaf in zip(al.tree_paths(params), al.tree_leaves(params),
                                                                  strict=True)}


def noise_only(name: str) -> bool:
    """The attention's key bias: it adds one number to every score of a query, which softmax ignores,
    so its gradient is zero in exact arithmetic and rounding noise in float32; Adam divides that
    noise by its own size and steps by about the learning rate either way, so the bias is noise in
    both runs and is left out of the parameter check (the losses, which it cannot move, include it)."""
    return name.endswith("attention/k/b")


def rank_job(config: Config, backend: str, out: str) -> None:
    """What each rank of the launcher runs; rank 0 saves losses and parameters to ``out``."""
    al.set_backend(backend)  # before initialize: the backend picks the engine
    dist.initialize(timeout=120)
    try:
        losses, params = train(config, backend, dist.world_size())
        if dist.rank() == 0:
            np.savez(out, losses=np.asarray(losses), **flat(params))
        dist.barrier()
    except BaseException:  # shown before shutdown: an engine may end the process while leaving
        traceback.print_exc()
        sys.stderr.flush()
        raise
    finally:
        dist.shutdown()


def two_processes(config: Config, backend: str, folder: str) -> tuple[list[float], dict[str, np.ndarray], float]:
    """The launcher's 2-rank run of ``backend``: its losses, parameters and wall time."""
    out = os.path.join(folder, f"{backend}-2.npz")
    command = [sys.executable, "-m", "arraylayer", "launch", "--nproc", "2", "--backend", backend,
               os.path.abspath(__file__), "--rank-job", out, "--backends", backend, "--steps", str(config.steps)]
    began = time.perf_counter()
    finished = subprocess.run(command, capture_output=True, text=True, timeout=900)
    if finished.returncode != 0:
        raise SystemExit(f"the 2-process run on {backend} failed (status {finished.returncode}):\n"
                         f"{finished.stdout[-3000:]}{finished.stderr[-3000:]}")
    with np.load(out) as saved:
        losses = [float(v) for v in saved["losses"]]
        params = {k: saved[k] for k in saved.files if k != "losses"}
    return losses, params, time.perf_counter() - began


def compare(backend: str, one: tuple[list[float], dict[str, np.ndarray]],
            two: tuple[list[float], dict[str, np.ndarray]], rtol: float, atol: float) -> list[str]:
    """What disagrees between the one-process and the two-process run (nothing: an empty list)."""
    problems = []
    loss_gap = max(abs(a - b) / abs(a) for a, b in zip(one[0], two[0], strict=True))
    if loss_gap > rtol:
        problems.append(f"{backend}: a step's loss differs by {loss_gap:.2e} relatively (allowed {rtol})")
    checked = [k for k in one[1] if not noise_only(k)]
    param_gap = max(float(np.max(np.abs(one[1][k] - two[1][k]))) for k in checked)
    if param_gap > atol:
        problems.append(f"{backend}: the parameters differ by up to {param_gap:.2e} (allowed {atol})")
    print(f"{backend:<10} 1 process vs 2: losses within {loss_gap:.1e} relatively, parameters within "
          f"{param_gap:.1e} (the key biases aside: noise_only); loss {one[0][0]:.4f} -> {one[0][-1]:.4f}",
          flush=True)
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--backends", default=",".join(BACKENDS), help="comma-separated, of " + ", ".join(BACKENDS))
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of every step's loss")
    parser.add_argument("--atol", type=float, default=2e-5, help="absolute tolerance of the final parameters")
    parser.add_argument("--rank-job", metavar="OUT", help=argparse.SUPPRESS)  # what the launcher's ranks run
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be at least 2")
    # The transformer's warm-up (20 steps) shortened to a fifth of a short run.
    config = dataclasses.replace(Config(), steps=args.steps, warmup=min(Config.warmup, max(1, args.steps // 5)))
    quiet_framework_logs()
    if args.rank_job:
        rank_job(config, args.backends.split(",")[0], args.rank_job)
        return 0
    backends = [b for b in args.backends.split(",") if b]
    unknown = sorted(set(backends) - set(BACKENDS))
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(BACKENDS)}")
    problems = []
    with tempfile.TemporaryDirectory() as folder:
        for backend in backends:
            began = time.perf_counter()
            losses, params = train(config, backend, 1)
            one = (losses, flat(params))
            alone = time.perf_counter() - began
            two_losses, two_params, both = two_processes(config, backend, folder)
            problems += compare(backend, one, (two_losses, two_params), args.rtol, args.atol)
            print(f"{'':<10} {config.steps} steps: 1 process {alone:.1f} s, 2 processes {both:.1f} s "
                  f"(with start-up)", flush=True)
    for problem in problems:
        print("DISAGREES:", problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
