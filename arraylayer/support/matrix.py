"""The support matrix: function x dtype support of a backend, rendered as text, Markdown or HTML
(``python -m arraylayer support``)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any, Final, NamedTuple

from arraylayer.dtypes import Dtype, all_dtypes, all_low_precision_dtypes
from arraylayer.support.declarations import UnverifiedVersionWarning
from arraylayer.support.lowp import low_precision_support
from arraylayer.support.names import function_name
from arraylayer.support.queries import Cell, dtype_support, resolve_backend
from arraylayer.support.table import function_table

__all__ = ["CELL_MARKS", "MATRIX_FORMATS", "SupportMatrix", "matrix_functions", "support_matrix", "render_matrix"]

#: The mark of each cell status in the matrix, and what it means.
CELL_MARKS: Final[dict[str, tuple[str, str]]] = {
    "supported": ("+", "supported"),
    "unverified": ("?", "no declaration covers the installed version: unverified (run `arraylayer probe`)"),
    "unsupported": ("x", "no kernel for this dtype on this backend (a low-precision dtype: stored only, "
                         "refused on every backend): UnsupportedDtypeError"),
    "missing": ("!", "the backend provides no kernel for this function"),
    "undefined": ("-", "not defined for this kind by the Array API, on any backend"),
    "invalid": (".", "the backend cannot hold this dtype as installed and configured"),
}
MATRIX_FORMATS: Final = ("text", "markdown", "html")


class SupportMatrix(NamedTuple):
    """Function x dtype support on one backend, from the declarations."""

    backend: str
    framework: str
    version: str
    dtypes: tuple[Dtype, ...]
    #: (qualified function name, one Cell per dtype of ``dtypes``)
    rows: tuple[tuple[str, tuple[Cell, ...]], ...]

    def cell(self, function: str, dtype: str) -> Cell:
        for name, cells in self.rows:
            if name == function:
                return cells[self.dtypes.index(Dtype(dtype))]
        raise KeyError(function)


def matrix_functions() -> tuple[str, ...]:
    """The array functions of the matrix, sorted (``linalg.*`` last): everything of the table
    but the dtype-independent ones."""
    names = [name for name, uses in function_table().items() if uses.rule != "independent"]
    return tuple(sorted(names, key=lambda n: (n.startswith("linalg."), n)))


def support_matrix(backend: Any = None, functions: Iterable[Any] | None = None,
                   low_precision: bool = False) -> SupportMatrix:
    """The support matrix of ``backend`` (a name; None: the active one) for ``functions``
    (default: every array function), from the declarations and the defaults in force; with
    ``low_precision``, the low-precision dtypes' columns too (:func:`low_precision_support`)."""
    resolved = resolve_backend(backend)
    names = matrix_functions() if functions is None else tuple(function_name(f) for f in functions)
    dtypes = all_dtypes + all_low_precision_dtypes if low_precision else all_dtypes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedVersionWarning)  # shown in the cells as "?"
        rows = tuple((name, tuple(dtype_support(name, resolved).values())
                      + (tuple(low_precision_support(name, resolved).values()) if low_precision else ()))
                     for name in names)
    return SupportMatrix(resolved.name, resolved.framework, resolved.version, dtypes, rows)


#: Column heads of the low-precision dtypes (the float8 types by their encoding alone).
_LOW_PRECISION_SHORT: Final = (("float8_", ""), ("float6_", "f6"), ("float4_", "f4"))


def _short(dtype: Dtype) -> str:
    from arraylayer.dtypes.lattice import CODES

    if dtype.is_low_precision:
        name = dtype.name
        for prefix, short in _LOW_PRECISION_SHORT:
            name = name.replace(prefix, short)
        return name
    return next(code for code, name in CODES.items() if name == dtype)


def _title(matrix: SupportMatrix) -> str:
    return (f"Dtype support on the {matrix.backend} backend ({matrix.framework} {matrix.version}), "
            f"from the declarations; rows: functions, columns: input dtypes.")


def _legend_items(matrix: SupportMatrix) -> list[tuple[str, str]]:
    used = {cell.status for _, cells in matrix.rows for cell in cells}
    items = [(mark, meaning) for status, (mark, meaning) in CELL_MARKS.items() if status in used]
    codes = ", ".join(f"{_short(d)} {d}" for d in matrix.dtypes)
    return items + [("codes", codes)]


def render_matrix(matrix: SupportMatrix, fmt: str = "text") -> str:
    """``matrix`` as aligned text, a Markdown table, or an HTML fragment (a ``<table>`` with
    each cell's reason in its ``title``)."""
    codes = [_short(d) for d in matrix.dtypes]
    if fmt == "text":
        width = max(len(name) for name, _ in matrix.rows) if matrix.rows else 8
        widths = [max(len(c), 3) + 1 for c in codes]
        lines = [_title(matrix), ""]
        lines.append(" " * width + "".join(f"{c:>{w}}" for c, w in zip(codes, widths, strict=True)))
        for name, cells in matrix.rows:
            lines.append(f"{name:<{width}}" + "".join(f"{CELL_MARKS[c.status][0]:>{w}}"
                                                      for c, w in zip(cells, widths, strict=True)))
        lines.append("")
        lines += [f"  {mark:<5} {meaning}" for mark, meaning in _legend_items(matrix)]
        return "\n".join(lines)
    if fmt == "markdown":
        def escape(text: str) -> str:
            return text.replace("|", r"\|").replace("*", r"\*").replace("_", r"\_")

        lines = [_title(matrix), "", "| function | " + " | ".join(codes) + " |",
                 "|:--|" + "|".join(":-:" for _ in codes) + "|"]
        for name, cells in matrix.rows:
            marks = " | ".join(escape(CELL_MARKS[c.status][0]) for c in cells)
            lines.append(f"| `{name}` | {marks} |")
        lines.append("")
        lines += [f"- `{mark}`: {escape(meaning)}" for mark, meaning in _legend_items(matrix)]
        return "\n".join(lines)
    if fmt == "html":
        import html

        parts = ['<table class="al-support">', f"<caption>{html.escape(_title(matrix))}</caption>",
                 "<thead><tr><th></th>"
                 + "".join(f'<th scope="col" title="{d}">{c}</th>' for c, d in zip(codes, matrix.dtypes, strict=True))
                 + "</tr></thead>", "<tbody>"]
        for name, cells in matrix.rows:
            tds = "".join(
                f'<td class="{c.status}" title="{html.escape(c.why or c.status)}">'
                f"{html.escape(CELL_MARKS[c.status][0])}</td>" for c in cells)
            parts.append(f'<tr><th scope="row">{html.escape(name)}</th>{tds}</tr>')
        parts += ["</tbody>", "</table>", '<ul class="al-legend">']
        parts += [f"<li><code>{html.escape(mark)}</code> {html.escape(meaning)}</li>"
                  for mark, meaning in _legend_items(matrix)]
        parts.append("</ul>")
        return "\n".join(parts)
    raise ValueError(f"unknown matrix format {fmt!r}; choose one of {', '.join(MATRIX_FORMATS)}")
