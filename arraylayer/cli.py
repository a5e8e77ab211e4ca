"""The command line: ``arraylayer <command>`` or ``python -m arraylayer <command>``.

Commands
--------
``info``
    Installed backends (framework version, devices, valid and invalid dtypes), the
    promotion policy and the default dtypes in force.
``table``
    The promotion table of a policy in the layout of JAX's promotion table, as text, Markdown or HTML.

Adding a command
----------------
Every command is a :class:`Command` in the :data:`COMMANDS` table at the end of this
file, which is also the order of ``arraylayer --help``. A command that lives in another
module takes one entry there, ``"module:attribute"``, so that its module is imported only
when the parser is built::

    COMMANDS: dict[str, Command | str] = {
        "info": INFO_COMMAND,
        "table": TABLE_COMMAND,
        "support": "arraylayer.support:COMMAND",     # the one line a new command adds
    }

where ``arraylayer/support.py`` defines (importing ``Command`` from here)::

    COMMAND = Command(
        name="support",
        help="one line for `arraylayer --help`",
        arguments=add_support_arguments,   # (argparse.ArgumentParser) -> None, or None
        run=run_support,                   # (argparse.Namespace) -> int, the exit status
    )

Code that cannot edit this file (a plugin, a test) calls :func:`register_command`
instead. A command reports a usage error by raising :class:`CommandError`: the user
sees one line on stderr and the exit status is 2, never a traceback.

The promotion-table functions (:func:`promotion_table`, :func:`render_table`) are also
what ``examples/demo.py`` and the documentation build use.
"""

from __future__ import annotations

import argparse
import html
import importlib
import os
import platform
import re
import shutil
import sys
import textwrap
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final

__all__ = [
    "Command",
    "CommandError",
    "COMMANDS",
    "register_command",
    "build_parser",
    "main",
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
]

PROG: Final = "arraylayer"


# ---------------------------------------------------------------------------------------------
# The command table
# ---------------------------------------------------------------------------------------------
class CommandError(Exception):
    """A usage error a command reports to the user: one line on stderr, exit status 2."""


@dataclass(frozen=True)
class Command:
    """One subcommand of ``arraylayer``.

    ``arguments(parser)`` adds the command's options to its argparse sub-parser;
    ``run(args)`` does the work and returns the exit status (0 for success).
    ``description`` is the longer text of ``arraylayer <name> --help`` (``help`` when empty).
    """

    name: str
    help: str
    run: Callable[[argparse.Namespace], int]
    arguments: Callable[[argparse.ArgumentParser], object] | None = None
    description: str = ""


def register_command(command: Command, *, replace: bool = False) -> Command:
    """Add ``command`` to :data:`COMMANDS`; ValueError if the name is taken (unless ``replace``)."""
    if command.name in COMMANDS and not replace:
        raise ValueError(f"An arraylayer command named {command.name!r} is already registered.")
    COMMANDS[command.name] = command
    return command


