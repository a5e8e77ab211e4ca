"""Client libraries as tests: scikit-learn, SciPy, xarray, array-api-extra, einops and
Hypothesis' Array API strategies run on ``arraylayer.Array`` inputs of every backend, their
results compared with the same library's results on NumPy arrays (the oracle; dask's after
computing).

The ``client`` fixture is parametrised over the backends, with JAX twice: ``jax`` (x64 on) and
``jax32`` (x64 off; the 64-bit data of a case is given as its 32-bit counterpart, the oracle
still computed in 64 bits on NumPy, so the tolerance is float32's). ``--backend jax`` selects
both. Every test id names the backend, and the summary prints passed/failed/xfailed per test
module and backend.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

CLIENT_BACKENDS = ("numpy", "jax", "jax32", "torch", "tensorflow", "dask")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "client" in metafunc.fixturenames:
        chosen = metafunc.config.getoption("--backend") or ("numpy", "jax", "torch", "tensorflow", "dask")
        names = [c for c in CLIENT_BACKENDS if c.removesuffix("32") in chosen]
        metafunc.parametrize("client", names, indirect=True)


class Client:
    """One backend as a client library sees it: NumPy data in, Arrays of the backend out."""

    def __init__(self, name: str, node: pytest.Item) -> None:
        self.name = name
        self.node = node
        self.backend = name.removesuffix("32")
        self.narrow = name == "jax32"
        self.rtol = 2e-4 if self.narrow else 1e-6

    def host(self, values: Any) -> np.ndarray:
        """``values`` as the NumPy array this client computes with (64-bit narrowed for jax32)."""
        host = np.asarray(values)
        if self.narrow and host.dtype.itemsize == 8 and host.dtype.kind in "iufc":
            host = host.astype({"i": np.int32, "u": np.uint32, "f": np.float32, "c": np.complex64}[host.dtype.kind])
        elif self.narrow and host.dtype == np.complex128:
            host = host.astype(np.complex64)
        return host

    def native(self, values: Any) -> Any:
        """``values`` as a native array of the backend."""
        from arraylayer import to_backend

        return to_backend(self.host(values), self.backend)

    def array(self, values: Any) -> Any:
        """``values`` as an ``arraylayer.Array`` of the backend."""
        from arraylayer import Array

        return Array(self.native(values))

    @property
    def xp(self) -> Any:
        """The namespace an Array of this backend reports."""
        return self.array(np.zeros(1)).__array_namespace__()

    @property
    def native_xp(self) -> Any:
        """arraylayer's namespace for native arrays of this backend (``arraylayer.xp.<backend>``)."""
        import importlib

        return importlib.import_module(f"arraylayer.xp.{self.backend}")

    def xfail_client_bug(self, bugs: dict[tuple[str, str], str], case: str) -> None:
        """Mark a case listed in ``bugs`` (keys: (case, client name or "*")) as the client's own bug:
        it still runs, and passing fails the test (strict), so a fixed bug shows."""
        reason = bugs.get((case, self.name)) or bugs.get((case, "*"))
        if reason:
            self.node.add_marker(pytest.mark.xfail(reason=reason, strict=True))

    def xfail_pending(self, pending: dict[tuple[str, str], str], case: str) -> None:
        """Mark a case listed in ``pending`` (keys as for ``xfail_client_bug``; values a key of
        ``PENDING`` or a reason) as a gap of arraylayer that work under way closes: not strict, so
        it xpasses once the fix lands and its entry can go."""
        reason = pending.get((case, self.name)) or pending.get((case, "*"))
        if reason:
            self.node.add_marker(pytest.mark.xfail(reason=PENDING.get(reason, reason), strict=False))

    def close(self, result: Any, expected: Any, *, rtol: float | None = None, atol: float = 1e-9,
              arrays_out: bool = True) -> None:
        """``result`` (from Arrays) matches ``expected`` (from NumPy): the same structure, values
        within tolerance, the same dtype kind; with ``arrays_out``, arrays come back as Arrays."""
        assert_close(result, expected, rtol=self.rtol if rtol is None else rtol,
                     atol=atol if not self.narrow else max(atol, 1e-5), arrays_out=arrays_out)


# Gaps of arraylayer still open, by the key test modules list them under (not strict: a case that
# starts passing xpasses, and its entry can go).
PENDING = {
    "dask-lengths": "issue 20: dask unknown lengths: a dask Array whose length is nan (after unique, boolean "
                    "masks, nonzero) cannot be sliced, sorted or taken along that axis",
}


def assert_close(result: Any, expected: Any, *, rtol: float, atol: float, arrays_out: bool) -> None:
    from arraylayer import Array

    if isinstance(expected, (tuple, list)):
        assert isinstance(result, (tuple, list)), f"expected a sequence, got {type(result).__name__}"
        assert len(result) == len(expected)
        for r, e in zip(result, expected, strict=True):
            assert_close(r, e, rtol=rtol, atol=atol, arrays_out=arrays_out)
        return
    if arrays_out and isinstance(expected, np.ndarray) and expected.ndim > 0:
        assert isinstance(result, Array), f"expected an arraylayer.Array back, got {type(result).__module__}." \
                                          f"{type(result).__qualname__}"
    got = np.asarray(result)
    want = np.asarray(expected)
    assert got.shape == want.shape, f"shape {got.shape} != NumPy's {want.shape}"
    kinds = {"b": "b", "i": "i", "u": "i", "f": "f", "c": "c"}
    assert kinds.get(got.dtype.kind) == kinds.get(want.dtype.kind), f"dtype {got.dtype} where NumPy gives {want.dtype}"
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.fixture
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    name = request.param
    backend = name.removesuffix("32")
    pytest.importorskip(backend)
    if backend == "jax":
        import jax

        saved = jax.config.jax_enable_x64
        jax.config.update("jax_enable_x64", name == "jax")
        with _narrowing(name == "jax32"):
            yield Client(name, request.node)
        jax.config.update("jax_enable_x64", saved)
    else:
        yield Client(name, request.node)


def _narrowing(on: bool) -> Any:
    """arraylayer's opt-in narrowing of 64-bit requests on JAX without x64, when it exists."""
    import contextlib

    import arraylayer as al

    scope = getattr(al, "use_narrow_64bit", None)  # helper "ns"'s setting; absent before it lands
    return scope(True) if (on and scope is not None) else contextlib.nullcontext()


# -- per-backend summary ----------------------------------------------------------------------------

_OUTCOMES: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "tests/clients/" not in report.nodeid.replace("\\", "/"):
        return
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        params = report.nodeid.rpartition("[")[2].rstrip("]").split("-")
        name = next((p for p in reversed(params) if p in CLIENT_BACKENDS), "-")
        library = report.nodeid.split("::")[0].rsplit("/", 1)[-1].removeprefix("test_").removesuffix(".py")
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        _OUTCOMES[(library, name)][outcome] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _OUTCOMES:
        return
    write: Callable[[str], None] = terminalreporter.write_line
    backends = [b for b in CLIENT_BACKENDS if any(key[1] == b for key in _OUTCOMES)]
    write("")
    write("client results (passed/failed/xfailed) per backend")
    write(f"{'library':<20}" + "".join(f"{b:>16}" for b in backends))
    for library in sorted({key[0] for key in _OUTCOMES}):
        cells = []
        for backend in backends:
            c = _OUTCOMES.get((library, backend), collections.Counter())
            cells.append(f"{c['passed']}/{c['failed']}/{c['xfailed']}" + (f" s{c['skipped']}" if c["skipped"] else ""))
        write(f"{library:<20}" + "".join(f"{cell:>16}" for cell in cells))
