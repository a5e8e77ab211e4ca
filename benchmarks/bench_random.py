"""1e7 float32 uniforms: arraylayer.models.random.uniform against each framework's own generator.

Each backend's pair is measured interleaved (ours, native, ours, native, ...) after one warm-up
call of each (jax.jit and tf.function compile there), and the best of each is kept, so a noisy
machine slows both sides alike. dask: both computed, on dask's default threaded scheduler.
PyTorch runs with its default intra-op threads unless --torch-threads is given.

Figures are printed and written to benchmarks/results/random.json.

Run: PYTHONPATH=. python benchmarks/bench_random.py [-n 1e7] [--repeats 5] [--backends numpy torch] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import arraylayer as al

RESULTS = Path(__file__).resolve().parent / "results" / "random.json"


def _native(backend: str, n: int):
    """Each framework's own uniform float32 generator, blocking until done."""
    if backend == "numpy":
        rng = np.random.default_rng(0)
        return lambda: rng.random(n, dtype=np.float32)
    if backend == "jax":
        import jax
        f = jax.jit(lambda k: jax.random.uniform(k, (n,)))
        k = jax.random.key(0)
        return lambda: f(k).block_until_ready()
    if backend == "torch":
        import torch
        return lambda: torch.rand(n)
    if backend == "dask":  # computed: a dask array is a graph until then
        import dask.array as da
        return lambda: da.random.default_rng(0).random(n, dtype=np.float32).compute()
    import tensorflow as tf
    g = tf.random.Generator.from_seed(0)
    return lambda: g.uniform((n,)).numpy()


def _ours(backend: str, n: int):
    with al.use_backend(backend):
        k = al.random.key(0)

    def draw():
        with al.use_backend(backend):
            u = al.random.uniform(k, (n,))
        if backend == "jax":
            u.block_until_ready()
        if backend == "dask":
            u = u.compute()
        if backend == "tensorflow":  # as the native side: the values on the host
            u = u.numpy()
        return u
    return draw


def _interleaved(ours, native, repeats: int) -> tuple[float, float]:
    """Best seconds of each, measured alternately after one warm-up call of each."""
    ours(), native()
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for i, fn in enumerate((ours, native)):
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best[0], best[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=float, default=1e7, help="uniforms per draw (default 1e7)")
    parser.add_argument("--repeats", type=int, default=5, help="interleaved pairs per backend (default 5)")
    parser.add_argument("--backends", nargs="+", default=None, help="default: every installed backend")
    parser.add_argument("--quick", action="store_true", help="1e6 uniforms, 2 repeats (a smoke run)")
    parser.add_argument("--output", type=Path, default=RESULTS, help=f"where to write the figures (default {RESULTS})")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch.set_num_threads for both sides (default: torch's own default)")
    args = parser.parse_args()
    if args.quick:
        args.n, args.repeats = 1e6, 2
    n = int(args.n)
    backends = args.backends or al.installed_backends()
    if "torch" in backends:
        import torch
        if args.torch_threads is not None:
            torch.set_num_threads(args.torch_threads)
        print(f"torch threads: {torch.get_num_threads()}")
    print(f"{n:.0e} float32 uniforms, best of {args.repeats} interleaved, seconds")
    print(f"{'backend':<12}{'arraylayer':>12}{'native':>10}{'ratio':>8}")
    rows = {}
    for backend in backends:
        ours, native = _interleaved(_ours(backend, n), _native(backend, n), args.repeats)
        rows[backend] = {"arraylayer_s": ours, "native_s": native, "ratio": ours / native}
        print(f"{backend:<12}{ours:>12.3f}{native:>10.3f}{ours / native:>8.1f}", flush=True)
    args.output.parent.mkdir(exist_ok=True)
    args.output.write_text(json.dumps({"n": n, "repeats": args.repeats, "cores": os.cpu_count(),
                                       "results": rows}, indent=2) + "\n")
    print(f"written to {args.output}")


if __name__ == "__main__":
    main()
