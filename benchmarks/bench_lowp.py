"""arraylayer.lowp against each framework's own float8 work.

1. The cast of n float32 values to float8_e4m3fn codes and back (``lowp.cast``/``lowp.decode``) next
   to the framework's own cast (``astype``/``.to``/``tf.cast``) where it has one, per backend, under
   jax.jit and tf.function (eager on NumPy and torch).
2. ``lowp.scaled_matmul`` (decode both operands to float32, float32 matmul, scale) next to JAX's
   native float8 matmul (``jnp.matmul(a_f8, b_f8, preferred_element_type=float32)``, scaled alike),
   both under jax.jit.
3. The computation rule (``arraylayer.add``/``exp``/``sum`` on float8_e4m3fn arrays: element-wise
   functions gather from a table of float32 results rounded once; reductions in float32) on each
   backend's own float8_e4m3fn arrays, next to JAX's native float8 ``jnp.add``/``jnp.exp``/``jnp.sum`` under
   jax.jit (JAX computes float8 natively; the others have no kernel for these).

Each pair is measured interleaved (ours, native, ours, native, ...) after one warm-up call of each
(compilers trace there) and the best of each is kept, so a noisy machine slows both sides alike.
The ratio is ours / native (below 1: ours is faster). Figures are printed and written to
benchmarks/results/lowp.json.

Run: PYTHONPATH=. python benchmarks/bench_lowp.py [-n 4e6] [--size 512] [--repeats 7] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
from bench_random import _interleaved  # the same alternating best-of timing (this folder is on sys.path)

from arraylayer import lowp

RESULTS = Path(__file__).resolve().parent / "results" / "lowp.json"
FMT = "float8_e4m3fn"




def _cast_pairs(backend: str, host: np.ndarray):
    """(ours_to, native_to, ours_from, native_from) for one backend, each blocking until done."""
    import ml_dtypes

    if backend == "numpy":
        codes = lowp.cast(host, FMT)
        return (lambda: lowp.cast(host, FMT), lambda: host.astype(ml_dtypes.float8_e4m3fn),
                lambda: lowp.decode(codes), lambda: codes.astype(np.float32))
    if backend == "jax":
        import jax
        import jax.numpy as jnp

        x = jnp.asarray(host)
        to_ours, to_native = jax.jit(lambda v: lowp.cast(v, FMT)), jax.jit(lambda v: v.astype(jnp.float8_e4m3fn))
        f8 = to_native(x)
        from_ours, from_native = jax.jit(lowp.decode), jax.jit(lambda v: v.astype(jnp.float32))
        return (lambda: to_ours(x).block_until_ready(), lambda: to_native(x).block_until_ready(),
                lambda: from_ours(f8).block_until_ready(), lambda: from_native(f8).block_until_ready())
    if backend == "torch":
        import torch

        x = torch.from_numpy(host)
        f8 = x.to(torch.float8_e4m3fn)
        return (lambda: lowp.cast(x, FMT), lambda: x.to(torch.float8_e4m3fn),
                lambda: lowp.decode(f8), lambda: f8.to(torch.float32))
    import tensorflow as tf

    x = tf.constant(host)
    ft = tf.dtypes.experimental.float8_e4m3fn
    to_ours = tf.function(lambda v: lowp.cast(v, FMT), autograph=False)
    to_native = tf.function(lambda v: tf.cast(v, ft), autograph=False)
    f8 = to_native(x)
    from_ours = tf.function(lowp.decode, autograph=False)
    from_native = tf.function(lambda v: tf.cast(v, tf.float32), autograph=False)
    return (lambda: to_ours(x).numpy(), lambda: to_native(x).numpy(),
            lambda: from_ours(f8).numpy(), lambda: from_native(f8).numpy())


def _matmul_pair(size: int):
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.standard_normal((size, size)).astype(np.float32))
    b = jnp.asarray(rng.standard_normal((size, size)).astype(np.float32))
    qa, sa = lowp.quantize(a, FMT, axis=0)
    qb, sb = lowp.quantize(b, FMT, axis=1)
    ours = jax.jit(lambda x, y: lowp.scaled_matmul(x, sa, y, sb))
    native = jax.jit(lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32) * sa * sb)
    same = bool((np.asarray(ours(qa, qb)) == np.asarray(native(qa, qb))).all())
    return (lambda: ours(qa, qb).block_until_ready()), (lambda: native(qa, qb).block_until_ready()), same


RULE_FUNCTIONS = ("add", "exp", "sum")


def _rule_pairs(backend: str, n: int):
    """{function: (ours, jax_native)} on n float8_e4m3fn values, each blocking until done."""
    import jax
    import jax.numpy as jnp
    import ml_dtypes

    import arraylayer as al

    rng = np.random.default_rng(1)
    a8 = (rng.standard_normal(n) * 4).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    b8 = (rng.standard_normal(n) * 4).astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    ja, jb = jnp.asarray(a8), jnp.asarray(b8)
    natives = {"add": jax.jit(jnp.add), "exp": jax.jit(jnp.exp), "sum": jax.jit(jnp.sum)}
    if backend == "numpy":
        xa, xb, done, compile_ = a8, b8, (lambda y: y), (lambda fn: fn)
    elif backend == "jax":
        xa, xb, done, compile_ = ja, jb, (lambda y: y.block_until_ready()), jax.jit
    elif backend == "torch":
        import torch

        xa = torch.from_numpy(a8.view(np.uint8)).view(torch.float8_e4m3fn)
        xb = torch.from_numpy(b8.view(np.uint8)).view(torch.float8_e4m3fn)
        done, compile_ = (lambda y: y), (lambda fn: fn)
    else:
        import tensorflow as tf

        ft = tf.dtypes.experimental.float8_e4m3fn
        xa, xb = tf.cast(tf.constant(a8.astype(np.float32)), ft), tf.cast(tf.constant(b8.astype(np.float32)), ft)
        done, compile_ = (lambda y: y.numpy()), (lambda fn: tf.function(fn, autograph=False))
    pairs = {}
    for name in RULE_FUNCTIONS:
        args = (xa, xb) if name == "add" else (xa,)
        jargs = (ja, jb) if name == "add" else (ja,)
        ours = compile_(getattr(al, name))
        native = natives[name]
        pairs[name] = ((lambda ours=ours, args=args: done(ours(*args))),
                       (lambda native=native, jargs=jargs: native(*jargs).block_until_ready()))
    return pairs


def _installed(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=float, default=4e6, help="values per cast (default 4e6)")
    parser.add_argument("--size", type=int, default=512, help="square matmul size (default 512)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="a smoke run: small sizes, 2 repeats, no file")
    args = parser.parse_args()
    n, size, repeats = (int(1e5), 64, 2) if args.quick else (int(args.n), args.size, args.repeats)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    host = (np.random.default_rng(0).standard_normal(n) * 100).astype(np.float32)
    rows = []
    for backend in ("numpy", "jax", "torch", "tensorflow"):
        if backend != "numpy" and not _installed(backend):
            continue
        to_ours, to_native, from_ours, from_native = _cast_pairs(backend, host)
        for direction, ours, native in (("float32 -> e4m3fn", to_ours, to_native), ("e4m3fn -> float32", from_ours, from_native)):
            t_ours, t_native = _interleaved(ours, native, repeats)
            rows.append({"what": f"cast {direction}", "backend": backend, "n": n, "ours_ms": t_ours * 1e3,
                         "native_ms": t_native * 1e3, "ratio": t_ours / t_native})
    if _installed("jax"):
        ours, native, same = _matmul_pair(size)
        t_ours, t_native = _interleaved(ours, native, repeats)
        rows.append({"what": f"scaled matmul {size}x{size}x{size} e4m3fn (same bits: {same})", "backend": "jax",
                     "n": size, "ours_ms": t_ours * 1e3, "native_ms": t_native * 1e3, "ratio": t_ours / t_native})
    if _installed("jax"):
        for backend in ("numpy", "jax", "torch", "tensorflow"):
            if not _installed(backend):
                continue
            for name, (ours, native) in _rule_pairs(backend, n // 4).items():
                t_ours, t_native = _interleaved(ours, native, repeats)
                rows.append({"what": f"rule {name} e4m3fn vs JAX native", "backend": backend, "n": n // 4,
                             "ours_ms": t_ours * 1e3, "native_ms": t_native * 1e3, "ratio": t_ours / t_native})
    for row in rows:
        print(f"{row['what']:<52} {row['backend']:<11} ours {row['ours_ms']:9.3f} ms  native {row['native_ms']:9.3f} ms"
              f"  ratio {row['ratio']:5.2f}")
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps({"rows": rows, "cores": os.cpu_count()}, indent=1) + "\n")


if __name__ == "__main__":
    main()
