"""Running the probe: every kernel of a backend on samples of every dtype of its domain, each
result checked for its dtype and against NumPy's values (:func:`probe`, :class:`ProbeResult`)."""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from arraylayer.dtypes import Dtype, all_dtypes
from arraylayer.support import kernel_domain
from arraylayer.cli.probe.cases import CASES, TOLERANCE, WIDE, Build, Case, Maker

__all__ = ["Observation", "probe_cell", "ProbeResult", "jax_x64", "probe"]


@dataclass(frozen=True)
class Observation:
    """What the probe saw for one kernel and dtype."""

    supported: bool
    why: str = ""


class _Mismatch(Exception):
    pass


_REAL_OF: Final = {"complex64": "float32", "complex128": "float64"}
_COMPLEX_OF: Final = {"float32": "complex64", "float64": "complex128"}


def _expected(spec: str, dtype: Dtype) -> str | None:
    base = spec.rstrip("~")
    if base == "same":
        return str(dtype)
    if base == "bool":
        return "bool"
    if base == "real":
        return _REAL_OF.get(dtype, str(dtype))
    if base == "complex":
        return _COMPLEX_OF.get(dtype, str(dtype))
    return None  # index: any integer dtype


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    text = lines[0] if lines else ""
    if len(text) > 160:
        text = text[:157] + "..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _check(backend: Any, spec: Any, actual: Any, reference: Any, dtype: Dtype, where: str) -> Any:
    """Compare one result (recursively for tuples); return it as wide NumPy values."""
    import numpy as np

    if isinstance(spec, tuple) or (isinstance(spec, str) and spec.startswith("*")):
        if not isinstance(actual, (tuple, list)):
            raise _Mismatch(f"returns {type(actual).__name__}, expected a sequence")
        specs = spec if isinstance(spec, tuple) else (spec[1:],) * len(reference)
        if len(actual) != len(specs):
            raise _Mismatch(f"returns {len(actual)} results, expected {len(specs)}")
        return tuple(_check(backend, s, a, r, dtype, f"{where}[{i}]")
                     for i, (s, a, r) in enumerate(zip(specs, actual, reference, strict=True)))
    got = backend.dtype_of(actual)
    want = _expected(spec, dtype)
    at = f" (result{where})" if where else ""
    if want is None:
        if got.category not in ("int", "uint"):
            raise _Mismatch(f"returns {got}{at}, expected an integer dtype")
    elif got != want:
        raise _Mismatch(f"returns {got}{at}, expected {want}")
    host = np.asarray(backend.to_numpy(actual))
    expected = np.asarray(reference)
    if host.shape != expected.shape:
        raise _Mismatch(f"returns shape {host.shape}{at}, expected {expected.shape}")
    wide = WIDE.get(got)
    values = host.astype(wide) if wide else host
    if spec.endswith("~"):
        return values
    if wide:
        tol = TOLERANCE[got]
        if not np.allclose(values, expected.astype(wide), rtol=tol, atol=tol, equal_nan=True):
            raise _Mismatch(f"wrong values{at}: {values.ravel()[:6].tolist()}, NumPy "
                            f"{expected.astype(wide).ravel()[:6].tolist()}")
    elif not np.array_equal(values, expected):
        raise _Mismatch(f"wrong values{at}: {values.ravel()[:6].tolist()}, NumPy {expected.ravel()[:6].tolist()}")
    return values


_NOT_RUN: Final = object()


def probe_cell(backend: Any, name: str, dtype: Dtype, reference_kernels: dict[str, Any],
               outcomes: Sequence[Any] = ()) -> Observation:
    """Run kernel ``name`` of ``backend`` on samples of ``dtype`` (every call of its case) and
    classify the results. ``outcomes``: the results of those calls already made (``_NOT_RUN``
    where not)."""
    case = CASES[name]
    note = ""
    for variant, build in enumerate(case.builds):
        outcome = outcomes[variant] if variant < len(outcomes) else _NOT_RUN
        cell = _probe_call(backend, name, case, build, dtype, reference_kernels, outcome)
        if not cell.supported:
            return cell if variant == 0 else Observation(False, f"{cell.why} (with {case.also[variant - 1][0]})")
        note = note or cell.why
    return Observation(True, note)


