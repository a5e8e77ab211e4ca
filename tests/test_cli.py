"""The command line: `arraylayer info` and `arraylayer table`, run in-process through
main(argv) and once as `python -m arraylayer` in a subprocess; the command table."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from arraylayer import cli
from arraylayer.runtime import registry
from arraylayer.backends.numpy import NumpyBackend
from arraylayer.dtypes.lattice import CODES, LOW_PRECISION_CODES

ROOT = Path(__file__).resolve().parents[1]
ORDER = [c for c in CODES if c not in LOW_PRECISION_CODES]  # the table leaves the low-precision family out
SHORT = {name: code for code, name in CODES.items() if isinstance(name, str)}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def text_grid(output: str) -> dict[tuple[str, str], str]:
    """The cells of a text table, keyed (row, column), brackets kept."""
    lines = output.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split() == ORDER)
    grid = {}
    for line in lines[header + 1: header + 1 + len(ORDER)]:
        row, *cells = line.split()
        grid.update({(row, column): cell for column, cell in zip(ORDER, cells, strict=True)})
    return grid


def numpy_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


# ---- table ------------------------------------------------------------------------------------
def test_table_standard_cells_are_arraylayer_promotion(capsys):
    status, out, _ = run(capsys, "table", "--policy", "standard")
    assert status == 0
    grid = text_grid(out)
    assert len(grid) == 18 * 18
    # int8 with uint8: int16, as al.promote_types says and NumPy agrees (no marker)
    assert grid["i1", "u1"] == SHORT[al.promote_types("int8", "uint8")] == "i2"
    assert al.promote_types("int8", "uint8") == np.promote_types(np.int8, np.uint8)
    # int64 with uint64: a weak float under the lattice, float32 once materialised; NumPy says float64
    assert grid["i8", "u8"] == "[f*]"
    assert al.lattice_result_type("int64", "uint64") == (al.promote_types("int64", "uint64"), True)
    assert al.promote_types("int64", "uint64") == "float32" != np.promote_types(np.int64, np.uint64)
    # every cell is what arraylayer itself says
    for (a, b), cell in grid.items():
        dtype, weak = al.lattice_result_type(CODES[a], CODES[b])
        expected = {"int": "i*", "float": "f*", "complex": "c*"}[dtype.category] if weak else SHORT[dtype]
        assert cell.strip("[]") == expected, (a, b)


def test_table_marks_exactly_the_cells_that_differ_from_numpy(capsys):
    _, out, _ = run(capsys, "table")
    grid = text_grid(out)
    for a, b in [(a, b) for a in ORDER for b in ORDER if "*" not in a + b]:
        try:
            numpy_answer = np.promote_types(numpy_dtype(CODES[a]), numpy_dtype(CODES[b])).name
        except TypeError:  # NumPy raises (bfloat16 with float16, uint64): always marked
            numpy_answer = None
        marked = grid[a, b].startswith("[")
        assert marked == (numpy_answer != al.promote_types(CODES[a], CODES[b])), (a, b, numpy_answer)
    # bfloat16 with float16: NumPy raises, arraylayer says float32
    assert grid["bf", "f2"] == "[f4]"
    # weak Python scalars: NumPy 2 (NEP 50) keeps int8 for int8 + 1, gives float64 for int8 + 1.0
    assert grid["i1", "i*"] == "i1" and np.result_type(np.int8, 1) == np.int8
    assert grid["i1", "f*"] == "[f*]" and np.result_type(np.int8, 1.0) == np.float64
    assert grid["f2", "f*"] == "f2"


def test_table_x64_materialises_weak_results_to_64_bits(capsys):
    _, out, _ = run(capsys, "table", "--x64")
    grid = text_grid(out)
    assert grid["i1", "f*"] == "f*"  # float64, as NumPy
    assert grid["i*", "i*"] == "i*"  # int64, as NumPy
    assert grid["bf", "f*"] == "[bf]"  # NumPy (ml_dtypes) says float64
    assert "materialised to int64, float64, complex128" in out


def test_table_strict_shows_refusals(capsys):
    status, out, _ = run(capsys, "table", "--policy", "strict")
    assert status == 0
    grid = text_grid(out)
    assert grid["i1", "u1"] == "-"
    with al.dtype_promotion("strict"), pytest.raises(al.TypePromotionError):
        al.promote_types("int8", "uint8")
    assert grid["f4", "f4"] == "f4"
    assert grid["f2", "f*"] == "f2"  # weak scalars of a fitting kind are allowed
    assert "no implicit promotion under this policy: TypePromotionError" in out


def test_table_default_policy_is_the_one_in_force(capsys):
    with al.dtype_promotion("paddle"):
        _, out, _ = run(capsys, "table")
    assert "'paddle' policy" in out
    grid = text_grid(out)
    assert grid["i8", "f4"] == "-"  # Paddle refuses int64 tensor + float32 tensor
    assert grid["i8", "f*"] == "[f4]"  # but takes a Python float, as float32 (NumPy: float64)
    assert "Paddle's own scalar defaults" in out


def test_table_markdown(capsys):
    status, out, _ = run(capsys, "table", "--policy", "array_api", "--format", "markdown")
    assert status == 0
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert len(rows) == 2 + 18
    assert all(row.count("|") == 20 for row in rows)
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header[1:] == [code.replace("*", r"\*") for code in ORDER]
    i1 = {col: c.strip() for col, c in zip(ORDER, rows[2 + ORDER.index("i1")].strip("|").split("|")[1:], strict=True)}
    assert i1["f4"] == "-"  # the Array API has no int8 + float32
    assert i1["i*"] == "i1"
    assert i1["u1"] == "i2"


class _Balance(HTMLParser):
    """Checks that every non-void element is closed in order."""

    VOID = {"meta", "br", "hr", "img", "link", "input"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):  # <meta ... />: nothing to close
        pass

    def handle_endtag(self, tag):
        if not self.stack or self.stack.pop() != tag:
            self.errors.append(tag)


def test_table_html_is_well_formed(capsys):
    status, out, _ = run(capsys, "table", "--policy", "standard", "--format", "html")
    assert status == 0
    assert out.startswith("<!DOCTYPE html>")
    checker = _Balance()
    checker.feed(out)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    root = ET.fromstring(out)  # also well-formed XML
    table = root.find(".//table")
    assert table is not None and table.get("data-policy") == "standard"
    head = [th.text for th in table.find("thead").iter("th")]
    assert head == [None, *ORDER]
    rows = table.find("tbody").findall("tr")
    assert [row.find("th").text for row in rows] == ORDER
    cells = {(row.find("th").text, col): td for row in rows for col, td in zip(ORDER, row.findall("td"), strict=True)}
    assert cells["i1", "u1"].text == "i2" and cells["i1", "u1"].get("class") is None
    assert cells["bf", "f2"].text == "f4" and "d" in cells["bf", "f2"].get("class").split()
    assert cells["i*", "f*"].get("class").split() == ["w", "d"]
    assert "NumPy raises" in cells["bf", "f2"].get("title")


def test_table_html_marks_refused_cells(capsys):
    _, out, _ = run(capsys, "table", "--policy", "strict", "--format", "html")
    td = {td.get("title").split(":")[0]: td for td in ET.fromstring(out).iter("td")}
    refused = td["i1 with u1"]
    assert refused.text == "-" and refused.get("class") == "x"
    assert "TypePromotionError" not in refused.get("title")  # the message itself, not the type
    assert "strict" in refused.get("title")


def test_unknown_policy_is_one_line_and_exit_2(capsys):
    status, out, err = run(capsys, "table", "--policy", "lenient")
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "unknown promotion policy 'lenient'" in err
    assert "standard, strict, paddle, array_api" in err
    assert "Traceback" not in err


def test_unknown_format_and_usage_errors_exit_2(capsys):
    status, _, err = run(capsys, "table", "--format", "latex")
    assert status == 2 and err.count("\n") == 1 and "unknown format 'latex'" in err
    status, _, err = run(capsys, "tabel")
    assert status == 2 and err.count("\n") == 1 and "invalid choice" in err
    status, _, err = run(capsys)
    assert status == 2 and "required" in err


def test_help_and_version(capsys):
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "info" in out and "table" in out
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.strip() == f"arraylayer {al.__version__}"


# ---- info -------------------------------------------------------------------------------------
def test_info_numpy(capsys):
    status, out, _ = run(capsys, "info", "--backend", "numpy")
    assert status == 0
    assert f"arraylayer {al.__version__}" in out
    backends = out.split("Backends\n")[1]
    assert re.search(rf"^\s+numpy\s+ok\s+{re.escape(np.__version__)}\s+cpu$", backends, re.M)
    dtype_rows = {line.split()[0]: line.split()[1:] for line in out.split("Dtypes")[1].splitlines()[2:17]}
    assert list(dtype_rows) == list(al.all_dtypes)
    assert all(row == ["yes"] for row in dtype_rows.values())
    assert re.search(r"^\s+numpy\s+none$", out, re.M)


def test_info_settings_in_force(capsys):
    with al.dtype_promotion("array_api"), al.use_default_dtypes(int="int64", float="float64"):
        _, out, _ = run(capsys, "info", "--backend", "numpy")
    assert re.search(r"promotion policy\s+array_api: ", out)
    assert re.search(r"default dtypes\s+int int64, uint uint32, float float64, complex complex64", out)


def test_info_jax_invalid_dtypes_follow_x64(capsys, x64_off):  # x64_off skips without jax
    status, out, _ = run(capsys, "info", "--backend", "jax")
    assert status == 0
    rows = {line.split()[0]: line.split()[1] for line in out.split("Dtypes")[1].splitlines()[2:17]}
    assert rows["int64"] == rows["float64"] == rows["complex128"] == "no"
    assert rows["int32"] == "yes"
    assert "jax_enable_x64" in out.split("Invalid dtypes")[1]


def test_info_all_backends(capsys):
    status, out, _ = run(capsys, "info")
    assert status == 0
    backends = out.split("Backends\n")[1].split("\n\n")[0]
    for name in al.installed_backends():
        assert re.search(rf"^\s+{name}\s+ok\s", backends, re.M), name


class _BrokenBackend(NumpyBackend):
    name = "broken"

    def load(self):
        raise RuntimeError("the framework crashed on import\nsecond line")


class _AbsentBackend(NumpyBackend):
    name = "absent"
    framework = "arraylayer_no_such_framework"
    extra = "absent"


@pytest.fixture
def extra_backends(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {**registry._REGISTERED, "broken": _BrokenBackend,
                                                  "absent": _AbsentBackend})
    monkeypatch.setattr(registry, "_INSTANCES", dict(registry._INSTANCES))


def test_info_reports_failing_backends_without_traceback(capsys, extra_backends):
    status, out, err = run(capsys, "info")
    assert status == 0
    assert "Traceback" not in out + err
    assert re.search(r"^\s+broken\s+import failed\s", out, re.M)
    assert "broken: RuntimeError: the framework crashed on import" in out
    assert "second line" not in out
    assert re.search(r"^\s+absent\s+not installed\s", out, re.M)
    assert 'pip install "arraylayer[absent]"' in out
    # only working backends get a column in the dtype matrix
    assert "broken" not in out.split("Dtypes")[1].splitlines()[1]


def test_info_for_a_backend_that_cannot_load_exits_1(capsys, extra_backends):
    status, out, _ = run(capsys, "info", "--backend", "broken")
    assert status == 1
    assert "import failed" in out and "Dtypes" not in out


def test_info_unknown_backend_exits_2(capsys):
    status, out, err = run(capsys, "info", "--backend", "mxnet")
    assert status == 2 and out == ""
    assert err.strip() == "arraylayer info: error: unknown backend 'mxnet'; registered backends: " + ", ".join(
        al.available_backends())


# ---- the command table --------------------------------------------------------------------------
def test_commands_plug_in_with_one_entry(capsys, monkeypatch):
    monkeypatch.setattr(cli, "COMMANDS", dict(cli.COMMANDS))

    def arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--shout", action="store_true")

    def hello(args: argparse.Namespace) -> int:
        if args.shout:
            raise cli.CommandError("no shouting")
        print("hello")
        return 0

    cli.register_command(cli.Command("hello", "say hello", hello, arguments))
    assert run(capsys, "hello")[:2] == (0, "hello\n")
    status, _, err = run(capsys, "hello", "--shout")
    assert status == 2 and err == "arraylayer hello: error: no shouting\n"
    with pytest.raises(ValueError, match="already registered"):
        cli.register_command(cli.Command("hello", "again", hello))
    # a "module:attribute" entry is imported when the parser is built
    monkeypatch.setattr(sys.modules[__name__], "LAZY_COMMAND", cli.Command("lazy", "lazy one", lambda a: 7),
                        raising=False)
    cli.COMMANDS["lazy"] = f"{__name__}:LAZY_COMMAND"
    assert run(capsys, "lazy")[0] == 7
    assert list(cli.COMMANDS)[:2] == ["info", "table"]


def test_console_script_entry_point():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    target = project["project"]["scripts"]["arraylayer"]
    module, _, attribute = target.partition(":")
    assert module == "arraylayer.cli" and getattr(cli, attribute) is cli.main


# ---- as a program -------------------------------------------------------------------------------
def test_python_dash_m_arraylayer():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "arraylayer", "table", "--format", "markdown"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "'standard' policy" in done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("| **i1**"))
    assert row.split("|")[1 + 1 + ORDER.index("u1")].strip() == "i2"
    bad = subprocess.run([sys.executable, "-m", "arraylayer", "table", "--policy", "nope"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.startswith("arraylayer table: error: unknown promotion policy 'nope'")
    assert bad.stdout == ""


def test_support_low_precision_columns(capsys):
    status, out, _ = run(capsys, "support", "--backend", "numpy", "--low-precision", "--function", "sort",
                         "--function", "matmul")
    assert status == 0
    header = next(line.split() for line in out.splitlines() if line.split()[:2] == ["b1", "i1"])
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith(("sort", "matmul"))}
    assert header[15] == "e4m3fn" and header[-1] == "uint1"
    assert rows["sort"][15:] == ["+"] * 17 and rows["matmul"][15:] == ["x"] * 17


def test_table_low_precision_rows_follow_jax(capsys):
    status, out, _ = run(capsys, "table", "--low-precision")
    assert status == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[:2] == ["b1", "u1"])
    columns = lines[at].split()
    grid = {(row, column): cell for line in lines[at + 1: at + 1 + len(columns)]
            for row, *cells in [line.split()] for column, cell in zip(columns, cells, strict=True)}
    assert columns[15] == "float8_e4m3fn" and columns[-4:] == ["uint1", "i*", "f*", "c*"]
    assert grid["float8_e4m3fn", "float8_e4m3fn"].strip("[]") == "float8_e4m3fn"
    assert grid["float8_e4m3fn", "f4"] == "-" and grid["float8_e4m3fn", "float8_e5m2"] == "-"
    assert grid["int4", "f*"] == "-" and grid["int4", "i*"].strip("[]") == "int4"
    assert grid["f*", "float8_e5m2"].strip("[]") == "float8_e5m2"
