"""Run the official Array API suite (``../shared/array-api-tests`` or ``$ARRAY_API_TESTS_DIR``)
against one backend's namespace.

    python tests/conformance/run.py numpy [--no-xfails] [--namespace arraylayer.xp.numpy] [pytest args]

``jax`` runs with ``jax_enable_x64``, ``jax-no-x64`` without it. The xfails file of the
configuration (``tests/conformance/xfails-<config>.txt``) is passed unless ``--no-xfails``.
The suite's cache, hypothesis database and bytecode stay out of the suite's folder.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = Path(os.environ.get("ARRAY_API_TESTS_DIR", ROOT.parent / "shared" / "array-api-tests")).resolve()
CONFIGS = {  # configuration -> (backend, extra environment)
    "numpy": ("numpy", {}),
    "jax": ("jax", {"JAX_ENABLE_X64": "1"}),
    "jax-no-x64": ("jax", {"JAX_ENABLE_X64": "0"}),
    "torch": ("torch", {}),
    "tensorflow": ("tensorflow", {}),
}
OPTIONS = ("--max-examples", "10", "--derandomize", "--hypothesis-disable-deadline")


def namespace_of(backend: str) -> str:
    """The Array namespace of ``backend`` when it exists, else the native-array namespace."""
    try:
        __import__(f"arraylayer.xp.arrays.{backend}")
    except ImportError:
        return f"arraylayer.xp.{backend}"
    return f"arraylayer.xp.arrays.{backend}"


def command(config: str, *, xfails: bool, namespace: str | None, extra: list[str]) -> tuple[list[str], dict[str, str]]:
    backend, env = CONFIGS[config]
    env = {**os.environ, **env, "ARRAY_API_TESTS_MODULE": namespace or namespace_of(backend),
           "PYTHONDONTWRITEBYTECODE": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    args = [sys.executable, "-m", "pytest", str(SUITE / "array_api_tests"), "--rootdir", str(SUITE),
            "-p", "no:cacheprovider", "-p", "tests.conformance.plugin", "-q", "--tb=no", "-rf", "--disable-warnings", *OPTIONS]
    if xfails:
        args += ["--xfails-file", str(HERE / f"xfails-{config}.txt")]
    return args + extra, env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("--no-xfails", action="store_true")
    parser.add_argument("--namespace", help="module to test instead of arraylayer.xp[.arrays].<backend>")
    args, pytest_args = parser.parse_known_args(argv)
    pytest_args = [a for a in pytest_args if a != "--"]
    cmd, env = command(args.config, xfails=not args.no_xfails, namespace=args.namespace, extra=pytest_args)
    return subprocess.call(cmd, env=env, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