def _resolve_command(name: str, entry: Command | str) -> Command:
    if isinstance(entry, Command):
        return entry
    module_name, _, attribute = entry.partition(":")
    command = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(command, Command) or command.name != name:
        raise TypeError(f"COMMANDS[{name!r}] = {entry!r} does not name a Command called {name!r}.")
    COMMANDS[name] = command
    return command


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (and the hint to ask for help)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    from . import __version__

    parser = _Parser(
        prog=PROG,
        description="arraylayer: one set of dtype semantics for NumPy, JAX, PyTorch and TensorFlow.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=_Parser)
    for name, entry in list(COMMANDS.items()):
        command = _resolve_command(name, entry)
        command_parser = sub.add_parser(name, help=command.help, description=command.description or command.help)
        if command.arguments is not None:
            command.arguments(command_parser)
        command_parser.set_defaults(_run=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, usage errors: argparse has printed what it had to
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)
        return 2
    try:
        return int(args._run(args))
    except CommandError as error:
        print(f"{PROG} {args.command}: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `arraylayer table | head`: the reader left, which is fine
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


# ---------------------------------------------------------------------------------------------
# The promotion table
# ---------------------------------------------------------------------------------------------
_WEAK_CODE_OF_KIND: Final = {"int": "i*", "float": "f*", "complex": "c*"}
# A Python value of each weak kind, for NumPy's NEP 50 promotion (the value does not matter).
_WEAK_SAMPLE: Final = {"i*": 0, "f*": 0.0, "c*": 0j}
TABLE_FORMATS: Final = ("text", "markdown", "html")
_DEFAULTS_64: Final = {"int": "int64", "float": "float64", "complex": "complex128"}


@cache
def _short_codes() -> dict[str, str]:
    from .lattice import CODES

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

    from .lattice import CODES

    name = CODES[code]
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)  # type: ignore[call-overload]


def numpy_promotion(a: str, b: str) -> Any:
    """NumPy's answer for two of JAX's table codes, as an arraylayer Dtype (None if NumPy raises).

    Two dtypes: ``numpy.promote_types``. A weak code (``i*``, ``f*``, ``c*``) is a Python
    scalar: ``numpy.result_type`` with a Python value, which NumPy 2 treats as weak (NEP 50).
    bfloat16 is ml_dtypes' NumPy dtype.
    """
    import numpy as np

    from .dtypes import as_dtype

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
    from . import promotion
    from .defaults import use_default_dtypes

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


def promotion_table(policy: str | None = None, *, x64: bool = False) -> PromotionTable:
    """The promotion table of ``policy`` (default: the policy in force here).

    Rows and columns follow JAX's promotion table (:data:`arraylayer.lattice.CODES`: the fifteen dtypes,
    then the weak ``i*``, ``f*``, ``c*``). Weak results are materialised to the default
    dtypes in force, or to int64/float64/complex128 with ``x64=True`` (as JAX does with
    ``jax_enable_x64``), before they are compared with NumPy. Raises ValueError for an
    unknown policy.
    """
    import numpy as np

    from . import promotion
    from .errors import TypePromotionError
    from .lattice import CODES
    from .policies import POLICIES

    codes = tuple(CODES)
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
    from .promotion import promotion_policies

    parser.add_argument("--policy", metavar="NAME",
                        help=f"{', '.join(promotion_policies())} (default: the policy in force)")
    parser.add_argument("--format", dest="fmt", default="text", metavar="FORMAT",
                        help="text (default), markdown or html (a complete page)")
    parser.add_argument("--x64", action="store_true",
                        help="materialise weak results to int64/float64/complex128 instead of the defaults "
                             "in force (as JAX does with jax_enable_x64)")


def _table(args: argparse.Namespace) -> int:
    if args.fmt not in TABLE_FORMATS:
        raise CommandError(f"unknown format {args.fmt!r}; choose one of {', '.join(TABLE_FORMATS)}")
    try:
        table = promotion_table(args.policy, x64=args.x64)
    except ValueError as error:
        raise CommandError(str(error)) from None
    print(render_table(table, args.fmt))
    return 0


TABLE_COMMAND: Final = Command(
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


# ---------------------------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------------------------
@dataclass
class BackendReport:
    """What ``info`` found out about one backend."""

    name: str
    status: str  # "ok", "not installed", "import failed"
    version: str = ""
    devices: tuple[str, ...] = ()
    valid: tuple[str, ...] = ()
    problem: str = ""
    #: the backend's remedy text (each invalid dtype's name replaced by NUL) -> those dtypes
    remedies: dict[str, list[str]] = field(default_factory=dict)

    def invalid_lines(self) -> list[str]:
        """One sentence per distinct remedy, naming the invalid dtypes it applies to."""
        lines = []
        for template, dtypes in self.remedies.items():
            names = ", ".join(map(str, dtypes))
            lines.append(template.replace("\0", names) if "\0" in template else f"{names}: {template}")
        return lines


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def backend_report(name: str, installed: bool) -> BackendReport:
    """Load backend ``name`` and describe it; failures are described, never raised."""
    from .dtypes import all_dtypes
    from .registry import get_backend

    if not installed:
        try:
            get_backend(name)
        except Exception as error:  # noqa: BLE001 - any failure is reported
            return BackendReport(name, "not installed", problem=str(error).strip().splitlines()[0])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # frameworks warn on import; the report says what matters
            backend = get_backend(name)
            version = backend.version
            valid = tuple(str(d) for d in backend.valid_dtypes())
    except Exception as error:  # noqa: BLE001 - a framework that fails to import is reported
        return BackendReport(name, "import failed", problem=_one_line(error))
    report = BackendReport(name, "ok", version=version, valid=valid)
    try:
        report.devices = tuple(backend.devices())
    except Exception as error:  # noqa: BLE001
        report.problem = f"devices unavailable ({_one_line(error)})"
    for dtype in all_dtypes:
        if str(dtype) not in valid:
            template = re.sub(rf"\b{dtype}\b", "\0", backend.remedy(dtype))
            report.remedies.setdefault(template, []).append(str(dtype))
    return report


def _columns(rows: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [(indent + "  ".join(f"{text:<{w}}" for text, w in zip(row, widths, strict=True))).rstrip()
            for row in rows]


def _info_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", metavar="NAME", help="report only this backend")


def _info(args: argparse.Namespace) -> int:
    from . import __version__, defaults, devices, promotion, registry
    from .dtypes import all_dtypes
    from .logs import progress, quiet_framework_logs
    from .policies import POLICIES

    names = registry.available_backends()
    if args.backend is not None:
        if args.backend not in names:
            raise CommandError(f"unknown backend {args.backend!r}; registered backends: {', '.join(names)}")
        names = (args.backend,)
    try:
        installed = set(registry.installed_backends())
    except Exception:  # noqa: BLE001 - a broken third-party adapter: find out backend by backend
        installed = set(names)
    reports = []
    with quiet_framework_logs():  # the frameworks' start-up log lines are not our report
        for name in names:
            if name in installed:
                progress(f"loading {name} ...")
            reports.append(backend_report(name, name in installed))

    policy = promotion.get_dtype_promotion()
    device = devices.default_device()
    out = [f"arraylayer {__version__} (Python {platform.python_version()}, {sys.executable})", ""]
    out.append("Settings in force")
    out += _columns([
        ["promotion policy", f"{policy}: {POLICIES[policy].summary}"],
        ["default dtypes", f"int {defaults.default_int_dtype()}, uint {defaults.default_uint_dtype()}, "
                           f"float {defaults.default_float_dtype()}, complex {defaults.default_complex_dtype()}"],
        ["default device", device if device is not None else "each framework's own"],
        ["backend", registry.current_backend()],
    ])
    out += ["", "Backends"]
    rows = [["backend", "status", "version", "devices"]]
    for r in reports:
        rows.append([r.name, r.status, r.version or "-", ", ".join(r.devices) or "-"])
    out += _columns(rows)
    problems = [r for r in reports if r.problem]
    if problems:
        out += [""] + [f"  {r.name}: {r.problem}" for r in problems]

    loaded = [r for r in reports if r.status == "ok"]
    if loaded:
        out += ["", "Dtypes (yes: valid on the backend as installed and configured now)"]
        rows = [["dtype"] + [r.name for r in loaded]]
        for dtype in all_dtypes:
            rows.append([str(dtype)] + ["yes" if str(dtype) in r.valid else "no" for r in loaded])
        out += _columns(rows)
        out += ["", "Invalid dtypes, and what to do"]
        width = max(60, shutil.get_terminal_size().columns - 1)
        label = max(len(r.name) for r in loaded) + 4
        for r in loaded:
            for i, text in enumerate(r.invalid_lines() or ["none"]):
                head = f"  {r.name if i == 0 else ''}".ljust(label)
                out += textwrap.wrap(text, width, initial_indent=head, subsequent_indent=" " * label)
    print("\n".join(out))
    if args.backend is not None and reports[0].status != "ok":
        return 1
    return 0


INFO_COMMAND: Final = Command(
    name="info",
    help="installed backends, their devices and valid dtypes; the settings in force",
    description=(
        "Report arraylayer's installed backends (framework version, devices, valid and invalid "
        "dtypes), the promotion policy and the default dtypes in force. A backend whose framework "
        "fails to import is reported, not raised. Exit status 1 when the backend asked for with "
        "--backend cannot be used."
    ),
    arguments=_info_arguments,
    run=_info,
)


# ---------------------------------------------------------------------------------------------
# The table of commands, in the order `arraylayer --help` lists them. One entry per command:
# a Command, or "module:attribute" naming one (imported only when the parser is built).
# ---------------------------------------------------------------------------------------------
#: name -> :class:`Command`, or ``"module:attribute"`` naming one.
COMMANDS: dict[str, Command | str] = {
    "info": INFO_COMMAND,
    "table": TABLE_COMMAND,
    "support": "arraylayer.probe:SUPPORT_COMMAND",
    "probe": "arraylayer.probe:PROBE_COMMAND",
}
