"""A promotion policy's table over the 18 types of JAX's promotion table, next to NumPy's answers,
rendered as text, Markdown or HTML; and the ``arraylayer table`` command that prints it.

:func:`promotion_table` and :func:`render_table` are also what ``examples/demo.py`` and the
documentation build use.
"""

from __future__ import annotations

import argparse
import html
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

from arraylayer.cli import Command, CommandError

__all__ = [
    "TableCell",
    "PromotionTable",
    "promotion_table",
    "numpy_promotion",
    "render_table",
    "render_text",
    "render_markdown",
    "render_html",
    "TABLE_FORMATS",
    "TABLE_CSS",
    "COMMAND",
]

_WEAK_CODE_OF_KIND: Final = {"int": "i*", "float": "f*", "complex": "c*"}
# A Python value of each weak kind, for NumPy's NEP 50 promotion (the value does not matter).
_WEAK_SAMPLE: Final = {"i*": 0, "f*": 0.0, "c*": 0j}
TABLE_FORMATS: Final = ("text", "markdown", "html")
_DEFAULTS_64: Final = {"int": "int64", "float": "float64", "complex": "complex128"}


@cache
def _short_codes() -> dict[str, str]:
    from arraylayer.dtypes.lattice import CODES

    return {name: code for code, name in CODES.items() if isinstance(name, str)}


@dataclass(frozen=True)
class TableCell:
    """One cell: what arraylayer gives for the pair, and what NumPy gives.

    ``result`` is the dtype arraylayer returns (a weak result materialised to its default
    dtype), None where the policy refuses the pair (``error`` then holds the message).
    ``numpy`` is NumPy's answer, None where NumPy raises.
    """

    result: Any
    weak: bool
    numpy: Any
    error: str | None = None

    @property
    def code(self) -> str | None:
        """The seed's short code of the result (``i2``, ``f*`` for a weak float), None if refused."""
        if self.result is None:
            return None
        return _WEAK_CODE_OF_KIND[self.result.category] if self.weak else _short_codes()[str(self.result)]

    @property
    def differs(self) -> bool:
        """True where arraylayer answers and NumPy does not give the same dtype (or raises).
        A pair the policy refuses is marked as refused instead."""
        return self.result is not None and self.result != self.numpy


@dataclass(frozen=True)
class PromotionTable:
    """A policy's promotion table over the 18 types of JAX's promotion table (rows: first operand)."""

    policy: str
    summary: str
    codes: tuple[str, ...]
    cells: dict[tuple[str, str], TableCell]
    #: the default dtypes weak results were materialised to
    defaults: dict[str, str]
    numpy_version: str
    notes: tuple[str, ...] = field(default=())

    def cell(self, row: str, column: str) -> TableCell:
        return self.cells[row, column]


def _numpy_dtype(code: str) -> Any:
    import numpy as np

    from arraylayer.dtypes.lattice import CODES, LOW_PRECISION_CODES

    name = CODES[code]
    if name == "bfloat16" or code in LOW_PRECISION_CODES:  # ml_dtypes' NumPy dtypes
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)  # type: ignore[call-overload]


def numpy_promotion(a: str, b: str) -> Any:
    """NumPy's answer for two of JAX's table codes, as an arraylayer Dtype (None if NumPy raises).

    Two dtypes: ``numpy.promote_types``. A weak code (``i*``, ``f*``, ``c*``) is a Python
    scalar: ``numpy.result_type`` with a Python value, which NumPy 2 treats as weak (NEP 50).
    bfloat16 is ml_dtypes' NumPy dtype.
    """
    import numpy as np

    from arraylayer.dtypes import as_dtype

    try:
        if a in _WEAK_SAMPLE or b in _WEAK_SAMPLE:
            args = [_WEAK_SAMPLE[c] if c in _WEAK_SAMPLE else _numpy_dtype(c) for c in (a, b)]
            answer = np.result_type(*args)
        else:
            answer = np.promote_types(_numpy_dtype(a), _numpy_dtype(b))
    except (TypeError, ValueError):  # numpy.exceptions.DTypePromotionError is a TypeError
        return None
    try:
        return as_dtype(answer.name)
    except TypeError:  # a NumPy dtype arraylayer does not have
        return None


@contextmanager
def _table_settings(policy: str | None, x64: bool) -> Iterator[str]:
    from arraylayer.dtypes import promotion
    from arraylayer.dtypes.defaults import use_default_dtypes

    with ExitStack() as stack:
        name = policy if policy is not None else promotion.get_dtype_promotion()
        if name not in promotion.promotion_policies():
            raise ValueError(
                f"unknown promotion policy {name!r}; choose one of {', '.join(promotion.promotion_policies())}"
            )
        stack.enter_context(promotion.dtype_promotion(name))
        if x64:
            stack.enter_context(use_default_dtypes(**_DEFAULTS_64))
        yield name


