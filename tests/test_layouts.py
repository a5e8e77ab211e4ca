"""Every NumPy memory layout enters every backend, through every entry point, with NumPy's values
and dtype: negative strides, other strides, Fortran order, transposes, read-only, zero-size, 0-d,
broadcast (zero strides), non-native byte order and unaligned buffers (NumPy is the oracle).

torch's DLPack import aborts the whole process on negative strides (a SIGABRT that no ``except``
catches). So that a regression fails these tests instead of killing pytest, the module first runs
its fixed table of layouts through every entry point in a subprocess, and runs nothing in this
process if that one dies.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from conftest import selected_backends
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_array_indexing import matches_numpy

import arraylayer as al
from arraylayer.errors import UnsupportedDtypeError
from arraylayer.runtime.registry import available_backends, get_backend

DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64")
SWAPPED = {"<": ">", ">": "<", "=": ">" if sys.byteorder == "little" else "<", "|": "|"}


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def _unaligned(a: np.ndarray) -> np.ndarray:
    """``a``'s values in a buffer one byte off the alignment of its dtype."""
    buffer = np.zeros(a.nbytes + 1, np.uint8)
    moved = np.ndarray(a.shape, a.dtype, buffer=buffer, offset=1)
    moved[...] = a
    return moved


def _swapped(a: np.ndarray) -> np.ndarray:
    return a.astype(a.dtype.newbyteorder(SWAPPED[a.dtype.byteorder]))


