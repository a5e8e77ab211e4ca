"""Train one MLP classifier, written once with arraylayer functions, on every backend.

The model (two dense layers with a ReLU), its softmax cross-entropy loss and its accuracy are
written once below with arraylayer functions (matmul, add, maximum, max, exp, log, sum, mean,
argmax, equal). The same function trains on jax, torch and tensorflow with
``arraylayer.value_and_grad`` and plain full-batch gradient descent, from the same initial
weights and on the same synthetic dataset (three interleaved spirals, made with NumPy from a
fixed seed). NumPy has no autodiff, so on NumPy only the forward pass runs (the initial loss and
accuracy, which the other backends must match at step 0).

For each backend the script prints the loss at a few steps, the final accuracy and the dtypes of
the results; at the end it checks that the backends' losses agree, and exits with status 1 if
they do not.

The tolerance: the backends compute the same float32 arithmetic, but their matmul and reduction
kernels sum in different orders and their exp/log differ in the last bits, so each step starts
with differences of a few float32 ulps (relative 1e-7 to 1e-6). Gradient descent on this problem
is contracting on average, so these differences do not grow into different trajectories: the
largest relative difference between the four backends' losses measured here (numpy 2.4, jax 0.10,
torch 2.13, tensorflow 2.21, CPU) is 2.9e-7 after 300 steps, 3.1e-7 after 1500 steps and 1.0e-6
with a learning rate of 2.0. The check uses a relative tolerance of 1e-3 at every reported step
(``--rtol``): three orders of magnitude above that noise, yet far below what any real difference
in semantics (a dtype promoted differently, a float64 intermediate, a wrong gradient) produces
within the first steps.

Usage::

    python examples/train_mlp.py                       # every installed backend, 300 steps
    python examples/train_mlp.py --steps 50 --backends jax,torch
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import arraylayer as al
from arraylayer.runtime.logs import quiet_framework_logs

BACKENDS = ("numpy", "jax", "torch", "tensorflow", "dask")
DIFFERENTIABLE = ("jax", "torch", "tensorflow")


# -- the model, written once -------------------------------------------------------------------------
def forward(params: dict[str, Any], x: Any) -> Any:
    """Logits of a two-layer perceptron: relu(x @ w1 + b1) @ w2 + b2."""
    hidden = al.maximum(al.add(al.matmul(x, params["w1"]), params["b1"]), 0.0)
    return al.add(al.matmul(hidden, params["w2"]), params["b2"])


def loss_fn(params: dict[str, Any], x: Any, onehot: Any) -> Any:
    """Mean softmax cross-entropy (log-sum-exp shifted by the row maximum, for stability)."""
    logits = forward(params, x)
    shifted = al.subtract(logits, al.max(logits, axis=1, keepdims=True))
    log_probs = al.subtract(shifted, al.log(al.sum(al.exp(shifted), axis=1, keepdims=True)))
    return al.negative(al.mean(al.sum(al.multiply(onehot, log_probs), axis=1)))


def accuracy(params: dict[str, Any], x: Any, labels: Any) -> Any:
    """The fraction of samples whose largest logit is their label's (a bool mean: the default float)."""
    return al.mean(al.equal(al.argmax(forward(params, x), axis=1), labels))


def train_step(params: dict[str, Any], x: Any, onehot: Any, learning_rate: float) -> tuple[dict[str, Any], Any, Any]:
    """One step of gradient descent: the new parameters, the loss before the step, the gradients."""
    loss, grads = al.value_and_grad(loss_fn)(params, x, onehot)
    updated = {name: al.subtract(p, al.multiply(grads[name], learning_rate)) for name, p in params.items()}
    return updated, loss, grads


