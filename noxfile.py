"""Sessions: ``main`` (the main job), ``transformer`` (its second model alone), ``tests`` (CI's, with
``docs``: the whole suite, then the official Array API suite and the client libraries),
``tests-<backend>``, ``lint``, ``demo``, ``bench``, ``docs``, ``conformance`` and ``clients`` to run those
two parts alone, ``badinput`` (the full bad-input campaign), ``support_models`` (every support answer of
the model toolkit checked by a call on every dtype) and ``lowp`` (the low-precision casts over
every format, every float16/bfloat16 pattern and 2**22 float32 ones), ``dispatch`` (the compiled and the
pure-Python dispatch compared on every element-wise function and operator), ``triton`` (torch's Triton
casts in Triton's interpreter, in an environment of its own: part of CI's test command), ``distributed``
(the transformer data-parallel on 2 processes against one, on jax, torch and tensorflow).

``main``, ``transformer``, ``tests``, ``docs``, ``demo``, ``bench``, ``conformance``, ``clients``, ``badinput``,
``support_models``, ``lowp``, ``dispatch`` and ``distributed`` share ONE environment, ``.nox/shared`` (every framework, CPU builds: about 3.1 GB), created
on first use and updated by pip on each run; nox's own per-session environments are used only by ``tests-<backend>`` (one
framework each), ``triton`` and ``lint``. Every install goes through constraints.txt, which pins the frameworks
(torch==2.13.0 included: an unpinned torch would pull several GB of CUDA packages).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
CONSTRAINTS = ("-c", "constraints.txt")
BACKEND_EXTRAS = {"numpy": "", "jax": "jax", "torch": "torch", "tensorflow": "tensorflow", "dask": "dask"}


# Everything CI's run needs: the frameworks, the test tools, the client libraries, the suite's plugins,
# what the main job uses (scikit-learn's digits, tqdm, matplotlib) and Sphinx: one environment for all.
EVERYTHING = ".[all,test,clients,conformance,examples,docs]"
SHARED = Path(".nox") / "shared"
_updated: list[bool] = []  # pip runs once per nox invocation (``-s tests docs`` installs once)
# pytest-xdist workers for the main pytest run: one per core, at most 4 (each imports every framework,
# about 2 GB); ``nox -s tests -- -n 0`` runs in one process.
WORKERS = str(max(1, min(4, os.cpu_count() or 1)))


def shared(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    """Run ``python *args`` in the shared environment, creating and updating it first when needed."""
    python = SHARED / "bin" / "python"
    if not python.exists():
        interpreter = shutil.which(f"python{PYTHON}") or sys.executable
        session.log(f"creating the shared environment {SHARED} with {interpreter} (about 3.1 GB once installed)")
        session.run(interpreter, "-m", "venv", str(SHARED), external=True)
    if not _updated:
        session.run(str(python), "-m", "pip", "install", "-q", *CONSTRAINTS, "-e", EVERYTHING, external=True)
        _updated.append(True)
    variables = {"VIRTUAL_ENV": str(SHARED.resolve()),
                 "PATH": os.pathsep.join([str(python.parent.resolve()), os.environ.get("PATH", "")]), **(env or {})}
    session.run(str(python), *args, env=variables, external=True)


@nox.session(python=False)
def tests(session: nox.Session) -> None:
    """CI's run: the whole test suite on every backend, then the official Array API suite on every
    configuration (``conformance``) and the client libraries (``clients``). Arguments go to the
    first pytest run only (``nox -s tests -- -k promotion``)."""
    shared(session, "-m", "pytest", "--ignore=tests/clients", "-n", WORKERS, *session.posargs)
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


@nox.session(python=False)
def main(session: nox.Session) -> None:
    """The main job: what is installed (``arraylayer info``), then one small CNN written once with
    arraylayer, initialised from one seed and trained with Adam on scikit-learn's digits under
    jax.jit, torch.compile and tf.function (numpy: inference), with progress bars, test accuracy per
    backend, a plot of the loss curves (cnn_losses.png) and a check that the backends' losses agree
    (examples/train_cnn.py exits non-zero if they do not); then the second model
    (``transformer``) and the recurrent one (``gru``). Arguments go to train_cnn.py."""
    shared(session, "-m", "arraylayer", "info")
    shared(session, "examples/train_cnn.py", *session.posargs)
    shared(session, "examples/train_transformer.py")
    shared(session, "examples/train_gru.py")


@nox.session(python=False)
def gru(session: nox.Session) -> None:
    """The main job's recurrent model alone: a character-level GRU over ``arraylayer.scan`` trained on
    jax (jax.jit), torch and tensorflow (tf.function) from one seed, the held-out loss of each scored
    on NumPy; exits non-zero unless the losses agree (examples/train_gru.py). Arguments go to the script."""
    shared(session, "examples/train_gru.py", *session.posargs)


@nox.session(python=False)
def distributed(session: nox.Session) -> None:
    """The main job's transformer data-parallel on 2 processes (arraylayer's launcher) on jax, torch and
    tensorflow, each against one process on the whole batch: exits non-zero unless the losses and
    parameters agree (examples/train_distributed.py; about 7 minutes on 2 cores). Arguments go to the script."""
    shared(session, "examples/train_distributed.py", *session.posargs)


@nox.session(python=False)
def transformer(session: nox.Session) -> None:
    """The main job's second model alone: a two-layer character-level transformer written once with
    arraylayer, trained with a warm-up + cosine schedule and gradient clipping, each run moved mid-way
    from one backend to the next through a checkpoint (jax -> torch -> tensorflow -> jax; jax.jit,
    torch eager, tf.function), with progress bars, greedy samples, a plot (transformer_losses.png)
    and a check that the runs agree (examples/train_transformer.py exits non-zero if they do not).
    Arguments go to the script (``nox -s transformer -- --eager none`` compiles torch too: minutes).
    nox captures nothing here: the script's standard error is the terminal's, so the bars show."""
    shared(session, "examples/train_transformer.py", *session.posargs)


@nox.session(python=False)
def demo(session: nox.Session) -> None:
    """A tour of the promotion rules: the tables, weak scalars, the same calls on every backend."""
    shared(session, "examples/demo.py")


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Every benchmark; figures printed and written to benchmarks/results/ (core, ops, random, transformer,
    gru, model, dask .json). The dask one reduces 32 GiB out of core (about 10 minutes on 2 cores).

    ``nox -s bench -- --quick`` passes ``--quick`` to every script (a smoke run of each); the other
    arguments (``--backend NAME``, ``--output PATH``) go to bench_ops.py only.
    """
    quick = [arg for arg in session.posargs if arg == "--quick"]
    shared(session, "benchmarks/bench_core.py", *quick)
    shared(session, "benchmarks/bench_ops.py", *session.posargs)
    for script in ("bench_random.py", "bench_model.py", "bench_transformer.py", "bench_gru.py", "bench_dask.py"):
        shared(session, f"benchmarks/{script}", *quick)


