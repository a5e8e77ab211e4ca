"""The main job: one small convolutional network, written once, trained on jax, torch and tensorflow.

The data are scikit-learn's handwritten digits (8x8 images, 1,797 samples, shipped with
scikit-learn: no download), scaled to [0, 1] and split once (1,437 to train, 360 to test). The
model (conv 3x3 -> relu -> max pool -> conv 3x3 -> relu -> max pool -> dense), its loss
(``arraylayer.models.nn.cross_entropy``) and its training step (``arraylayer.value_and_grad`` and
``arraylayer.models.optim.adam``) are written once below with arraylayer. The weights come from one
seed through ``arraylayer.models.random`` and ``arraylayer.models.initializers``, so every backend starts from
the same numbers; each backend trains under its own compiler (``jax.jit``, ``tf.function``,
``torch.compile``) on the same mini-batches in the same order. NumPy has no autodiff: it runs the
network's inference with the weights trained on the first backend, and must give that backend's
test accuracy.

While a backend trains, a progress bar shows its steps and loss on a terminal; where standard error
is not a terminal (a log, CI), one plain line per epoch says the same. The frameworks' own log
lines stay hidden meanwhile (``arraylayer.runtime.logs``: progress is written to the terminal's descriptor
saved before standard error is redirected). At the end the script prints the test
accuracy per backend, checks that the backends' losses agree, saves a plot of the loss curves
(``--plot``, default ``cnn_losses.png``), and exits with status 1 if anything disagrees.

The tolerance. The backends compute the same float32 arithmetic, but their convolutions, matrix
products and reductions sum in different orders, and ``he_normal`` weights agree within a few
ulps rather than bit for bit; so the losses start a few ulps apart, and training, which is chaotic
at this learning rate, amplifies the difference step by step. Measured here (jax 0.10, torch 2.13,
tensorflow 2.21, CPU): the step losses agree to about 1e-6 relatively through the first 40 steps
and 3e-5 at step 60; after 6 epochs (132 steps) the epoch mean losses differ by 8e-3 to 1.1e-2 and
the test accuracies by at most one image. So the check is two-fold: the first epoch's mean loss
within ``--rtol-first`` (1e-4: a hundred times the measured difference, and any real difference
in semantics, a dtype promoted differently, a wrong gradient, another padding, moves the first
epoch by far more), the later epochs within ``--rtol`` (5e-2, for the amplified rounding), and
the test accuracies within one image.

Usage::

    python examples/train_cnn.py                        # jax, torch, tensorflow (+ numpy inference)
    python examples/train_cnn.py --epochs 2 --backends jax,torch --plot /tmp/losses.png
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import arraylayer as al
from arraylayer.runtime.compilers import compiler  # jax.jit, tf.function or torch.compile (TorchInductor)
from arraylayer.runtime.logs import progress_stream, quiet_framework_logs

TRAINED = ("jax", "torch", "tensorflow")
BATCH = 64
SEED = 0
CLASSES = 10


# -- the model, written once ------------------------------------------------------------------------------------
def init_params(seed: int = SEED) -> dict[str, Any]:
    """Weights from one seed, on the active backend: He-normal convolutions, Glorot dense, zero biases."""
    keys = al.random.split(al.random.key(seed), 3)
    init = al.initializers
    return {
        "conv1": init.he_normal(keys[0], (3, 3, 1, 16)), "bias1": init.zeros(keys[0], (16,)),
        "conv2": init.he_normal(keys[1], (3, 3, 16, 32)), "bias2": init.zeros(keys[1], (32,)),
        "dense": init.glorot_uniform(keys[2], (128, CLASSES)), "bias3": init.zeros(keys[2], (CLASSES,)),
    }


def forward(params: dict[str, Any], images: Any) -> Any:
    """Logits of a batch of 8x8x1 images (NHWC)."""
    x = al.nn.relu(al.add(al.nn.conv2d(images, params["conv1"], padding="SAME"), params["bias1"]))
    x = al.nn.max_pool2d(x, 2)  # 4x4x16
    x = al.nn.relu(al.add(al.nn.conv2d(x, params["conv2"], padding="SAME"), params["bias2"]))
    x = al.nn.max_pool2d(x, 2)  # 2x2x32
    x = al.reshape(x, (x.shape[0], 128))
    return al.add(al.matmul(x, params["dense"]), params["bias3"])


def loss_fn(params: dict[str, Any], images: Any, labels: Any) -> Any:
    return al.nn.cross_entropy(forward(params, images), labels)


OPTIMIZER = al.optim.adam(learning_rate=0.01)


def train_step(params: dict[str, Any], state: Any, images: Any, labels: Any) -> tuple[Any, Any, Any]:
    """One Adam step: the new parameters and optimizer state, and the loss before the step."""
    loss, grads = al.value_and_grad(loss_fn)(params, images, labels)
    params, state = OPTIMIZER.update(grads, state, params)
    return params, state, loss


def accuracy(params: dict[str, Any], images: Any, labels: Any) -> float:
    return float(al.mean(al.equal(al.argmax(forward(params, images), axis=1), labels)))


# -- data ------------------------------------------------------------------------------------------------------------
def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images (N, 8, 8, 1) in [0, 1] and labels, split once with a fixed permutation."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[..., None]
    labels = digits.target.astype(np.int32)
    order = np.random.default_rng(SEED).permutation(len(labels))
    train, test = order[:1437], order[1437:]
    return images[train], labels[train], images[test], labels[test]


def batches(count: int, epochs: int) -> list[list[np.ndarray]]:
    """Per epoch, the index batches of one shuffle (drawn with arraylayer.models.random on NumPy, shared
    by every backend); the last incomplete batch is dropped so that every step has one shape."""
    out = []
    with al.use_backend("numpy"):
        for epoch in range(epochs):
            order = np.asarray(al.random.permutation(al.random.fold_in(al.random.key(SEED + 1), epoch), count))
            out.append([order[i:i + BATCH] for i in range(0, count - BATCH + 1, BATCH)])
    return out


# -- one backend ------------------------------------------------------------------------------------------------------
@dataclass
class Run:
    backend: str
    losses: list[float] = field(default_factory=list)  # per step
    epoch_losses: list[float] = field(default_factory=list)  # mean per epoch
    test_accuracy: float = 0.0
    seconds: float = 0.0
    compile_seconds: float = 0.0
    params: Any = None


def train(backend: str, data: tuple[np.ndarray, ...], epochs: int, show: bool = True) -> Run:
    train_x, train_y, test_x, test_y = data
    run = Run(backend)
    with al.use_backend(backend):
        params = init_params()
        state = OPTIMIZER.init(params)
        xs, ys = al.asarray(train_x), al.asarray(train_y)
        step = compiler(backend)(train_step)
        schedule = batches(len(train_y), epochs)
        total = sum(len(epoch) for epoch in schedule)
        began = time.perf_counter()
        shown = Progress(backend, total, len(schedule), show)
        try:
            for epoch in schedule:
                first = len(run.losses)
                for index in epoch:
                    chosen = al.asarray(index)
                    params, state, loss = step(params, state, al.take(xs, chosen, axis=0), al.take(ys, chosen, axis=0))
                    run.losses.append(float(loss))
                    if len(run.losses) == 1:
                        run.compile_seconds = time.perf_counter() - began
                    shown.step(run.losses[-1])
                run.epoch_losses.append(float(np.mean(run.losses[first:])))
                shown.epoch(run.epoch_losses[-1], time.perf_counter() - began)
        finally:
            shown.close()
        run.seconds = time.perf_counter() - began
        run.test_accuracy = accuracy(params, al.asarray(test_x), al.asarray(test_y))
    run.params = params
    return run


def infer_on_numpy(trained: Run, data: tuple[np.ndarray, ...]) -> Run:
    """NumPy's inference with the weights ``trained`` learned (moved with to_backend)."""
    run = Run("numpy")
    params = {name: al.to_backend(value, "numpy") for name, value in trained.params.items()}
    began = time.perf_counter()
    run.test_accuracy = accuracy(params, data[2], data[3])
    run.seconds = time.perf_counter() - began
    return run