# -- data and initial weights (NumPy, fixed seed) --------------------------------------------------------
def make_spirals(samples: int, classes: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``classes`` interleaved noisy spirals in the plane: float32 points, int32 labels."""
    rng = np.random.default_rng(seed)
    labels = np.arange(samples) % classes
    radius = rng.uniform(0.05, 1.0, samples)
    angle = labels * (2 * np.pi / classes) + 3.0 * radius + rng.normal(0.0, 0.15, samples)
    points = np.stack([radius * np.sin(angle), radius * np.cos(angle)], axis=1)
    points = (points - points.mean(axis=0)) / points.std(axis=0)
    return points.astype(np.float32), labels.astype(np.int32)


def init_params(features: int, hidden: int, classes: int, seed: int = 1) -> dict[str, np.ndarray]:
    """He-initialised weights and zero biases, float32."""
    rng = np.random.default_rng(seed)
    return {
        "w1": (rng.normal(0.0, math.sqrt(2.0 / features), (features, hidden))).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.normal(0.0, math.sqrt(2.0 / hidden), (hidden, classes))).astype(np.float32),
        "b2": np.zeros(classes, np.float32),
    }


# -- running it on one backend ----------------------------------------------------------------------------
@dataclass
class Run:
    """What one backend did: losses at the reported steps, final accuracy, result dtypes, time."""

    backend: str
    losses: dict[int, float] = field(default_factory=dict)
    accuracy: float = float("nan")
    dtypes: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


def report_steps(steps: int, count: int = 5) -> list[int]:
    """Step 0, ``count - 2`` evenly spaced steps and the last step (the loss after training)."""
    chosen = {0, steps} | {round(steps * k / (count - 1)) for k in range(1, count - 1)}
    return sorted(chosen)


def run_backend(backend: str, steps: int, samples: int = 600, hidden: int = 32, learning_rate: float = 0.5,
                seed: int = 0) -> Run:
    """Train (or, on numpy, evaluate) the model on ``backend``; losses at :func:`report_steps`."""
    points, labels = make_spirals(samples, seed=seed)
    onehot = np.eye(3, dtype=np.float32)[labels]
    start = init_params(points.shape[1], hidden, 3, seed=seed + 1)
    x, y, target = (_on(backend, a) for a in (points, labels, onehot))
    params = {name: _on(backend, value) for name, value in start.items()}
    run = Run(backend)
    began = time.perf_counter()
    wanted = set(report_steps(steps))
    if backend not in DIFFERENTIABLE:  # forward pass only
        loss = loss_fn(params, x, target)
        run.losses[0] = float(loss)
        run.dtypes = {"loss": _dtype(loss), "logits": _dtype(forward(params, x))}
    else:
        grads: dict[str, Any] = {}
        for step in range(steps):
            params, loss, grads = train_step(params, x, target, learning_rate)
            if step in wanted:
                run.losses[step] = float(loss)
        loss = loss_fn(params, x, target)  # after the last step
        run.losses[steps] = float(loss)
        run.dtypes = {"loss": _dtype(loss), "logits": _dtype(forward(params, x)),
                      "grad w1": _dtype(grads["w1"]) if grads else "-", "w1": _dtype(params["w1"])}
    fraction = accuracy(params, x, y)
    run.accuracy = float(fraction)
    run.dtypes["accuracy"] = _dtype(fraction)
    run.seconds = time.perf_counter() - began
    return run


def _on(backend: str, values: np.ndarray) -> Any:
    """A ``backend`` array holding ``values`` (built by the framework from Python values: a copy,
    in the framework's own memory)."""
    with al.use_backend(backend):
        return al.asarray(values.tolist(), dtype=str(values.dtype))


def _dtype(x: Any) -> str:
    return str(al.get_backend(al.backend_of(x).name).dtype_of(x))


# -- agreement ---------------------------------------------------------------------------------------------
def disagreements(runs: Sequence[Run], rtol: float) -> list[str]:
    """Every reported loss that differs from the first trained backend's (or, for step 0, from any
    other backend's) by more than ``rtol`` relatively; and result dtypes that differ."""
    problems = []
    reference = next((r for r in runs if r.backend in DIFFERENTIABLE), runs[0])
    for run in runs:
        if run is reference:
            continue
        for step, value in run.losses.items():
            want = reference.losses.get(step)
            if want is None:
                continue
            error = abs(value - want) / max(abs(want), 1e-30)
            if not error <= rtol:
                problems.append(f"step {step}: {run.backend} loss {value:.8g} vs {reference.backend} {want:.8g} "
                                f"(relative difference {error:.2e} > {rtol:.0e})")
        for name, dtype in run.dtypes.items():
            if name in reference.dtypes and reference.dtypes[name] != dtype:
                problems.append(f"{name} dtype: {run.backend} {dtype} vs {reference.backend} {reference.dtypes[name]}")
    return problems


def largest_difference(runs: Sequence[Run]) -> float:
    """The largest relative difference between two backends' losses at one step."""
    worst = 0.0
    for step in {s for r in runs for s in r.losses}:
        values = [r.losses[step] for r in runs if step in r.losses]
        if len(values) > 1:
            worst = max(worst, (max(values) - min(values)) / max(abs(min(values)), 1e-30))
    return worst


def print_run(run: Run) -> None:
    losses = ", ".join(f"step {s}: {v:.6f}" for s, v in sorted(run.losses.items()))
    dtypes = ", ".join(f"{k} {v}" for k, v in run.dtypes.items())
    print(f"{run.backend:>10}  {losses}")
    print(f"{'':>10}  accuracy {run.accuracy:.4f}   dtypes: {dtypes}   ({run.seconds:.1f} s)")


def installed(names: Sequence[str]) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is not None]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="gradient-descent steps (default 300)")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated backends (default: every installed one of %(default)s)")
    parser.add_argument("--samples", type=int, default=600, help="dataset size (default 600)")
    parser.add_argument("--hidden", type=int, default=32, help="hidden units (default 32)")
    parser.add_argument("--learning-rate", type=float, default=0.5, help="step size (default 0.5)")
    parser.add_argument("--rtol", type=float, default=1e-3,
                        help="relative tolerance between the backends' losses (default 1e-3; see the module docs)")
    args = parser.parse_args(argv)
    requested = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = [b for b in requested if b not in BACKENDS]
    if unknown or args.steps < 1:
        parser.error(f"unknown backends {unknown} (choose from {', '.join(BACKENDS)})" if unknown else
                     "--steps must be at least 1")
    backends = installed(requested)
    skipped = sorted(set(requested) - set(backends))
    if skipped:
        print(f"not installed, skipped: {', '.join(skipped)}")
    if not backends:
        print("no requested backend is installed")
        return 1

    print(f"MLP 2-{args.hidden}-3 on {args.samples} spiral points, {args.steps} steps of gradient descent "
          f"(learning rate {args.learning_rate}), float32, the same initial weights on every backend")
    runs = []
    for backend in backends:
        # TensorFlow/XLA log lines are not this report (ARRAYLAYER_FRAMEWORK_LOGS=1 shows them)
        with quiet_framework_logs():
            run = run_backend(backend, args.steps, args.samples, args.hidden, args.learning_rate)
        print_run(run)
        runs.append(run)
    problems = disagreements(runs, args.rtol)
    print(f"largest relative difference between backends' losses: {largest_difference(runs):.2e} "
          f"(tolerance {args.rtol:.0e})")
    if problems:
        print("DISAGREEMENT:\n  " + "\n  ".join(problems))
        return 1
    print(f"agreement: {', '.join(r.backend for r in runs)} agree on every reported loss and on the result dtypes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
