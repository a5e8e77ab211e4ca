"""torch.compile of an arraylayer training step on a GPU, against the same step in plain torch.

A two-layer MLP (``layers.dense``, ``nn.gelu``, ``nn.cross_entropy``) with ``al.value_and_grad``
and ``al.optim.adam``, compiled by ``torch.compile`` as is and with ``al.torch_guard_filter``; the
native side is the same model in ``torch.nn.functional`` with ``torch.func.grad_and_value`` and a
hand-written Adam, compiled plainly. Prints the losses of five steps of each (they must agree) and
the median of paired interleaved rounds of the step time (the device synchronised).

Usage: ``python benchmarks/gpu_compile_check.py [--device cpu] [--explain]`` (cpu: a dry run anywhere;
``--explain``: Dynamo's graphs and graph breaks of the arraylayer step, with their reasons).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import arraylayer as al  # noqa: E402
from arraylayer.models import layers  # noqa: E402

IN, HIDDEN, CLASSES, BATCH = 64, 256, 10, 128


def data(device: str) -> tuple[Any, Any, dict[str, Any]]:
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((BATCH, IN)), dtype=torch.float32, device=device)
    y = torch.tensor(rng.integers(0, CLASSES, BATCH), device=device)
    params = {"l1": {"w": rng.standard_normal((IN, HIDDEN)) / 8, "b": np.zeros(HIDDEN)},
              "l2": {"w": rng.standard_normal((HIDDEN, CLASSES)) / 16, "b": np.zeros(CLASSES)}}
    return x, y, {k: {n: torch.tensor(v, dtype=torch.float32, device=device) for n, v in p.items()}
                  for k, p in params.items()}


def arraylayer_step() -> Any:
    optimizer = al.optim.adam(1e-3)

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        h = al.nn.gelu(layers.dense.apply(p["l1"], x))
        return al.nn.cross_entropy(layers.dense.apply(p["l2"], h), y)

    def step(p: Any, state: Any, x: Any, y: Any) -> Any:
        loss, grads = al.value_and_grad(loss_fn)(p, x, y)
        p, state = optimizer.update(grads, state, p)
        return p, state, loss

    return optimizer.init, step


def native_step() -> Any:
    import torch.nn.functional as F

    def loss_fn(p: Any, x: Any, y: Any) -> Any:
        h = F.gelu(x @ p["l1"]["w"] + p["l1"]["b"])
        return F.cross_entropy(h @ p["l2"]["w"] + p["l2"]["b"], y)

    grad_and_value = torch.func.grad_and_value(loss_fn)

    def init(p: Any) -> Any:
        zeros = lambda: torch.utils._pytree.tree_map(torch.zeros_like, p)  # noqa: E731
        return {"t": torch.zeros((), device=p["l1"]["w"].device), "mu": zeros(), "nu": zeros()}

    def step(p: Any, state: Any, x: Any, y: Any) -> Any:
        grads, loss = grad_and_value(p, x, y)
        t = state["t"] + 1
        flat_p, spec = torch.utils._pytree.tree_flatten(p)
        flat_g = torch.utils._pytree.tree_leaves(grads)
        flat_mu, flat_nu = torch.utils._pytree.tree_leaves(state["mu"]), torch.utils._pytree.tree_leaves(state["nu"])
        new_p, new_mu, new_nu = [], [], []
        for w, g, m, v in zip(flat_p, flat_g, flat_mu, flat_nu, strict=True):
            m = 0.9 * m + 0.1 * g
            v = 0.999 * v + 0.001 * g * g
            update = (m / (1 - 0.9 ** t)) / (torch.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
            new_p.append(w - 1e-3 * update)
            new_mu.append(m)
            new_nu.append(v)
        unflatten = torch.utils._pytree.tree_unflatten
        return unflatten(new_p, spec), {"t": t, "mu": unflatten(new_mu, spec), "nu": unflatten(new_nu, spec)}, loss

    return init, step


def run(device: str, rounds: int, steps: int) -> dict[str, Any]:
    al.set_backend("torch")
    x, y, params = data(device)
    sync = (lambda: None) if device == "cpu" else torch.cuda.synchronize
    sides = {}
    for name, (init, step), options in (
            ("native", native_step(), None),
            ("arraylayer", arraylayer_step(), None),
            ("arraylayer + torch_guard_filter", arraylayer_step(), {"guard_filter_fn": al.torch_guard_filter})):
        compiled = torch.compile(step, options=options) if options else torch.compile(step)
        p, state = params, init(params)
        start = time.perf_counter()
        losses = []
        for _ in range(steps):
            p, state, loss = compiled(p, state, x, y)
            losses.append(float(loss))
        sides[name] = {"compile_and_first_steps_s": round(time.perf_counter() - start, 1), "losses": losses,
                       "step": compiled, "state": (p, state)}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, side in sides.items():
            p, state = side["state"]
            sync()
            start = time.perf_counter()
            for _ in range(20):
                p, state, loss = side["step"](p, state, x, y)
            sync()
            times[name].append((time.perf_counter() - start) / 20)
    out: dict[str, Any] = {"device": device, "torch": torch.__version__}
    for name, side in sides.items():
        ratios = [a / b for a, b in zip(times[name], times["native"], strict=True)]
        out[name] = {"losses": side["losses"], "compile_and_first_steps_s": side["compile_and_first_steps_s"],
                     "step_us": round(statistics.median(times[name]) * 1e6, 1),
                     "ratio_to_native": round(statistics.median(ratios), 3)}
    reference = out["native"]["losses"]
    out["max_loss_rel_difference"] = max(abs(a - b) / abs(b) for name in sides if name != "native"
                                         for a, b in zip(out[name]["losses"], reference, strict=True))
    return out


def explain(device: str) -> dict[str, Any]:
    """Dynamo's account of the arraylayer step: graphs, graph breaks and their reasons, ops per graph."""
    al.set_backend("torch")
    x, y, params = data(device)
    init, step = arraylayer_step()
    torch._dynamo.reset()
    report = torch._dynamo.explain(step)(params, init(params), x, y)
    return {"graphs": report.graph_count, "graph_breaks": report.graph_break_count,
            "ops_per_graph": [len(ops) for ops in report.ops_per_graph or []],
            "break_reasons": [f"{r.reason} @ {r.user_stack[-1] if r.user_stack else ''}"[:400] for r in report.break_reasons[:12]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--explain", action="store_true", help="also Dynamo's graphs and graph breaks of the arraylayer step")
    args = parser.parse_args()
    result = run(args.device, args.rounds, args.steps)
    if args.explain:
        result["explain"] = explain(args.device)
    print(json.dumps(result, indent=1))
    if args.output:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / "gpu_compile_check.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
