"""The probe: which dtypes each backend's kernels really support, checked against the declarations.

:func:`probe` calls every kernel of a backend (``backend.kernels``) directly, on small sample
inputs of every dtype the api layer may call it with (:func:`~arraylayer.support.kernel_domain`)
that the backend holds as installed and configured. A cell is *supported* when the call
returns the Array API's result dtype (:data:`CASES`: per kernel, how to build its arguments and
what it returns) and the values NumPy gives for the same inputs computed in a wide dtype
(float64, complex128; integers and bool as they are), within the dtype's tolerance;
otherwise it is *unsupported*, with the reason. :func:`compare` lists the cells where the
declarations (``SUPPORTED``/``UNSUPPORTED`` of the kernel package, for the installed version)
say otherwise, and :func:`format_differences` prints them, one line per cell.

Command line (see :mod:`arraylayer.cli`)::

    python -m arraylayer probe [--backend NAME] [--output FILE|-] [--x64] [--check]
    python -m arraylayer support [--backend NAME] [--format text|markdown|html] [--x64]

``probe`` writes the observed support of every installed backend (or one) as JSON: per
kernel, the supported dtypes and each unsupported one's reason; per public function, what
follows from that. The JSON goes to a file (``--output``, default ``arraylayer-probe.json``;
``-`` for standard output) and a summary per backend is printed. ``--check`` makes it exit
with status 1 when the declarations differ.
``support`` prints the function x dtype matrix generated from the declarations.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from .dtypes import Dtype, all_dtypes
from .logs import progress, quiet_framework_logs
from .support import (
    MATRIX_FORMATS,
    declaration_status,
    dtype_support,
    function_table,
    kernel_domain,
    kernel_unsupported_dtypes,
    matrix_functions,
    render_matrix,
    support_matrix,
)

__all__ = [
    "Case", "CASES", "Observation", "ProbeResult", "Difference", "probe", "compare", "format_differences",
    "probe_report", "PROBE_COMMAND", "SUPPORT_COMMAND",
]


# ---------------------------------------------------------------------------------------------
# Sample values: one row per kind letter (b i u f c); u takes i's values
# ---------------------------------------------------------------------------------------------
_X: Final = {"b": [True, False, True], "i": [1, 2, 3], "f": [0.5, 1.25, 2.5], "c": [0.5 + 0.25j, 1.25 - 0.5j, 2.5 + 1j]}
_Y: Final = {"b": [True, True, False], "i": [2, 1, 3], "f": [2.0, 0.5, 1.25], "c": [2 - 0.5j, 0.5 + 0.25j, 1.25 + 1j]}
_VALUES: Final[dict[str, dict[str, list[Any]]]] = {
    "x": _X,
    "y": _Y,
    "unit": {**_X, "f": [0.125, 0.25, 0.5], "c": [0.125 + 0.25j, 0.25 - 0.125j, 0.5 + 0.5j]},
    "ge1": {**_X, "f": [1.5, 2.0, 3.0], "c": [1.5 + 0.5j, 2 - 0.25j, 3 + 1j]},
    "shift": {**_Y, "i": [1, 2, 0]},
    "dup": {"b": [True, False, True], "i": [2, 1, 2], "f": [1.25, 0.5, 1.25], "c": [1.25 + 1j, 0.5, 1.25 + 1j]},
    "sorted": {**_X, "b": [False, True, True]},
    "vec3b": {**_Y, "i": [3, 1, 2], "f": [2.0, 0.5, 1.25]},
    # a symmetric (Hermitian) positive-definite matrix
    "spd": {"b": [[True, False], [False, True]], "i": [[2, 1], [1, 3]], "f": [[2.0, 0.5], [0.5, 1.0]],
            "c": [[2, 0.5 + 0.25j], [0.5 - 0.25j, 1]]},
    "mat": {"b": [[True, False], [True, True]], "i": [[1, 2], [3, 1]], "f": [[1.0, 0.5], [2.0, 0.25]],
            "c": [[1 + 1j, 0.5], [2, 0.25 - 0.5j]]},
}
_LETTER: Final = {"bool": "b", "int": "i", "uint": "i", "float": "f", "complex": "c"}
_PYTHON: Final = {"bool": bool, "int": int, "uint": int, "float": float, "complex": complex}
_WIDE: Final = {"bfloat16": "float64", "float16": "float64", "float32": "float64", "float64": "float64",
                "complex64": "complex128", "complex128": "complex128"}
#: rtol (and atol) of each floating dtype's values against the wide NumPy result
TOLERANCE: Final = {"bfloat16": 3e-2, "float16": 4e-3, "float32": 3e-5, "float64": 1e-10,
                    "complex64": 3e-5, "complex128": 1e-10}


class Maker:
    """Builds a kernel's arguments on one backend: arrays of a dtype, its native dtype object,
    index arrays. The reference maker builds the same arguments as wide NumPy arrays."""

    def __init__(self, backend: Any, dtype: Dtype, reference: bool) -> None:
        import numpy as np

        self._np = np
        self.backend = backend
        self.dtype = dtype
        self.reference = reference

    def values(self, name: str = "x", dtype: Dtype | None = None) -> list[Any]:
        return _VALUES[name][_LETTER[(dtype or self.dtype).category]]

    def array(self, name: str = "x", shape: tuple[int, ...] | None = None, dtype: str | None = None) -> Any:
        """Sample ``name`` as an array of the probed dtype (or of ``dtype``)."""
        np = self._np
        of = self.dtype if dtype is None else Dtype(dtype)
        host = np.asarray(self.values(name, of), dtype=self._numpy_dtype(self._host_dtype(of)))
        if shape is not None:
            host = host.reshape(shape)
        return host if self.reference else self.backend.asarray(host, of)

    def scalar(self, value: Any) -> Any:
        """A Python scalar of the dtype's kind (what the api layer passes beside an array)."""
        return _PYTHON[self.dtype.category](value)

    def native(self) -> Any:
        return self._numpy_dtype(self._host_dtype(self.dtype)) if self.reference else \
            self.backend.as_native_dtype(self.dtype)

    def index(self, values: Any) -> Any:
        """An index array (the default index dtype; int64 for the reference)."""
        from .api.dispatch import index_dtype

        np = self._np
        if self.reference:
            return np.asarray(values, dtype=np.int64)
        return self.backend.asarray(np.asarray(values, dtype=np.int64), index_dtype())

    def condition(self) -> Any:
        np = self._np
        host = np.asarray([True, False, True])
        return host if self.reference else self.backend.asarray(host, Dtype("bool"))

    def _host_dtype(self, dtype: Dtype) -> str:
        return _WIDE.get(dtype, dtype) if self.reference else dtype

    def _numpy_dtype(self, name: str) -> Any:
        if name == "bfloat16":
            import ml_dtypes

            return self._np.dtype(ml_dtypes.bfloat16)
        return self._np.dtype(name)


