"""The second main job: a two-layer character-level transformer, written once, trained on jax,
torch and tensorflow, and moved between them mid-run through a checkpoint.

The corpus is generated here (nothing downloaded): sentences of a small grammar, "the old cat
sees a red ball.", drawn with a fixed seed, about 20,000 characters. The model (a character and a
position embedding, two pre-norm transformer blocks from ``arraylayer.models.layers``, a final layer norm
and a dense head), its loss (``nn.cross_entropy``) and its training step are written once below.
The optimizer is a chain of ``arraylayer.models.transforms``: clip by global norm, Adam's scaling, weight
decay on the matrices only (a predicate on the parameter's path), and a learning rate from
``schedules.warmup_cosine_decay``; the step count lives in the optimizer state, so each compiled
step is traced once.

Every backend starts from the same weights (one key) and sees the same batches in the same order.
Each run trains ``--steps`` steps on two backends: the first half on one, then
``arraylayer.models.checkpoint`` saves the parameters and optimizer state (a safetensors file), the next
backend loads them and finishes. With ``--backends jax,torch,tensorflow`` the runs are
jax -> torch, torch -> tensorflow and tensorflow -> jax: every backend trains twice, once from the
start and once from another backend's checkpoint, and every compiled step is compiled once. jax
runs under ``jax.jit``, tensorflow under ``tf.function``, torch eagerly on one thread (``--eager
none`` puts it under ``torch.compile``, which compiles for many minutes on 2 CPU cores;
``--torch-threads`` gives it more threads, which a model this small cannot use: on a busy machine
the second one only spin-waits). At the end each run samples text greedily from the same prompt
(one window shape, so each backend compiles its sampler once), and the script checks that the loss
curves agree and that the sampled texts are the same; it saves the curves to ``--plot`` (default
``transformer_losses.png``) and exits with status 1 if anything disagrees. The default takes about
75 s of CPU time (README, "Models").

The tolerance. The runs compute the same float32 arithmetic in different orders (matrix products,
reductions, fused attention and layer norm kernels), so the losses may differ by a few ulps from
the first step, and training can amplify that. Measured here (jax 0.10, torch 2.13, tensorflow
2.21, CPU, 240 steps): the step losses of the three runs agree within 2.3e-7 to 2.8e-7 relatively, and the
loss falls from 3.69 to 0.44 nats per character. The check allows ``--rtol`` (1e-4) on every
step's loss: some 300 times the measured difference, far below what a real difference in
semantics moves (a wrong gradient, another clipping, a schedule off by one step moves the loss by
more than 1e-3).

Progress is shown as train_cnn.py does: a tqdm bar per run on a terminal (also under nox, which
hands the terminal on), a plain line at each leg's start and end in a log, the frameworks' own log
lines hidden (``arraylayer.runtime.logs``).

Usage::

    python examples/train_transformer.py                      # jax -> torch -> tensorflow -> jax
    python examples/train_transformer.py --eager none         # torch under torch.compile too (minutes)
    python examples/train_transformer.py --steps 100 --backends torch,jax --plot /tmp/losses.png
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import arraylayer as al
from arraylayer.models import layers
from arraylayer.runtime.compilers import COMPILERS, compiler
from arraylayer.runtime.logs import progress_stream, quiet_framework_logs

TRAINED = ("jax", "torch", "tensorflow")
SEED = 0
PROMPT = "the old cat sees "


# -- the corpus ---------------------------------------------------------------------------------------------------
WORDS = {
    "det": ("the", "my", "one", "that"),
    "adj": ("old", "red", "small", "happy", "quiet"),
    "noun": ("cat", "dog", "bird", "fox", "ball", "tree"),
    "verb": ("sees", "likes", "finds", "chases", "hears"),
}


def corpus(characters: int = 20_000, seed: int = SEED) -> str:
    """Sentences "det adj noun verb det adj noun." joined by spaces, words drawn with a fixed seed:
    a text with structure (spelling, word order, agreement of nothing else) that two small layers
    learn within a few hundred steps."""
    rng = np.random.default_rng(seed)
    sentences, length = [], 0
    while length < characters:
        words = [WORDS[part][rng.integers(len(WORDS[part]))] for part in ("det", "adj", "noun", "verb", "det", "adj")]
        sentence = " ".join(words) + " " + WORDS["noun"][rng.integers(len(WORDS["noun"]))] + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return " ".join(sentences)


@dataclass(frozen=True)
class Config:
    """The model's and the run's sizes."""

    steps: int = 240
    features: int = 64
    heads: int = 4
    length: int = 32  # characters of context
    batch: int = 32
    peak_rate: float = 3e-3
    warmup: int = 20
    clip: float = 1.0
    weight_decay: float = 1e-2


# -- the model, written once ----------------------------------------------------------------------------------------
def init_params(config: Config, vocabulary: int, seed: int = SEED) -> dict[str, Any]:
    """Weights from one key, on the active backend (the same numbers on every backend)."""
    k = al.random.split(al.random.key(seed), 6)
    f = config.features
    return {"embed": layers.embedding.init(k[0], vocabulary, f, stddev=0.1),
            "position": layers.embedding.init(k[1], config.length, f, stddev=0.1),
            "blocks": [layers.transformer_block.init(k[2 + i], f, config.heads) for i in range(2)],
            "norm": layers.layer_norm.init(k[4], f),
            "head": layers.dense.init(k[5], f, vocabulary)}


def logits_of(params: dict[str, Any], ids: Any, heads: int) -> Any:
    """Next-character logits (batch, length, vocabulary) of character ids (batch, length), causal."""
    positions = al.arange(ids.shape[1], dtype=al.int32, device=al.dev(ids))
    h = al.add(layers.embedding.apply(params["embed"], ids), layers.embedding.apply(params["position"], positions))
    for block in params["blocks"]:
        h = layers.transformer_block.apply(block, h, heads=heads)
    return layers.dense.apply(params["head"], layers.layer_norm.apply(params["norm"], h))


def matrices(path: tuple[Any, ...], leaf: Any) -> bool:
    """Weight decay on the weight matrices only: not on biases, norm scales, embeddings."""
    return leaf.ndim == 2 and path[0] not in ("embed", "position")


def optimizer(config: Config) -> al.optim.Optimizer:
    T = al.transforms
    schedule = al.schedules.warmup_cosine_decay(config.peak_rate, config.warmup, config.steps - config.warmup,
                                                alpha=0.1)
    return al.optim.from_transforms(T.clip_by_global_norm(config.clip), T.scale_by_adam(),
                                    T.add_decayed_weights(config.weight_decay, mask=matrices),
                                    T.scale_by_learning_rate(schedule))


def make_step(config: Config) -> Callable[..., tuple[Any, Any, Any]]:
    opt = optimizer(config)

    def loss_fn(params: dict[str, Any], x: Any, y: Any) -> Any:
        return al.nn.cross_entropy(logits_of(params, x, config.heads), y)

    def train_step(params: dict[str, Any], state: Any, x: Any, y: Any) -> tuple[Any, Any, Any]:
        """One step: the new parameters and optimizer state, and the loss before the step."""
        loss, grads = al.value_and_grad(loss_fn)(params, x, y)
        params, state = opt.update(grads, state, params)
        return params, state, loss

    return train_step


def sample(params: dict[str, Any], config: Config, chars: str, prompt: str = PROMPT, count: int = 80,
           forward: Callable[[Any, Any], Any] | None = None) -> str:
    """Greedy continuation of ``prompt``: the most likely next character, ``count`` times, each
    predicted from the last ``config.length`` characters, on the parameters' backend. The window
    always has ``config.length`` characters (a short one padded after its end, which a causal model
    does not see), so that ``forward`` (the logits, default eager ``logits_of``) sees one shape."""
    index = {c: i for i, c in enumerate(chars)}
    ids = [index[c] for c in prompt]
    forward = forward or (lambda p, x: logits_of(p, x, config.heads))
    window = np.zeros((1, config.length), np.int32)
    with al.use_backend(al.backend_of(params["head"]["w"])):
        for _ in range(count):
            last = ids[-config.length:]
            window[0, :len(last)] = last
            logits = forward(params, al.asarray(window))
            ids.append(int(al.argmax(logits[0, len(last) - 1])))
    return "".join(chars[i] for i in ids)


# -- torch's threads ----------------------------------------------------------------------------------------------
@contextmanager
def torch_threads(count: int | None) -> Iterator[None]:
    """PyTorch's intra-op threads set to ``count`` within the block (unchanged with None)."""
    if count is None:
        yield
        return
    import torch

    saved = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