@nox.session(python=False)
def docs(session: nox.Session) -> None:
    """The documentation, into docs/_build/html; warnings are errors."""
    shared(session, "-m", "sphinx", "-q", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html",
           *session.posargs)


CONFORMANCE_CONFIGS = ("numpy", "jax", "jax-no-x64", "torch", "tensorflow", "dask")
CONFORMANCE_DEFAULT = CONFORMANCE_CONFIGS


@nox.session(python=False)
def conformance(session: nox.Session) -> None:
    """The official Array API suite ($ARRAY_API_TESTS_DIR, ../shared/array-api-tests, or fetched) against each
    backend's Array namespace (jax with and without x64), each with its committed xfails file
    (tests/conformance/xfails-<config>.txt). ``nox -s conformance -- torch --no-xfails`` runs one
    configuration without xfails; tests/conformance/run.py says more."""
    run_conformance(session, session.posargs)


def run_conformance(session: nox.Session, arguments: list[str]) -> None:
    """Every configuration in one run.py call: where the suite is neither given, beside the clone nor
    fetchable, run.py says so in one line and exits 0 (with ARRAY_API_TESTS_DIR set, as CI does, it fails)."""
    configs = [a for a in arguments if a in CONFORMANCE_CONFIGS] or list(CONFORMANCE_DEFAULT)
    options = [a for a in arguments if a not in CONFORMANCE_CONFIGS]
    shared(session, "tests/conformance/run.py", *configs, *options)