def promotion_table(policy: str | None = None, *, x64: bool = False, low_precision: bool = False) -> PromotionTable:
    """The promotion table of ``policy`` (default: the policy in force here).

    Rows and columns follow JAX's promotion table (:data:`arraylayer.dtypes.lattice.CODES`: the fifteen dtypes,
    then the weak ``i*``, ``f*``, ``c*``). Weak results are materialised to the default
    dtypes in force, or to int64/float64/complex128 with ``x64=True`` (as JAX does with
    ``jax_enable_x64``), before they are compared with NumPy. ``low_precision`` adds the float8 ...
    int2 rows and columns before the weak ones. Raises ValueError for an unknown policy.
    """
    import numpy as np

    from arraylayer.dtypes import promotion
    from arraylayer.errors import TypePromotionError
    from arraylayer.dtypes.lattice import CODES, LOW_PRECISION_CODES
    from arraylayer.dtypes.policies import POLICIES

    codes = tuple(c for c in CODES if c not in LOW_PRECISION_CODES)  # their rule: docs/concepts.rst
    if low_precision:
        weak = tuple(c for c in codes if c.endswith("*"))
        codes = tuple(c for c in codes if c not in weak) + tuple(LOW_PRECISION_CODES) + weak
    cells: dict[tuple[str, str], TableCell] = {}
    with _table_settings(policy, x64) as name:
        materialise = POLICIES[name].weak_dtype  # Python type -> the dtype its weak results become
        used_defaults = {"int": str(materialise[int]()), "float": str(materialise[float]()),
                         "complex": str(materialise[complex]())}
        for a in codes:
            for b in codes:
                numpy_answer = numpy_promotion(a, b)
                try:
                    result, weak = promotion.lattice_result_type(CODES[a], CODES[b])
                except TypePromotionError as error:
                    cells[a, b] = TableCell(None, False, numpy_answer, str(error))
                else:
                    cells[a, b] = TableCell(result, weak, numpy_answer)
    notes: tuple[str, ...] = ()
    if name == "paddle":
        notes = ("Under 'paddle', weak results take Paddle's own scalar defaults, whatever the default "
                 "dtypes in force.",)
    return PromotionTable(
        policy=name,
        summary=POLICIES[name].summary,
        codes=codes,
        cells=cells,
        defaults=used_defaults,
        numpy_version=np.__version__,
        notes=notes,
    )


def _legend(table: PromotionTable) -> list[tuple[str, str]]:
    """(marker, meaning) pairs, shared by every format."""
    d = table.defaults
    return [
        ("i* f* c*", "Python int, float, complex (weak); as a result: weak, materialised to "
                     f"{d['int']}, {d['float']}, {d['complex']}"),
        ("[x]", f"differs from NumPy {table.numpy_version} (numpy.promote_types; numpy.result_type with a "
                "Python scalar for i*, f*, c*), or NumPy raises"),
        ("-", "no implicit promotion under this policy: TypePromotionError"),
    ]


def _title(table: PromotionTable) -> str:
    return f"Promotion table under the '{table.policy}' policy: {table.summary}."


def _text_cell(cell: TableCell) -> str:
    text = cell.code or "-"
    return f"[{text}]" if cell.differs else text


def render_text(table: PromotionTable) -> str:
    """The table as aligned plain text, differing cells in brackets."""
    rows = [[""] + list(table.codes)]
    rows += [[a] + [_text_cell(table.cell(a, b)) for b in table.codes] for a in table.codes]
    width = max(len(text) for row in rows for text in row) + 1
    lines = [_title(table), "Rows: first operand; columns: second operand.", ""]
    lines += ["".join(f"{text:>{width}}" for text in row).rstrip() for row in rows]
    lines.append("")
    lines += [f"  {marker:<9} {meaning}" for marker, meaning in _legend(table)]
    lines += [f"  {note}" for note in table.notes]
    return "\n".join(lines)


def _markdown_cell(cell: TableCell) -> str:
    text = (cell.code or "-").replace("*", r"\*")
    return f"**{text}**" if cell.differs else text


def render_markdown(table: PromotionTable) -> str:
    """The table as a GitHub-flavoured Markdown table, differing cells in bold."""
    head = ["", *table.codes]
    lines = [f"{_title(table)} Rows: first operand; columns: second operand.", ""]
    lines.append("| " + " | ".join(code.replace("*", r"\*") for code in head) + " |")
    lines.append("|" + "|".join(":-:" for _ in head) + "|")
    for a in table.codes:
        cells = [f"**{a.replace('*', chr(92) + '*')}**"] + [_markdown_cell(table.cell(a, b)) for b in table.codes]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    meanings = {"[x]": "**bold**", "i* f* c*": r"`i*` `f*` `c*`", "-": "`-`"}
    lines += [f"- {meanings[marker]}: {meaning}" for marker, meaning in _legend(table)]
    lines += [f"- {note}" for note in table.notes]
    return "\n".join(lines)


