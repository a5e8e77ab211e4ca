"""Run the official Array API suite against one or more backends' namespaces.

    python tests/conformance/run.py numpy [jax ...] [--no-xfails] [--namespace arraylayer.xp.numpy] [pytest args]
    python tests/conformance/run.py torch --no-xfails --max-examples 50 --hypothesis-seed=N  (random, seeded)

Where the suite is: ``$ARRAY_API_TESTS_DIR`` when set (then it must be there: CI sets it, so CI never
skips the suite); else ``../shared/array-api-tests`` beside the clone; else a copy fetched once, with
git, at the pinned commits below into ``.cache/array-api-tests-<commit>``. Where none of these can be
had (no network), one line says where to get the suite and the command exits 0 without running it.

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
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# The suite and the standard's repository (the suite's ``array-api`` submodule), at the commits tested.
SUITE_URL, SUITE_COMMIT = "https://github.com/data-apis/array-api-tests", "55fcc60179efa2680ddd6cd926ddf17b83530e2b"
SPEC_URL, SPEC_COMMIT = "https://github.com/data-apis/array-api", "5f847a3858875c682ae901aa22b0413bf24be9da"
BESIDE = ROOT.parent / "shared" / "array-api-tests"
FETCHED = ROOT / ".cache" / f"array-api-tests-{SUITE_COMMIT[:12]}"
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


def _options(extra: list[str]) -> tuple[str, ...]:
    """OPTIONS, less ``--derandomize`` where ``extra`` seeds hypothesis (``--hypothesis-seed=N``: a
    random run that N repeats); a ``--max-examples`` in ``extra`` comes later and wins."""
    if any(a.startswith("--hypothesis-seed") for a in extra):
        return tuple(o for o in OPTIONS if o != "--derandomize")
    return OPTIONS


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


def _has_suite(path: Path) -> bool:
    return (path / "array_api_tests").is_dir() and (path / "array-api" / "spec").is_dir()


def fetch(destination: Path) -> str | None:
    """Clone the suite and its ``array-api`` submodule at the pinned commits into ``destination``;
    None when done, else why not (git missing, no network: it fails within seconds, never prompts)."""
    git = shutil.which("git")
    if git is None:
        return "git is not installed"
    partial = destination.with_name(destination.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    steps = [(SUITE_URL, SUITE_COMMIT, partial), (SPEC_URL, SPEC_COMMIT, partial / "array-api")]
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    for url, commit, where in steps:
        for args in (["init", "-q", str(where)], ["-C", str(where), "fetch", "-q", "--depth", "1", url, commit],
                     ["-C", str(where), "checkout", "-q", "FETCH_HEAD"]):
            try:
                done = subprocess.run([git, *args], env=env, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                done = None
            if done is None or done.returncode:
                shutil.rmtree(partial, ignore_errors=True)
                lines = [] if done is None else (done.stderr or done.stdout).strip().splitlines()
                return lines[-1] if lines else f"git could not fetch {url} at {commit}"
    partial.rename(destination)
    return None


def locate() -> tuple[Path | None, str]:
    """The suite's folder (None if there is none) and, when there is none, the one line that says why
    and what to do."""
    if os.environ.get("ARRAY_API_TESTS_DIR"):
        path = Path(os.environ["ARRAY_API_TESTS_DIR"]).resolve()
        if _has_suite(path):
            return path, ""
        return None, (f"ARRAY_API_TESTS_DIR={path} holds no Array API suite (array_api_tests/ and "
                      f"array-api/spec/): clone {SUITE_URL} at {SUITE_COMMIT} with its array-api submodule there")
    for path in (BESIDE, FETCHED):
        if _has_suite(path):
            return path, ""
    why = fetch(FETCHED)
    if why is None:
        return FETCHED, ""
    return None, (f"official Array API suite NOT RUN: not at {BESIDE} and fetching it failed ({why}); clone "
                  f"{SUITE_URL} at {SUITE_COMMIT} (and its array-api submodule) and set ARRAY_API_TESTS_DIR to it")


def command(suite: Path, config: str, *, xfails: bool, namespace: str | None, extra: list[str]) -> tuple[list[str], dict[str, str]]:
    backend, env = CONFIGS[config]
    env = {**os.environ, **env, "ARRAY_API_TESTS_MODULE": namespace or namespace_of(backend),
           "PYTHONDONTWRITEBYTECODE": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    args = [sys.executable, "-m", "pytest", str(suite / "array_api_tests"), "--rootdir", str(suite),
            "-p", "no:cacheprovider", "-p", "tests.conformance.plugin", "-q", "--tb=no", "-rf", "--disable-warnings",
            *_options(extra)]
    if xfails:
        args += ["--xfails-file", str(plain_xfails(HERE / f"xfails-{config}.txt"))]
    return args + extra, env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+", metavar="config", choices=sorted(CONFIGS))
    parser.add_argument("--no-xfails", action="store_true")
    parser.add_argument("--namespace", help="module to test instead of arraylayer.xp[.arrays].<backend>")
    args, pytest_args = parser.parse_known_args(argv)
    suite, why = locate()
    if suite is None:
        print(f"arraylayer: {why}", file=sys.stderr, flush=True)
        return 2 if os.environ.get("ARRAY_API_TESTS_DIR") else 0
    pytest_args = [a for a in pytest_args if a != "--"]
    failed = []
    for config in args.configs:
        print(f"== the Array API suite on {config} ({suite}) ==", flush=True)
        cmd, env = command(suite, config, xfails=not args.no_xfails, namespace=args.namespace, extra=pytest_args)
        if subprocess.call(cmd, env=env, cwd=ROOT):
            failed.append(config)
    if failed:
        print(f"the Array API suite failed on {', '.join(failed)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
