"""Run the official Array API suite (``../shared/array-api-tests`` or ``$ARRAY_API_TESTS_DIR``)
against one backend's namespace.

    python tests/conformance/run.py numpy [--no-xfails] [--namespace arraylayer.xp.numpy] [pytest args]

``jax`` runs with ``jax_enable_x64``, ``jax-no-x64`` without it. The suite reads ``xp.float64``,
``xp.int64`` and ``xp.uint64`` when it loads, which that namespace lacks (absent attributes), so
``jax-no-x64`` runs with ``arraylayer.set_narrow_64bit(True)`` (the documented path for clients
that ask for 64 bits; see plugin.py) and tells the suite, through its own
``ARRAY_API_TESTS_SKIP_DTYPES``, that the 64-bit dtypes are not there (narrowed, ``xp.uint64``
is ``xp.uint32``, which the suite would refuse as a duplicate). The xfails file of the
configuration (``tests/conformance/xfails-<config>.txt``) is passed unless ``--no-xfails``.
The suite's cache, hypothesis database and bytecode stay out of the suite's folder.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = Path(os.environ.get("ARRAY_API_TESTS_DIR", ROOT.parent / "shared" / "array-api-tests")).resolve()
CONFIGS = {  # configuration -> (backend, extra environment)
    "numpy": ("numpy", {}),
    "dask": ("dask", {}),
    "jax": ("jax", {"JAX_ENABLE_X64": "1"}),
    "jax-no-x64": ("jax", {"JAX_ENABLE_X64": "0", "ARRAYLAYER_NARROW_64BIT": "1",
                           "ARRAY_API_TESTS_SKIP_DTYPES": "int64,uint64,float64,complex128"}),
    "torch": ("torch", {}),
    "tensorflow": ("tensorflow", {}),
}
OPTIONS = ("--max-examples", "10", "--derandomize", "--hypothesis-disable-deadline")


def namespace_of(backend: str) -> str:
    """The Array namespace of ``backend`` (``arraylayer.xp.arrays.<backend>``) where this checkout has
    one, else the native-array namespace ``arraylayer.xp.<backend>``."""
    if (ROOT / "arraylayer" / "xp" / "arrays" / f"{backend}.py").is_file():
        return f"arraylayer.xp.arrays.{backend}"
    return f"arraylayer.xp.{backend}"


def plain_xfails(path: Path) -> Path:
    """The xfails file as the suite reads it: our files end each test id with ``  # reason``, which
    the suite would take as part of the id, so a copy without the reasons goes to a temporary file."""
    ids = [line.split("  #", 1)[0].strip() for line in path.read_text().splitlines()]
    plain = Path(tempfile.mkdtemp(prefix="arraylayer-xfails-")) / path.name
    plain.write_text("".join(f"{i}\n" for i in ids if i and not i.startswith("#")))
    return plain


def command(config: str, *, xfails: bool, namespace: str | None, extra: list[str]) -> tuple[list[str], dict[str, str]]:
    backend, env = CONFIGS[config]
    env = {**os.environ, **env, "ARRAY_API_TESTS_MODULE": namespace or namespace_of(backend),
           "PYTHONDONTWRITEBYTECODE": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    args = [sys.executable, "-m", "pytest", str(SUITE / "array_api_tests"), "--rootdir", str(SUITE),
            "-p", "no:cacheprovider", "-p", "tests.conformance.plugin", "-q", "--tb=no", "-rf", "--disable-warnings", *OPTIONS]
    if xfails:
        args += ["--xfails-file", str(plain_xfails(HERE / f"xfails-{config}.txt"))]
    return args + extra, env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("--no-xfails", action="store_true")
    parser.add_argument("--namespace", help="module to test instead of arraylayer.xp[.arrays].<backend>")
    args, pytest_args = parser.parse_known_args(argv)
    if not (SUITE / "array_api_tests").is_dir():
        parser.error(f"no Array API suite at {SUITE}: set ARRAY_API_TESTS_DIR to a checkout of array-api-tests "
                     f"(with its array-api submodule).")
    pytest_args = [a for a in pytest_args if a != "--"]
    cmd, env = command(args.config, xfails=not args.no_xfails, namespace=args.namespace, extra=pytest_args)
    return subprocess.call(cmd, env=env, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
