"""Locating and parsing the seed documents' promotion tables (a helper module, not a conftest).

The seeds are read at test time, never copied into the tests:

* seed 000 (JAX): the 18x18 HTML table ``<table id="types">``, codes ``b1``, ``u1`` ... ``c16``,
  ``i*``, ``f*``, ``c*``;
* seed 002 (Paddle): the tensor-tensor (12x12, ``-`` where Paddle refuses) and tensor-scalar
  (12x4) tables, written as ``|``-separated rows.

Every parser returns ``{(row_code, column_code): cell_code}`` with the codes as printed.
The directory comes from ``$ARRAYLAYER_SEEDS``, else ``<repo>/../shared/seeds``; when it is
missing the calling test module is skipped, with one line in pytest's summary.
"""

from __future__ import annotations

import os
import re
from functools import cache
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

# Seed 000's codes are its generator's ``f"{kind}{itemsize}"`` (or ``*`` for a Python scalar type,
# ``bf`` for bfloat16); these are the kind letters and the Python type each weak code stands for.
_KIND_NAMES = {"b": "bool", "u": "uint", "i": "int", "f": "float", "c": "complex"}
WEAK_TYPES = {"i*": int, "f*": float, "c*": complex}

# Seed 002's codes.
PADDLE_CODES = {
    "bool": "bool", "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
}
PADDLE_SCALARS = {"bool": bool, "int": int, "float": float, "complex": complex}


def seeds_dir() -> Path:
    """The seed directory; skips the calling module when it is not there."""
    path = Path(os.environ.get("ARRAYLAYER_SEEDS") or REPO.parent / "shared" / "seeds")
    if not path.is_dir():
        pytest.skip(f"the published promotion tables (JAX's, PaddlePaddle's) are not at {path}: set "
                    "ARRAYLAYER_SEEDS to their folder to compare with them", allow_module_level=True)
    return path


def seed_text(number: str) -> str:
    """The text of the seed whose file name starts with ``<number>_`` (e.g. ``"000"``)."""
    directory = seeds_dir()
    matches = sorted(directory.glob(f"{number}_*.txt"))
    if len(matches) != 1:
        raise FileNotFoundError(f"expected exactly one seed {number}_*.txt in {directory}, found {matches}")
    return matches[0].read_text(encoding="utf-8")


# --------------------------------------------------------------------------------------- seed 000
def jax_code_dtype(code: str) -> str | type:
    """A seed-000 code as a dtype name (``"u4"`` -> ``"uint32"``), or the Python type of a weak code."""
    if code in WEAK_TYPES:
        return WEAK_TYPES[code]
    if code == "bf":
        return "bfloat16"
    match = re.fullmatch(r"([buifc])(\d+)", code)
    if match is None:
        raise ValueError(f"unknown seed-000 code {code!r}")
    kind, itemsize = _KIND_NAMES[match[1]], int(match[2])
    return "bool" if kind == "bool" else f"{kind}{8 * itemsize}"


class _TableParser(HTMLParser):
    """Collects the text of every cell of ``<table id="types">``, row by row."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._in_table = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("id", "types") in attrs:
            self._in_table = True
        elif self._in_table and tag == "tr":
            self.rows.append([])
        elif self._in_table and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_table = False
        elif self._in_table and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@cache
def jax_codes_and_table() -> tuple[tuple[str, ...], dict[tuple[str, str], str]]:
    """Seed 000's promotion table: the codes in printed order and ``{(row, column): cell}``."""
    parser = _TableParser()
    parser.feed(seed_text("000"))
    header, *rows = parser.rows
    if not header or header[0] != "":
        raise ValueError(f"seed 000: unexpected table header {header!r}")
    codes = tuple(header[1:])
    table: dict[tuple[str, str], str] = {}
    for row in rows:
        if len(row) != len(codes) + 1:
            raise ValueError(f"seed 000: row {row!r} does not have {len(codes) + 1} cells")
        table.update({(row[0], column): cell for column, cell in zip(codes, row[1:], strict=True)})
    if len(codes) != 18 or len(table) != 18 * 18 or [row[0] for row in rows] != list(codes):
        raise ValueError(f"seed 000: expected an 18x18 table with matching axes, got codes {codes}")
    return codes, table


def jax_table() -> dict[tuple[str, str], str]:
    return jax_codes_and_table()[1]


def jax_codes() -> tuple[str, ...]:
    return jax_codes_and_table()[0]


# --------------------------------------------------------------------------------------- seed 002
def _split(line: str) -> list[str]:
    cells = [cell.strip() for cell in line.split("|")]
    while cells and cells[-1] == "":
        cells.pop()
    return cells


@cache
def _paddle_tables() -> tuple[dict[tuple[str, str], str], ...]:
    """Every ``+/-/*`` table of seed 002, in document order."""
    tables: list[dict[tuple[str, str], str]] = []
    header: list[str] | None = None
    for line in seed_text("002").splitlines():
        stripped = line.strip()
        if stripped.startswith("+/-/*") and "|" in stripped:
            header = _split(stripped)[1:]
            tables.append({})
        elif header is None or not stripped or set(stripped) <= set("-|"):
            continue  # outside a table, blank line, or the ---|--- rule
        elif "|" in stripped:
            row = _split(stripped)
            if len(row) != len(header) + 1:
                raise ValueError(f"seed 002: row {row!r} does not match header {header!r}")
            tables[-1].update({(row[0], column): cell for column, cell in zip(header, row[1:], strict=True)})
        else:
            header = None  # prose: the table has ended
    return tuple(tables)


def _paddle_table(columns: set[str], shape: tuple[int, int]) -> dict[tuple[str, str], str]:
    found = [t for t in _paddle_tables() if {column for _, column in t} == columns]
    if len(found) != 1 or len(found[0]) != shape[0] * shape[1]:
        raise ValueError(f"seed 002: expected one {shape[0]}x{shape[1]} table with columns {sorted(columns)}")
    return found[0]


def paddle_tensor_tensor() -> dict[tuple[str, str], str]:
    """Seed 002's tensor (row) with tensor (column) table; ``"-"`` where Paddle does not promote."""
    return _paddle_table(set(PADDLE_CODES), (12, 12))


def paddle_tensor_scalar() -> dict[tuple[str, str], str]:
    """Seed 002's tensor (row) with Python scalar (column: bool/int/float/complex) table."""
    return _paddle_table(set(PADDLE_SCALARS), (12, 4))