Build = Callable[[Maker], tuple[tuple[Any, ...], dict[str, Any]]]


class Case(NamedTuple):
    """How to call one kernel and what it must return.

    ``build(maker)``: the positional and keyword arguments; ``also``: (what, build) of more calls
    that must pass too (accumulating kernels also take bool input, as ``sum(bool_array)`` sends
    them). ``result``: ``"same"`` (the dtype
    the kernel was called with), ``"bool"``, ``"real"`` (the real dtype of a complex one),
    ``"complex"`` (the complex dtype of a real one), ``"index"`` (any integer dtype), a tuple of those for a tuple result, or ``"*<spec>"`` for
    a sequence of any length. A spec ending in ``~`` checks dtype and shape only (results that
    are not unique, such as eigenvectors). ``verify(result, reference_args)``: an extra check
    on the wide NumPy values of the result, for those.
    """

    build: Build
    result: Any = "same"
    verify: Callable[[Any, Any], bool] | None = None
    also: tuple[tuple[str, Build], ...] = ()

    @property
    def builds(self) -> tuple[Build, ...]:
        return (self.build, *(build for _, build in self.also))


def _unary(values: str = "x") -> Build:
    return lambda m: ((m.array(values),), {})


def _binary(second: str = "y") -> Build:
    return lambda m: ((m.array("x"), m.array(second)), {})


def _qr_ok(result: Any, args: Any) -> bool:
    import numpy as np

    q, r = result
    return bool(np.allclose(q @ r, args[0][0], rtol=3e-2, atol=3e-2))


