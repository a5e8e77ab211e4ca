"""One training step of a small transformer through arraylayer against the same model written
natively: eager torch and torch.compile (targets 1.2x and 1.05x), jax.jit.

The model: token and position embeddings, two pre-norm blocks of causal multi-head attention and a
gelu MLP (layer_norm, softmax, dropout after the embedding, the attention weights and each block's
two branches), a final layer_norm, a dense head, softmax cross-entropy, Adam. Through arraylayer it
is written once (``forward``: nn functions, attention by hand); natively with
``torch.nn.functional`` + ``torch.optim.Adam`` (eager, and the loss compiled by ``torch.compile``),
and with ``jax.numpy``/``jax.nn`` and Adam written in jax (optax is not a dependency) under
``jax.jit``. arraylayer's dropout draws keyed masks (the same on every backend); the native models
use the framework's own dropout (torch's generator, ``jax.random.bernoulli``), as their authors
would. Both versions start from the same weights and batch and must give the same loss with
dropout off before the timing starts.

Timing (torch with ``--threads`` intra-op threads, 1 by default): rounds of ``--steps`` steps, the two versions alternating round by round in alternating
order (A B, B A, ...); each round waits for its last step's loss. Reported: the median step time of
each, the median (and quartiles) of the rounds' paired ratios (the figure compared with the
targets). Results are printed and written to benchmarks/results/transformer.json.

Run: PYTHONPATH=. python benchmarks/bench_transformer.py [--cases torch-eager,torch-compiled,jax-jit]
     [--rounds 15] [--steps 10] [--tiny]
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
from arraylayer.logs import quiet_framework_logs

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

    def heads(z: Any) -> Any:  # (b, t, d) -> (b, h, t, d / h)
        return al.permute_dims(al.reshape(z, (b, t, h, d // h)), (0, 2, 1, 3))

    for i in range(BLOCKS):
        y = al.nn.layer_norm(x, p[f"{i}.ln1_s"], p[f"{i}.ln1_o"])
        qkv = al.matmul(y, p[f"{i}.qkv"])
        q, k, v = (heads(qkv[..., j * d:(j + 1) * d]) for j in range(3))
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


def torch_step(size: Size, rate: float, params: dict[str, Any], compiled: bool) -> Callable[..., Any]:
    """loss.backward() and torch.optim.Adam's step over leaf copies of ``params`` (the loss compiled
    by torch.compile when ``compiled``); returns (params, None, loss) as arraylayer's step does."""
    import torch

    leaves = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
    optimizer = torch.optim.Adam(leaves.values(), lr=LR, betas=(B1, B2), eps=EPS)
    loss_fn = torch_model(size, rate)
    loss_fn = torch.compile(loss_fn) if compiled else loss_fn

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
        count = state["count"] + 1
        c = count.astype(jnp.float32)
        mu = jax.tree.map(lambda m, g: m * B1 + g * (1 - B1), state["mu"], grads)
        nu = jax.tree.map(lambda n, g: n * B2 + g * g * (1 - B2), state["nu"], grads)
        first, second = 1 - B1 ** c, 1 - B2 ** c
        p = jax.tree.map(lambda w, m, n: w - (m / first) / (jnp.sqrt(n / second) + EPS) * LR, p, mu, nu)
        return p, {"count": count, "mu": mu, "nu": nu}, value

    return jax.jit(step)


# -- the cases ------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    backend: str
    ours: Callable[[Size, float], Callable[..., Any]]
    theirs: Callable[[Size, float, dict[str, Any]], Callable[..., Any]]


def _jit(make: Callable[..., Any]) -> Callable[..., Any]:
    import jax

    return jax.jit(make)


def _compiled(make: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    return torch.compile(make)


CASES = {
    "torch-eager": Case("torch", arraylayer_step, lambda s, r, p: torch_step(s, r, p, compiled=False)),
    "torch-compiled": Case("torch", lambda s, r: _compiled(arraylayer_step(s, r)),
                           lambda s, r, p: torch_step(s, r, p, compiled=True)),
    "jax-jit": Case("jax", lambda s, r: _jit(arraylayer_step(s, r)), lambda s, r, p: jax_step(s, r)),
}


def _inputs(backend: str, size: Size) -> tuple[Any, ...]:
    with al.use_backend(backend):
        params = {k: al.asarray(v) for k, v in weights(size).items()}
        tokens, targets, causal = (al.asarray(a) for a in batch(size))
        return params, al.optim.adam(LR).init(params), tokens, targets, causal, al.random.key(0)


def _native_state(backend: str, params: dict[str, Any]) -> Any:
    if backend != "jax":
        return None
    import jax.numpy as jnp

    zeros = {k: jnp.zeros_like(v) for k, v in params.items()}
    return {"count": jnp.zeros((), jnp.int32), "mu": zeros, "nu": dict(zeros)}


def _round(step: Callable[..., Any], inputs: tuple[Any, ...], steps: int) -> float:
    params, state, *data = inputs
    start = time.perf_counter()
    for _ in range(steps):
        params, state, loss = step(params, state, *data)
    float(loss)
    return (time.perf_counter() - start) / steps


def measure(name: str, size: Size, rounds: int, steps: int) -> dict[str, Any]:
    case = CASES[name]
    inputs = _inputs(case.backend, size)
    native_inputs = (inputs[0], _native_state(case.backend, inputs[0]), *inputs[2:])
    with al.use_backend(case.backend):
        check_ours = case.ours(size, 0.0)(*inputs)[2]
        check_theirs = case.theirs(size, 0.0, inputs[0])(*native_inputs)[2]
        if not math.isclose(float(check_ours), float(check_theirs), rel_tol=1e-5):
            raise SystemExit(f"{name}: the two steps disagree (loss {float(check_ours)} vs {float(check_theirs)})")
        ours, theirs = case.ours(size, RATE), case.theirs(size, RATE, inputs[0])
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
            "warm_up_native_s": warm_theirs, "rounds": rounds, "steps": steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--tiny", action="store_true", help="a tiny model (a smoke run; results not written)")
    parser.add_argument("--threads", type=int, default=1, help="torch's intra-op threads (1: a shared machine)")
    parser.add_argument("--quick", action="store_true", help="--tiny with one round of one step (nox -s bench -- --quick)")
    args = parser.parse_args()
    if args.quick:
        args.tiny, args.rounds, args.steps = True, 1, 1
    size = SIZES["tiny" if args.tiny else "default"]
    chosen = [c for c in args.cases.split(",") if importlib.util.find_spec(CASES[c].backend)]
    if any(CASES[c].backend == "torch" for c in chosen):
        import torch

        torch.set_num_threads(args.threads)
    print(f"one training step of a {BLOCKS}-block transformer {size}, {args.rounds} alternating rounds of "
          f"{args.steps} steps: medians, the median of the paired ratios (quartiles)")
    print(f"{'case':<16}{'arraylayer':>13}{'native':>12}{'ratio':>8}{'quartiles':>15}")
    results = {}
    with quiet_framework_logs():
        for name in chosen:
            row = results[name] = measure(name, size, args.rounds, args.steps)
            low, high = row["ratio_quartiles"]
            print(f"{name:<16}{row['arraylayer_ms']:>10.2f} ms{row['native_ms']:>9.2f} ms{row['ratio']:>8.3f}"
                  f"{low:>8.3f}-{high:.3f}", flush=True)
    if not args.tiny:
        RESULTS.parent.mkdir(exist_ok=True)
        old = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        RESULTS.write_text(json.dumps({**old, "size": size.__dict__, "results": {**old.get("results", {}), **results}},
                                      indent=2) + "\n")
        print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