# -- data ---------------------------------------------------------------------------------------------------------------
def encode(text: str) -> tuple[str, np.ndarray]:
    chars = "".join(sorted(set(text)))
    index = {c: i for i, c in enumerate(chars)}
    return chars, np.array([index[c] for c in text], np.int32)


def batches(ids: np.ndarray, config: Config) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets (steps, batch, length) of every step: windows at start positions drawn
    with arraylayer.models.random on NumPy, shared by every backend."""
    with al.use_backend("numpy"):
        starts = np.asarray(al.random.randint(al.random.key(SEED + 1), (config.steps, config.batch), 0,
                                              len(ids) - config.length - 1))
    windows = starts[..., None] + np.arange(config.length)
    return ids[windows], ids[windows + 1]


# -- one run, moved mid-way ----------------------------------------------------------------------------------------------
@dataclass
class Run:
    route: tuple[str, str]  # the backend of the first half, then the one that loads the checkpoint
    losses: list[float] = field(default_factory=list)
    moved_at: int = 0
    checkpoint_bytes: int = 0
    text: str = ""
    seconds: float = 0.0
    params: Any = None

    @property
    def name(self) -> str:
        return " -> ".join(self.route)


class Steps:
    """Each backend's compiled step and sampling forward pass, compiled once and shared by every run
    that uses the backend; the backends named in ``eager`` run them as they are."""

    def __init__(self, config: Config, eager: Collection[str] = ()) -> None:
        self.eager, self.compiled = set(eager), {}
        self.functions = {"step": make_step(config), "forward": lambda p, x: logits_of(p, x, config.heads)}

    def how(self, backend: str) -> str:
        """How ``backend``'s step runs, as the progress says it."""
        if backend in self.eager:
            return "eager"
        return f"{COMPILERS[backend]}, compiled" if (backend, "step") in self.compiled else \
            f"{COMPILERS[backend]} compiles the first step ..."

    def __call__(self, backend: str, function: str = "step") -> Callable[..., Any]:
        if (backend, function) not in self.compiled:
            plain = self.functions[function]
            self.compiled[backend, function] = plain if backend in self.eager else compiler(backend)(plain)
        return self.compiled[backend, function]


