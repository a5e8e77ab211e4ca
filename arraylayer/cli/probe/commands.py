"""``python -m arraylayer probe`` and ``python -m arraylayer support`` (see :mod:`arraylayer.cli`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from typing import Any, Final

from arraylayer.runtime.logs import progress, quiet_framework_logs
from arraylayer.support import MATRIX_FORMATS, function_name, render_matrix, support_matrix
from arraylayer.cli.probe.lowp import probe_low_precision
from arraylayer.cli.probe.report import compare, format_differences, load_backend, probe_report
from arraylayer.cli.probe.run import jax_x64, probe

__all__ = ["DEFAULT_OUTPUT", "PROBE_COMMAND", "SUPPORT_COMMAND"]


def _backend_names(name: str | None) -> list[str]:
    from arraylayer.runtime import registry
    from arraylayer.cli import CommandError

    if name is None:
        return list(registry.installed_backends())
    if name not in registry.available_backends():
        raise CommandError(f"unknown backend {name!r}; registered backends: {', '.join(registry.available_backends())}")
    if name not in registry.installed_backends():
        raise CommandError(f"the {name!r} backend is not installed here")
    return [name]


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", metavar="NAME", help="only this backend (default: every installed one)")
    parser.add_argument("--x64", action="store_true",
                        help="turn jax_enable_x64 on for the run, so that JAX's 64-bit dtypes are included")


DEFAULT_OUTPUT: Final = "arraylayer-probe.json"


def _probe_arguments(parser: argparse.ArgumentParser) -> None:
    _common_arguments(parser)
    parser.add_argument("--output", metavar="FILE", default=DEFAULT_OUTPUT,
                        help=f"write the JSON here ('-': standard output; default: {DEFAULT_OUTPUT})")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 when the declarations differ from the probe")


def _run_probe(args: argparse.Namespace) -> int:
    from arraylayer import __version__

    names = _backend_names(args.backend)
    reports, texts, differ = {}, [], False
    with jax_x64(True) if args.x64 else contextlib.nullcontext(), quiet_framework_logs():
        for name in names:
            progress(f"probing {name}: every kernel on every dtype ...")
            result = probe(load_backend(name))
            progress(f"probed {name} in {result.seconds:.1f} s")
            report = probe_report(result)
            reports[name] = report
            cells = sum(len(c) for c in result.cells.values())
            failing = sum(len(k["unsupported"]) for k in report["kernels"].values())
            texts.append(f"{name} {result.version}: {cells} cells, {failing} unsupported, "
                         f"{len(result.missing)} kernels missing, {result.seconds:.1f} s")
            if report["differences"]:
                differ = True
                texts.append(format_differences(result, compare(result)))
            progress(f"probing {name}: the public functions on every low-precision dtype ...")
            called, lowp_differences = probe_low_precision(name)
            report["low_precision"] = {"cells": called, "differences": [
                {"function": d.function, "dtype": str(d.dtype), "declared": d.declared, "observed": d.observed}
                for d in lowp_differences]}
            texts.append(f"{name} low precision: {called} cells called, {len(lowp_differences)} differ from "
                         f"arraylayer.support.low_precision_support")
            texts += [f"  {d.function} {d.dtype}: declared {d.declared}, {d.observed}" for d in lowp_differences]
            differ = differ or bool(lowp_differences)
    document = json.dumps({"arraylayer": __version__, "backends": reports}, indent=1, sort_keys=False)
    if args.output == "-":  # the JSON is the output; the summary goes to standard error
        print(document)
        print("\n".join(texts), file=sys.stderr)
    else:  # a summary to read, the JSON (tens of thousands of lines) to a file
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(document + "\n")
        print("\n".join(texts + [f"the observed support, as JSON, written to {args.output}"]))
    return 1 if args.check and differ else 0


def _support_arguments(parser: argparse.ArgumentParser) -> None:
    _common_arguments(parser)
    parser.add_argument("--format", dest="fmt", default="text", metavar="FORMAT",
                        help="text (default), markdown or html (a complete page)")
    parser.add_argument("--function", dest="functions", action="append", metavar="NAME",
                        help="only this function (repeatable; e.g. add, linalg.det)")
    parser.add_argument("--low-precision", dest="low_precision", action="store_true",
                        help="add the columns of the low-precision dtypes (float8 ... int2): computed by the "
                             "rule, stored only, or not held")


_PAGE_CSS: Final = """\
table.al-support { border-collapse: collapse; font-family: monospace; margin: 0.5em 0 1.5em; }
table.al-support caption { caption-side: top; text-align: left; padding-bottom: 0.3em; }
table.al-support th, table.al-support td { border: 1px solid #d0d0d0; padding: 1px 5px; text-align: center; }
table.al-support th[scope=row] { text-align: left; }
td.supported { background: #e6f4e6; } td.unsupported, td.missing { background: #f8dcdc; }
td.unverified { background: #fff2cc; } td.undefined, td.invalid { color: #888; }"""


def _run_support(args: argparse.Namespace) -> int:
    from arraylayer.cli import CommandError

    if args.fmt not in MATRIX_FORMATS:
        raise CommandError(f"unknown format {args.fmt!r}; choose one of {', '.join(MATRIX_FORMATS)}")
    try:
        functions = None if not args.functions else [function_name(f) for f in args.functions]
    except ValueError as error:
        raise CommandError(str(error)) from None
    parts = []
    with jax_x64(True) if args.x64 else contextlib.nullcontext(), quiet_framework_logs():
        for name in _backend_names(args.backend):
            progress(f"loading {name} ...")
            parts.append(render_matrix(support_matrix(load_backend(name), functions, args.low_precision), args.fmt))
    separator = "\n\n"
    if args.fmt == "html":
        body = separator.join(parts)
        print('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
              f"<title>arraylayer dtype support</title>\n<style>\n{_PAGE_CSS}\n</style>\n</head>\n<body>\n"
              f"{body}\n</body>\n</html>")
    else:
        print(separator.join(parts))
    return 0


def _command(**fields: Any) -> Any:
    from arraylayer.cli import Command

    return Command(**fields)


PROBE_COMMAND: Final = _command(
    name="probe",
    help="run every kernel on every valid dtype; write the observed support as JSON",
    description=(
        "Call every kernel of every installed backend (or --backend NAME) on small sample inputs of "
        "every dtype the api layer may send it and the backend holds, compare dtype and values with "
        "NumPy, and write the observed support (per kernel and per public function) as JSON to a file "
        f"(--output, default {DEFAULT_OUTPUT}; '-' for standard output). A summary per backend and the "
        "cells where the kernel packages' declarations say otherwise are printed; --check makes those "
        "fail the command (exit status 1)."
    ),
    arguments=_probe_arguments,
    run=_run_probe,
)

SUPPORT_COMMAND: Final = _command(
    name="support",
    help="print the function x dtype support matrix, from the declarations",
    description=(
        "Print, per installed backend (or --backend NAME), which input dtypes every array function "
        "supports: generated from the kernel packages' declarations for the installed framework "
        "versions and from the Array API's definitions, under the default dtypes in force."
    ),
    arguments=_support_arguments,
    run=_run_support,
)
