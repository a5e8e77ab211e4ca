"""The second main job (examples/train_transformer.py) in small: a tiny transformer, a few
steps, each run moved mid-way to another backend through a checkpoint; the runs agree with one
another and with the same steps taken on one backend without a move."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import selected_backends

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "train_transformer.py"
# torch.compile takes longer than a few steps: torch runs eagerly here; jax.jit and tf.function
# compile (JAX's op-by-op mode compiles every operation of the step on its own, which costs more)
EAGER = ("torch",)


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("train_transformer", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _trained(request) -> list[str]:
    return [b for b in selected_backends(request.config) if b in ("jax", "torch", "tensorflow")]


@pytest.fixture(scope="module")
def tiny(script):
    config = script.Config(steps=4, features=16, heads=2, length=8, batch=4, warmup=1)
    chars, ids = script.encode(script.corpus(2_000))
    return config, chars, script.batches(ids, config)


@pytest.fixture(scope="module")
def steps(script, tiny):
    return script.Steps(tiny[0], eager=EAGER)  # each backend's step compiled once for the module


@pytest.fixture(scope="module")
def runs(script, tiny, steps, request, tmp_path_factory):
    chosen = _trained(request)
    if not chosen:
        pytest.skip("no backend with autodiff selected")
    config, chars, data = tiny
    folder = str(tmp_path_factory.mktemp("checkpoints"))
    return [script.train(route, config, chars, data, steps, folder, show=False, sampled=6)
            for route in script.routes(chosen)]


def test_the_corpus_is_generated_alike_every_time(script):
    text = script.corpus(500)
    assert text == script.corpus(500) and len(text) >= 500
    chars, ids = script.encode(text)
    assert "".join(chars[i] for i in ids) == text
    assert set(text) <= set("abcdefghijklmnopqrstuvwxyz .")


def test_every_run_is_moved_to_another_backend_mid_way(script, runs, request):
    chosen = _trained(request)
    assert [run.route for run in runs] == [(b, chosen[(i + 1) % len(chosen)]) for i, b in enumerate(chosen)]
    for run in runs:
        assert run.moved_at == 2 and len(run.losses) == 4
        assert run.checkpoint_bytes > 10_000  # parameters and Adam's moments
        assert script.al.backend_of(run.params["head"]["w"]).name == run.route[1]


def test_the_runs_agree_and_learn(script, runs):
    first = runs[0].losses[0]
    assert first > 2.0  # untrained: about log(vocabulary) or more
    assert runs[0].losses[-1] < first
    assert script.disagreements(runs, rtol=1e-5) == []
    assert len({run.text for run in runs}) == 1


def test_the_move_changes_nothing(script, runs, tiny, steps, tmp_path):
    """The same steps on the first backend alone (its checkpoint loaded on itself) give the same
    losses as the run moved to another backend."""
    config, chars, data = tiny
    backend = runs[0].route[0]
    alone = script.train((backend, backend), config, chars, data, steps, str(tmp_path),
                         show=False, sampled=6)
    np.testing.assert_allclose(alone.losses, runs[0].losses, rtol=1e-5)


def test_the_check_catches_a_real_difference(script, runs):
    wrong = script.Run(("wrong", "wrong"), losses=[x * 1.01 for x in runs[0].losses], text=runs[0].text)
    assert script.disagreements([runs[0], wrong], rtol=1e-3)
    other = script.Run(("other", "other"), losses=list(runs[0].losses), text=runs[0].text + "x")
    assert script.disagreements([runs[0], other], rtol=1e-3)


def test_the_script_reports_and_plots(script, request, tmp_path, capsys):
    chosen = _trained(request)
    if not chosen:
        pytest.skip("no backend with autodiff selected")
    pytest.importorskip("matplotlib")
    plot = tmp_path / "losses.png"
    backend = "torch" if "torch" in chosen else chosen[0]  # torch eager: no new compilation
    status = script.main(["--steps", "2", "--features", "16", "--backends", backend, "--eager", "torch",
                          "--sample", "4", "--plot", str(plot), "--no-progress"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert f"{backend} -> {backend}" in out and "the backends agree" in out and "greedy sample" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
