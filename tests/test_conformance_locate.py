"""Where tests/conformance/run.py finds the official Array API suite: a clone with nothing beside it
says so in one line and goes on; a folder named in ARRAY_API_TESTS_DIR (as CI names it) must hold
the suite; otherwise the suite is fetched with git at the pinned commits (here from local
repositories standing in for GitHub)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import load_script

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def run(monkeypatch, tmp_path):
    module = load_script(ROOT / "tests" / "conformance" / "run.py", "conformance_run")
    monkeypatch.delenv("ARRAY_API_TESTS_DIR", raising=False)
    monkeypatch.setattr(module, "BESIDE", tmp_path / "shared" / "array-api-tests")  # nothing beside the clone
    monkeypatch.setattr(module, "FETCHED", tmp_path / "clone" / ".cache" / "array-api-tests")
    return module


def _repository(path: Path, files: dict[str, str]) -> list[str]:
    """A git repository with one commit per file (in order); the commits' hashes."""
    git = ["git", "-C", str(path), "-c", "user.email=t@example.org", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    commits = []
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", name], check=True)
        commits.append(subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                                      text=True).stdout.strip())
    return commits


def test_no_suite_and_no_network_is_one_line_and_the_run_goes_on(run, monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(run, "SUITE_URL", (tmp_path / "unreachable").as_uri())
    assert run.main(["numpy", "torch"]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    [line] = err.splitlines()
    assert "NOT RUN" in line and run.SUITE_COMMIT in line and "ARRAY_API_TESTS_DIR" in line
    assert not run.FETCHED.exists() and not list(run.FETCHED.parent.glob("*.partial"))


def test_a_named_folder_without_the_suite_fails(run, monkeypatch, tmp_path, capsys):
    """CI sets ARRAY_API_TESTS_DIR: a missing suite there is an error, never a skip."""
    monkeypatch.setenv("ARRAY_API_TESTS_DIR", str(tmp_path / "empty"))
    assert run.main(["numpy"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert str(tmp_path / "empty") in line and run.SUITE_COMMIT in line


def test_the_suite_is_fetched_at_the_pinned_commits(run, monkeypatch, tmp_path):
    suite, spec = tmp_path / "array-api-tests", tmp_path / "array-api"
    pinned_suite, _ = _repository(suite, {"array_api_tests/__init__.py": "", "later.txt": "after the pin"})
    pinned_spec, _ = _repository(spec, {"spec/index.rst": "", "spec/later.rst": "after the pin"})
    monkeypatch.setattr(run, "SUITE_URL", suite.as_uri())
    monkeypatch.setattr(run, "SUITE_COMMIT", pinned_suite)
    monkeypatch.setattr(run, "SPEC_URL", spec.as_uri())
    monkeypatch.setattr(run, "SPEC_COMMIT", pinned_spec)
    found, why = run.locate()
    assert (found, why) == (run.FETCHED, "")
    assert (found / "array_api_tests" / "__init__.py").is_file() and not (found / "later.txt").exists()
    assert (found / "array-api" / "spec" / "index.rst").is_file() and not (found / "array-api" / "spec" / "later.rst").exists()
    shutil.rmtree(suite)  # found again without fetching
    assert run.locate() == (run.FETCHED, "")
