"""Shared fixtures: run backend-dependent tests on every installed backend.

``--backend NAME`` (repeatable) restricts the run to some backends; by default every
backend whose framework imports here is used. Tests take the ``backend`` fixture,
which is parametrised over them, and ``make_array(backend, dtype, values)`` builds a
native array of that framework.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import pytest

ALL_BACKENDS = ("numpy", "jax", "torch", "tensorflow", "dask")
AUTODIFF = ("jax", "torch", "tensorflow")

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# SciPy (and scikit-learn through it) reads this once, at SciPy's first import, which importing
# TensorFlow already does: set before any test runs, for tests/clients and the docs' examples.
os.environ.setdefault("SCIPY_ARRAY_API", "1")
# Keras reads its backend once, at its first import; the tests that take keras.ops as an oracle use its
# NumPy backend, and a test importing keras.src.backend.numpy first must not bring up the TensorFlow one.
os.environ.setdefault("KERAS_BACKEND", "numpy")


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        action="append",
        choices=ALL_BACKENDS,
        help="run backend-dependent tests only on this backend (repeatable); default: all installed",
    )


def selected_backends(config: pytest.Config) -> list[str]:
    chosen = config.getoption("--backend") or [b for b in ALL_BACKENDS if _installed(b)]
    return list(chosen)


def trained_backends(config: pytest.Config) -> list[str]:
    """The selected backends with autodiff: those the examples and benchmarks train on."""
    return [b for b in selected_backends(config) if b in AUTODIFF]


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """The script at ``path`` (an example, a benchmark) run as a module named ``name`` (default: the
    file's stem), registered in ``sys.modules`` first: dataclasses look their module up there while
    the file runs."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for name in ("backend", "target"):  # "target": a second backend, for tests across pairs
        if name in metafunc.fixturenames:
            metafunc.parametrize(name, selected_backends(metafunc.config))


@pytest.fixture(autouse=True)
def _restore_process_settings():
    """Every test starts and ends with arraylayer's out-of-the-box process-wide settings."""
    import arraylayer as al
    from arraylayer.context import CHECKED_SCALARS, NARROW_64BIT
    from arraylayer.dtypes.defaults import DEFAULT_COMPLEX, DEFAULT_FLOAT, DEFAULT_INT, DEFAULT_UINT
    from arraylayer.dtypes.promotion import POLICY

    settings = (POLICY, DEFAULT_INT, DEFAULT_UINT, DEFAULT_FLOAT, DEFAULT_COMPLEX, NARROW_64BIT, CHECKED_SCALARS)
    saved = [s.process for s in settings]
    yield al
    for setting, value in zip(settings, saved, strict=True):
        setting.process = value


@contextmanager
def jax_x64(on: bool) -> Iterator[None]:
    """jax_enable_x64 set to ``on`` within the block, the previous value restored (jax installed)."""
    import jax

    saved = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", saved)


@pytest.fixture
def x64_on():
    pytest.importorskip("jax")
    with jax_x64(True):
        yield


@pytest.fixture
def x64_off():
    pytest.importorskip("jax")
    with jax_x64(False):
        yield


def parametrize_ad_backend(metafunc: pytest.Metafunc) -> None:
    """``ad_backend``: each selected backend with autodiff (a module's ``pytest_generate_tests``)."""
    if "ad_backend" in metafunc.fixturenames:
        metafunc.parametrize("ad_backend", [b for b in selected_backends(metafunc.config) if b in AUTODIFF])


def arr(backend: str, values, dtype: str = "float32"):
    """``values`` (nested lists or a NumPy array) as a ``dtype`` array of ``backend``."""
    import numpy as np

    return make_array(backend, dtype, np.asarray(values).tolist())


def to_np(x):
    """An array of any backend as a float64 NumPy array (for comparisons with an oracle)."""
    import numpy as np

    import arraylayer as al

    return np.asarray(al.get_backend(al.backend_of(x).name).to_numpy(x)).astype(np.float64)


def make_array(backend: str, dtype: str, values=(1, 0, 1)):
    """A small native array of ``backend`` with dtype name ``dtype``."""
    import numpy as np

    if dtype == "bfloat16":
        import ml_dtypes

        host = np.asarray(values, dtype=ml_dtypes.bfloat16)
    else:
        host = np.asarray(values, dtype=dtype)
    if backend == "numpy":
        return host
    if backend == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        return jnp.asarray(host, dtype=host.dtype)
    if backend == "torch":
        import torch

        if dtype in ("uint16", "uint32", "uint64", "bfloat16"):
            return torch.tensor(host.astype(np.float32 if dtype == "bfloat16" else np.int64).tolist(),
                                dtype=getattr(torch, dtype))
        return torch.from_numpy(host.copy())
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.constant(host, dtype=getattr(tf, dtype))
    if backend == "dask":
        import dask.array as da

        return da.from_array(host, chunks=2)  # several chunks, so that the chunked paths run
    raise ValueError(backend)