def leg(backend: str, steps: Steps, params: Any, state: Any, xs: np.ndarray, ys: np.ndarray,
        run: Run, shown: Progress) -> tuple[Any, Any]:
    """Train on ``backend`` over the batches ``xs``, ``ys`` (already on the backend's arrays)."""
    step = steps(backend)
    with al.use_backend(backend):
        for x, y in zip(xs, ys, strict=True):
            params, state, loss = step(params, state, al.asarray(x), al.asarray(y))
            run.losses.append(float(loss))
            shown.step(run.losses[-1])
    shown.leg_done()
    return params, state


def train(route: tuple[str, str], config: Config, chars: str, data: tuple[np.ndarray, np.ndarray], steps: Steps,
          folder: str, move_at: int | None = None, show: bool = True, sampled: int = 80) -> Run:
    """One run: ``move_at`` steps (default half) on ``route[0]``, a checkpoint, the rest on ``route[1]``."""
    xs, ys = data
    run = Run(route, moved_at=config.steps // 2 if move_at is None else move_at)
    began = time.perf_counter()
    first, second = route
    with al.use_backend(first):
        params = init_params(config, len(chars))
        state = optimizer(config).init(params)
    shown = Progress(run.name, config.steps, show)
    try:
        shown.leg(first, how=steps.how(first))
        params, state = leg(first, steps, params, state, xs[:run.moved_at], ys[:run.moved_at], run, shown)
        path = os.path.join(folder, f"{first}-to-{second}.safetensors")
        al.checkpoint.save(path, {"params": params, "state": state}, step=run.moved_at)
        run.checkpoint_bytes = os.path.getsize(path)
        tree, saved_step = al.checkpoint.load(path, backend=second)
        assert saved_step == run.moved_at
        shown.leg(second, saved_step)
        params, state = leg(second, steps, tree["params"], tree["state"], xs[run.moved_at:], ys[run.moved_at:],
                            run, shown)
    finally:
        shown.close()
    run.seconds = time.perf_counter() - began
    run.params = params
    run.text = sample(params, config, chars, count=sampled, forward=steps(second, "forward"))
    return run


class Progress:
    """One run as a person sees it: a tqdm bar where standard error is a terminal, else two plain
    lines per leg, at its start and its end (a log), or nothing (``show=False``)."""

    def __init__(self, name: str, steps: int, show: bool) -> None:
        self.name, self.steps, self.done, self.loss, self.began = name, steps, 0, float("nan"), 0.0
        self.stream = progress_stream() if show else None
        self.bar = None
        if self.stream is not None and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=steps, desc=f"{name:<22}", unit="step", file=self.stream, dynamic_ncols=True)

    def leg(self, backend: str, at: int = 0, how: str = "the first step compiles ...") -> None:
        self.backend, self.began = backend, time.perf_counter()
        what = f"{backend}: {how}" if at == 0 else f"checkpoint at step {at} loaded on {backend}"
        if self.bar is not None:
            self.bar.set_postfix_str(what)
        else:
            self._line(what)

    def step(self, loss: float) -> None:
        self.done, self.loss = self.done + 1, loss
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self.bar.update(1)

    def leg_done(self) -> None:
        if self.bar is None:
            self._line(f"{self.backend}: step {self.done}/{self.steps}, loss {self.loss:.4f}, "
                       f"{time.perf_counter() - self.began:.1f} s")

    def _line(self, text: str) -> None:
        if self.stream is not None:
            self.stream.write(f"{self.name}: {text}\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def routes(backends: Sequence[str]) -> list[tuple[str, str]]:
    """Each backend starts a run and hands it to the next one (the last to the first)."""
    return [(b, backends[(i + 1) % len(backends)]) for i, b in enumerate(backends)]


# -- agreement, report, plot ----------------------------------------------------------------------------------------------
def disagreements(runs: Sequence[Run], rtol: float) -> list[str]:
    """Every run whose step losses differ from the first run's by more than ``rtol`` relatively
    (the largest difference named), and every sampled text unlike the first run's."""
    reference, problems = runs[0], []
    for run in runs[1:]:
        differences = [abs(a - b) / abs(b) for a, b in zip(run.losses, reference.losses, strict=True)]
        worst = int(np.argmax(differences))
        if differences[worst] > rtol:
            problems.append(f"{run.name} step {worst} loss {run.losses[worst]:.7f} vs {reference.name} "
                            f"{reference.losses[worst]:.7f} (relative {differences[worst]:.1e})")
        if run.text != reference.text:
            problems.append(f"{run.name} sampled {run.text!r}, {reference.name} sampled {reference.text!r}")
    return problems


def largest_difference(runs: Sequence[Run]) -> float:
    return max((abs(a - b) / abs(b) for run in runs[1:] for a, b in zip(run.losses, runs[0].losses, strict=True)),
               default=0.0)


def plot(runs: Sequence[Run], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    styles = iter(("-", "--", ":", "-."))
    for run in runs:
        axes.plot(run.losses, next(styles), label=run.name, linewidth=1.4)
    if runs:
        axes.axvline(runs[0].moved_at, color="grey", linewidth=0.8)
        axes.annotate(" checkpoint moved", (runs[0].moved_at, max(runs[0].losses)), color="grey", va="top")
    axes.set_xlabel("training step (batches of windows)")
    axes.set_ylabel("cross-entropy (nats per character)")
    axes.set_yscale("log")
    axes.set_title("One character-level transformer, one key, moved between backends mid-run")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=Config.steps)
    parser.add_argument("--backends", default=",".join(TRAINED),
                        help="comma-separated backends; each starts a run and hands it to the next one")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of every step's loss")
    parser.add_argument("--plot", default="transformer_losses.png", help="where to save the loss curves (PNG)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument("--eager", default="torch", metavar="BACKENDS",
                        help="comma-separated backends that run without their compiler (default: torch; 'none' "
                             "compiles every one: torch.compile takes many minutes on 2 CPU cores)")
    parser.add_argument("--torch-threads", type=int, default=1, metavar="N",
                        help="PyTorch's CPU threads while training (default 1: a small model; a second thread "
                             "spin-waits, 25x the CPU time on a busy machine)")
    parser.add_argument("--sample", type=int, default=80, help="characters to sample greedily at the end")
    parser.add_argument("--features", type=int, default=Config.features, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    requested = [b for b in args.backends.split(",") if b]
    unknown = [b for b in requested if b not in TRAINED]
    if unknown or not requested:
        parser.error(f"unknown backends {unknown} (choose from {', '.join(TRAINED)})" if unknown else "no backends")
    wrong = [b for b in args.eager.split(",") if b not in (*TRAINED, "none", "")]
    if wrong:
        parser.error(f"--eager {args.eager}: unknown backends {wrong} (choose from {', '.join(TRAINED)}, or none)")
    if args.steps < 2:
        parser.error(f"--steps {args.steps}: at least 2 (half before the checkpoint, half after)")
    chosen = [b for b in requested if importlib.util.find_spec(b) is not None]
    for missing in sorted(set(requested) - set(chosen)):
        print(f"skipping {missing}: not installed (pip install \"arraylayer[{missing}]\")")
    if not chosen:
        print("no trainable backend is installed")
        return 1
    config = Config(steps=args.steps, features=args.features, warmup=max(1, min(Config.warmup, args.steps // 4)))
    text = corpus()
    chars, ids = encode(text)
    data = batches(ids, config)
    print(f"generated corpus: {len(text)} characters, {len(chars)} distinct, e.g. {text[:46]!r}")
    print(f"two transformer blocks, {config.features} features, {config.heads} heads, {config.length} characters of "
          f"context; {config.steps} steps of {config.batch} windows; warm-up {config.warmup} steps then cosine decay "
          f"from {config.peak_rate}, clipping at global norm {config.clip}, weight decay {config.weight_decay}")
    eager = {b for b in args.eager.split(",") if b in chosen}
    print("compiled: " + (", ".join(COMPILERS[b] for b in chosen if b not in eager) or "none") + "; eager: "
          + (", ".join(b + (f" ({args.torch_threads} thread)" if b == "torch" else "") for b in chosen if b in eager)
             or "none"))
    steps = Steps(config, eager=eager)
    runs = []
    with quiet_framework_logs(), torch_threads(args.torch_threads if "torch" in chosen else None), \
            tempfile.TemporaryDirectory() as folder:
        for route in routes(chosen):
            runs.append(train(route, config, chars, data, steps, folder, show=not args.no_progress,
                              sampled=args.sample))
    print(f"{'run':<26}{'first loss':>12}{'final loss':>12}{'checkpoint':>14}{'total':>9}")
    for run in runs:
        print(f"{run.name:<26}{run.losses[0]:>12.5f}{run.losses[-1]:>12.5f}"
              f"{f'step {run.moved_at}':>14}{run.seconds:>8.1f}s")
    print(f"greedy sample from {PROMPT!r}, per run:")
    for run in runs:
        print(f"  {run.name:<24} {run.text!r}")
    print(f"largest relative difference of a step's loss between runs: {largest_difference(runs):.1e}")
    plot(runs, args.plot)
    print(f"loss curves saved to {args.plot}")
    problems = disagreements(runs, args.rtol)
    if problems:
        print(f"DISAGREEMENT beyond rtol={args.rtol}:")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"the backends agree: every step's loss within rtol={args.rtol}, the same sampled text")
    return 0


if __name__ == "__main__":
    sys.exit(main())
