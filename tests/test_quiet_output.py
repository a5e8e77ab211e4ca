"""The command line and the main job keep the frameworks' log lines out of their output
(unless the user asks for them), and info/support/probe say on stderr what they are doing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import selected_backends

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "ARRAYLAYER_FRAMEWORK_LOGS")}
    environment.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=environment)


@pytest.mark.parametrize("command", [["info"], ["support", "--function", "add"]])
def test_commands_show_progress_and_nothing_else_on_stderr(backend, command):
    done = _run(["-m", "arraylayer", *command, "--backend", backend])
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert f"arraylayer: loading {backend} ..." in lines
    assert [line for line in lines if not line.startswith("arraylayer: ")] == []


def test_probe_says_what_it_probes(tmp_path):
    backend = "numpy"  # always installed; probing the others takes long, and the lines are the same
    done = _run(["-m", "arraylayer", "probe", "--backend", backend, "--output", str(tmp_path / "probe.json")])
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"arraylayer: probing {backend}: every kernel on every dtype ..."
    assert lines[1].startswith(f"arraylayer: probed {backend} in ")


def test_the_main_job_is_quiet(request):
    backends = ",".join(b for b in selected_backends(request.config))
    done = _run(["examples/train_mlp.py", "--steps", "3", "--backends", backends])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr == ""
    assert "agreement:" in done.stdout


def test_the_demo_prints_no_framework_lines():
    """examples/demo.py loads every installed framework; with no log level set, TensorFlow would
    print its start-up lines (cpu_feature_guard, absl) on standard error: none reach it."""
    done = _run(["examples/demo.py"])
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "The same calls on every installed backend" in done.stdout
