"""Sessions: ``main`` (the main job), ``tests`` (CI's, with ``docs``: the whole suite, then the official
Array API suite and the client libraries, in one environment), ``tests-<backend>``, ``lint``, ``demo``,
``bench``, ``docs``, and ``conformance`` and ``clients`` to run those two parts alone.

Every install goes through constraints.txt, which pins the frameworks (torch==2.13.0 included:
an unpinned torch would pull several GB of CUDA packages).
"""

from __future__ import annotations

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
CONSTRAINTS = ("-c", "constraints.txt")
BACKEND_EXTRAS = {"numpy": "", "jax": "jax", "torch": "torch", "tensorflow": "tensorflow", "dask": "dask"}


# Everything CI's run needs: the frameworks, the test tools, the client libraries, the suite's plugins,
# and what the main job uses (scikit-learn's digits, tqdm, matplotlib), which tests/test_train_cnn.py runs.
EVERYTHING = ".[all,test,clients,conformance,examples]"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """CI's run, in one environment: the whole test suite on every backend, then the official Array
    API suite on every configuration (``conformance``) and the client libraries (``clients``).
    Arguments go to the first pytest run only (``nox -s tests -- -k promotion``)."""
    session.install(*CONSTRAINTS, "-e", EVERYTHING)
    session.run("pytest", "--ignore=tests/clients", *session.posargs)
    if not session.posargs:
        run_conformance(session, [])
        run_clients(session, [])


@nox.session(python=PYTHON, name="tests-backend")
@nox.parametrize("backend", list(BACKEND_EXTRAS))
def tests_backend(session: nox.Session, backend: str) -> None:
    """The suite with only one backend installed and selected."""
    extras = ",".join(filter(None, [BACKEND_EXTRAS[backend], "test"]))
    session.install(*CONSTRAINTS, "-e", f".[{extras}]")
    session.run("pytest", "--backend", backend, *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install(*CONSTRAINTS, "ruff")
    session.run("ruff", "check", "arraylayer", "tests", "benchmarks", "examples", "noxfile.py")


@nox.session(python=PYTHON)
def main(session: nox.Session) -> None:
    """The main job: what is installed (``arraylayer info``), then one small CNN written once with
    arraylayer, initialised from one seed and trained with Adam on scikit-learn's digits under
    jax.jit, torch.compile and tf.function (numpy: inference), with progress bars, test accuracy per
    backend, a plot of the loss curves (cnn_losses.png) and a check that the backends' losses agree
    (examples/train_cnn.py exits non-zero if they do not). Arguments go to the script."""
    session.install(*CONSTRAINTS, "-e", ".[all,examples]")
    session.run("arraylayer", "info")
    session.run("python", "examples/train_cnn.py", *session.posargs)


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """A tour of the promotion rules: the tables, weak scalars, the same calls on every backend."""
    session.install(*CONSTRAINTS, "-e", ".[all]")
    session.run("python", "examples/demo.py")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Every benchmark; figures printed and written to benchmarks/results/ (core, ops, random,
    model, dask .json). The dask one reduces 32 GiB out of core (about 10 minutes on 2 cores).

    ``nox -s bench -- --quick`` passes ``--quick`` to every script (a smoke run of each); the other
    arguments (``--backend NAME``, ``--output PATH``) go to bench_ops.py only.
    """
    session.install(*CONSTRAINTS, "-e", ".[all]")
    quick = [arg for arg in session.posargs if arg == "--quick"]
    session.run("python", "benchmarks/bench_core.py", *quick)
    session.run("python", "benchmarks/bench_ops.py", *session.posargs)
    for script in ("bench_random.py", "bench_model.py", "bench_dask.py"):
        session.run("python", f"benchmarks/{script}", *quick)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """The documentation, into docs/_build/html; warnings are errors."""
    session.install(*CONSTRAINTS, "-e", ".[all,docs]")
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html", *session.posargs)


CONFORMANCE_CONFIGS = ("numpy", "jax", "jax-no-x64", "torch", "tensorflow", "dask")
CONFORMANCE_DEFAULT = CONFORMANCE_CONFIGS


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """The official Array API suite (../shared/array-api-tests, or $ARRAY_API_TESTS_DIR) against each
    backend's Array namespace (jax with and without x64), each with its committed xfails file
    (tests/conformance/xfails-<config>.txt). ``nox -s conformance -- torch --no-xfails`` runs one
    configuration without xfails; tests/conformance/run.py says more."""
    session.install(*CONSTRAINTS, "-e", EVERYTHING)
    run_conformance(session, session.posargs)


def run_conformance(session: nox.Session, arguments: list[str]) -> None:
    configs = [a for a in arguments if a in CONFORMANCE_CONFIGS] or list(CONFORMANCE_DEFAULT)
    options = [a for a in arguments if a not in CONFORMANCE_CONFIGS]
    for config in configs:
        session.run("python", "tests/conformance/run.py", config, *options)


@nox.session(python=PYTHON)
def clients(session: nox.Session) -> None:
    """scikit-learn, SciPy, array-api-extra and einops run on arraylayer.Array of every backend
    (tests/clients/), their results compared with the same library on NumPy arrays; the summary
    prints passed/failed/xfailed per library and backend. SciPy reads SCIPY_ARRAY_API at import."""
    session.install(*CONSTRAINTS, "-e", EVERYTHING)
    run_clients(session, session.posargs)


def run_clients(session: nox.Session, arguments: list[str]) -> None:
    session.run("pytest", "tests/clients", *arguments, env={"SCIPY_ARRAY_API": "1", "TF_CPP_MIN_LOG_LEVEL": "3"})


@nox.session(python=PYTHON)
def badinput(session: nox.Session) -> None:
    """The full bad-input campaign (tests/test_bad_input.py): every case of every family on every
    backend, the figures printed per family and backend (``nox -s badinput -- A -v`` runs family A
    and lists each failure), then the suite's properties with many more examples."""
    session.install(*CONSTRAINTS, "-e", EVERYTHING)
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "AL_BAD_INPUT_EXAMPLES": "2000"}
    session.run("python", "tests/test_bad_input.py", *session.posargs, env=env)
    if not session.posargs:
        session.run("pytest", "tests/test_bad_input.py", "-p", "no:cacheprovider", env=env)
