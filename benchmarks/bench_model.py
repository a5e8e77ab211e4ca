"""One compiled training step of the main job's CNN through arraylayer against the same model
written natively in each framework (target: <= 1.05x).

The model is examples/train_cnn.py's (conv 3x3 -> relu -> max pool -> conv 3x3 -> relu -> max
pool -> dense; softmax cross-entropy; Adam), on a batch of 64 digits. Through arraylayer it is
written once (``forward`` below, with the layout each framework computes natively: NCHW for
torch, NHWC for JAX and TensorFlow); natively it is written with ``jax.lax``/``jax.numpy``,
``torch.nn.functional`` and ``tf.nn``, with the same Adam written in the framework's operations
and the same compiler: ``jax.jit``, ``torch.compile`` (TorchInductor) and ``tf.function``.
Both steps start from the same weights and batch, and must give the same loss.

Timing: after compilation, 41 rounds of 50 steps, the two versions alternating round by round in
alternating order (A B, B A, ...: drifting load on the machine affects both alike); each round
blocks until the last step's results exist. Reported: the median step time of each, the median
(and quartiles) of the rounds' paired ratios, which is the figure compared with the target, and
the ratio of the best rounds. Results are printed and written to benchmarks/results/model.json.

Run: PYTHONPATH=. python benchmarks/bench_model.py [--backends jax,torch,tensorflow] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

import arraylayer as al
from arraylayer.runtime.compilers import compiler
from arraylayer.runtime.logs import quiet_framework_logs

RESULTS = Path(__file__).resolve().parent / "results" / "model.json"
BATCH = 64
LAYOUT = {"jax": "NHWC", "tensorflow": "NHWC", "torch": "NCHW"}
LR, B1, B2, EPS = 0.01, 0.9, 0.999, 1e-8
OPTIMIZER = al.optim.adam(LR, B1, B2, EPS)


# -- the model through arraylayer, written once ---------------------------------------------------------------
def forward(params: dict[str, Any], images: Any, layout: str) -> Any:
    bias_shape = (1, 1, 1, -1) if layout == "NHWC" else (1, -1, 1, 1)

    def block(x: Any, kernel: str, bias: str) -> Any:
        x = al.nn.conv2d(x, params[kernel], padding="SAME", data_format=layout)
        x = al.nn.relu(al.add(x, al.reshape(params[bias], bias_shape)))
        return al.nn.max_pool2d(x, 2, data_format=layout)

    x = block(block(images, "conv1", "bias1"), "conv2", "bias2")
    x = al.reshape(x, (x.shape[0], 128))
    return al.add(al.matmul(x, params["dense"]), params["bias3"])


def arraylayer_step(layout: str) -> Callable[..., Any]:
    def step(params: Any, state: Any, images: Any, labels: Any) -> tuple[Any, Any, Any]:
        loss, grads = al.value_and_grad(lambda p: al.nn.cross_entropy(forward(p, images, layout), labels))(params)
        params, state = OPTIMIZER.update(grads, state, params)
        return params, state, loss

    return step


# -- the same model, native ----------------------------------------------------------------------------------------
#: the (kernel, bias) of each convolution block
BLOCKS = (("conv1", "bias1"), ("conv2", "bias2"))


class _Ops(NamedTuple):
    """The framework's operations the native Adam needs beside its arithmetic operators."""

    sqrt: Callable[[Any], Any]
    to_float: Callable[[Any], Any]  # the step count as float32


def _adam(ops: _Ops, params: dict[str, Any], grads: dict[str, Any], state: dict[str, Any]) -> tuple[Any, Any]:
    """The Adam of arraylayer.models.optim, in a framework's operations (``ops``: sqrt and the count cast)."""
    count = state["count"] + 1
    t = ops.to_float(count)
    first, second = 1.0 - B1 ** t, 1.0 - B2 ** t
    mu = {k: state["mu"][k] * B1 + grads[k] * (1.0 - B1) for k in params}
    nu = {k: state["nu"][k] * B2 + grads[k] * grads[k] * (1.0 - B2) for k in params}
    new = {k: params[k] - (mu[k] / first) / (ops.sqrt(nu[k] / second) + EPS) * LR for k in params}
    return new, {"count": count, "mu": mu, "nu": nu}