class Progress:
    """One backend's training as a person sees it: a tqdm bar where standard error is a terminal,
    else one plain line per epoch (a log), or nothing (``show=False``: ``--no-progress``, tests).
    Both go to :func:`arraylayer.runtime.logs.progress_stream`, which stays on the terminal while the
    frameworks' log lines are hidden."""

    def __init__(self, backend: str, steps: int, epochs: int, show: bool) -> None:
        self.backend, self.epochs, self.done = backend, epochs, 0
        self.stream = progress_stream() if show else None
        self.bar = None
        if self.stream is not None and self.stream.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=steps, desc=f"{backend:<10}", unit="step", file=self.stream, dynamic_ncols=True)
            self.bar.set_postfix_str("compiling the step ...")
        elif self.stream is not None:
            self._line(f"{epochs} epochs of {steps // max(epochs, 1)} steps (the first step compiles)")

    def _line(self, text: str) -> None:
        self.stream.write(f"{self.backend}: {text}\n")
        self.stream.flush()

    def step(self, loss: float) -> None:
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{loss:.4f}", refresh=False)
            self.bar.update(1)

    def epoch(self, mean_loss: float, seconds: float) -> None:
        self.done += 1
        if self.stream is not None and self.bar is None:
            self._line(f"epoch {self.done}/{self.epochs}, mean loss {mean_loss:.4f}, {seconds:.1f} s")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


