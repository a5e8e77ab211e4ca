"""arraylayer's low-precision dtypes against each framework's own float8 work.

1. ``arraylayer.astype`` of n float32 values to float8_e4m3fn and float8_e5m2 and back, next to the
   framework's own cast (``astype``/``.to``/``tf.cast``) on the same array, per backend: NumPy, torch
   and TensorFlow eager, JAX under jax.jit (both sides).
2. ``lowp.scaled_matmul`` (decode both operands to float32, float32 matmul, scale) next to JAX's native
   float8 matmul (``jnp.matmul(a_f8, b_f8, preferred_element_type=float32)``, scaled alike), both jitted.
3. The computation rule (``arraylayer.add``/``exp``/``sum`` on float8_e4m3fn arrays: element-wise
   functions gather from a table of float32 results rounded once; reductions in float32) on each
   backend's own float8_e4m3fn arrays (eager; JAX's under jax.jit), next to JAX's native float8
   ``jnp.add``/``jnp.exp``/``jnp.sum`` under jax.jit.

Timing: after a warm-up, ``--rounds`` paired rounds (ours, native, ours, native, ...), each timing
enough calls of one side to take a few milliseconds; the figure is the median over rounds of the
per-round ratio ours / native (below 1: ours is faster), so load that comes and goes slows both
sides of a round alike. ``--per-call N`` times the casts (1. only) one call at a time instead: N
pairs of single calls, ours first in every other pair, and the median of the N ratios (what a program
that casts now and then sees, where a batch of calls keeps the caches and the threads warm; written to
results/lowp_per_call.json). Figures are printed as a table and written to benchmarks/results/lowp.json
with the load average and torch's thread count.

Run: PYTHONPATH=. python benchmarks/bench_lowp.py [-n 1e6] [--rule-n 250000] [--rounds 15]
     [--torch-threads N] [--backends numpy,jax,torch,tensorflow] [--out FILE] [--quick] [--per-call N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "lowp.json"
PER_CALL_RESULTS = RESULTS.with_name("lowp_per_call.json")
CAST_FORMATS = ("float8_e4m3fn", "float8_e5m2")
RULE_FUNCTIONS = ("add", "exp", "sum")
RULE_FORMAT = "float8_e4m3fn"
BACKENDS = ("numpy", "jax", "torch", "tensorflow")


def paired_ratio(ours: Callable[[], object], native: Callable[[], object], rounds: int) -> dict[str, float]:
    """Median over ``rounds`` interleaved rounds of (ours' time / native's time), and each side's
    median time per call in ms; every round times ``calls`` calls of each, chosen so that a round
    takes about 40 ms (a longer window spreads a loaded machine's stalls over both sides)."""
    for fn in (ours, native, ours, native):
        fn()
    pair = []
    for _ in range(3):
        start = time.perf_counter()
        ours(), native()
        pair.append(time.perf_counter() - start)
    calls = max(1, min(500, int(0.04 / max(min(pair), 1e-7))))
    ratios, seconds = [], ([], [])
    for _ in range(rounds):
        for side, fn in zip(seconds, (ours, native), strict=True):
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            side.append((time.perf_counter() - start) / calls)
        ratios.append(seconds[0][-1] / seconds[1][-1])
    return {"ratio": statistics.median(ratios), "ours_ms": statistics.median(seconds[0]) * 1e3,
            "native_ms": statistics.median(seconds[1]) * 1e3}


def paired_calls(ours: Callable[[], object], native: Callable[[], object], calls: int) -> dict[str, float]:
    """Median over ``calls`` pairs of single calls (ours first in every other pair) of ours' time /
    native's, and each side's median time per call in ms."""
    for fn in (ours, native, ours, native):
        fn()
    clock, ratios, seconds = time.perf_counter, [], ([], [])
    for i in range(calls):
        order = (0, 1) if i % 2 else (1, 0)
        pair = [0.0, 0.0]
        for side in order:
            fn = (ours, native)[side]
            start = clock()
            fn()
            pair[side] = clock() - start
        ratios.append(pair[0] / pair[1])
        seconds[0].append(pair[0])
        seconds[1].append(pair[1])
    return {"ratio": statistics.median(ratios), "ours_ms": statistics.median(seconds[0]) * 1e3,
            "native_ms": statistics.median(seconds[1]) * 1e3}


def _runner(backend: str) -> tuple[Callable, Callable, Callable]:
    """(to this backend's array, compile a function, wait for a result)."""
    if backend == "numpy":
        return (lambda a: a), (lambda fn: fn), (lambda y: y)
    if backend == "jax":
        import jax
        import jax.numpy as jnp

        return jnp.asarray, jax.jit, (lambda y: y.block_until_ready())
    if backend == "torch":
        import torch

        def to_torch(a: np.ndarray) -> object:
            if a.dtype.name.startswith("float8"):  # torch reads no ml_dtypes array: the bytes, viewed
                return torch.from_numpy(a.view(np.uint8)).view(getattr(torch, a.dtype.name))
            return torch.from_numpy(a)

        return to_torch, (lambda fn: fn), (lambda y: y)
    import tensorflow as tf

    def to_tf(a: np.ndarray) -> object:
        if a.dtype.name.startswith("float8"):
            return tf.cast(tf.constant(a.astype(np.float32)), getattr(tf.dtypes.experimental, a.dtype.name))
        return tf.constant(a)

    return to_tf, (lambda fn: fn), (lambda y: y._numpy() if hasattr(y, "_numpy") else y)


def _native_cast(backend: str, name: str) -> Callable:
    """The framework's own cast to the dtype ``name``."""
    if backend == "numpy":
        import ml_dtypes

        dtype = getattr(ml_dtypes, name, None) or np.dtype(name)
        return lambda x: x.astype(dtype)
    if backend == "jax":
        import jax.numpy as jnp

        return lambda x: x.astype(getattr(jnp, name))
    if backend == "torch":
        import torch

        dtype = getattr(torch, name)
        return lambda x: x.to(dtype)
    import tensorflow as tf

    dtype = getattr(tf, name, None) or getattr(tf.dtypes.experimental, name)
    return lambda x: tf.cast(x, dtype)


def cast_rows(backend: str, host: np.ndarray, rounds: int, per_call: int = 0) -> list[dict]:
    """Each format's cast of ``host`` scaled to the format's largest value (the way float8 data
    arrives: lowp.quantize's amax scaling), and back; and e4m3fn's cast of ``host`` unscaled, whose
    largest values (1 in 10**5 of them) are beyond e4m3fn's range (ml_dtypes gives NaN there).
    ``per_call``: timed as that many pairs of single calls (:func:`paired_calls`)."""
    import ml_dtypes

    import arraylayer as al

    to_native, compile_, wait = _runner(backend)
    cases = []
    for fmt in CAST_FORMATS:
        scaled = (host * (float(ml_dtypes.finfo(getattr(ml_dtypes, fmt)).max) / np.abs(host).max())).astype(np.float32)
        cases += [(f"float32 -> {fmt}", scaled, fmt),
                  (f"{fmt} -> float32", scaled.astype(getattr(ml_dtypes, fmt)), "float32")]
    cases.append((f"float32 -> {CAST_FORMATS[0]} (out of range)", host, CAST_FORMATS[0]))
    rows = []
    for what, values, target in cases:
        arg = to_native(values)
        ours = compile_(lambda v, target=target: al.astype(v, target))
        native = compile_(_native_cast(backend, target))
        timer, repeats = (paired_calls, per_call) if per_call else (paired_ratio, rounds)
        timing = timer(lambda ours=ours, arg=arg: wait(ours(arg)), lambda native=native, arg=arg: wait(native(arg)),
                       repeats)
        rows.append({"what": f"astype {what}" + (" per call" if per_call else ""), "backend": backend,
                     "n": host.size, **timing})
    return rows


def matmul_row(size: int, rounds: int) -> dict:
    import jax
    import jax.numpy as jnp

    from arraylayer import lowp

    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((size, size)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal((size, size)).astype(np.float32))
    qa, sa = lowp.quantize(a, RULE_FORMAT, axis=0)
    qb, sb = lowp.quantize(b, RULE_FORMAT, axis=1)
    ours = jax.jit(lambda x, y: lowp.scaled_matmul(x, sa, y, sb))
    native = jax.jit(lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32) * sa * sb)
    same = bool((np.asarray(ours(qa, qb)) == np.asarray(native(qa, qb))).all())
    timing = paired_ratio(lambda: ours(qa, qb).block_until_ready(), lambda: native(qa, qb).block_until_ready(), rounds)
    return {"what": f"scaled_matmul {size}^3 e4m3fn (same bits: {same})", "backend": "jax", "n": size, **timing}