def _accumulating(options: dict[str, Any]) -> Case:
    """sum, prod, cumulative_*: x and the accumulator in the probed dtype, and bool x
    accumulated in it (what ``sum`` of bool and narrow integers sends)."""
    return Case(lambda m: ((m.array(),), {"dtype": m.native(), **options}),
                also=(("bool input", lambda m: ((m.array(dtype="bool"),), {"dtype": m.native(), **options})),))


_UNARY_RESULT: Final = {"isfinite": "bool", "isinf": "bool", "isnan": "bool", "signbit": "bool",
                        "logical_not": "bool", "abs": "real", "real": "real", "imag": "real"}
_UNARY_VALUES: Final = {"acos": "unit", "asin": "unit", "atanh": "unit", "acosh": "ge1"}
_BINARY_BOOL: Final = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and",
                       "logical_or", "logical_xor")


def _cases() -> dict[str, Case]:
    from .kernels.names import KERNEL_NAMES

    cases: dict[str, Case] = {}
    for name in KERNEL_NAMES["elementwise"]:
        cases[name] = Case(_unary(_UNARY_VALUES.get(name, "x")), _UNARY_RESULT.get(name, "same"))
    for name in ("add", "atan2", "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "divide", "floor_divide",
                 "hypot", "logaddexp", "maximum", "minimum", "multiply", "nextafter", "pow", "remainder",
                 "subtract", *_BINARY_BOOL):
        cases[name] = Case(_binary(), "bool" if name in _BINARY_BOOL else "same")
    for name in ("bitwise_left_shift", "bitwise_right_shift"):
        cases[name] = Case(_binary("shift"))
    created = {"device": None}
    cases.update({
        "clip": Case(lambda m: ((m.array(), m.scalar(0.75 if m.dtype.category in ("float", "complex") else 2),
                                 m.scalar(2.0 if m.dtype.category in ("float", "complex") else 2)), {})),
        # creation
        "zeros": Case(lambda m: (((2, 3),), {"dtype": m.native(), **created})),
        "ones": Case(lambda m: (((2, 3),), {"dtype": m.native(), **created})),
        "empty": Case(lambda m: (((2, 3),), {"dtype": m.native(), **created}), "same~"),
        "full": Case(lambda m: (((2,), m.scalar({"b": True, "i": 2, "f": 1.25, "c": 1.25 + 0.5j}[
            _LETTER[m.dtype.category]])), {"dtype": m.native(), **created})),
        "arange": Case(lambda m: ({"b": (0, 1, 1), "i": (1, 7, 2), "f": (0.5, 2.5, 0.5), "c": (0, 3, 1)}[
            _LETTER[m.dtype.category]], {"dtype": m.native(), **created})),
        "linspace": Case(lambda m: ((0.0, 1.0 if m.dtype.category != "complex" else 1 + 1j, 5),
                                    {"dtype": m.native(), "endpoint": True, **created})),
        "eye": Case(lambda m: ((2, 3), {"k": 1, "dtype": m.native(), **created})),
        "meshgrid": Case(lambda m: ((m.array(), m.array("y")[:2]), {"indexing": "xy"}), "*same"),
        "tril": Case(lambda m: ((m.array("mat"),), {"k": 0})),
        "triu": Case(lambda m: ((m.array("mat"),), {"k": 0})),
        # fft: one axis (cropped to n=2), several axes (padded)
        **{name: Case(lambda m: ((m.array("mat"),), {"n": 2, "axis": 0, "norm": "ortho"}), result)
           for name, result in (("fft", "same"), ("ifft", "same"), ("rfft", "complex"), ("ihfft", "complex"),
                                ("irfft", "real"), ("hfft", "real"))},
        **{name: Case(lambda m: ((m.array("mat"),), {"s": (3, 4), "axes": (0, 1), "norm": "backward"}), result)
           for name, result in (("fftn", "same"), ("ifftn", "same"), ("rfftn", "complex"), ("irfftn", "real"))},
        # indexing
        "take": Case(lambda m: ((m.array(), m.index([2, 0])), {"axis": 0})),
        "take_along_axis": Case(lambda m: ((m.array("mat"), m.index([[1, 0], [0, 1]])), {"axis": -1})),
        # linear algebra
        "matmul": Case(lambda m: ((m.array("mat"), m.array("spd")), {})),
        "matrix_transpose": Case(lambda m: ((m.array("mat"),), {})),
        "tensordot": Case(lambda m: ((m.array("mat"), m.array("spd")), {"axes": 1})),
        "vecdot": Case(lambda m: ((m.array("mat"), m.array("spd")), {"axis": -1})),
        "cholesky": Case(lambda m: ((m.array("spd"),), {"upper": False})),
        "cross": Case(lambda m: ((m.array(), m.array("vec3b")), {"axis": -1})),
        "det": Case(lambda m: ((m.array("spd"),), {})),
        "diagonal": Case(lambda m: ((m.array("mat"),), {"offset": 0})),
        "eig": Case(lambda m: ((m.array("spd"),), {}), ("complex~", "complex~")),
        "eigvals": Case(lambda m: ((m.array("spd"),), {}), "complex~"),
        "eigh": Case(lambda m: ((m.array("spd"),), {}), ("real", "same~")),
        "eigvalsh": Case(lambda m: ((m.array("spd"),), {}), "real"),
        "inv": Case(lambda m: ((m.array("spd"),), {})),
        "matrix_norm": Case(lambda m: ((m.array("mat"),), {"keepdims": False, "ord": "fro"}), "real"),
        "matrix_power": Case(lambda m: ((m.array("spd"), 2), {})),
        "matrix_rank": Case(lambda m: ((m.array("spd"),), {"rtol": None}), "index"),
        "outer": Case(lambda m: ((m.array(), m.array("y")), {})),
        "pinv": Case(lambda m: ((m.array("spd"),), {"rtol": None})),
        "qr": Case(lambda m: ((m.array("mat"),), {"mode": "reduced"}), ("same~", "same~"), _qr_ok),
        "slogdet": Case(lambda m: ((m.array("spd"),), {}), ("same", "real")),
        "solve": Case(lambda m: ((m.array("spd"), m.array("mat")), {})),
        "svd": Case(lambda m: ((m.array("mat"),), {"full_matrices": True}), ("same~", "real", "same~")),
        "svdvals": Case(lambda m: ((m.array("mat"),), {}), "real"),
        "trace": Case(lambda m: ((m.array("mat"),), {"offset": 0, "dtype": m.native()}),
                      also=(("bool input", lambda m: ((m.array("mat", dtype="bool"),),
                                                      {"offset": 0, "dtype": m.native()})),)),
        "vector_norm": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False, "ord": 2}), "real"),
        # manipulation
        "broadcast_arrays": Case(lambda m: ((m.array(), m.array("y")[:1]), {}), "*same"),
        "broadcast_to": Case(lambda m: ((m.array(), (2, 3)), {})),
        "concat": Case(lambda m: (([m.array(), m.array("y")],), {"axis": 0})),
        "expand_dims": Case(lambda m: ((m.array(),), {"axis": 0})),
        "flip": Case(lambda m: ((m.array(),), {"axis": None})),
        "moveaxis": Case(lambda m: ((m.array("mat"), 0, 1), {})),
        "permute_dims": Case(lambda m: ((m.array("mat"), (1, 0)), {})),
        "repeat": Case(lambda m: ((m.array(), 2), {"axis": None})),
        "reshape": Case(lambda m: ((m.array(), (3, 1)), {"copy": None})),
        "roll": Case(lambda m: ((m.array(), 1), {"axis": None})),
        "squeeze": Case(lambda m: ((m.array("x", (1, 3)),), {"axis": 0})),
        "stack": Case(lambda m: (([m.array(), m.array("y")],), {"axis": 0})),
        "tile": Case(lambda m: ((m.array(), (2,)), {})),
        "unstack": Case(lambda m: ((m.array("mat"),), {"axis": 0}), "*same"),
        # searching
        "argmax": Case(lambda m: ((m.array("dup"),), {"axis": None, "keepdims": False}), "index"),
        "argmin": Case(lambda m: ((m.array("dup"),), {"axis": None, "keepdims": False}), "index"),
        "count_nonzero": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False}), "index"),
        "nonzero": Case(lambda m: ((m.array("mat"),), {}), "*index"),
        "searchsorted": Case(lambda m: ((m.array("sorted"), m.array("y")), {"side": "left", "sorter": None}),
                             "index"),
        "where": Case(lambda m: ((m.condition(), m.array(), m.array("y")), {})),
        # sets, sorting
        "unique_all": Case(_unary("dup"), ("same", "index", "index", "index")),
        "unique_counts": Case(_unary("dup"), ("same", "index")),
        "unique_inverse": Case(_unary("dup"), ("same", "index")),
        "unique_values": Case(_unary("dup")),
        "argsort": Case(lambda m: ((m.array("dup"),), {"axis": -1, "descending": False, "stable": True}), "index"),
        "sort": Case(lambda m: ((m.array("dup"),), {"axis": -1, "descending": False, "stable": True})),
        # statistical, utility
        "sum": _accumulating({"axis": None, "keepdims": False}),
        "prod": _accumulating({"axis": None, "keepdims": False}),
        "cumulative_sum": _accumulating({"axis": 0, "include_initial": False}),
        "cumulative_prod": _accumulating({"axis": 0, "include_initial": False}),
        "max": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False})),
        "min": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False})),
        "mean": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False})),
        "std": Case(lambda m: ((m.array(),), {"axis": None, "correction": 0.0, "keepdims": False})),
        "var": Case(lambda m: ((m.array(),), {"axis": None, "correction": 0.0, "keepdims": False})),
        "all": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False}), "bool"),
        "any": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False}), "bool"),
        "diff": Case(lambda m: ((m.array(),), {"axis": -1, "n": 1, "prepend": None, "append": None})),
    })
    return cases


