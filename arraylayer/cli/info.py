"""``arraylayer info``: the installed backends (framework version, devices, valid and invalid
dtypes), the promotion policy and the default dtypes in force."""

from __future__ import annotations

import argparse
import platform
import re
import shutil
import sys
import textwrap
import warnings
from dataclasses import dataclass, field
from typing import Final

from arraylayer.cli import Command, CommandError

__all__ = ["BackendReport", "backend_report", "COMMAND"]


@dataclass
class BackendReport:
    """What ``info`` found out about one backend."""

    name: str
    status: str  # "ok", "not installed", "import failed"
    version: str = ""
    devices: tuple[str, ...] = ()
    valid: tuple[str, ...] = ()
    #: the low-precision dtypes it stores (astype and creation only)
    stored: tuple[str, ...] = ()
    problem: str = ""
    #: the backend's remedy text (each invalid dtype's name replaced by NUL) -> those dtypes
    remedies: dict[str, list[str]] = field(default_factory=dict)

    def invalid_lines(self) -> list[str]:
        """One sentence per distinct remedy, naming the invalid dtypes it applies to."""
        lines = []
        for template, dtypes in self.remedies.items():
            names = ", ".join(dtypes)
            lines.append(template.replace("\0", names) if "\0" in template else f"{names}: {template}")
        return lines


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def backend_report(name: str, installed: bool) -> BackendReport:
    """Load backend ``name`` and describe it; failures are described, never raised."""
    from arraylayer.dtypes import all_dtypes, all_low_precision_dtypes
    from arraylayer.runtime.registry import get_backend

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
            stored = tuple(str(d) for d in backend.low_precision_dtypes())
    except Exception as error:  # noqa: BLE001 - a framework that fails to import is reported
        return BackendReport(name, "import failed", problem=_one_line(error))
    report = BackendReport(name, "ok", version=version, valid=valid, stored=stored)
    try:
        report.devices = tuple(backend.devices())
    except Exception as error:  # noqa: BLE001
        report.problem = f"devices unavailable ({_one_line(error)})"
    for dtype in (*all_dtypes, *all_low_precision_dtypes):
        if str(dtype) not in valid and str(dtype) not in stored:
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
    from arraylayer import __version__
    from arraylayer.dtypes import defaults, promotion
    from arraylayer.runtime import devices, registry
    from arraylayer.dtypes import all_dtypes, all_low_precision_dtypes
    from arraylayer.runtime.logs import progress, quiet_framework_logs
    from arraylayer.dtypes.policies import POLICIES

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
        out += ["", "Dtypes (yes: valid on the backend as installed and configured now; stored: a low-precision "
                    "dtype it holds: the element-wise, statistical, order and selection functions compute with it "
                    "by the low-precision rule, those that move elements (reshape, concat, take ...) move its "
                    "bits, diff subtracts moved elements, the others (matmul, linalg) refuse it; "
                    "`arraylayer support --low-precision` shows which)"]
        rows = [["dtype"] + [r.name for r in loaded]]
        for dtype in (*all_dtypes, *all_low_precision_dtypes):
            rows.append([str(dtype)] + ["yes" if str(dtype) in r.valid else "stored" if str(dtype) in r.stored
                                        else "no" for r in loaded])
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


COMMAND: Final = Command(
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