def rule_rows(backend: str, n: int, rounds: int) -> list[dict]:
    """al.add/exp/sum on this backend's float8_e4m3fn arrays against JAX's native float8 under jax.jit."""
    import jax
    import jax.numpy as jnp
    import ml_dtypes

    import arraylayer as al

    rng = np.random.default_rng(1)
    a8, b8 = ((rng.standard_normal(n) * 4).astype(np.float32).astype(ml_dtypes.float8_e4m3fn) for _ in range(2))
    to_native, compile_, wait = _runner(backend)
    xa, xb, ja, jb = to_native(a8), to_native(b8), jnp.asarray(a8), jnp.asarray(b8)
    rows = []
    for name in RULE_FUNCTIONS:
        args, jargs = ((xa, xb), (ja, jb)) if name == "add" else ((xa,), (ja,))
        ours, native = compile_(getattr(al, name)), jax.jit(getattr(jnp, name))
        timing = paired_ratio(lambda ours=ours, args=args: wait(ours(*args)),
                              lambda native=native, jargs=jargs: native(*jargs).block_until_ready(), rounds)
        rows.append({"what": f"rule {name} {RULE_FORMAT} vs JAX native", "backend": backend, "n": n, **timing})
    return rows


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=float, default=1e6, help="values per cast (default 1e6)")
    parser.add_argument("--rule-n", type=float, default=250_000, help="values per rule call (default 250,000)")
    parser.add_argument("--size", type=int, default=512, help="square matmul size (default 512)")
    parser.add_argument("--rounds", type=int, default=15, help="paired rounds per figure (default 15)")
    parser.add_argument("--torch-threads", type=int, default=0, help="torch.set_num_threads (default: torch's)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--out", type=Path, default=None, help=f"the JSON file (default {RESULTS.name} in results/)")
    parser.add_argument("--per-call", type=int, default=0, metavar="N",
                        help="time the casts only, as N pairs of single calls (default: rounds of batches)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes, 3 rounds, no file")
    args = parser.parse_args()
    n, rule_n, size, rounds = ((int(1e5), 10_000, 64, 3) if args.quick
                               else (int(args.n), int(args.rule_n), args.size, args.rounds))
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    backends = [b for b in args.backends.split(",") if b == "numpy" or _installed(b)]
    torch_threads = None
    if "torch" in backends:
        import torch

        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        torch_threads = torch.get_num_threads()
    load_before = os.getloadavg()[0]
    host = (np.random.default_rng(0).standard_normal(n) * 100).astype(np.float32)
    rows = [row for b in backends for row in cast_rows(b, host, rounds, args.per_call)]
    if _installed("jax") and not args.per_call:
        rows.append(matmul_row(size, rounds))
        rows += [row for b in backends for row in rule_rows(b, rule_n, rounds)]
    load = (load_before, os.getloadavg()[0])
    print(f"{'what':<56} {'backend':<11} {'ours ms':>9} {'native ms':>10} {'ratio':>7}")
    for row in rows:
        print(f"{row['what']:<56} {row['backend']:<11} {row['ours_ms']:9.3f} {row['native_ms']:10.3f} {row['ratio']:7.2f}")
    pairs = f"{args.per_call} pairs of single calls" if args.per_call else f"{rounds} paired rounds"
    print(f"load average {load[0]:.1f} -> {load[1]:.1f} on {os.cpu_count()} cores; torch threads {torch_threads}; "
          f"ratio = median over {pairs} of ours / native")
    if not args.quick:
        out = args.out or (PER_CALL_RESULTS if args.per_call else RESULTS)
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"rows": rows, "cores": os.cpu_count(), "load_average": load,
                                   "torch_threads": torch_threads, "rounds": rounds, "per_call": args.per_call},
                                  indent=1) + "\n")


if __name__ == "__main__":
    main()