def _values(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    n = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return np.asarray(n % 2 == 1 if dtype == "bool" else (n % 100 - 50 * (dtype[0] != "u")).astype(dtype))


# name -> the layout made from a dtype (the fixed table; the property test below combines them)
LAYOUTS = {
    "contiguous": lambda d: _values((2, 3), d),
    "reversed": lambda d: _values((4,), d)[::-1],
    "reversed 2-d": lambda d: _values((3, 4), d)[::-1, ::-2],
    "size-1 reversed": lambda d: _values((3,), d)[2:0:-1][:1],
    "strided": lambda d: _values((8,), d)[::2],
    "fortran": lambda d: np.asfortranarray(_values((2, 3), d)),
    "transposed 3-d": lambda d: _values((2, 3, 4), d).transpose(1, 0, 2),
    "read-only": lambda d: _read_only(_values((2, 3), d)),
    "zero-size": lambda d: _values((0, 3), d),
    "zero-size reversed": lambda d: _values((3, 0), d)[::-1],
    "0-d": lambda d: _values((), d),
    "broadcast": lambda d: np.broadcast_to(_values((3,), d), (2, 3)),
    "byte-swapped": lambda d: _swapped(_values((3,), d)),
    "byte-swapped reversed": lambda d: _swapped(_values((2, 3), d))[:, ::-1],
    "unaligned": lambda d: _unaligned(_values((3,), d)),
    "unaligned strided": lambda d: _unaligned(_values((6,), d))[::2],
}


def _in(backend: str, module: str) -> Callable:
    return lambda a: importlib.import_module(f"{module}.{backend}").asarray(a)


def _within(backend: str, function: Callable) -> Callable:
    def call(a):
        with al.use_backend(backend):
            return function(a)
    return call


def entry_points(backend: str) -> dict[str, Callable]:
    """How a NumPy array enters ``backend``: name -> function of the array."""
    return {
        "al.asarray": _within(backend, al.asarray),
        "xp.asarray": _in(backend, "arraylayer.xp"),
        "xp.arrays.asarray": _in(backend, "arraylayer.xp.arrays"),
        "to_backend": lambda a: al.to_backend(a, backend),
        "from_dlpack": _within(backend, al.from_dlpack),
    }


def valid_dtypes(backend: str) -> list[str]:
    held = set(get_backend(backend).valid_dtypes())
    return [d for d in DTYPES if d in held]


def check_entry(backend: str, entry: str, a: np.ndarray) -> None:
    """``a`` entered through ``entry`` is an array of ``backend`` with ``a``'s values and dtype."""
    expected = a.copy()  # before: an entry point that wrote into a would show here
    result = entry_points(backend)[entry](a)
    wrapped = result if isinstance(result, al.Array) else al.Array(result)
    assert al.runtime.registry.backend_of(wrapped._native).name == backend
    assert wrapped.dtype is al.Dtype(a.dtype)
    host = np.asarray(wrapped)
    assert host.shape == a.shape
    np.testing.assert_array_equal(host, expected)
    np.testing.assert_array_equal(a, expected)


def run_fixed_table(backends: list[str]) -> None:
    """Every fixed layout of every dtype through every entry point of ``backends``."""
    for backend in backends:
        for dtype in valid_dtypes(backend):
            for name, make in LAYOUTS.items():
                for entry in entry_points(backend):
                    try:
                        check_entry(backend, entry, make(dtype))
                    except Exception as error:
                        raise AssertionError(f"{backend} {entry} {name} {dtype}: {error!r}") from error
    print("fixed table: all passed")


@pytest.fixture(scope="module", autouse=True)
def fixed_table_run(request):
    """The fixed table in a subprocess first: a process abort there fails this module's tests
    instead of killing the test process."""
    root = Path(al.__file__).resolve().parents[1]
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
    backends = selected_backends(request.config)
    run = subprocess.run([sys.executable, __file__, *backends], cwd=root, env={**os.environ, "PYTHONPATH": path},
                         capture_output=True, text=True, timeout=900)
    if run.returncode < 0:
        pytest.fail(f"The fixed layout table killed its process (signal {-run.returncode}); not running it "
                    f"in the test process. Its output ends:\n{(run.stdout + run.stderr)[-3000:]}")
    return run


def test_fixed_table_in_a_subprocess(fixed_table_run):
    assert fixed_table_run.returncode == 0, (fixed_table_run.stdout + fixed_table_run.stderr)[-3000:]
    assert "fixed table: all passed" in fixed_table_run.stdout


ENTRIES = list(entry_points("numpy"))


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_layout_enters_backend(backend, entry, name):
    for dtype in valid_dtypes(backend):
        check_entry(backend, entry, LAYOUTS[name](dtype))


@st.composite
def layouts(draw, dtypes: list[str], modulo: int = 0) -> np.ndarray:
    """A NumPy array of up to 3 axes: a view with any steps (negative too) and axis order of a
    buffer that may be byte-swapped and unaligned; maybe broadcast, Fortran-ordered or read-only.
    ``modulo``: integer values modulo this (index arrays)."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(st.lists(st.integers(0, 3), max_size=3))
    steps = [draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in shape]
    base = _values(tuple(max(n * abs(s), 1) if n else 0 for n, s in zip(shape, steps, strict=True)), dtype)
    if modulo and dtype != "bool":
        base = base % base.dtype.type(modulo)
    if draw(st.booleans()):
        base = _swapped(base)
    if draw(st.booleans()) and base.itemsize > 1:
        base = _unaligned(base)
    a = base[(*(slice(None, None, s) for s in steps), ...)][(*(slice(0, n) for n in shape), ...)]  # ...: 0-d stays an array
    a = a.transpose(draw(st.permutations(range(a.ndim))))
    if draw(st.booleans()):
        a = np.broadcast_to(a, (2, *a.shape))
    elif draw(st.booleans()):
        a = np.asfortranarray(a)
    if draw(st.booleans()):
        a = a.view()
        a.flags.writeable = False
    return a


@pytest.mark.parametrize("entry", ENTRIES)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_layout_enters_backend(backend, entry, data):
    check_entry(backend, entry, data.draw(layouts(valid_dtypes(backend))))


INDEX_DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64"]
KEY_FORMS = {"alone": lambda k: k, "axis 1": lambda k: (slice(None), k), "last axis": lambda k: (Ellipsis, k)}


@pytest.mark.parametrize("form", list(KEY_FORMS))
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(index=layouts(INDEX_DTYPES, modulo=3))
def test_any_layout_indexes_backend(backend, form, index):
    """A NumPy index array or mask of any layout selects what it selects in NumPy, or raises
    NumPy's IndexError (a mask of another shape)."""
    matches_numpy(backend, KEY_FORMS[form](index))


@pytest.mark.parametrize("entry", ["from_dlpack", "to_backend", "al.asarray"])
def test_jax_refuses_64_bit_without_x64_instead_of_narrowing(entry):
    if "jax" not in available_backends():
        pytest.skip("jax is not installed")
    if "float64" in get_backend("jax").valid_dtypes():
        pytest.skip("jax_enable_x64 is on: JAX holds float64")
    with pytest.raises(UnsupportedDtypeError, match="float64"):
        entry_points("jax")[entry](np.arange(3.0)[::-1])


@pytest.mark.parametrize("framework", ["numpy", "torch"])  # the mutable ones: sharing is observable
def test_ordinary_arrays_are_shared_not_copied(framework):
    """The zero-copy path stays: a C-ordered, writeable NumPy array is viewed, not copied."""
    if framework not in available_backends():
        pytest.skip(f"{framework} is not installed")
    a = np.arange(4.0)
    with al.use_backend(framework):
        result = al.from_dlpack(a)
    a[0] = 100.0
    assert float(np.asarray(al.Array(result))[0]) == 100.0


@pytest.mark.parametrize("name", ["reversed", "read-only", "byte-swapped"])
def test_layouts_torch_cannot_view_are_copied(name):
    """torch copies what it cannot view: writing into the tensor leaves the NumPy array as it was."""
    if "torch" not in available_backends():
        pytest.skip("torch is not installed")
    a = LAYOUTS[name]("float32")
    before = a.copy()
    with al.use_backend("torch"):
        tensor = al.from_dlpack(a)
    tensor += 1
    np.testing.assert_array_equal(a, before)


if __name__ == "__main__":
    run_fixed_table(sys.argv[1:] or list(available_backends()))
