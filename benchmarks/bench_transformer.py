"""One training step of a small transformer through arraylayer against the same model written
natively: eager torch and torch.compile (targets 1.2x and 1.05x), jax.jit, tf.function.

The model: token and position embeddings, two pre-norm blocks of causal multi-head attention and a
gelu MLP (layer_norm, softmax, dropout after the embedding, the attention weights and each block's
two branches), a final layer_norm, a dense head, softmax cross-entropy, Adam. Through arraylayer it
is written once (``forward``: nn functions, attention by hand); natively with
``torch.nn.functional`` + ``torch.optim.Adam`` (eager), with ``jax.numpy``/``jax.nn`` and Adam
written in jax (optax is not a dependency) under ``jax.jit``, and with TensorFlow's operations,
``tf.GradientTape`` and the same Adam under ``tf.function``. Compiled, both sides compile the
same scope, the whole step: loss, gradient and Adam (torch.compile: the native step takes its
gradient with ``torch.func.grad_and_value`` and runs the same hand-written Adam in torch). arraylayer's dropout draws keyed masks (the same on every backend); the native
models use the framework's own dropout (torch's generator, ``jax.random.bernoulli``,
``tf.nn.dropout``), as their authors would. Both versions start from the same weights and batch and must give the same loss with
dropout off before the timing starts.

Timing (torch with ``--threads`` intra-op threads, 1 by default): rounds of ``--steps`` steps, the two versions alternating round by round in alternating
order (A B, B A, ...); each round waits for its last step's loss. Reported: the median step time of
each, the median (and quartiles) of the rounds' paired ratios (the figure compared with the
targets). Results are printed and written to benchmarks/results/transformer.json.

Run: PYTHONPATH=. python benchmarks/bench_transformer.py [--cases torch-eager,torch-compiled,jax-jit,tf-function]
     [--rounds 15] [--steps 10] [--tiny] [--rate 0.1] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import arraylayer as al
from arraylayer.runtime.logs import quiet_framework_logs

RESULTS = Path(__file__).resolve().parent / "results" / "transformer.json"
LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-8
RATE = 0.1
BLOCKS = 2


@dataclass(frozen=True)
class Size:
    batch: int
    seq: int
    width: int
    heads: int
    vocab: int


SIZES = {"default": Size(16, 32, 64, 4, 64), "tiny": Size(2, 8, 16, 2, 11)}


# -- the weights and the batch (NumPy, then moved to each backend) ------------------------------------------
def weights(size: Size) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    d, v = size.width, size.vocab

    def dense(n_in: int, n_out: int) -> np.ndarray:
        return (rng.standard_normal((n_in, n_out)) / math.sqrt(n_in)).astype(np.float32)

    params = {"embed": dense(v, d), "pos": dense(size.seq, d), "head": dense(d, v),
              "norm_s": np.ones(d, np.float32), "norm_o": np.zeros(d, np.float32)}
    for i in range(BLOCKS):
        params.update({f"{i}.qkv": dense(d, 3 * d), f"{i}.out": dense(d, d), f"{i}.up": dense(d, 4 * d),
                       f"{i}.up_b": np.zeros(4 * d, np.float32), f"{i}.down": dense(4 * d, d),
                       f"{i}.down_b": np.zeros(d, np.float32)})
        params.update({f"{i}.{n}_s": np.ones(d, np.float32) for n in ("ln1", "ln2")})
        params.update({f"{i}.{n}_o": np.zeros(d, np.float32) for n in ("ln1", "ln2")})
    return params


def batch(size: Size) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, size.vocab, (size.batch, size.seq + 1)).astype(np.int32)
    causal = np.where(np.tril(np.ones((size.seq, size.seq), bool)), 0.0, -1e9).astype(np.float32)
    return tokens[:, :-1], tokens[:, 1:], causal


# -- the model through arraylayer, written once ---------------------------------------------------------------
def forward(p: dict[str, Any], tokens: Any, causal: Any, key: Any, size: Size, rate: float) -> Any:
    b, t, d, h = size.batch, size.seq, size.width, size.heads
    keys = al.random.split(key, 1 + 4 * BLOCKS)
    drop = iter(range(keys.shape[0]))
    x = al.add(al.nn.embedding(p["embed"], tokens), p["pos"])
    x = al.nn.dropout(keys[next(drop)], x, rate)

    for i in range(BLOCKS):
        y = al.nn.layer_norm(x, p[f"{i}.ln1_s"], p[f"{i}.ln1_o"])
        # (b, t, 3d) -> (3, b, h, t, d / h): q, k and v by one transpose (their gradients: one stack)
        qkv = al.permute_dims(al.reshape(al.matmul(y, p[f"{i}.qkv"]), (b, t, 3, h, d // h)), (2, 0, 3, 1, 4))
        q, k, v = al.unstack(qkv)
        scores = al.add(al.multiply(al.matmul(q, al.matrix_transpose(k)), 1.0 / math.sqrt(d // h)), causal)
        weights_ = al.nn.dropout(keys[next(drop)], al.nn.softmax(scores), rate)
        attended = al.reshape(al.permute_dims(al.matmul(weights_, v), (0, 2, 1, 3)), (b, t, d))
        x = al.add(x, al.nn.dropout(keys[next(drop)], al.matmul(attended, p[f"{i}.out"]), rate))
        y = al.nn.layer_norm(x, p[f"{i}.ln2_s"], p[f"{i}.ln2_o"])
        y = al.nn.gelu(al.add(al.matmul(y, p[f"{i}.up"]), p[f"{i}.up_b"]))
        y = al.add(al.matmul(y, p[f"{i}.down"]), p[f"{i}.down_b"])
        x = al.add(x, al.nn.dropout(keys[next(drop)], y, rate))
    x = al.nn.layer_norm(x, p["norm_s"], p["norm_o"])
    return al.reshape(al.matmul(x, p["head"]), (b * t, size.vocab))


def arraylayer_step(size: Size, rate: float) -> Callable[..., Any]:
    optimizer = al.optim.adam(LR, B1, B2, EPS)

    def step(params: Any, state: Any, tokens: Any, targets: Any, causal: Any, key: Any) -> tuple[Any, Any, Any]:
        def loss(p: Any) -> Any:
            return al.nn.cross_entropy(forward(p, tokens, causal, key, size, rate), al.reshape(targets, (-1,)))

        value, grads = al.value_and_grad(loss)(params)
        params, state = optimizer.update(grads, state, params)
        return params, state, value

    return step


# -- the same model, native ------------------------------------------------------------------------------------
def torch_model(size: Size, rate: float) -> Callable[..., Any]:
    import torch
    import torch.nn.functional as F

    b, t, d, h = size.batch, size.seq, size.width, size.heads

    def loss(p: dict[str, Any], tokens: Any, targets: Any, causal: Any) -> Any:
        x = F.dropout(F.embedding(tokens.long(), p["embed"]) + p["pos"], rate)
        for i in range(BLOCKS):
            y = F.layer_norm(x, (d,), p[f"{i}.ln1_s"], p[f"{i}.ln1_o"])
            q, k, v = (z.reshape(b, t, h, d // h).transpose(1, 2) for z in (y @ p[f"{i}.qkv"]).split(d, dim=-1))
            scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // h)) + causal
            attended = (F.dropout(torch.softmax(scores, -1), rate) @ v).transpose(1, 2).reshape(b, t, d)
            x = x + F.dropout(attended @ p[f"{i}.out"], rate)
            y = F.layer_norm(x, (d,), p[f"{i}.ln2_s"], p[f"{i}.ln2_o"])
            y = F.gelu(y @ p[f"{i}.up"] + p[f"{i}.up_b"]) @ p[f"{i}.down"] + p[f"{i}.down_b"]
            x = x + F.dropout(y, rate)
        logits = F.layer_norm(x, (d,), p["norm_s"], p["norm_o"]) @ p["head"]
        return F.cross_entropy(logits.reshape(b * t, size.vocab), targets.reshape(-1).long())

    return loss


def hand_adam(p: dict[str, Any], state: dict[str, Any], grads: dict[str, Any], sqrt: Callable[[Any], Any],
              as_float: Callable[[Any], Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Adam written with the framework's own operators (jax, tensorflow, compiled torch): the
    new parameters and state {"count", "mu", "nu"}."""
    count = state["count"] + 1
    c = as_float(count)
    first, second = 1 - B1 ** c, 1 - B2 ** c
    mu = {k: state["mu"][k] * B1 + g * (1 - B1) for k, g in grads.items()}
    nu = {k: state["nu"][k] * B2 + g * g * (1 - B2) for k, g in grads.items()}
    p = {k: w - (mu[k] / first) / (sqrt(nu[k] / second) + EPS) * LR for k, w in p.items()}
    return p, {"count": count, "mu": mu, "nu": nu}


