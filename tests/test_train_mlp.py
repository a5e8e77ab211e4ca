"""examples/train_mlp.py, short and small: each backend's training matches an independent NumPy
float64 implementation with hand-written backpropagation, and the script's own cross-backend
check passes (exit status 0) and catches a disagreement."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "train_mlp.py"
STEPS, SAMPLES, HIDDEN, LEARNING_RATE = 20, 90, 8, 0.5


@pytest.fixture(scope="module")
def train_mlp():
    try:
        yield load_script(EXAMPLE)
    finally:
        sys.modules.pop("train_mlp", None)


def reference_losses(train_mlp, steps: int) -> dict[int, float]:
    """The same training in NumPy float64, gradients by hand: the loss at every step (and after)."""
    points, labels = train_mlp.make_spirals(SAMPLES)
    params = {k: v.astype(np.float64) for k, v in train_mlp.init_params(2, HIDDEN, 3, seed=1).items()}
    x, onehot = points.astype(np.float64), np.eye(3)[labels]
    losses = {}
    for step in range(steps + 1):
        pre = x @ params["w1"] + params["b1"]
        hidden = np.maximum(pre, 0.0)
        logits = hidden @ params["w2"] + params["b2"]
        shifted = logits - logits.max(axis=1, keepdims=True)
        probs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
        losses[step] = float(-np.mean(np.sum(onehot * np.log(probs), axis=1)))
        d_logits = (probs - onehot) / len(x)
        d_hidden = (d_logits @ params["w2"].T) * (pre > 0)
        grads = {"w2": hidden.T @ d_logits, "b2": d_logits.sum(axis=0), "w1": x.T @ d_hidden, "b1": d_hidden.sum(axis=0)}
        params = {k: params[k] - LEARNING_RATE * grads[k] for k in params}
    return losses


def test_each_backend_matches_hand_written_backpropagation(train_mlp, backend):
    run = train_mlp.run_backend(backend, STEPS, SAMPLES, HIDDEN, LEARNING_RATE)
    reference = reference_losses(train_mlp, STEPS)
    assert run.losses, backend
    for step, loss in run.losses.items():
        np.testing.assert_allclose(loss, reference[step], rtol=1e-4, err_msg=f"{backend} step {step}")
    assert set(run.dtypes.values()) == {"float32"}, run.dtypes
    if backend in train_mlp.DIFFERENTIABLE:
        assert run.losses[STEPS] < run.losses[0]  # it learns
        assert set(run.losses) == set(train_mlp.report_steps(STEPS))
    assert 0.0 <= run.accuracy <= 1.0


def test_the_script_checks_agreement(train_mlp, request, capsys):
    chosen = request.config.getoption("--backend") or list(train_mlp.BACKENDS)
    backends = ",".join(chosen)
    status = train_mlp.main(["--steps", str(STEPS), "--samples", str(SAMPLES), "--hidden", str(HIDDEN),
                             "--backends", backends])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "agreement:" in out and "largest relative difference" in out


def test_a_disagreement_is_caught(train_mlp):
    good = train_mlp.Run("jax", {0: 1.0, 20: 0.5}, 0.9, {"loss": "float32"})
    close = train_mlp.Run("torch", {0: 1.0, 20: 0.5000001}, 0.9, {"loss": "float32"})
    far = train_mlp.Run("tensorflow", {0: 1.0, 20: 0.51}, 0.9, {"loss": "float32"})
    widened = train_mlp.Run("torch", {0: 1.0, 20: 0.5}, 0.9, {"loss": "float64"})
    assert train_mlp.disagreements([good, close], rtol=1e-3) == []
    problems = train_mlp.disagreements([good, close, far], rtol=1e-3)
    assert len(problems) == 1 and "step 20: tensorflow" in problems[0]
    assert "loss dtype" in train_mlp.disagreements([good, widened], rtol=1e-3)[0]


def test_options_are_checked(train_mlp):
    with pytest.raises(SystemExit):
        train_mlp.main(["--backends", "numpy,cupy"])
    with pytest.raises(SystemExit):
        train_mlp.main(["--steps", "0"])
