"""One training step of a GRU sequence model through arraylayer against the same model written
natively: jax under ``jax.jit`` (target 1.1x), eager torch (target 1.2x) and, with ``--cases
torch-compile``, torch under ``torch.compile`` (target 1.1x; it compiles for minutes on 2 cores).

The model: a GRU layer (PyTorch's equations) over ``(batch, time, features)``, a dense head on every
step, mean squared error against a target, plain SGD. Through arraylayer it is ``al.layers.gru``
(its loop is ``al.scan``), ``al.grad`` and a tree update; natively it is the same equations with
``jax.lax.scan`` and ``jax.grad`` under ``jax.jit``, and a Python loop of torch operations with
``loss.backward()`` eagerly. ``torch.nn.GRU`` (torch's fused C++ layer) is timed too, for
reference: it is not the same program (one fused kernel, not the equations), so it gets no target.
Both versions start from the same weights and must give the same loss before the timing starts.

Timing: rounds of ``--steps`` steps, the versions alternating round by round in alternating order;
each round waits for its last loss. Reported: each version's median step time and the median (and
quartiles) of the rounds' paired ratios, the figure compared with the target. Results are printed
and written to benchmarks/results/gru.json.

Run: PYTHONPATH=. python benchmarks/bench_gru.py [--cases jax-jit,torch-eager] [--rounds 15] [--steps 10] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import arraylayer as al

RESULTS = Path(__file__).resolve().parent / "results" / "gru.json"
BATCH, TIME, FEATURES, HIDDEN = 16, 32, 16, 64
LR = 0.05
TARGETS = {"jax-jit": 1.1, "torch-eager": 1.2, "torch-compile": 1.1}


def numpy_weights() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    scale = 1 / np.sqrt(HIDDEN)
    return {"gru": {"w_x": rng.uniform(-scale, scale, (FEATURES, 3 * HIDDEN)).astype(np.float32),
                    "w_h": rng.uniform(-scale, scale, (HIDDEN, 3 * HIDDEN)).astype(np.float32),
                    "b_x": np.zeros(3 * HIDDEN, np.float32), "b_h": np.zeros(3 * HIDDEN, np.float32)},
            "head": rng.uniform(-scale, scale, (HIDDEN, FEATURES)).astype(np.float32)}


def numpy_batch() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((BATCH, TIME, FEATURES)).astype(np.float32)
    return xs, np.roll(xs, -1, axis=1)


# -- through arraylayer: written once ----------------------------------------------------------

def al_loss(params: Any, xs: Any, ys: Any) -> Any:
    hidden, _ = al.layers.gru.apply(params["gru"], xs)
    return al.mean(al.square(al.subtract(al.matmul(hidden, params["head"]), ys)))


def al_step(params: Any, xs: Any, ys: Any) -> tuple[Any, Any]:
    loss, grads = al.value_and_grad(al_loss)(params, xs, ys)
    return al.tree_map(lambda p, g: al.subtract(p, al.multiply(g, LR)), params, grads), loss


# -- natively -------------------------------------------------------------------------------------

def jax_native() -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    def loss(params: Any, xs: Any, ys: Any) -> Any:
        g = params["gru"]
        projected = jnp.swapaxes(xs @ g["w_x"] + g["b_x"], 0, 1)

        def cell(h: Any, px: Any) -> tuple[Any, Any]:
            ph = h @ g["w_h"] + g["b_h"]
            r = jax.nn.sigmoid(px[:, :HIDDEN] + ph[:, :HIDDEN])
            z = jax.nn.sigmoid(px[:, HIDDEN:2 * HIDDEN] + ph[:, HIDDEN:2 * HIDDEN])
            n = jnp.tanh(px[:, 2 * HIDDEN:] + r * ph[:, 2 * HIDDEN:])
            h = (1 - z) * n + z * h
            return h, h

        _, hidden = jax.lax.scan(cell, jnp.zeros((xs.shape[0], HIDDEN), xs.dtype), projected)
        return jnp.mean((jnp.swapaxes(hidden, 0, 1) @ params["head"] - ys) ** 2)

    @jax.jit
    def step(params: Any, xs: Any, ys: Any) -> tuple[Any, Any]:
        value, grads = jax.value_and_grad(loss)(params, xs, ys)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), value

    return step


def torch_native() -> Callable[..., Any]:
    import torch

    def step(params: Any, xs: Any, ys: Any) -> tuple[Any, Any]:
        leaves = [leaf.detach().requires_grad_() for leaf in
                  [params["gru"][k] for k in ("w_x", "w_h", "b_x", "b_h")] + [params["head"]]]
        w_x, w_h, b_x, b_h, head = leaves
        projected = xs @ w_x + b_x
        h = xs.new_zeros((xs.shape[0], HIDDEN))
        hidden = []
        for t in range(xs.shape[1]):
            px, ph = projected[:, t], h @ w_h + b_h
            r = torch.sigmoid(px[:, :HIDDEN] + ph[:, :HIDDEN])
            z = torch.sigmoid(px[:, HIDDEN:2 * HIDDEN] + ph[:, HIDDEN:2 * HIDDEN])
            n = torch.tanh(px[:, 2 * HIDDEN:] + r * ph[:, 2 * HIDDEN:])
            h = (1 - z) * n + z * h
            hidden.append(h)
        loss = torch.mean((torch.stack(hidden, 1) @ head - ys) ** 2)
        loss.backward()
        with torch.no_grad():
            new = [(leaf - LR * leaf.grad).detach() for leaf in leaves]
        return {"gru": dict(zip(("w_x", "w_h", "b_x", "b_h"), new[:4], strict=True)), "head": new[4]}, loss.detach()

    return step


def torch_fused() -> tuple[Callable[..., Any], Callable[[Any], Any]]:
    """torch.nn.GRU with the same weights (torch keeps them transposed), for reference."""
    import torch

    module = torch.nn.GRU(FEATURES, HIDDEN, batch_first=True)
    weights = numpy_weights()
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.from_numpy(weights["gru"]["w_x"].T.copy()))
        module.weight_hh_l0.copy_(torch.from_numpy(weights["gru"]["w_h"].T.copy()))
        module.bias_ih_l0.zero_()
        module.bias_hh_l0.zero_()
    head = torch.from_numpy(weights["head"]).requires_grad_(True)
    optimizer = torch.optim.SGD([*module.parameters(), head], lr=LR)

    def step(params: Any, xs: Any, ys: Any) -> tuple[Any, Any]:
        optimizer.zero_grad()
        hidden, _ = module(xs)
        loss = torch.mean((hidden @ head - ys) ** 2)
        loss.backward()
        optimizer.step()
        return params, loss.detach()

    return step, lambda loss: float(loss)


# -- cases ---------------------------------------------------------------------------------------------

def case(name: str) -> dict[str, Any]:
    xs, ys = numpy_batch()
    if name == "jax-jit":
        import jax

        convert, native, ours = jax.numpy.asarray, jax_native(), jax.jit(al_step)
        sync = lambda loss: float(loss)  # noqa: E731
        extra = {}
    elif name == "torch-compile":  # both steps under torch.compile: Dynamo unrolls the 32 steps of each
        import torch

        torch.set_num_threads(1)
        convert, native, ours = torch.from_numpy, torch.compile(torch_native()), torch.compile(al_step)
        sync = lambda loss: float(loss)  # noqa: E731
        extra = {}
    else:
        import torch

        torch.set_num_threads(1)
        convert, native, ours = torch.from_numpy, torch_native(), al_step
        sync = lambda loss: float(loss)  # noqa: E731
        extra = {"torch.nn.GRU (fused, reference)": torch_fused()}
    params = al.tree_map(lambda a: convert(a.copy()), numpy_weights())
    data = convert(xs), convert(ys)
    check_native, check_ours = sync(native(params, *data)[1]), sync(ours(params, *data)[1])
    if not np.isclose(check_native, check_ours, rtol=1e-5):
        raise SystemExit(f"{name}: the losses differ before timing: native {check_native}, arraylayer {check_ours}")
    versions = {"native": (native, sync), "arraylayer": (ours, sync), **extra}
    return {"versions": versions, "params": params, "data": data}


def run_round(step: Callable[..., Any], sync: Callable[[Any], Any], params: Any, data: Any, steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        params, loss = step(params, *data)
    sync(loss)
    return (time.perf_counter() - start) / steps


def measure(name: str, rounds: int, steps: int) -> dict[str, Any]:
    setup = case(name)
    versions, params, data = setup["versions"], setup["params"], setup["data"]
    for step, sync in versions.values():  # warm up: compile, first-use caches
        run_round(step, sync, params, data, 2)
    times: dict[str, list[float]] = {v: [] for v in versions}
    order = list(versions)
    for r in range(rounds):
        for v in (order if r % 2 == 0 else order[::-1]):
            times[v].append(run_round(*versions[v], params, data, steps))
    ratios = [a / n for a, n in zip(times["arraylayer"], times["native"], strict=True)]
    q = statistics.quantiles(ratios, n=4)
    result = {"case": name, "median_ms": {v: 1e3 * statistics.median(t) for v, t in times.items()},
              "ratio_median": statistics.median(ratios), "ratio_quartiles": [q[0], q[2]],
              "target": TARGETS[name]}
    result["meets_target"] = result["ratio_median"] <= result["target"]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    available = [c for c, module in (("jax-jit", "jax"), ("torch-eager", "torch")) if importlib.util.find_spec(module)]
    # torch-compile (both steps under torch.compile) is left out of the default: it compiles for minutes on 2 cores
    parser.add_argument("--cases", default=",".join(available))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 3 rounds of 2 steps")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.steps = 3, 2
    results = []
    for name in args.cases.split(","):
        result = measure(name, args.rounds, args.steps)
        results.append(result)
        times = ", ".join(f"{v} {ms:.2f} ms" for v, ms in result["median_ms"].items())
        print(f"{name:12s} {times}; arraylayer/native {result['ratio_median']:.3f} "
              f"(quartiles {result['ratio_quartiles'][0]:.3f}-{result['ratio_quartiles'][1]:.3f}; "
              f"target {result['target']}x: {'met' if result['meets_target'] else 'NOT met'})")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"size": [BATCH, TIME, FEATURES, HIDDEN], "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