def native_jax() -> tuple[Callable[..., Any], Any]:
    import jax
    import jax.numpy as jnp
    from jax import lax

    ops = _Ops(jnp.sqrt, lambda c: c.astype(jnp.float32))

    def model(p: Any, x: Any) -> Any:
        for kernel, bias in BLOCKS:
            x = lax.conv_general_dilated(x, p[kernel], (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
            x = jax.nn.relu(x + p[bias])
            x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return x.reshape(x.shape[0], 128) @ p["dense"] + p["bias3"]

    def step(p: Any, state: Any, x: Any, y: Any) -> Any:
        def loss_fn(q: Any) -> Any:
            logp = jax.nn.log_softmax(model(q, x))
            return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

        loss, grads = jax.value_and_grad(loss_fn)(p)
        p, state = _adam(ops, p, grads, state)
        return p, state, loss

    return jax.jit(step), lambda out: out[2].block_until_ready()


def native_torch() -> tuple[Callable[..., Any], Any]:
    import torch
    import torch.nn.functional as F

    ops = _Ops(torch.sqrt, lambda c: c.to(torch.float32))

    def model(p: Any, x: Any) -> Any:
        for kernel, bias in BLOCKS:
            x = F.conv2d(x, p[kernel], padding=1)
            x = F.max_pool2d(F.relu(x + p[bias].reshape(1, -1, 1, 1)), 2)
        return x.reshape(x.shape[0], 128) @ p["dense"] + p["bias3"]

    def step(p: Any, state: Any, x: Any, y: Any) -> Any:
        def loss_fn(q: Any) -> Any:
            return F.cross_entropy(model(q, x), y.long())

        grads, loss = torch.func.grad_and_value(loss_fn)(p)
        p, state = _adam(ops, p, grads, state)
        return p, state, loss

    return torch.compile(step), lambda out: out[2].item()


def native_tensorflow() -> tuple[Callable[..., Any], Any]:
    import tensorflow as tf

    ops = _Ops(tf.sqrt, lambda c: tf.cast(c, tf.float32))

    def model(p: Any, x: Any) -> Any:
        for kernel, bias in BLOCKS:
            x = tf.nn.conv2d(x, p[kernel], 1, "SAME")
            x = tf.nn.max_pool2d(tf.nn.relu(x + p[bias]), 2, 2, "VALID")
        return tf.reshape(x, (x.shape[0], 128)) @ p["dense"] + p["bias3"]

    @tf.function
    def step(p: Any, state: Any, x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(p)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, model(p, x)))
        grads = tape.gradient(loss, p)
        p, state = _adam(ops, p, grads, state)
        return p, state, loss

    return step, lambda out: out[2].numpy()


NATIVE = {"jax": native_jax, "torch": native_torch, "tensorflow": native_tensorflow}


# -- measurement -------------------------------------------------------------------------------------------------
def _inputs(backend: str) -> tuple[Any, Any, Any, Any]:
    """The same weights (one seed) and batch on ``backend``, in its layout; Adam's state."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images[:BATCH] / 16.0).astype(np.float32)[..., None]
    labels = digits.target[:BATCH].astype(np.int32)
    layout = LAYOUT[backend]
    with al.use_backend(backend):
        keys = al.random.split(al.random.key(0), 3)
        init = al.initializers
        hwio = {"conv1": init.he_normal(keys[0], (3, 3, 1, 16)), "conv2": init.he_normal(keys[1], (3, 3, 16, 32))}
        params = {name: w if layout == "NHWC" else al.permute_dims(w, (3, 2, 0, 1)) for name, w in hwio.items()}
        params.update(bias1=init.zeros(keys[0], (16,)), bias2=init.zeros(keys[1], (32,)),
                      dense=init.glorot_uniform(keys[2], (128, 10)), bias3=init.zeros(keys[2], (10,)))
        x = al.asarray(images if layout == "NHWC" else images.transpose(0, 3, 1, 2))
        y = al.asarray(labels)
        state = OPTIMIZER.init(params)
    return params, state, x, y


def _round(step: Callable[..., Any], wait: Callable[[Any], Any], inputs: tuple[Any, ...], steps: int) -> float:
    params, state, x, y = inputs
    start = time.perf_counter()
    for _ in range(steps):
        out = step(params, state, x, y)
        params, state = out[0], out[1]
    wait(out)
    return (time.perf_counter() - start) / steps


def measure(backend: str, rounds: int, steps: int) -> dict[str, float]:
    inputs = _inputs(backend)
    ours = compiler(backend)(arraylayer_step(LAYOUT[backend]))
    theirs, wait = NATIVE[backend]()
    with al.use_backend(backend):
        started = time.perf_counter()
        first_ours = ours(*inputs)
        compile_ours = time.perf_counter() - started
        started = time.perf_counter()
        first_theirs = theirs(*inputs)
        compile_theirs = time.perf_counter() - started
        loss_ours, loss_theirs = float(first_ours[2]), float(first_theirs[2])
        if not math.isclose(loss_ours, loss_theirs, rel_tol=1e-5):
            raise SystemExit(f"{backend}: the two steps disagree (loss {loss_ours} vs {loss_theirs})")
        pairs = []
        for i in range(rounds):  # A B, then B A: drifting load hits both alike
            order = (ours, theirs) if i % 2 == 0 else (theirs, ours)
            times = {id(step): _round(step, wait, inputs, steps) for step in order}
            pairs.append((times[id(ours)], times[id(theirs)]))
    ratios = sorted(a / b for a, b in pairs)
    best_ours, best_theirs = min(a for a, _ in pairs), min(b for _, b in pairs)
    return {"arraylayer_ms": statistics.median(a for a, _ in pairs) * 1e3,
            "native_ms": statistics.median(b for _, b in pairs) * 1e3,
            "ratio": statistics.median(ratios),
            "ratio_quartiles": [ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]],
            "ratio_of_best": best_ours / best_theirs,
            "loss": loss_ours, "compile_arraylayer_s": compile_ours, "compile_native_s": compile_theirs}


def _merged(results: dict[str, Any], rounds: int, steps: int) -> dict[str, Any]:
    """The results file with this run's backends replaced and the others' rows kept (each row
    says how it was measured), so a run of one backend does not drop the others."""
    try:
        old = json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        old = {}
    how = {"rounds": old.get("rounds"), "steps": old.get("steps")}  # files written before rows said it
    kept = {backend: {**how, **row} for backend, row in old.get("results", {}).items()}
    fresh = {backend: {**row, "rounds": rounds, "steps": steps} for backend, row in results.items()}
    return {"batch": BATCH, "results": {**kept, **fresh}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="jax,torch,tensorflow")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 10 steps (a smoke run)")
    args = parser.parse_args()
    rounds, steps = (3, 10) if args.quick else (41, 50)
    chosen = [b for b in args.backends.split(",") if importlib.util.find_spec(b)]
    print(f"one compiled training step of the digits CNN (batch {BATCH}), {rounds} alternating rounds of {steps} "
          f"steps: medians, the median of the paired ratios (quartiles), and the ratio of the best rounds")
    print(f"{'backend':<12}{'layout':>7}{'arraylayer':>13}{'native':>10}{'ratio':>8}{'quartiles':>15}{'best':>8}")
    results = {}
    with quiet_framework_logs():
        for backend in chosen:
            row = results[backend] = measure(backend, rounds, steps)
            low, high = row["ratio_quartiles"]
            print(f"{backend:<12}{LAYOUT[backend]:>7}{row['arraylayer_ms']:>10.2f} ms{row['native_ms']:>7.2f} ms"
                  f"{row['ratio']:>8.3f}{low:>8.3f}-{high:.3f}{row['ratio_of_best']:>8.3f}", flush=True)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(_merged(results, rounds, steps), indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
