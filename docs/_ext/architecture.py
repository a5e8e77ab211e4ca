"""The architecture page's map, generated from the tree: every folder of ``arraylayer/`` with what it
owns and what it may import (its ``__init__`` docstring), and every module in it with the first
sentence of its docstring. docs/architecture.rst includes it; tests/test_architecture.py checks
that it names every module, so the map cannot go stale."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "arraylayer"
#: The folders from the bottom layer up (a folder imports only folders listed before it, and the base);
#: tests/test_architecture.py checks that every folder is here and that the order keeps the rules.
LAYERS = ("dtypes", "runtime", "kernels", "lowp", "support", "api", "array", "models", "backends",
          "xp", "integrations", "cli", "distributed")
BASE = ("errors.py", "context.py", "arguments.py", "version.py")
FACE = ("__init__.py", "__main__.py")


def docstring(path: Path) -> str:
    """The module docstring of ``path`` ('' where there is none)."""
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = " ".join(text.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?\.)\s+(?=[A-Z(`*])", paragraph)
    return match.group(1) if match else paragraph


def paragraph_of(text: str, start: str) -> str:
    """The paragraph of ``text`` that begins with ``start``, on one line ('' if none)."""
    return next((" ".join(p.split()) for p in text.split("\n\n") if p.startswith(start)), "")


def entries(folder: Path) -> list[tuple[str, str]]:
    """(path relative to arraylayer/, first sentence) of each module and subfolder directly in ``folder``."""
    rows = []
    for child in sorted(folder.iterdir()):
        if child.suffix == ".py" and child.name != "__init__.py":
            rows.append((f"{folder.name}/{child.name}", first_sentence(docstring(child))))
        elif (child / "__init__.py").is_file():
            rows.append((f"{folder.name}/{child.name}/", first_sentence(docstring(child / "__init__.py"))))
    return rows


def _table(rows: list[tuple[str, str]]) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 25 75", "", "   * - module", "     - what it is"]
    for path, sentence in rows:
        lines += [f"   * - ``{path}``", f"     - {sentence}"]
    return lines + [""]


def architecture() -> str:
    """The page's generated part, as reStructuredText."""
    lines = ["The base modules", "----------------", "",
             "Every folder may import these: they import nothing of arraylayer's but the errors (``arguments``",
             "reads the dtypes inside its functions).", ""]
    lines += _table([(name, first_sentence(docstring(ROOT / name))) for name in BASE])
    for name in LAYERS:
        init = ROOT / name / "__init__.py"
        text = docstring(init)
        lines += [f"``{name}/``", "-" * (len(name) + 5), "", first_sentence(text), ""]
        owns = paragraph_of(text, "The folder ")
        if owns:
            lines += [owns, ""]
        lines += [paragraph_of(text, "May import:"), ""]
        lines += _table(entries(ROOT / name))
    lines += ["The face", "--------", "",
              "``arraylayer/__init__.py`` re-exports the public names and answers the backend-dependent ones;",
              "``__main__.py`` runs the command line. The C extensions (``_dispatch.c``, ``_operators.c``,",
              "``_getitem.c``, ``_plan_keys.c``, ``_promotion.c``, ``_threefry.c``, ``_codes.c``) stand beside them:",
              "optional, built",
              "by setup.py,",
              "each replaced by a pure-Python path where it is missing.", ""]
    return "\n".join(lines)