def torch_compiled_step(size: Size, rate: float) -> Callable[..., Any]:
    """The whole step under one torch.compile, as arraylayer's: the loss, its gradient
    (``torch.func.grad_and_value``) and Adam written with torch's operators."""
    import torch

    loss_fn = torch_model(size, rate)

    def step(p: Any, state: Any, tokens: Any, targets: Any, causal: Any, _key: Any) -> Any:
        grads, value = torch.func.grad_and_value(lambda q: loss_fn(q, tokens, targets, causal))(p)
        p, state = hand_adam(p, state, grads, torch.sqrt, lambda c: c.to(torch.float32))
        return p, state, value

    return torch.compile(step)


def torch_step(size: Size, rate: float, params: dict[str, Any]) -> Callable[..., Any]:
    """loss.backward() and torch.optim.Adam's step over leaf copies of ``params``, eager; returns
    (params, None, loss) as arraylayer's step does."""
    import torch

    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    optimizer = torch.optim.Adam(leaves.values(), lr=LR, betas=(B1, B2), eps=EPS)
    loss_fn = torch_model(size, rate)

    def step(_params: Any, _state: Any, tokens: Any, targets: Any, causal: Any, _key: Any) -> Any:
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(leaves, tokens, targets, causal)
        loss.backward()
        optimizer.step()
        return leaves, None, loss.detach()

    return step