#: The style of the HTML table (green: differs from NumPy, as in JAX's table; red: refused).
TABLE_CSS: Final = """\
table.al-promotion { border-collapse: collapse; font-family: monospace; margin: 0.5em 0; }
table.al-promotion caption { caption-side: top; text-align: left; padding-bottom: 0.3em; }
table.al-promotion th, table.al-promotion td { border: 1px solid #d0d0d0; padding: 2px 5px; text-align: center; }
table.al-promotion th { background: #f0f0f0; }
table.al-promotion td.w { font-style: italic; }
table.al-promotion td.d { background: #ccf2cc; }
table.al-promotion td.x { background: #f7d9d9; color: #8b1a1a; }
ul.al-legend span { display: inline-block; min-width: 2.2em; text-align: center; font-family: monospace;
  border: 1px solid #d0d0d0; }
ul.al-legend span.d { background: #ccf2cc; }
ul.al-legend span.x { background: #f7d9d9; color: #8b1a1a; }"""


def _html_cell(table: PromotionTable, a: str, b: str) -> str:
    cell = table.cell(a, b)
    classes = [name for name, on in (("w", cell.weak), ("d", cell.differs), ("x", cell.result is None)) if on]
    numpy_says = f"NumPy: {cell.numpy}" if cell.numpy is not None else "NumPy raises"
    if cell.result is None:
        title = f"{a} with {b}: {cell.error} ({numpy_says})"
    else:
        weak = " (weak)" if cell.weak else ""
        title = f"{a} with {b} -> {cell.result}{weak}; {numpy_says}"
    attributes = f' class="{" ".join(classes)}"' if classes else ""
    return f'<td{attributes} title="{html.escape(title)}">{html.escape(cell.code or "-")}</td>'


def render_html(table: PromotionTable, *, document: bool = False, style: bool = True) -> str:
    """The table as HTML: a fragment (``<style>``, ``<table>``, legend), or with
    ``document=True`` a complete page. Cells carry their full answer as a tooltip."""
    parts = []
    if style and not document:
        parts.append(f"<style>\n{TABLE_CSS}\n</style>")
    parts.append(f'<table class="al-promotion" data-policy="{html.escape(table.policy)}">')
    parts.append(f"<caption>{html.escape(_title(table))} Rows: first operand; columns: second operand.</caption>")
    parts.append("<thead><tr><th></th>" + "".join(f'<th scope="col">{c}</th>' for c in table.codes) + "</tr></thead>")
    parts.append("<tbody>")
    for a in table.codes:
        cells = "".join(_html_cell(table, a, b) for b in table.codes)
        parts.append(f'<tr><th scope="row">{a}</th>{cells}</tr>')
    parts.append("</tbody>")
    parts.append("</table>")
    samples = {"i* f* c*": '<span class="w"><i>f*</i></span>', "[x]": '<span class="d">f4</span>',
               "-": '<span class="x">-</span>'}
    parts.append('<ul class="al-legend">')
    for marker, meaning in _legend(table):
        parts.append(f"<li>{samples[marker]} {html.escape(meaning)}</li>")
    parts += [f"<li>{html.escape(note)}</li>" for note in table.notes]
    parts.append("</ul>")
    body = "\n".join(parts)
    if not document:
        return body
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
        f"<title>arraylayer promotion table: {html.escape(table.policy)}</title>\n"
        f"<style>\n{TABLE_CSS}\n</style>\n</head>\n<body>\n{body}\n</body>\n</html>"
    )


def render_table(table: PromotionTable, fmt: str = "text") -> str:
    """``table`` in one of :data:`TABLE_FORMATS` (HTML as a complete page)."""
    if fmt == "text":
        return render_text(table)
    if fmt == "markdown":
        return render_markdown(table)
    if fmt == "html":
        return render_html(table, document=True)
    raise ValueError(f"unknown table format {fmt!r}; choose one of {', '.join(TABLE_FORMATS)}")


def _table_arguments(parser: argparse.ArgumentParser) -> None:
    from arraylayer.dtypes.promotion import promotion_policies

    parser.add_argument("--policy", metavar="NAME",
                        help=f"{', '.join(promotion_policies())} (default: the policy in force)")
    parser.add_argument("--format", dest="fmt", default="text", metavar="FORMAT",
                        help="text (default), markdown or html (a complete page)")
    parser.add_argument("--x64", action="store_true",
                        help="materialise weak results to int64/float64/complex128 instead of the defaults "
                             "in force (as JAX does with jax_enable_x64)")
    parser.add_argument("--low-precision", dest="low_precision", action="store_true",
                        help="add the low-precision dtypes (float8 ... int2): JAX's rule, no implicit promotion")


def _table(args: argparse.Namespace) -> int:
    if args.fmt not in TABLE_FORMATS:
        raise CommandError(f"unknown format {args.fmt!r}; choose one of {', '.join(TABLE_FORMATS)}")
    try:
        table = promotion_table(args.policy, x64=args.x64, low_precision=args.low_precision)
    except ValueError as error:
        raise CommandError(str(error)) from None
    print(render_table(table, args.fmt))
    return 0


COMMAND: Final = Command(
    name="table",
    help="print a policy's promotion table, laid out as in JAX's type promotion docs",
    description=(
        "Print the promotion table of a policy: rows (first operand) and columns (second operand) "
        "are the fifteen dtypes and the weak Python scalars i*, f*, c*, in the order of JAX's type "
        "promotion docs. Cells whose dtype differs from NumPy's promotion are marked; '-' is a pair "
        "the policy refuses."
    ),
    arguments=_table_arguments,
    run=_table,
)