#: kernel name -> its :class:`Case` (every name of ``arraylayer/kernels/names.py``)
CASES: Final[dict[str, Case]] = _cases()


# ---------------------------------------------------------------------------------------------
# Running one cell
# ---------------------------------------------------------------------------------------------
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
    wide = _WIDE.get(got)
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
    if wide:
        tol = TOLERANCE[got]
        if not np.allclose(values, expected.astype(wide), rtol=tol, atol=tol, equal_nan=True):
            raise _Mismatch(f"wrong values{where}: {values.ravel()[:6].tolist()}, NumPy "
                            f"{expected.astype(wide).ravel()[:6].tolist()}")
    elif not np.array_equal(values.astype(expected.dtype) if got.category == "bool" else values, expected):
        raise _Mismatch(f"wrong values{where}: {values.ravel()[:6].tolist()}, NumPy {expected.ravel()[:6].tolist()}")
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
            outcome = backend.kernels[name](*args, **kwargs)
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
    from .kernels.names import ALL_KERNEL_NAMES
    from .registry import get_backend
    from .support import _backend_of

    resolved = _backend_of(backend)
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


@dataclass(frozen=True)
class Difference:
    """One cell where the declarations and the probe disagree."""

    kernel: str
    dtype: Dtype
    declared: bool  # declared supported
    observed: bool  # supported in the probe
    why: str  # the probe's reason (for an unsupported cell)
    note: str = ""  # e.g. the declaration does not cover the installed version


