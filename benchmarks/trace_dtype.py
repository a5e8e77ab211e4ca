"""How far a ``dtype`` argument travels: ``zeros((3,), dtype=D)`` traced call by call.

For each backend and each dtype named (default: float32 and float8_e4m3fn) it prints
- **calls**: every Python call made inside arraylayer by one (warm) ``zeros`` call;
- **steps**: the calls among them that receive the dtype or what it becomes (the ``Dtype``, its
  name, its low-precision ``Format``, the framework's native dtype), dunder methods left out;
- **files**: the distinct files those steps run in;
- **engine entries**: how often the steps enter the low-precision cast engine (``lowp/casts.py``,
  ``lowp/engine.py``) from outside it;
- **climbs**: steps that call from a lower layer into a higher one (the layers of
  docs/architecture.rst: the base modules, ``dtypes``, ``runtime`` and the adapters, ``kernels``,
  ``lowp``, ``support``, ``api``, ``array``, ``models``, the faces).

``python benchmarks/trace_dtype.py [--backend NAME ...] [--dtype NAME ...] [--list]``; ``--list``
prints each step. Issue 38's target: at most 35 steps and 4 climbs for a float8 dtype.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import arraylayer as al
from arraylayer.lowp.formats import FORMATS

ROOT = os.path.dirname(al.__file__)
#: folder (or base module) -> its layer, lowest first; an adapter runs at the runtime's level
LAYERS = {"errors": 0, "context": 0, "arguments": 0, "version": 0, "dtypes": 1, "runtime": 2, "backends": 2,
          "kernels": 3, "lowp": 4, "support": 5, "api": 6, "array": 7, "models": 8, "xp": 9, "integrations": 9,
          "cli": 9, "__init__": 9}
ENGINE = ("lowp/casts.py", "lowp/engine.py")


def layer(path: str) -> int:
    if path == "lowp/formats.py":  # the formats are data, below the dtype core
        return 0
    return LAYERS[path.split("/")[0].removesuffix(".py")]


def trace(backend: str, name: str) -> tuple[int, list[tuple[str, str]]]:
    """(calls, steps) of one ``zeros((3,), dtype=name)`` on ``backend``, after a warm-up call."""
    dtype = al.Dtype(name)
    with al.use_backend(backend):
        al.zeros((3,), dtype=dtype)
        adapter = al.get_backend(backend)
        held = (*adapter.valid_dtypes(), *adapter.low_precision_dtypes())
        marks = [dtype, name, FORMATS.get(name), adapter.as_native_dtype(dtype) if dtype in held else None]

        def carries(value: Any) -> bool:
            if isinstance(value, tuple):
                return any(map(carries, value))
            try:
                return any(value is m or (type(value) is type(m) and value == m) for m in marks if m is not None)
            except Exception:  # an array's __eq__, a framework object that refuses comparison
                return False

        calls: list[int] = [0]
        steps: list[tuple[str, str]] = []

        def profile(frame: Any, event: str, arg: Any) -> None:
            code = frame.f_code
            if event != "call" or not code.co_filename.startswith(ROOT):
                return
            calls[0] += 1
            if code.co_name.startswith("__") and code.co_name.endswith("__"):
                return
            arguments = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
            if any(carries(frame.f_locals.get(a)) for a in arguments):
                steps.append((os.path.relpath(code.co_filename, ROOT), code.co_name))

        sys.setprofile(profile)
        try:
            al.zeros((3,), dtype=dtype)
        finally:
            sys.setprofile(None)
    return calls[0], steps


def summary(steps: list[tuple[str, str]]) -> tuple[int, int, int]:
    """(files, engine entries, climbs) of a list of steps."""
    files = len({path for path, _ in steps})
    entries = sum(1 for (a, _), (b, _) in zip([("", "")] + steps, steps) if b in ENGINE and a not in ENGINE)
    climbs = sum(1 for (a, _), (b, _) in zip(steps, steps[1:]) if layer(b) > layer(a))
    return files, entries, climbs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", help="a backend (repeatable; default: every installed one)")
    parser.add_argument("--dtype", action="append", help="a dtype (repeatable; default: float32, float8_e4m3fn)")
    parser.add_argument("--list", action="store_true", help="print each step")
    options = parser.parse_args(argv)
    backends = options.backend or [b for b in al.installed_backends() if b != "dask"]
    print(f"{'backend':<11} {'dtype':<15} {'calls':>5} {'steps':>5} {'files':>5} {'engine':>6} {'climbs':>6}")
    for backend in backends:
        for name in options.dtype or ["float32", "float8_e4m3fn"]:
            calls, steps = trace(backend, name)
            files, entries, climbs = summary(steps)
            print(f"{backend:<11} {name:<15} {calls:>5} {len(steps):>5} {files:>5} {entries:>6} {climbs:>6}")
            if options.list:
                for path, function in steps:
                    print(f"    {path}:{function}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