def jax_step(size: Size, rate: float) -> Callable[..., Any]:
    import jax
    import jax.numpy as jnp

    b, t, d, h = size.batch, size.seq, size.width, size.heads

    def layer_norm(x: Any, s: Any, o: Any) -> Any:
        centred = x - x.mean(-1, keepdims=True)
        return centred / jnp.sqrt((centred * centred).mean(-1, keepdims=True) + 1e-5) * s + o

    def dropout(key: Any, x: Any) -> Any:
        return x if rate == 0 else jnp.where(jax.random.bernoulli(key, 1.0 - rate, x.shape), x / (1.0 - rate), 0.0)

    def loss(p: Any, tokens: Any, targets: Any, causal: Any, key: Any) -> Any:
        keys = iter(jax.random.split(key, 1 + 4 * BLOCKS))
        x = dropout(next(keys), p["embed"][tokens] + p["pos"])
        for i in range(BLOCKS):
            y = layer_norm(x, p[f"{i}.ln1_s"], p[f"{i}.ln1_o"])
            q, k, v = (z.reshape(b, t, h, d // h).transpose(0, 2, 1, 3) for z in jnp.split(y @ p[f"{i}.qkv"], 3, -1))
            scores = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(d // h)) + causal
            weights_ = dropout(next(keys), jax.nn.softmax(scores))
            attended = (weights_ @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
            x = x + dropout(next(keys), attended @ p[f"{i}.out"])
            y = layer_norm(x, p[f"{i}.ln2_s"], p[f"{i}.ln2_o"])
            y = jax.nn.gelu(y @ p[f"{i}.up"] + p[f"{i}.up_b"], approximate=False) @ p[f"{i}.down"] + p[f"{i}.down_b"]
            x = x + dropout(next(keys), y)
        logits = (layer_norm(x, p["norm_s"], p["norm_o"]) @ p["head"]).reshape(b * t, size.vocab)
        picked = jnp.take_along_axis(jax.nn.log_softmax(logits), targets.reshape(-1, 1), axis=1)
        return -picked.mean()

    def step(p: Any, state: Any, tokens: Any, targets: Any, causal: Any, key: Any) -> Any:
        value, grads = jax.value_and_grad(loss)(p, tokens, targets, causal, key)
        p, state = hand_adam(p, state, grads, jnp.sqrt, lambda c: c.astype(jnp.float32))
        return p, state, value

    return jax.jit(step)


def tf_model(size: Size, rate: float) -> Callable[..., Any]:
    import tensorflow as tf

    b, t, d, h = size.batch, size.seq, size.width, size.heads

    def layer_norm(x: Any, s: Any, o: Any) -> Any:
        centred = x - tf.reduce_mean(x, -1, keepdims=True)
        return centred / tf.sqrt(tf.reduce_mean(centred * centred, -1, keepdims=True) + 1e-5) * s + o

    def dropout(x: Any) -> Any:
        return x if rate == 0 else tf.nn.dropout(x, rate)

    def heads(z: Any) -> Any:
        return tf.transpose(tf.reshape(z, (b, t, h, d // h)), (0, 2, 1, 3))

    def loss(p: Any, tokens: Any, targets: Any, causal: Any) -> Any:
        x = dropout(tf.gather(p["embed"], tokens) + p["pos"])
        for i in range(BLOCKS):
            y = layer_norm(x, p[f"{i}.ln1_s"], p[f"{i}.ln1_o"])
            q, k, v = (heads(z) for z in tf.split(tf.matmul(y, p[f"{i}.qkv"]), 3, -1))
            scores = tf.matmul(q, k, transpose_b=True) * (1.0 / math.sqrt(d // h)) + causal
            attended = tf.reshape(tf.transpose(tf.matmul(dropout(tf.nn.softmax(scores)), v), (0, 2, 1, 3)), (b, t, d))
            x = x + dropout(tf.matmul(attended, p[f"{i}.out"]))
            y = layer_norm(x, p[f"{i}.ln2_s"], p[f"{i}.ln2_o"])
            y = tf.nn.gelu(tf.matmul(y, p[f"{i}.up"]) + p[f"{i}.up_b"], approximate=False)
            x = x + dropout(tf.matmul(y, p[f"{i}.down"]) + p[f"{i}.down_b"])
        logits = tf.reshape(tf.matmul(layer_norm(x, p["norm_s"], p["norm_o"]), p["head"]), (b * t, size.vocab))
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(tf.reshape(targets, (-1,)), logits))

    return loss


def tf_step(size: Size, rate: float) -> Callable[..., Any]:
    import tensorflow as tf

    loss = tf_model(size, rate)

    def step(p: Any, state: Any, tokens: Any, targets: Any, causal: Any, key: Any) -> Any:
        with tf.GradientTape() as tape:
            tape.watch(p)
            value = loss(p, tokens, targets, causal)
        grads = {k: tf.convert_to_tensor(g) for k, g in tape.gradient(value, p).items()}  # the embedding: IndexedSlices
        p, state = hand_adam(p, state, grads, tf.sqrt, lambda c: tf.cast(c, tf.float32))
        return p, state, value

    return tf.function(step)


# -- the cases ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    backend: str
    ours: Callable[[Size, float], Callable[..., Any]]
    theirs: Callable[[Size, float, dict[str, Any]], Callable[..., Any]]
    hand_adam: bool = False  # the native step takes hand_adam's state (else torch.optim.Adam keeps its own)


def _jit(make: Callable[..., Any]) -> Callable[..., Any]:
    import jax

    return jax.jit(make)


def _tf_function(make: Callable[..., Any]) -> Callable[..., Any]:
    import tensorflow as tf

    return tf.function(make)


#: how arraylayer's step is given to torch.compile: with ``al.torch_guard_filter`` named (the default),
#: plainly (``--plain-compile``: the same filter, arraylayer's default), or with every guard kept
#: (``--all-guards``: a filter that keeps all); the native step compiles plainly
GUARD_OPTIONS = {"explicit": {"guard_filter_fn": al.torch_guard_filter}, "plain": {},
                 "all kept": {"guard_filter_fn": lambda entries: [True] * len(entries)}}
GUARD_FILTER = dict(GUARD_OPTIONS["explicit"])


def _compiled(make: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    # a copy: torch.compile pops "guard_filter_fn" out of the dict it is given, so the timed step,
    # compiled after the check with dropout off, got no filter when it shared this one
    return torch.compile(make, options=dict(GUARD_FILTER) or None)


CASES = {
    "torch-eager": Case("torch", arraylayer_step, torch_step),
    "torch-compiled": Case("torch", lambda s, r: _compiled(arraylayer_step(s, r)),
                           lambda s, r, p: torch_compiled_step(s, r), hand_adam=True),
    "jax-jit": Case("jax", lambda s, r: _jit(arraylayer_step(s, r)), lambda s, r, p: jax_step(s, r), hand_adam=True),
    "tf-function": Case("tensorflow", lambda s, r: _tf_function(arraylayer_step(s, r)), lambda s, r, p: tf_step(s, r),
                        hand_adam=True),
}


def _inputs(backend: str, size: Size) -> tuple[Any, ...]:
    with al.use_backend(backend):
        params = {k: al.asarray(v) for k, v in weights(size).items()}
        tokens, targets, causal = (al.asarray(a) for a in batch(size))
        return params, al.optim.adam(LR).init(params), tokens, targets, causal, al.random.key(0)


def _native_state(case: Case, params: dict[str, Any]) -> Any:
    """hand_adam's state, or None where torch.optim.Adam keeps its own."""
    if not case.hand_adam:
        return None
    with al.use_backend(case.backend):
        def zeros() -> dict[str, Any]:  # mu and nu each their own tensors (shared ones made torch.compile
            return {k: al.zeros_like(v) for k, v in params.items()}  # compile the native step again)

        return {"count": al.zeros((), dtype=al.int32), "mu": zeros(), "nu": zeros()}


#: how a round is timed: wall-clock time, or this process's CPU time (steadier on a shared machine,
#: where other processes take the cores; both versions run on one thread)
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def _round(step: Callable[..., Any], inputs: tuple[Any, ...], steps: int) -> float:
    params, state, *data = inputs
    start = clock()
    for _ in range(steps):
        params, state, loss = step(params, state, *data)
    float(loss)
    return (clock() - start) / steps


def measure(name: str, size: Size, rounds: int, steps: int, rate: float = RATE) -> dict[str, Any]:
    case = CASES[name]
    inputs = _inputs(case.backend, size)
    native_inputs = (inputs[0], _native_state(case, inputs[0]), *inputs[2:])
    with al.use_backend(case.backend):
        check_ours = case.ours(size, 0.0)(*inputs)[2]
        check_theirs = case.theirs(size, 0.0, inputs[0])(*native_inputs)[2]
        if not math.isclose(float(check_ours), float(check_theirs), rel_tol=1e-5):
            raise SystemExit(f"{name}: the two steps disagree (loss {float(check_ours)} vs {float(check_theirs)})")
        ours, theirs = case.ours(size, rate), case.theirs(size, rate, inputs[0])
        started = time.perf_counter()
        _round(ours, inputs, 2)
        warm_ours = time.perf_counter() - started
        started = time.perf_counter()
        _round(theirs, native_inputs, 2)
        warm_theirs = time.perf_counter() - started
        pairs = []
        for i in range(rounds):  # A B, then B A: drifting load hits both alike
            order = ((ours, inputs), (theirs, native_inputs))
            times = {id(step): _round(step, data, steps) for step, data in (order if i % 2 == 0 else order[::-1])}
            pairs.append((times[id(ours)], times[id(theirs)]))
    ratios = sorted(a / b for a, b in pairs)
    return {"arraylayer_ms": statistics.median(a for a, _ in pairs) * 1e3,
            "native_ms": statistics.median(b for _, b in pairs) * 1e3,
            "ratio": statistics.median(ratios),
            "ratio_quartiles": [ratios[len(ratios) // 4], ratios[(3 * len(ratios)) // 4]],
            "loss_without_dropout": float(check_ours), "warm_up_arraylayer_s": warm_ours,
            "warm_up_native_s": warm_theirs, "rounds": rounds, "steps": steps, "dropout": rate,
            "clock": next(k for k, v in CLOCKS.items() if v is clock)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--tiny", action="store_true", help="a tiny model (rows labelled @tiny: for torch.compile on a slow machine)")
    parser.add_argument("--threads", type=int, default=1, help="torch's intra-op threads (1: a shared machine)")
    parser.add_argument("--rate", type=float, default=RATE, help="the dropout rate (0: no dropout, no masks drawn)")
    parser.add_argument("--clock", choices=CLOCKS, default="wall", help="time rounds by wall clock or by this "
                        "process's CPU time (steadier on a loaded machine)")
    parser.add_argument("--quick", action="store_true", help="--tiny with one round of one step (nox -s bench -- --quick)")
    parser.add_argument("--plain-compile", action="store_true", help="torch.compile arraylayer's step with no "
                        "options (arraylayer's default guard filter)")
    parser.add_argument("--all-guards", action="store_true", help="torch.compile arraylayer's step with a filter "
                        "that keeps every guard (the opt-out of al.torch_guard_filter)")
    args = parser.parse_args()
    guards = "all kept" if args.all_guards else "plain" if args.plain_compile else "explicit"
    GUARD_FILTER.clear()
    GUARD_FILTER.update(GUARD_OPTIONS[guards])
    if args.quick:
        args.tiny, args.rounds, args.steps = True, 1, 1
    size = SIZES["tiny" if args.tiny else "default"]
    global clock
    clock = CLOCKS[args.clock]
    chosen = [c for c in args.cases.split(",") if importlib.util.find_spec(CASES[c].backend)]
    if any(CASES[c].backend == "torch" for c in chosen):
        import torch

        torch.set_num_threads(args.threads)
    print(f"one training step of a {BLOCKS}-block transformer {size}, dropout {args.rate}, {args.rounds} alternating "
          f"rounds of {args.steps} steps, {args.clock} time: medians, the median of the paired ratios (quartiles)")
    print(f"{'case':<24}{'arraylayer':>13}{'native':>12}{'ratio':>8}{'quartiles':>15}")
    results = {}
    with quiet_framework_logs():
        for name in chosen:
            label = name + ("@tiny" if args.tiny else "") + ("" if args.rate == RATE else f"@dropout={args.rate:g}")
            row = results[label] = measure(name, size, args.rounds, args.steps, args.rate)
            if name == "torch-compiled":
                row["guard_filter"] = guards
            low, high = row["ratio_quartiles"]
            print(f"{label:<24}{row['arraylayer_ms']:>10.2f} ms{row['native_ms']:>9.2f} ms{row['ratio']:>8.3f}"
                  f"{low:>8.3f}-{high:.3f}", flush=True)
    if not args.quick:
        RESULTS.parent.mkdir(exist_ok=True)
        old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        old.pop("size", None)  # before the sizes were named
        RESULTS.write_text(json.dumps({**old, "sizes": {k: v.__dict__ for k, v in SIZES.items()},
                                       "results": {**old.get("results", {}), **results}},
                                      indent=2) + "\n")
        print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