def compare(result: ProbeResult) -> list[Difference]:
    """The cells where ``backend``'s declarations (at the installed version) and the probe
    disagree: declared unsupported but passing, or not declared but failing."""
    backend = result.adapter if result.adapter is not None else _load(result.backend)
    differences = []
    for name, cells in result.cells.items():
        status, spec = declaration_status(backend, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            declared = kernel_unsupported_dtypes(backend, name)
        note = {"covered": f"declared for {spec}", "unverified": "declaration does not cover this version",
                "undeclared": ""}[status]
        for dtype, cell in cells.items():
            if (dtype not in declared) != cell.supported:
                differences.append(Difference(name, dtype, dtype not in declared, cell.supported, cell.why, note))
    return differences


def format_differences(result: ProbeResult, differences: list[Difference]) -> str:
    """The differences as an aligned table, one line per cell, and the fix for each."""
    head = f"{result.backend} ({result.framework} {result.version})"
    if not differences:
        return f"{head}: the declarations match the probe."
    rows = [("kernel", "dtype", "declared", "probe", "")]
    for d in differences:
        rows.append((d.kernel, str(d.dtype), "supported" if d.declared else "unsupported",
                     "supported" if d.observed else "unsupported", d.why or d.note))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"{head}: {len(differences)} cell(s) differ between the declarations "
             f"(arraylayer/kernels/{result.backend}/) and the probe:"]
    lines += ["  " + "  ".join(f"{text:<{w}}" for text, w in zip(r[:4], widths, strict=True)) + "  " + r[4]
              for r in rows]
    add = sorted({(d.kernel, str(d.dtype)) for d in differences if d.declared})
    remove = sorted({(d.kernel, str(d.dtype)) for d in differences if not d.declared})
    if add:
        lines.append("  declare unsupported (or fix the kernel): " + _grouped(add))
    if remove:
        lines.append("  no longer unsupported (remove from the declaration): " + _grouped(remove))
    return "\n".join(lines)


