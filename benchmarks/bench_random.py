"""1e7 float32 uniforms: arraylayer.random.uniform against each framework's own generator
(dask: both computed, on dask's default threaded scheduler).

Run: PYTHONPATH=. python benchmarks/bench_random.py [n]
"""

from __future__ import annotations

import sys
import time

import numpy as np

import arraylayer as al


def _best(fn, repeats: int = 3) -> float:
    fn()  # warm-up (and compilation for jax.jit)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


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
        return u
    return draw


def main(n: int = 10_000_000) -> None:
    print(f"{n:.0e} float32 uniforms, best of 3, seconds")
    print(f"{'backend':<12}{'arraylayer':>12}{'native':>10}{'ratio':>8}")
    for backend in al.installed_backends():
        ours, native = _best(_ours(backend, n)), _best(_native(backend, n))
        print(f"{backend:<12}{ours:>12.3f}{native:>10.3f}{ours / native:>8.1f}")


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 10_000_000)
