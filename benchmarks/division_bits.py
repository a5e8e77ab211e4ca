"""Bits of arraylayer's dividing functions on every backend against NumPy's.

For each function (mean, var, std, the nn functions, dropout, Adam, the schedules, ...) and each
dtype (float32, float64), the same inputs go through arraylayer on NumPy, torch, TensorFlow and
JAX (eager and under ``jax.jit``); each result is compared with NumPy's bit for bit: the count of
differing elements and the largest distance in ulps (units in the last place).

``--no-algsimp`` runs the JAX columns once more in a child process with XLA's algebraic simplifier
off (``XLA_FLAGS=--xla_disable_hlo_passes=algsimp``): a difference that disappears there comes
from one of its rewrites, such as ``x / broadcast(c)`` -> ``x * broadcast(1 / c)``; one that stays
comes from elsewhere (a summation order, a different formula).

Run: PYTHONPATH=. python benchmarks/division_bits.py [--no-algsimp] [--cases mean var ...]
     [--json FILE]
(benchmarks/results/division_bits.json: the run with --no-algsimp of 2026-11-27, numpy 2.4,
jax 0.10.2, torch 2.13 CPU, TensorFlow 2.21, on this branch's kernels.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)  # float64 on JAX too; float32 results are unchanged by it

import arraylayer as al  # noqa: E402

DTYPES = ("float32", "float64")
BACKENDS = ("torch", "tensorflow", "jax", "jax.jit")


def ulps(got: np.ndarray, expected: np.ndarray) -> tuple[int, int]:
    """(how many elements differ in their bits, the largest distance between them in ulps)."""
    got, expected = np.asarray(got), np.asarray(expected)
    width = got.dtype.itemsize * 8
    a, b = (v.reshape(-1).view(f"i{width // 8}").astype(object) for v in (got, expected))
    differ = got.reshape(-1).view(f"u{width // 8}") != expected.reshape(-1).view(f"u{width // 8}")
    if not differ.any():
        return 0, 0
    # floats ordered as integers: a negative float's bits count down from -0
    order = lambda i: i if i >= 0 else -(i & ((1 << (width - 1)) - 1))  # noqa: E731
    distance = max(abs(order(x) - order(y)) for x, y in zip(a[differ], b[differ], strict=True))
    return int(differ.sum()), int(distance)


def _exact(rng: np.random.Generator, dtype: str) -> np.ndarray:
    """(64, 1000) integers in [-550, 550] whose rows sum to multiples of 1000: every sum (of the
    values, of the squares of the values less their row's mean) is exact in any order, so a
    difference from NumPy in mean, var, std, layer_norm or rms_norm along axis 1 comes from a
    division or a formula, not from a summation order."""
    x = rng.integers(-50, 51, (64, 1000))
    rest = x[:, :-1].sum(axis=1)
    x[:, -1] = np.round(rest / 1000) * 1000 - rest
    return x.astype(dtype)


def _data(dtype: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2026)
    return {
        "ints": rng.integers(-50, 51, (64, 1000)).astype(dtype),  # exact sums in any order
        "exact": _exact(rng, dtype),
        "x": (rng.standard_normal((64, 1000)) * 10).astype(dtype),
        "logits": (rng.standard_normal((64, 1000)) * 3).astype(dtype),
        "labels": rng.integers(0, 1000, 64).astype("int32"),
        "images": rng.standard_normal((2, 12, 12, 3)).astype(dtype),
        "grads": (rng.standard_normal((64, 1000)) * 1e-2).astype(dtype),
        "count": np.arange(0, 200, dtype="int32"),
    }


def _adam_state(x: Any, grads: Any) -> Any:
    """Adam's state after two steps from zero moments (computed eagerly, outside jax.jit)."""
    opt = al.optim.adam(1e-3)
    state = opt.init(x)
    for _ in range(2):
        _, state = opt.update(grads, state, x)
    return state


def _adam(x: Any, grads: Any, state: Any) -> Any:
    """Adam's third update (bias corrections 1 - b ** 3, the step count a traced value under jit)."""
    return al.optim.adam(1e-3).update(grads, state, x)[0]


def _schedule(make: Callable[[], Any]) -> Callable[[Any], Any]:
    return lambda count: make()(count)


#: name -> (function of the native inputs, the inputs it takes)
CASES: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "mean axis=1 ints": (lambda x: al.mean(x, axis=1), ("ints",)),
    "mean axis=1 keepdims ints": (lambda x: al.mean(x, axis=1, keepdims=True), ("ints",)),
    "mean all ints": (lambda x: al.mean(x), ("ints",)),
    "mean axis=(0, 1) ints": (lambda x: al.mean(x, axis=(0, 1)), ("ints",)),
    "var axis=1 exact": (lambda x: al.var(x, axis=1), ("exact",)),
    "var correction=1 exact": (lambda x: al.var(x, axis=1, correction=1), ("exact",)),
    "std axis=1 keepdims exact": (lambda x: al.std(x, axis=1, keepdims=True), ("exact",)),
    "layer_norm exact": (lambda x: al.nn.layer_norm(x), ("exact",)),
    "rms_norm exact": (lambda x: al.layers.rms_norm.apply({"scale": al.ones_like(x[0])}, x), ("exact",)),
    "divide(x, 3.0)": (lambda x: al.divide(x, 3.0), ("x",)),
    "mean axis=1": (lambda x: al.mean(x, axis=1), ("x",)),
    "mean axis=1 keepdims": (lambda x: al.mean(x, axis=1, keepdims=True), ("x",)),
    "mean axis=0": (lambda x: al.mean(x, axis=0), ("x",)),
    "mean all": (lambda x: al.mean(x), ("x",)),
    "var axis=1": (lambda x: al.var(x, axis=1), ("x",)),
    "var axis=1 correction=1": (lambda x: al.var(x, axis=1, correction=1), ("x",)),
    "std axis=1 keepdims": (lambda x: al.std(x, axis=1, keepdims=True), ("x",)),
    "nanmean axis=1": (lambda x: al.nanmean(x, axis=1), ("x",)),
    "floor_divide(x, 0.7)": (lambda x: al.floor_divide(x, 0.7), ("x",)),
    "floor_divide(x * 1e3, 0.001)": (lambda x: al.floor_divide(al.multiply(x, 1e3), 0.001), ("x",)),
    "remainder(x, 0.7)": (lambda x: al.remainder(x, 0.7), ("x",)),
    "round(x, 2)": (lambda x: al.round(x, decimals=2), ("x",)),
    "softmax": (lambda x: al.nn.softmax(x), ("logits",)),
    "softmax axis=0": (lambda x: al.nn.softmax(x, axis=0), ("logits",)),
    "log_softmax": (lambda x: al.nn.log_softmax(x), ("logits",)),
    "layer_norm": (lambda x: al.nn.layer_norm(x), ("x",)),
    "layer_norm axis=0": (lambda x: al.nn.layer_norm(x, axis=0), ("x",)),
    "rms_norm": (lambda x: al.layers.rms_norm.apply({"scale": al.ones_like(x[0])}, x), ("x",)),
    "cross_entropy mean": (lambda x, y: al.nn.cross_entropy(x, y), ("logits", "labels")),
    "cross_entropy smoothing": (lambda x, y: al.nn.cross_entropy(x, y, label_smoothing=0.1), ("logits", "labels")),
    "dropout rate=0.3": (lambda x: al.nn.dropout(al.random.key(0), x, 0.3), ("x",)),
    "avg_pool2d 3x3": (lambda x: al.nn.avg_pool2d(x, 3), ("images",)),
    "vector_norm ord=3": (lambda x: al.linalg.vector_norm(x, axis=1, ord=3), ("x",)),
    "adam, 3 steps": (_adam, ("x", "grads")),
    "linear schedule /7": (lambda c: al.schedules.linear(0.0, 1.0, 7)(c), ("count",)),
    "cosine_decay /7": (lambda c: al.schedules.cosine_decay(1.0, 7)(c), ("count",)),
    "exponential_decay /7": (lambda c: al.schedules.exponential_decay(1.0, 0.5, 7)(c), ("count",)),
}