def _grouped(cells: list[tuple[str, str]]) -> str:
    by_kernel: dict[str, list[str]] = {}
    for kernel, dtype in cells:
        by_kernel.setdefault(kernel, []).append(dtype)
    order = {str(d): i for i, d in enumerate(all_dtypes)}
    return "; ".join(f"{k}: {', '.join(sorted(v, key=order.__getitem__))}" for k, v in by_kernel.items())


def probe_report(result: ProbeResult) -> dict[str, Any]:
    """The JSON-ready report of one backend: per kernel the supported dtypes and the reasons of
    the unsupported ones; per public function whose kernels were all probed, what follows (see
    :func:`arraylayer.support.dtype_support`); and the cells that differ from the declarations."""
    backend = result.adapter if result.adapter is not None else _load(result.backend)
    kernels = {}
    for name, cells in result.cells.items():
        kernels[name] = {
            "supported": [str(d) for d, c in cells.items() if c.supported],
            "unsupported": {str(d): c.why for d, c in cells.items() if not c.supported},
        }

    def observed(_backend: Any, kernel: str) -> frozenset[Dtype]:
        return result.unsupported(kernel)

    functions = {}
    table = function_table()
    for name in matrix_functions():
        if not all(k in result.cells or k in result.missing for k in table[name].kernels):
            continue  # a kernel it uses was not probed
        cells = dtype_support(name, backend, observed)
        functions[name] = {
            "supported": [str(d) for d, c in cells.items() if c.supported],
            "unsupported": {str(d): c.status for d, c in cells.items() if not c.supported},
        }
    differences = compare(result)
    return {
        "backend": result.backend,
        "framework": result.framework,
        "version": result.version,
        "valid_dtypes": [str(d) for d in result.valid],
        "seconds": round(result.seconds, 3),
        "missing_kernels": list(result.missing),
        "kernels": kernels,
        "functions": functions,
        "differences": [
            {"kernel": d.kernel, "dtype": str(d.dtype), "declared": "supported" if d.declared else "unsupported",
             "probe": "supported" if d.observed else "unsupported", "why": d.why, "note": d.note}
            for d in differences
        ],
    }


# ---------------------------------------------------------------------------------------------
# The commands
# ---------------------------------------------------------------------------------------------
def _backend_names(name: str | None) -> list[str]:
    from . import registry
    from .cli import CommandError

    if name is None:
        return list(registry.installed_backends())
    if name not in registry.available_backends():
        raise CommandError(f"unknown backend {name!r}; registered backends: {', '.join(registry.available_backends())}")
    if name not in registry.installed_backends():
        raise CommandError(f"the {name!r} backend is not installed here")
    return [name]


def _load(name: str) -> Any:
    from .registry import get_backend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # frameworks warn on import
        return get_backend(name)


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--backend", metavar="NAME", help="only this backend (default: every installed one)")
    parser.add_argument("--x64", action="store_true",
                        help="turn jax_enable_x64 on for the run, so that JAX's 64-bit dtypes are included")


DEFAULT_OUTPUT: Final = "arraylayer-probe.json"


def _probe_arguments(parser: argparse.ArgumentParser) -> None:
    _common_arguments(parser)
    parser.add_argument("--output", metavar="FILE", default=DEFAULT_OUTPUT,
                        help=f"write the JSON here ('-': standard output; default: {DEFAULT_OUTPUT})")
    parser.add_argument("--check", action="store_true",
                        help="exit with status 1 when the declarations differ from the probe")