# -- agreement, report, plot ------------------------------------------------------------------------------------------
def disagreements(runs: Sequence[Run], rtol: float, test_size: int, rtol_first: float = 1e-4) -> list[str]:
    """Every epoch mean loss that differs from the first trained backend's by more than ``rtol``
    relatively (``rtol_first`` for the first epoch), and test accuracies more than one image apart."""
    reference = runs[0]
    problems = []
    for run in runs[1:]:
        for epoch, (ours, theirs) in enumerate(zip(run.epoch_losses, reference.epoch_losses, strict=False)):
            if abs(ours - theirs) > (rtol_first if epoch == 0 else rtol) * abs(theirs):
                problems.append(f"{run.backend} epoch {epoch} mean loss {ours:.6f} vs {reference.backend} {theirs:.6f}")
        if abs(run.test_accuracy - reference.test_accuracy) * test_size > 1.0 + 1e-9:
            problems.append(f"{run.backend} test accuracy {run.test_accuracy:.4f} vs {reference.backend} "
                            f"{reference.test_accuracy:.4f}")
    return problems


def plot(runs: Sequence[Run], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    styles = iter(("-", "--", ":", "-."))  # the curves lie on one another: dashes keep each visible
    for run in runs:
        if run.losses:
            axes.plot(run.losses, next(styles), label=f"{run.backend} (test accuracy {run.test_accuracy:.3f})",
                      linewidth=1.4)
    axes.set_xlabel("training step (batches of 64)")
    axes.set_ylabel("cross-entropy")
    axes.set_yscale("log")
    axes.set_title("The same CNN, one seed, trained on each backend (sklearn digits)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--backends", default=",".join(TRAINED),
                        help="comma-separated backends to train on (numpy always runs the inference)")
    parser.add_argument("--rtol", type=float, default=5e-2, help="relative tolerance of the later epochs' mean losses")
    parser.add_argument("--rtol-first", type=float, default=1e-4, help="relative tolerance of the first epoch's")
    parser.add_argument("--plot", default="cnn_losses.png", help="where to save the loss curves (PNG)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    requested = [b for b in args.backends.split(",") if b]
    unknown = [b for b in requested if b not in TRAINED]
    if unknown or not requested:
        parser.error(f"unknown backends {unknown} (choose from {', '.join(TRAINED)})" if unknown else "no backends")
    chosen = [b for b in requested if importlib.util.find_spec(b) is not None]
    for missing in sorted(set(requested) - set(chosen)):
        print(f"skipping {missing}: not installed (pip install \"arraylayer[{missing}]\")")
    if not chosen:
        print("no trainable backend is installed")
        return 1
    data = load_data()
    print(f"sklearn digits: {len(data[1])} training and {len(data[3])} test images of 8x8; "
          f"{args.epochs} epochs of {len(data[1]) // BATCH} steps, batches of {BATCH}, adam(0.01)")
    runs = []
    with quiet_framework_logs():
        for backend in chosen:
            runs.append(train(backend, data, args.epochs, show=not args.no_progress))
        runs.append(infer_on_numpy(runs[0], data))
    print(f"{'backend':<12}{'test accuracy':>14}{'final epoch loss':>18}{'first step (compile)':>22}{'total':>9}")
    for run in runs:
        final = f"{run.epoch_losses[-1]:.5f}" if run.epoch_losses else "-"
        compile_s = f"{run.compile_seconds:.1f} s" if run.losses else "-"
        note = "" if run.losses else f"   (inference with {runs[0].backend}'s weights)"
        print(f"{run.backend:<12}{run.test_accuracy:>14.4f}{final:>18}{compile_s:>22}{run.seconds:>8.1f}s{note}")
    trained = [run for run in runs if run.epoch_losses]
    spread = max((abs(a - b) / abs(b) for run in trained[1:]
                  for a, b in zip(run.epoch_losses, trained[0].epoch_losses, strict=False)), default=0.0)
    print(f"largest relative difference of an epoch's mean loss between backends: {spread:.1e}")
    plot(runs, args.plot)
    print(f"loss curves saved to {args.plot}")
    problems = disagreements(runs, args.rtol, len(data[3]), args.rtol_first)
    if problems:
        print(f"DISAGREEMENT beyond rtol={args.rtol} (first epoch: {args.rtol_first}):")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"the backends agree: the first epoch's mean loss within rtol={args.rtol_first}, the others within "
          f"{args.rtol}, test accuracies within one image")
    return 0


if __name__ == "__main__":
    sys.exit(main())
