"""The command line: ``arraylayer <command>`` or ``python -m arraylayer <command>``.

Commands
--------
``info``
    Installed backends (framework version, devices, valid and invalid dtypes), the
    promotion policy and the default dtypes in force (:mod:`arraylayer.cli.info`).
``table``
    The promotion table of a policy in the layout of JAX's promotion table, as text, Markdown
    or HTML (:mod:`arraylayer.cli.promotion_table`).

Adding a command
----------------
Every command is a :class:`Command` in the :data:`COMMANDS` table at the end of this
file, which is also the order of ``arraylayer --help``. A command that lives in another
module takes one entry there, ``"module:attribute"``, so that its module is imported only
when the parser is built::

    COMMANDS: dict[str, Command | str] = {
        "info": "arraylayer.cli.info:COMMAND",
        "table": "arraylayer.cli.promotion_table:COMMAND",
        "support": "arraylayer.support:COMMAND",     # the one line a new command adds
    }

where ``arraylayer/cli/probe/commands.py`` defines (importing ``Command`` from here)::

    COMMAND = Command(
        name="support",
        help="one line for `arraylayer --help`",
        arguments=add_support_arguments,   # (argparse.ArgumentParser) -> None, or None
        run=run_support,                   # (argparse.Namespace) -> int, the exit status
    )

Code that cannot edit this file (a plugin, a test) calls :func:`register_command`
instead. A command reports a usage error by raising :class:`CommandError`: the user
sees one line on stderr and the exit status is 2, never a traceback.

This module is the command table, the parser and :func:`main`; each command lives in the
module of its job.

The folder ``arraylayer/cli/`` owns the command line: the command table and parser (here), ``info``, the
promotion ``table`` and the ``probe``/``support`` commands with the prober (``probe/``).

May import: the base modules, ``dtypes``, ``runtime``, ``kernels``, ``support``, ``api``, the face
``arraylayer``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["Command", "CommandError", "COMMANDS", "register_command", "build_parser", "main"]

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
    from arraylayer import __version__

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
# The table of commands, in the order `arraylayer --help` lists them. One entry per command:
# a Command, or "module:attribute" naming one (imported only when the parser is built).
# ---------------------------------------------------------------------------------------------
#: name -> :class:`Command`, or ``"module:attribute"`` naming one.
COMMANDS: dict[str, Command | str] = {
    "info": "arraylayer.cli.info:COMMAND",
    "table": "arraylayer.cli.promotion_table:COMMAND",
    "support": "arraylayer.cli.probe:SUPPORT_COMMAND",
    "probe": "arraylayer.cli.probe:PROBE_COMMAND",
    "launch": "arraylayer.distributed.launch:COMMAND",
}