def _run_probe(args: argparse.Namespace) -> int:
    from . import __version__

    names = _backend_names(args.backend)
    reports, texts, differ = {}, [], False
    with jax_x64(True) if args.x64 else contextlib.nullcontext(), quiet_framework_logs():
        for name in names:
            progress(f"probing {name}: every kernel on every dtype ...")
            result = probe(_load(name))
            progress(f"probed {name} in {result.seconds:.1f} s")
            report = probe_report(result)
            reports[name] = report
            cells = sum(len(c) for c in result.cells.values())
            failing = sum(len(k["unsupported"]) for k in report["kernels"].values())
            texts.append(f"{name} {result.version}: {cells} cells, {failing} unsupported, "
                         f"{len(result.missing)} kernels missing, {result.seconds:.1f} s")
            if report["differences"]:
                differ = True
                texts.append(format_differences(result, compare(result)))
    document = json.dumps({"arraylayer": __version__, "backends": reports}, indent=1, sort_keys=False)
    if args.output == "-":  # the JSON is the output; the summary goes to standard error
        print(document)
        print("\n".join(texts), file=sys.stderr)
    else:  # a summary to read, the JSON (tens of thousands of lines) to a file
        with open(args.output, "w", encoding="utf-8") as handle:
            handle.write(document + "\n")
        print("\n".join(texts + [f"the observed support, as JSON, written to {args.output}"]))
    return 1 if args.check and differ else 0


def _support_arguments(parser: argparse.ArgumentParser) -> None:
    _common_arguments(parser)
    parser.add_argument("--format", dest="fmt", default="text", metavar="FORMAT",
                        help="text (default), markdown or html (a complete page)")
    parser.add_argument("--function", dest="functions", action="append", metavar="NAME",
                        help="only this function (repeatable; e.g. add, linalg.det)")


_PAGE_CSS: Final = """\
table.al-support { border-collapse: collapse; font-family: monospace; margin: 0.5em 0 1.5em; }
table.al-support caption { caption-side: top; text-align: left; padding-bottom: 0.3em; }
table.al-support th, table.al-support td { border: 1px solid #d0d0d0; padding: 1px 5px; text-align: center; }
table.al-support th[scope=row] { text-align: left; }
td.supported { background: #e6f4e6; } td.unsupported, td.missing { background: #f8dcdc; }
td.unverified { background: #fff2cc; } td.undefined, td.invalid { color: #888; }"""


def _run_support(args: argparse.Namespace) -> int:
    from .cli import CommandError
    from .support import function_name

    if args.fmt not in MATRIX_FORMATS:
        raise CommandError(f"unknown format {args.fmt!r}; choose one of {', '.join(MATRIX_FORMATS)}")
    try:
        functions = None if not args.functions else [function_name(f) for f in args.functions]
    except ValueError as error:
        raise CommandError(str(error)) from None
    parts = []
    with jax_x64(True) if args.x64 else contextlib.nullcontext(), quiet_framework_logs():
        for name in _backend_names(args.backend):
            progress(f"loading {name} ...")
            parts.append(render_matrix(support_matrix(_load(name), functions), args.fmt))
    separator = "\n\n"
    if args.fmt == "html":
        body = separator.join(parts)
        print('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8" />\n'
              f"<title>arraylayer dtype support</title>\n<style>\n{_PAGE_CSS}\n</style>\n</head>\n<body>\n"
              f"{body}\n</body>\n</html>")
    else:
        print(separator.join(parts))
    return 0


def _command(**fields: Any) -> Any:
    from .cli import Command

    return Command(**fields)


PROBE_COMMAND: Final = _command(
    name="probe",
    help="run every kernel on every valid dtype; write the observed support as JSON",
    description=(
        "Call every kernel of every installed backend (or --backend NAME) on small sample inputs of "
        "every dtype the api layer may send it and the backend holds, compare dtype and values with "
        "NumPy, and write the observed support (per kernel and per public function) as JSON to a file "
        f"(--output, default {DEFAULT_OUTPUT}; '-' for standard output). A summary per backend and the "
        "cells where the kernel packages' declarations say otherwise are printed; --check makes those "
        "fail the command (exit status 1)."
    ),
    arguments=_probe_arguments,
    run=_run_probe,
)

SUPPORT_COMMAND: Final = _command(
    name="support",
    help="print the function x dtype support matrix, from the declarations",
    description=(
        "Print, per installed backend (or --backend NAME), which input dtypes every array function "
        "supports: generated from the kernel packages' declarations for the installed framework "
        "versions and from the Array API's definitions, under the default dtypes in force."
    ),
    arguments=_support_arguments,
    run=_run_support,
)