def _probe_call(backend: Any, name: str, case: Case, build: Build, dtype: Dtype, reference_kernels: dict[str, Any],
                outcome: Any) -> Observation:
    if outcome is _NOT_RUN:
        try:
            args, kwargs = build(Maker(backend, dtype, reference=False))
        except Exception as error:  # noqa: BLE001 - the backend cannot even make the inputs
            return Observation(False, f"cannot build inputs: {_one_line(error)}")
        try:
            outcome = _runner(backend, name, dtype)(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - any failure of the framework is the answer
            return Observation(False, f"raises {_one_line(error)}")
    reference_args = build(Maker(backend, dtype, reference=True))
    try:
        reference = reference_kernels[name](*reference_args[0], **reference_args[1])
    except Exception as error:  # noqa: BLE001
        return Observation(True, f"no NumPy reference ({_one_line(error)}); dtype not checked")
    try:
        values = _check(backend, case.result, outcome, reference, dtype, "")
        if case.verify is not None and not case.verify(values, reference_args):
            raise _Mismatch("results do not reconstruct the input")
    except _Mismatch as mismatch:
        return Observation(False, str(mismatch))
    except Exception as error:  # noqa: BLE001 - a result that cannot even be read back
        return Observation(False, f"unreadable result: {_one_line(error)}")
    return Observation(True)


def _runner(backend: Any, name: str, dtype: Dtype) -> Any:
    """The kernel the api layer runs for ``dtype``: the backend's own, or for a dtype it computes in
    a wider one (torch's uint16/uint32 in int64) the widened route (arraylayer/api/widened.py)."""
    if dtype in backend.computed_wide:
        from arraylayer.api.widened import widened_kernel

        return widened_kernel(backend, name, dtype)
    return backend.kernels[name]


def _traced_outcomes(backend: Any, names: Sequence[str], dtype: Dtype) -> dict[tuple[str, int], Any]:
    """JAX: the results of every kernel of ``names`` on the samples of ``dtype``, from one
    compiled program (compiling kernel by kernel costs ten times more on CPU; most of a JAX
    probe is XLA compile time, see ``_FAST_COMPILE``). Kernels that fail
    to trace (data-dependent shapes, or a genuine failure) are left out: they run eagerly.
    Empty when the program as a whole fails."""
    import jax

    calls: dict[tuple[str, int], tuple[list[Any], Any, list[int]]] = {}
    for name in names:
        for variant, build in enumerate(CASES[name].builds):
            try:
                args, kwargs = build(Maker(backend, dtype, reference=False))
            except Exception:  # noqa: BLE001 - said when it runs eagerly
                continue
            leaves, tree = jax.tree_util.tree_flatten((args, kwargs), is_leaf=lambda x: x is None)
            calls[name, variant] = (leaves, tree, [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.Array)])

    def program(dynamic: dict[tuple[str, int], list[Any]]) -> dict[tuple[str, int], Any]:
        outcomes = {}
        for (name, variant), (leaves, tree, positions) in calls.items():
            filled = list(leaves)
            for position, value in zip(positions, dynamic[name, variant], strict=True):
                filled[position] = value
            args, kwargs = jax.tree_util.tree_unflatten(tree, filled)
            try:
                outcome = backend.kernels[name](*args, **kwargs)
                jax.tree_util.tree_map(lambda x: x.dtype, outcome)  # arrays only
            except Exception:  # noqa: BLE001 - run eagerly instead
                continue
            outcomes[name, variant] = outcome
        return outcomes

    dynamic = {key: [leaves[i] for i in positions] for key, (leaves, _, positions) in calls.items()}
    try:
        lowered = jax.jit(program).lower(dynamic)
        try:
            compiled = lowered.compile(compiler_options=_FAST_COMPILE)
        except Exception:  # noqa: BLE001 - options this XLA does not know, or a real failure: retry plainly
            compiled = lowered.compile()
        return dict(jax.block_until_ready(compiled(dynamic)))
    except Exception:  # noqa: BLE001 - compile or run failed as a whole: every kernel runs eagerly
        return {}


#: XLA options for the probe's programs: five times less compile time (semantics unchanged: no
#: fast math, only less LLVM optimisation and the older CPU fusion emitters)
_FAST_COMPILE: Final = {"xla_backend_optimization_level": 0, "xla_cpu_use_fusion_emitters": False}


# ---------------------------------------------------------------------------------------------
# A whole backend
# ---------------------------------------------------------------------------------------------
@dataclass
class ProbeResult:
    """Everything the probe saw on one backend."""

    backend: str
    framework: str
    version: str
    valid: tuple[Dtype, ...]
    #: kernel name -> dtype -> Observation, for the dtypes of the kernel's domain the backend holds
    cells: dict[str, dict[Dtype, Observation]] = field(default_factory=dict)
    #: kernel names of names.py the backend does not provide (not probed)
    missing: tuple[str, ...] = ()
    seconds: float = 0.0
    #: the Backend probed (its declarations are what :func:`compare` reads)
    adapter: Any = field(default=None, repr=False, compare=False)

    def unsupported(self, name: str) -> frozenset[Dtype]:
        return frozenset(d for d, c in self.cells.get(name, {}).items() if not c.supported)


#: backends whose kernels are traced into one program per dtype (see _traced_outcomes)
_TRACED: Final = frozenset({"jax"})


@contextlib.contextmanager
def jax_x64(on: bool) -> Iterator[None]:
    """``jax_enable_x64`` set to ``on`` for the block (nothing when JAX is not imported and
    ``on`` is False)."""
    if not on and "jax" not in sys.modules:
        yield
        return
    import jax

    saved = bool(jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", saved)


def probe(backend: Any = None, kernels: Sequence[str] | None = None) -> ProbeResult:
    """Probe every kernel of ``backend`` (a name, a Backend, or None for the active one), or
    only ``kernels``, on every dtype of its domain that the backend holds now."""
    from arraylayer.kernels.names import ALL_KERNEL_NAMES
    from arraylayer.runtime.registry import get_backend
    from arraylayer.support.queries import resolve_backend

    resolved = resolve_backend(backend)
    reference_kernels = get_backend("numpy").kernels
    valid = resolved.valid_dtypes()
    names = tuple(kernels) if kernels is not None else ALL_KERNEL_NAMES
    result = ProbeResult(resolved.name, resolved.framework, resolved.version, valid, adapter=resolved)
    result.missing = tuple(n for n in names if n not in resolved.kernels)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import numpy as np

        with np.errstate(all="ignore"):
            probed = [name for name in names if name not in result.missing]
            domains = {name: kernel_domain(name) for name in probed}
            for name in probed:
                result.cells[name] = {}
            for dtype in valid:
                here = [name for name in probed if dtype in domains[name]]
                traced = _traced_outcomes(resolved, here, dtype) if resolved.name in _TRACED else {}
                for name in here:
                    outcomes = [traced.get((name, i), _NOT_RUN) for i in range(len(CASES[name].builds))]
                    result.cells[name][dtype] = probe_cell(resolved, name, dtype, reference_kernels, outcomes)
            for name in probed:  # in the canonical dtype order
                result.cells[name] = {d: result.cells[name][d] for d in all_dtypes if d in result.cells[name]}
    result.seconds = time.perf_counter() - start
    return result