#: what a case computes eagerly (outside jax.jit) from its inputs, passed as one more argument
PREPARE: dict[str, Callable[..., Any]] = {"adam, 3 steps": _adam_state}


def _run(name: str, backend: str, inputs: list[np.ndarray]) -> np.ndarray:
    fn = CASES[name][0]
    target = "jax" if backend.startswith("jax") else backend
    natives = [al.to_backend(v, target) for v in inputs]
    with al.use_backend(target):
        if name in PREPARE:
            natives.append(PREPARE[name](*natives))
        if backend == "jax.jit":
            result = jax.jit(fn)(*natives)
        else:
            result = fn(*natives)
    return np.asarray(al.to_backend(result, "numpy"))


def measure(names: list[str], backends: tuple[str, ...]) -> dict[str, dict[str, dict[str, Any]]]:
    """{case: {dtype: {backend: [differing, of, max ulps] or an error string}}}."""
    table: dict[str, dict[str, dict[str, Any]]] = {}
    for dtype in DTYPES:
        data = _data(dtype)
        for name in names:
            inputs = [data[k] for k in CASES[name][1]]
            expected = _run(name, "numpy", inputs)
            row = table.setdefault(name, {}).setdefault(dtype, {})
            for backend in backends:
                try:
                    got = _run(name, backend, inputs)
                except Exception as error:  # noqa: BLE001 - reported in the table
                    row[backend] = f"{type(error).__name__}: {str(error)[:60]}"
                    continue
                if got.dtype != expected.dtype or got.shape != expected.shape:
                    row[backend] = f"{got.dtype}{got.shape} != {expected.dtype}{expected.shape}"
                    continue
                differing, distance = ulps(got, expected)
                row[backend] = [differing, expected.size, distance]
    return table


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return value[:18]
    differing, size, distance = value
    return "=" if not differing else f"{differing}/{size} {distance}u"


def show(table: dict[str, dict[str, dict[str, Any]]], columns: tuple[str, ...]) -> None:
    print(f"{'case':26} {'dtype':8} " + " ".join(f"{c:>18}" for c in columns))
    for name, rows in table.items():
        for dtype, row in rows.items():
            print(f"{name:26} {dtype:8} " + " ".join(f"{_cell(row.get(c, '-')):>18}" for c in columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="*", default=list(CASES), help="case names (default: all)")
    parser.add_argument("--no-algsimp", action="store_true", help="add the JAX columns with XLA's algsimp off")
    parser.add_argument("--json", help="write the table here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # the JAX columns only, as JSON on stdout
        print(json.dumps(measure(args.cases, ("jax", "jax.jit"))))
        return
    table = measure(args.cases, BACKENDS)
    columns = BACKENDS
    if args.no_algsimp:
        env = dict(os.environ, XLA_FLAGS="--xla_disable_hlo_passes=algsimp")
        out = subprocess.run([sys.executable, __file__, "--child", "--cases", *args.cases], env=env,
                             capture_output=True, text=True, check=True).stdout
        for name, rows in json.loads(out.splitlines()[-1]).items():
            for dtype, row in rows.items():
                for backend, value in row.items():
                    table[name][dtype][f"{backend} -algsimp"] = value
        columns = (*BACKENDS, "jax -algsimp", "jax.jit -algsimp")
    show(table, columns)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)


if __name__ == "__main__":
    main()