@nox.session(python=False)
def clients(session: nox.Session) -> None:
    """scikit-learn, SciPy, array-api-extra and einops run on arraylayer.Array of every backend
    (tests/clients/), their results compared with the same library on NumPy arrays; the summary
    prints passed/failed/xfailed per library and backend. SciPy reads SCIPY_ARRAY_API at import."""
    run_clients(session, session.posargs)


def run_clients(session: nox.Session, arguments: list[str]) -> None:
    # on xdist's workers too (the same results and per-backend summary; 6.5 against 11 minutes on 2 cores)
    shared(session, "-m", "pytest", "tests/clients", "-n", WORKERS, *arguments,
           env={"SCIPY_ARRAY_API": "1", "TF_CPP_MIN_LOG_LEVEL": "3"})


@nox.session(python=False)
def badinput(session: nox.Session) -> None:
    """The full bad-input campaign (tests/test_bad_input.py): every case of every family on every
    backend, the figures printed per family and backend (``nox -s badinput -- A -v`` runs family A
    and lists each failure), then the suite's properties with many more examples."""
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "AL_BAD_INPUT_EXAMPLES": "2000"}
    shared(session, "tests/test_bad_input.py", *session.posargs, env=env)
    if not session.posargs:
        shared(session, "-m", "pytest", "tests/test_bad_input.py", "-p", "no:cacheprovider", env=env)


@nox.session(python=False)
def support_models(session: nox.Session) -> None:
    """Every support answer of the model toolkit, the math ops and the control flow against what a
    call does, on every dtype and installed backend (tests/test_support_models.py with
    AL_SUPPORT_MODELS_ALL=1; the normal run samples the dtypes)."""
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "AL_SUPPORT_MODELS_ALL": "1"}
    shared(session, "-m", "pytest", "tests/test_support_models.py", "-p", "no:cacheprovider", *session.posargs, env=env)


@nox.session(python=False)
def dispatch(session: nox.Session) -> None:
    """The compiled and the pure-Python dispatch compared on every element-wise function and
    operator (tests/test_dispatch_paths.py with AL_DISPATCH_ALL=1; the normal run samples them)."""
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "AL_DISPATCH_ALL": "1"}
    shared(session, "-m", "pytest", "tests/test_dispatch_paths.py", "-p", "no:cacheprovider", *session.posargs, env=env)


@nox.session(python=PYTHON)
def triton(session: nox.Session) -> None:
    """torch's casts as Triton kernels (arraylayer/lowp/triton_casts.py, what torch's tensors on a GPU
    run) bit for bit against ml_dtypes, in Triton's interpreter on the CPU (``TRITON_INTERPRET=1``).
    An environment of its own, torch for the CPU and Triton: the shared one has no Triton, since
    torch.compile imports it wherever it is installed. CI's test command runs it (about 10 s once
    installed); ``AL_LOWP_EXHAUSTIVE=1`` takes every float format."""
    session.install(*CONSTRAINTS, "-e", ".[torch,test]", "triton")
    session.run("python", "-m", "pytest", "tests/test_lowp_triton.py", "-p", "no:cacheprovider", *session.posargs,
                env={"TRITON_INTERPRET": "1"})


@nox.session(python=False)
def lowp(session: nox.Session) -> None:
    """The exhaustive low-precision run (tests/test_lowp_*.py with AL_LOWP_EXHAUSTIVE=1): every format on
    every backend, decoding every code, encoding every float16 and bfloat16 pattern and 2**22 random float32
    bit patterns bit for bit against ml_dtypes, eagerly and compiled; every element-wise function on every
    code (every pair of codes) of every format against ml_dtypes(NumPy's float32 result). Arguments go to
    pytest."""
    env = {"TF_CPP_MIN_LOG_LEVEL": "3", "AL_LOWP_EXHAUSTIVE": "1"}
    shared(session, "-m", "pytest", "tests/test_lowp_formats.py", "tests/test_lowp_casts.py", "tests/test_lowp_scaled.py",
           "tests/test_lowp_astype.py", "tests/test_lowp_interchange.py", "tests/test_lowp_compute.py",
           "tests/test_lowp_compute_exact.py", "tests/test_lowp_manipulation.py",
           "-p", "no:cacheprovider", *session.posargs, env=env)
