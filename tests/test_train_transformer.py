"""The second main job (examples/train_transformer.py) in small: a tiny transformer, a few
steps, each run moved mid-way to another backend through a checkpoint; the runs agree with one
another and with the same steps taken on one backend without a move."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script, trained_backends

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "train_transformer.py"
# as the script by default: torch eager (torch.compile takes minutes on 2 cores), on one thread;
# jax.jit and tf.function compile (JAX's op-by-op mode compiles every operation of the step on its
# own, which costs more)
EAGER = ("torch",)


@pytest.fixture(scope="module")
def script():
    return load_script(SCRIPT)


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
    chosen = trained_backends(request.config)
    if not chosen:
        pytest.skip("no backend with autodiff selected")
    config, chars, data = tiny
    folder = str(tmp_path_factory.mktemp("checkpoints"))
    with script.torch_threads(1 if "torch" in chosen else None):
        return [script.train(route, config, chars, data, steps, folder, show=False, sampled=6)
                for route in script.routes(chosen)]


def test_the_corpus_is_generated_alike_every_time(script):
    text = script.corpus(500)
    assert text == script.corpus(500) and len(text) >= 500
    chars, ids = script.encode(text)
    assert "".join(chars[i] for i in ids) == text
    assert set(text) <= set("abcdefghijklmnopqrstuvwxyz .")


def test_every_run_is_moved_to_another_backend_mid_way(script, runs, request):
    chosen = trained_backends(request.config)
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


def test_progress_says_how_each_step_runs(script, runs, steps):
    """After the runs, every backend's step has run: compiled ones say so, eager ones too."""
    for run in runs:
        backend = run.route[0]
        assert steps.how(backend) == ("eager" if backend in EAGER else f"{script.COMPILERS[backend]}, compiled")
    fresh = script.Steps(script.Config(), eager=EAGER)
    assert fresh.how("jax") == "jax.jit compiles the first step ..."
    assert fresh.how("torch") == "eager"


def test_the_check_catches_a_real_difference(script, runs):
    wrong = script.Run(("wrong", "wrong"), losses=[x * 1.01 for x in runs[0].losses], text=runs[0].text)
    assert script.disagreements([runs[0], wrong], rtol=1e-3)
    other = script.Run(("other", "other"), losses=list(runs[0].losses), text=runs[0].text + "x")
    assert script.disagreements([runs[0], other], rtol=1e-3)


def test_the_sampler_sees_one_shape_and_continues_the_prompt(script, runs, tiny, steps):
    """Greedy sampling pads a short window after its end: the logits it reads are those of the
    unpadded window (the model is causal), so the text is the one sampled from growing windows."""
    config, chars, _ = tiny
    run = runs[0]
    backend = run.route[1]
    shapes = []

    def forward(params, ids):
        shapes.append(tuple(ids.shape))
        return steps(backend, "forward")(params, ids)

    text = script.sample(run.params, config, chars, prompt="the ", count=6, forward=forward)
    assert set(shapes) == {(1, config.length)}
    index = {c: i for i, c in enumerate(chars)}
    ids = [index[c] for c in "the "]
    with script.al.use_backend(backend):
        for _ in range(6):
            window = script.al.asarray(np.array([ids[-config.length:]], np.int32))
            ids.append(int(script.al.argmax(script.logits_of(run.params, window, config.heads)[0, -1])))
    assert text == "".join(chars[i] for i in ids)


def test_a_log_gets_two_plain_lines_per_leg(script, capsys):
    """Where standard error is not a terminal (here pytest's capture), no bar: a line at the start
    of each leg and one at its end, with the step reached and its loss."""
    shown = script.Progress("jax -> torch", steps=4, show=True)
    for backend, at, losses in (("jax", 0, [3.0, 2.0]), ("torch", 2, [1.5, 1.25])):
        shown.leg(backend, at)
        for loss in losses:
            shown.step(loss)
        shown.leg_done()
    shown.close()
    lines = [line.rsplit(", ", 1)[0] for line in capsys.readouterr().err.splitlines()]  # without the seconds
    assert lines == ["jax -> torch: jax: the first step compiles ...",
                     "jax -> torch: jax: step 2/4, loss 2.0000",
                     "jax -> torch: checkpoint at step 2 loaded on torch",
                     "jax -> torch: torch: step 4/4, loss 1.2500"]
    script.Progress("torch -> jax", steps=4, show=True).leg("torch", how="eager")
    assert capsys.readouterr().err == "torch -> jax: torch: eager\n"
    quiet = script.Progress("jax -> torch", steps=4, show=False)
    quiet.leg("jax"), quiet.step(1.0), quiet.leg_done(), quiet.close()
    assert capsys.readouterr() == ("", "")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")
def test_the_script_on_a_terminal_shows_bars_reports_and_plots(request, tmp_path):
    """The script as a person runs it (nox passes the terminal on: it captures nothing by default):
    a tqdm bar per run counting every step, no framework log line, the report and the plot."""
    chosen = trained_backends(request.config)
    if not chosen:
        pytest.skip("no backend with autodiff selected")
    pytest.importorskip("matplotlib")
    pytest.importorskip("tqdm")
    from terminal import FRAMEWORK_LOG_LINES, environment_without_log_settings, on_a_terminal

    plot = tmp_path / "losses.png"
    backend = "torch" if "torch" in chosen else chosen[0]  # torch eager: nothing to compile
    status, screen = on_a_terminal([sys.executable, str(SCRIPT), "--steps", "4", "--features", "16",
                                    "--backends", backend, "--sample", "4", "--plot", str(plot)],
                                   environment_without_log_settings(ROOT), ROOT)
    assert status == 0, screen[-3000:]
    bar = [part for part in screen.replace("\n", "\r").split("\r") if part.startswith(f"{backend} -> {backend}")]
    assert any("4/4" in part and "step" in part and "|" in part for part in bar), screen[-3000:]
    assert len(bar) > 2  # drawn, then redrawn as steps finish
    for framework_line in FRAMEWORK_LOG_LINES:
        assert framework_line not in screen, screen[-3000:]
    assert "greedy sample" in screen and "the backends agree" in screen
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_wrong_arguments_are_refused(script, capsys):
    for argv, says in ((["--eager", "torhc"], "--eager torhc: unknown backends ['torhc']"),
                       (["--backends", "numpy"], "unknown backends ['numpy']"),
                       (["--steps", "1"], "--steps 1: at least 2")):
        with pytest.raises(SystemExit):
            script.main(argv)
        assert says in capsys.readouterr().err
