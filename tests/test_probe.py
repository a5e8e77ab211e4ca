"""The probe (arraylayer/cli/probe/): every kernel on every dtype it may receive, compared with the
declarations of every installed backend; planted errors are caught; `arraylayer probe` and
`arraylayer support` on the command line."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import arraylayer as al
from arraylayer import cli, support
from arraylayer.cli import probe
from arraylayer.backends.numpy import NumpyBackend
from arraylayer.kernels.names import ALL_KERNEL_NAMES

ROOT = Path(__file__).resolve().parents[1]



@pytest.fixture
def numpy_backend():
    """A private numpy adapter: its kernels and declarations may be changed by a test."""
    backend = NumpyBackend().load()
    backend.kernels = dict(backend.kernels)
    yield backend
    support.clear_caches()


def _x64_for(backend: str):
    return probe.jax_x64(True) if backend == "jax" else contextlib.nullcontext()


def test_every_kernel_has_a_case():
    assert set(probe.CASES) == set(ALL_KERNEL_NAMES)


def test_the_declarations_match_the_probe(backend):
    """The gate: a framework upgrade (or a kernel change) that adds or removes support for a
    dtype fails here, listing each cell that changed and what to declare."""
    with _x64_for(backend):
        result = probe.probe(backend)
        differences = probe.compare(result)
    assert not result.missing, f"{backend} kernels missing: {', '.join(result.missing)}"
    assert not differences, "\n" + probe.format_differences(result, differences)


def test_numpy_probe_covers_every_cell_quickly():
    result = probe.probe("numpy")
    assert set(result.cells) == set(ALL_KERNEL_NAMES)
    for name, cells in result.cells.items():
        assert tuple(cells) == support.kernel_domain(name), name
    assert result.seconds < 30


def test_a_wrong_declaration_is_listed_precisely(numpy_backend):
    numpy_backend.unsupported = {"add": {">=1": ("int8", "int16")}}
    numpy_backend.supported = {"sort": {">=1": ("float",)}}
    result = probe.probe(numpy_backend, ["add", "sort", "abs"])
    differences = probe.compare(result)
    cells = {(d.kernel, str(d.dtype), d.declared, d.observed) for d in differences}
    assert cells == {("add", "int8", False, True), ("add", "int16", False, True),
                     *{("sort", d, False, True) for d in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                                          "uint16", "uint32", "uint64")}}
    text = probe.format_differences(result, differences)
    assert "11 cell(s) differ" in text
    assert any(line.split()[:4] == ["add", "int8", "unsupported", "supported"] for line in text.splitlines())
    assert "no longer unsupported (remove from the declaration): add: int8, int16; sort: bool, int8" in text


def test_broken_kernels_are_classified(numpy_backend):
    def negative(x):
        return np.negative(x).astype(np.float64) if x.dtype == np.int16 else np.negative(x)

    def exp(x):
        return np.exp(x) + (1 if x.dtype == np.float32 else 0)

    def floor(x):
        if x.dtype == np.uint8:
            raise TypeError("no uint8 floor here")
        return np.floor(x)

    numpy_backend.kernels.update(negative=negative, exp=exp, floor=floor)
    result = probe.probe(numpy_backend, ["negative", "exp", "floor"])
    assert result.cells["negative"][al.int16].why == "returns float64, expected int16"
    assert result.cells["exp"][al.float32].why.startswith("wrong values")
    assert result.cells["floor"][al.uint8].why == "raises TypeError: no uint8 floor here"
    assert result.unsupported("negative") == {al.int16}
    assert result.unsupported("exp") == {al.float32}
    assert result.unsupported("floor") == {al.uint8}
    found = {(d.kernel, str(d.dtype)) for d in probe.compare(result)}
    assert found == {("negative", "int16"), ("exp", "float32"), ("floor", "uint8")}
    text = probe.format_differences(result, probe.compare(result))
    assert "declare unsupported (or fix the kernel): exp: float32; floor: uint8; negative: int16" in text


def test_the_report_derives_function_support_from_what_was_observed(numpy_backend):
    def sqrt(x):
        if x.dtype == np.float32:
            raise TypeError("no float32 sqrt")
        return np.sqrt(x)

    numpy_backend.kernels["sqrt"] = sqrt
    result = probe.probe(numpy_backend, ["sqrt", "add", "bitwise_and"])
    report = probe.probe_report(result)
    json.dumps(report)  # JSON-ready
    assert report["kernels"]["sqrt"]["unsupported"] == {"float32": "raises TypeError: no float32 sqrt"}
    functions = report["functions"]
    # integers run in the default float dtype: unsupported with it
    assert set(functions["sqrt"]["unsupported"]) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                                     "uint32", "uint64", "float32"}
    assert functions["sqrt"]["supported"] == ["bfloat16", "float16", "float64", "complex64", "complex128"]
    assert functions["bitwise_and"]["unsupported"]["float32"] == "undefined"
    assert "linalg.det" not in functions  # its kernel was not probed
    assert functions["astype"]["supported"] == list(map(str, al.all_dtypes))  # no kernel
    assert report["differences"] == [{"kernel": "sqrt", "dtype": "float32", "declared": "supported",
                                      "probe": "unsupported", "why": "raises TypeError: no float32 sqrt",
                                      "note": ""}]


# -- the command line ------------------------------------------------------------------------------
def run(capsys, *argv):
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_probe_command_writes_json(capsys, tmp_path):
    target = tmp_path / "probe.json"
    status, out, err = run(capsys, "probe", "--backend", "numpy", "--output", str(target))
    assert status == 0
    # a summary to read, not the JSON: a line for the backend and where the JSON went
    lines = out.splitlines()
    assert lines[0].startswith("numpy ") and "cells" in lines[0] and lines[-1].endswith(f"written to {target}")
    assert len(lines) < 10
    document = json.loads(target.read_text())
    report = document["backends"]["numpy"]
    assert report["version"] == al.get_backend("numpy").version
    assert set(report["kernels"]) == set(ALL_KERNEL_NAMES)
    assert set(report["functions"]) == set(support.matrix_functions())


def test_probe_check_fails_on_a_difference(capsys, monkeypatch):
    backend = al.get_backend("numpy")
    monkeypatch.setattr(backend, "unsupported", {**backend.unsupported, "add": {">=1": ("int8",)}})
    backend.unsupported_cache.clear()
    try:
        status, out, err = run(capsys, "probe", "--backend", "numpy", "--check", "--output", "-")
        assert status == 1
        assert json.loads(out)["backends"]["numpy"]["differences"][0]["kernel"] == "add"
        assert any(line.split()[:4] == ["add", "int8", "unsupported", "supported"] for line in err.splitlines())
        status, _, _ = run(capsys, "probe", "--backend", "numpy", "--output", "-")
        assert status == 0  # without --check, differences are reported, not failed
    finally:
        backend.unsupported_cache.clear()
        support.clear_caches()


def test_support_command(capsys):
    status, out, _ = run(capsys, "support", "--backend", "numpy", "--function", "add", "--function", "linalg.det")
    assert status == 0
    assert out.splitlines()[0].startswith("Dtype support on the numpy backend")
    rows = [line.split() for line in out.splitlines() if line.startswith(("add", "linalg.det"))]
    half = ("bfloat16", "float16")  # no decomposition kernels (declared on every backend)
    # linalg refuses bool on every backend (UnsupportedDtypeError: "not defined for bool inputs")
    marks = ["-" if d == "bool" else "x" if d in half else "+" for d in al.all_dtypes]
    assert rows == [["add"] + ["+"] * 15, ["linalg.det"] + marks]
    status, out, _ = run(capsys, "support", "--backend", "numpy", "--format", "html")
    assert status == 0 and out.startswith("<!DOCTYPE html>") and out.count("<tr>") > 150
    status, out, _ = run(capsys, "support", "--backend", "numpy", "--format", "markdown", "--function", "sqrt")
    assert status == 0 and "| `sqrt` |" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["support", "--format", "pdf"], "unknown format 'pdf'"),
    (["support", "--function", "sqroot"], "Did you mean 'sqrt'"),
    (["support", "--backend", "nope"], "unknown backend 'nope'"),
    (["probe", "--backend", "nope"], "unknown backend 'nope'"),
])
def test_usage_errors_are_one_line(capsys, argv, message):
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_python_dash_m_arraylayer_probe(tmp_path):
    """``probe --check`` prints a few lines and leaves the JSON in arraylayer-probe.json (here in a
    scratch working directory)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    completed = subprocess.run([sys.executable, "-m", "arraylayer", "probe", "--backend", "numpy", "--check"],
                               capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert len(completed.stdout.splitlines()) < 10, completed.stdout[:2000]
    document = json.loads((tmp_path / "arraylayer-probe.json").read_text())
    assert document["backends"]["numpy"]["backend"] == "numpy"
