"""The main job (examples/train_cnn.py) in small: the CNN written once trains alike on every
backend with autodiff, NumPy's inference with the trained weights gives the same accuracy, and
the script's agreement check, report and plot work."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script, trained_backends

pytest.importorskip("sklearn")
ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "train_cnn.py"


@pytest.fixture(scope="module")
def train_cnn():
    return load_script(SCRIPT)


@pytest.fixture(scope="module")
def data(train_cnn):
    return train_cnn.load_data()


@pytest.fixture(scope="module")
def runs(train_cnn, data, request):
    chosen = trained_backends(request.config)
    if not chosen:
        pytest.skip("no backend with autodiff selected")
    return [train_cnn.train(b, data, epochs=1, show=False) for b in chosen]


def test_the_data(data):
    train_x, train_y, test_x, test_y = data
    assert train_x.shape == (1437, 8, 8, 1) and test_x.shape == (360, 8, 8, 1)
    assert train_x.dtype == np.float32 and 0.0 <= train_x.min() and train_x.max() <= 1.0
    assert set(np.unique(train_y)) == set(range(10))


def test_every_backend_starts_from_the_same_loss_and_learns(runs):
    first = runs[0].losses[0]
    # untrained logits of he_normal/glorot weights: a loss near log(10), the same everywhere
    assert 1.0 < first < 5.0
    for run in runs:
        assert abs(run.losses[0] - first) <= 1e-5 * first, run.backend
        assert run.epoch_losses[0] < first  # it learns within the first epoch
        assert run.test_accuracy > 0.5


def test_the_backends_agree_within_the_documented_tolerance(train_cnn, runs, data):
    assert train_cnn.disagreements(runs, rtol=5e-2, test_size=len(data[3]), rtol_first=1e-4) == []


def test_numpy_inference_gives_the_trained_accuracy(train_cnn, runs, data):
    inferred = train_cnn.infer_on_numpy(runs[0], data)
    # the same images right: a float32 mean of the same 0s and 1s, rounded alike to 1e-6
    assert inferred.test_accuracy == pytest.approx(runs[0].test_accuracy, abs=1e-6)


def test_the_check_catches_a_real_difference(train_cnn, runs, data):
    """A wrong loss in the first epoch (1% off) is reported: the tolerance is not too loose."""
    wrong = train_cnn.Run("wrong", losses=list(runs[0].losses), epoch_losses=[runs[0].epoch_losses[0] * 1.01],
                          test_accuracy=runs[0].test_accuracy)
    assert train_cnn.disagreements([runs[0], wrong], rtol=5e-2, test_size=len(data[3]))


def test_the_script_reports_and_plots(train_cnn, request, tmp_path, capsys):
    chosen = trained_backends(request.config)
    if not chosen:
        pytest.skip("no backend with autodiff selected")
    pytest.importorskip("matplotlib")
    plot = tmp_path / "losses.png"
    status = train_cnn.main(["--epochs", "1", "--backends", chosen[0], "--plot", str(plot), "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "test accuracy" in out and "numpy" in out and "the backends agree" in out
    assert plot.stat().st_size > 10_000 and plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_a_terminal_sees_progress_bars_and_no_framework_log_lines(request, tmp_path):
    """The main job on a terminal: a tqdm bar per backend (redrawn with carriage returns, every step
    counted), while the framework's start-up lines (TensorFlow's cpu_feature_guard, absl's warning),
    which it prints when its log level is not set, stay hidden."""
    backend = "tensorflow" if "tensorflow" in trained_backends(request.config) else next(iter(trained_backends(request.config)), None)
    if backend is None:
        pytest.skip("no backend with autodiff selected")
    pytest.importorskip("tqdm")
    from terminal import FRAMEWORK_LOG_LINES, environment_without_log_settings, on_a_terminal

    status, screen = on_a_terminal([sys.executable, str(SCRIPT), "--epochs", "1", "--backends", backend,
                                    "--plot", str(tmp_path / "losses.png")], environment_without_log_settings(ROOT), ROOT)
    assert status == 0, screen[-3000:]
    steps = 1437 // 64
    bar = [part for part in screen.replace("\n", "\r").split("\r") if part.startswith(backend)]
    assert any(f"{steps}/{steps}" in part and "step" in part and "|" in part for part in bar), screen[-3000:]
    assert len(bar) > 2  # drawn, then redrawn as steps finish
    for framework_line in FRAMEWORK_LOG_LINES:
        assert framework_line not in screen, screen[-3000:]
    assert "the backends agree" in screen


def test_a_log_gets_one_plain_line_per_epoch(train_cnn, capsys):
    """Where standard error is not a terminal (here pytest's capture), no bar: a line at the start
    and one per epoch, with the epoch's mean loss."""
    shown = train_cnn.Progress("jax", steps=4, epochs=2, show=True)
    for epoch, losses in enumerate(([2.0, 1.0], [0.5, 0.25]), 1):
        for loss in losses:
            shown.step(loss)
        shown.epoch(sum(losses) / 2, seconds=float(epoch))
    shown.close()
    assert capsys.readouterr().err.splitlines() == [
        "jax: 2 epochs of 2 steps (the first step compiles)",
        "jax: epoch 1/2, mean loss 1.5000, 1.0 s",
        "jax: epoch 2/2, mean loss 0.3750, 2.0 s",
    ]
    quiet = train_cnn.Progress("jax", steps=4, epochs=2, show=False)
    quiet.step(1.0), quiet.epoch(1.0, 1.0), quiet.close()
    assert capsys.readouterr() == ("", "")
