"""The bad-input suite: every public function, on every backend, with malformed and edge arguments.

Each case corrupts one parameter of one function (the others keep a valid value) with a value of
that parameter's role (array-like, axis, shape, count, dtype, device, ...). The outcome on each
backend must be a result or an arraylayer error with a message: never an exception raised from
inside numpy/jax/torch/tensorflow ("raw"), never a plain Python error from arraylayer's own code
("leak"), never a hang; and it must be the same outcome class on every backend. On dask a call
must also compute nothing ("computed"): arraylayer's checks there read metadata only, and those
that need values (indices in bounds) raise the same error when the result is computed, which
the suite does.

``python tests/test_bad_input.py`` runs every case exhaustively and prints the figures per backend.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.util
import inspect
import os
import signal
import sys
import traceback
from typing import Any, Final

import pytest

import arraylayer as al
from arraylayer.errors import ArrayLayerError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

BACKENDS: Final = tuple(b for b in ("numpy", "jax", "torch", "tensorflow", "dask") if importlib.util.find_spec(b))
FRAMEWORKS: Final = ("numpy", "jax", "jaxlib", "torch", "tensorflow", "keras", "dask")
HANG_SECONDS: Final = 20


class _Obj:
    """An arbitrary object where an array is expected."""

    def __repr__(self) -> str:
        return "<object>"


# -- abstract values, materialised per backend ------------------------------------------------------
# ("A", dtype, values): a native array of the backend under test; anything else is passed as is.
MATRIX: Final = ("A", "float32", [[2.0, 1.0], [1.0, 2.0]])
VECTOR: Final = ("A", "float32", [1.0, 2.0])
INTS: Final = ("A", "int32", [0, 1])
BOOLS: Final = ("A", "bool", [True, False])
INT8: Final = ("A", "int8", [1, 2])

#: Bad and edge values per role.
BAD: Final[dict[str, list[Any]]] = {
    "array": [[[1, 2], [3]], "abc", None, _Obj(), 2**31, 2**70, [1.5, "a"], [], 3, 1.5, True, [[]], (1, 2),
              b"ab", {1: 2}, ("A", "float32", []), ("A", "float32", 1.0), ("A", "float32", [float("nan"), 1.0]),
              INT8],
    "arrays": [[], [[[1], [2, 3]]], "ab", None, [None], [VECTOR, MATRIX], 3],
    "axis": [5, -5, 1.5, (0, 0), "a", 2**70, (0, 5), [0], True],
    "shape": [(2.5, 3), (-1,), "x", (2**31,) * 3, 2**70, None, (True, 2), -3, (2, None), 2.0],
    "count": [-1, 2**50, 1.5, None, "2", 2**70, True],
    "dtype": ["flaot32", [1], _Obj(), "int8", 3, "bool", "complex64"],
    "device": ["gpu:99", 3, "nope", _Obj()],
    "scalar": [None, "a", _Obj(), 2**70, float("nan"), 1.5, True],
    "flag": [None, "yes", 2],
    "choice": [None, "nope", 3],
    "int": [-1, 2**70, 1.5, None, "1", True],
    "chunks": ["abc", -3, 1.5, (2, 2, 2), _Obj(), ((1, 1),)],
}

#: Parameter name -> (role, valid value). Parameters not listed keep their default.
PARAMS: Final[dict[str, tuple[str, Any]]] = {
    "x": ("array", MATRIX), "x1": ("array", MATRIX), "x2": ("array", MATRIX), "obj": ("array", [1, 2]),
    "condition": ("array", BOOLS), "indices": ("array", INTS), "sorter": ("array", None),
    "prepend": ("array", None), "append": ("array", None), "min": ("scalar", None), "max": ("scalar", None),
    "arrays": ("arrays", [MATRIX, MATRIX]),
    "axis": ("axis", None), "axes": ("axis", None), "source": ("axis", 0), "destination": ("axis", 1),
    "shape": ("shape", (2, 2)), "repetitions": ("shape", (2, 1)),
    "n": ("count", 1), "repeats": ("count", 2), "shift": ("count", 1), "num": ("count", 3),
    "n_rows": ("count", 2), "n_cols": ("count", None), "k": ("int", 0), "offset": ("int", 0),
    "dtype": ("dtype", None), "device": ("device", None),
    "fill_value": ("scalar", 1.0), "start": ("scalar", 0), "stop": ("scalar", 3), "step": ("scalar", 1),
    "keepdims": ("flag", False), "descending": ("flag", False), "stable": ("flag", True),
    "include_initial": ("flag", False), "endpoint": ("flag", True), "copy": ("flag", None),
    "upper": ("flag", False), "full_matrices": ("flag", True),
    "side": ("choice", "left"), "indexing": ("choice", "xy"), "mode": ("choice", "reduced"),
    "ord": ("choice", None), "correction": ("scalar", 0.0), "rtol": ("scalar", None),
    "kind": ("choice", "real floating"), "shapes": ("shape", None), "norm": ("choice", "backward"),
    "chunks": ("chunks", None),
}

#: Valid values that differ from the table above for one function.
SPECIAL: Final[dict[str, dict[str, Any]]] = {
    "take": {"x": VECTOR}, "searchsorted": {"x1": VECTOR, "x2": VECTOR}, "nonzero": {"x": VECTOR},
    "cross": {"x1": ("A", "float32", [1.0, 2.0, 3.0]), "x2": ("A", "float32", [3.0, 2.0, 1.0])},
    "vecdot": {"x1": VECTOR, "x2": VECTOR}, "outer": {"x1": VECTOR, "x2": VECTOR},
    "vector_norm": {"x": VECTOR}, "take_along_axis": {"indices": ("A", "int32", [[0, 1], [1, 0]])},
    "isdtype": {"dtype": "float32"}, "astype": {"dtype": "float64"}, "finfo": {"type": "float32"},
    "iinfo": {"type": "int32"}, "can_cast": {"from_": "int8", "to": "int32"}, "reshape": {"shape": (4,)},
    "tensordot": {"axes": 1}, "broadcast_to": {"shape": (2, 2)}, "squeeze": {"axis": 0, "x": ("A", "float32", [[1.0, 2.0]])},
    "expand_dims": {"axis": 0}, "unstack": {"axis": 0}, "permute_dims": {"axes": (1, 0)},
    "clip": {"min": 0.0, "max": 1.5}, "matrix_power": {"n": 2}, "bitwise_left_shift": {"x1": INTS, "x2": INTS},
    "bitwise_right_shift": {"x1": INTS, "x2": INTS}, "bitwise_and": {"x1": INTS, "x2": INTS},
    "bitwise_or": {"x1": INTS, "x2": INTS}, "bitwise_xor": {"x1": INTS, "x2": INTS}, "bitwise_invert": {"x": INTS},
    "repeat": {"x": VECTOR}, "diff": {"x": VECTOR}, "roll": {"x": VECTOR}, "linspace": {"start": 0.0, "stop": 1.0},
    "tile": {"repetitions": (2,)}, "moveaxis": {"source": 0, "destination": 1},
    "broadcast_shapes": {"shapes": [(2, 1), (3,)]},
}

#: Functions whose parameters are not arrays of the backend under test (dtype utilities) or that
#: exist to move data between backends; covered by their own tests.
SKIP: Final = frozenset({"from_dlpack", "result_type", "can_cast", "finfo", "iinfo"})


def public_functions() -> dict[str, Any]:
    """Every public function of arraylayer's array API (top level, linalg and fft), by name."""
    found = {}
    for name in al.__all__:
        f = getattr(al, name)
        if callable(f) and not isinstance(f, type) and (getattr(f, "__module__", "") or "").startswith("arraylayer.api"):
            found[name] = f
    for extension in ("linalg", "fft"):
        for name, f in vars(getattr(al, extension)).items():
            if (not name.startswith("_") and callable(f) and not isinstance(f, type)
                    and getattr(f, "__module__", "") == f"arraylayer.api.{extension}"):
                found[f"{extension}.{name}"] = f
    return {n: f for n, f in found.items() if n not in SKIP}


FUNCTIONS: Final = public_functions()


def corruptible(name: str, f: Any) -> list[tuple[str, str]]:
    """(parameter, role) of each parameter of ``f`` this suite knows how to corrupt."""
    return [(p, PARAMS[p][0]) for p in inspect.signature(f).parameters if p in PARAMS]


def valid_arguments(name: str, f: Any) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments (abstract) of a valid call of ``f``."""
    args, kwargs = [], {}
    special = SPECIAL.get(name.removeprefix("linalg."), {})
    for p in inspect.signature(f).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            args.extend(special.get(p.name, [VECTOR, VECTOR]))
            continue
        if p.name in special:
            value = special[p.name]
        elif p.name in PARAMS:
            value = PARAMS[p.name][1]
        elif p.default is not p.empty:
            continue
        else:
            value = MATRIX
        if p.kind is p.POSITIONAL_ONLY:
            args.append(value)
        elif p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD:
            args.append(value)
        else:
            kwargs[p.name] = value
    return args, kwargs


def materialise(value: Any) -> Any:
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "A":
        return al.asarray(value[2], dtype=value[1])
    if isinstance(value, list):
        return [materialise(v) for v in value]
    return value


def call_with(name: str, f: Any, parameter: str, value: Any) -> tuple[list[Any], dict[str, Any]]:
    args, kwargs = valid_arguments(name, f)
    names = [p.name for p in inspect.signature(f).parameters.values()]
    if parameter in kwargs or parameter not in names[: len(args)]:
        kwargs[parameter] = value
    else:
        args[names.index(parameter)] = value
    return args, kwargs


class _Hang(BaseException):
    pass


def _alarm(*_: Any) -> None:
    raise _Hang


def _computation_counter() -> Any:
    """A dask callback that counts the graphs computed while it is active (``with counter:``)."""
    from dask.callbacks import Callback

    class Counter(Callback):
        def __init__(self) -> None:
            super().__init__()
            self.computed = 0

        def _start(self, dsk: Any) -> None:
            self.computed += 1

    return Counter()


def outcome(backend: str, name: str, parameter: str, value: Any) -> tuple[str, str]:
    """(class, detail) of calling ``name`` on ``backend`` with ``parameter`` set to ``value``:
    "ok", "al:<ErrorType>", "raw:<module>", "leak:<ErrorType>", "hang" or "empty-message"; on
    dask, "computed" for a call that ran a graph (arraylayer must stay lazy there)."""
    f = FUNCTIONS[name]
    with al.use_backend(backend):
        args, kwargs = call_with(name, f, parameter, value)
        args, kwargs = materialise(args), {k: materialise(v) for k, v in kwargs.items()}
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(HANG_SECONDS)
        counter = _computation_counter() if backend == "dask" else contextlib.nullcontext()
        try:
            with counter:
                result = f(*args, **kwargs)
            if getattr(counter, "computed", 0):
                return "computed", f"{counter.computed} graph(s) computed by {name}"
            if backend == "dask":  # what the lazy result does when it runs: value checks happen then
                import dask

                dask.compute(result)
            return "ok", ""
        except _Hang:
            return "hang", ""
        except ArrayLayerError as e:
            return (f"al:{type(e).__name__}" if str(e) else "empty-message"), str(e)[:200]
        except Exception as e:  # noqa: BLE001 - classifying what escaped is the point
            frames = traceback.extract_tb(e.__traceback__)
            module = _module_of(frames[-1].filename) if frames else "?"
            kind = "raw" if module in FRAMEWORKS else "leak"
            where = f"{frames[-1].filename.rsplit('site-packages/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
            return f"{kind}:{type(e).__name__}", f"{where}: {str(e)[:160]}"
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)


def _module_of(filename: str) -> str:
    if "/arraylayer/" in filename.replace("\\", "/"):
        return "arraylayer"
    for part in reversed(filename.replace("\\", "/").split("/")):
        if part in FRAMEWORKS:
            return part
    return "arraylayer" if "arraylayer" in filename else "other"


def cases() -> list[tuple[str, str, int]]:
    """Every (function, parameter, index of a bad value) the suite knows."""
    return [(name, p, i) for name, f in sorted(FUNCTIONS.items()) for p, role in corruptible(name, f)
            for i in range(len(BAD[role]))]


CASES: Final = cases()


def comparable(parameter: str, results: dict[str, Any]) -> dict[str, Any]:
    """The outcomes that must agree: ``chunks`` has a meaning on chunked backends only (the others
    refuse any value but None by design), so it is compared among those."""
    chunked = {b: r for b, r in results.items() if al.get_backend(b).chunked}
    return chunked if parameter == "chunks" else results


def _check(name: str, parameter: str, index: int) -> None:
    value = BAD[PARAMS[parameter][0]][index]
    results = {b: outcome(b, name, parameter, value) for b in BACKENDS}
    call = f"{name}({parameter}={value!r})"
    for backend, (kind, detail) in results.items():
        assert kind == "ok" or kind.startswith("al:"), f"{call} on {backend}: {kind} {detail}"
    kinds = {kind for kind, _ in comparable(parameter, results).values()}
    assert len(kinds) == 1, f"{call} differs across backends: {results}"


@settings(max_examples=int(os.environ.get("AL_BAD_INPUT_EXAMPLES", "400")), derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(case=st.sampled_from(CASES))
def test_bad_input_is_refused_alike_on_every_backend(case: tuple[str, str, int]) -> None:
    _check(*case)


def test_every_public_function_is_covered() -> None:
    """A new public function needs a row here: it must have at least one parameter this suite corrupts."""
    uncovered = [name for name, f in FUNCTIONS.items()
                 if inspect.signature(f).parameters and not corruptible(name, f)]
    assert not uncovered, f"add the parameters of {uncovered} to PARAMS"


def _huge(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return any(_huge(v) for v in value)
    return type(value) is int and abs(value) >= 2**31


def campaign() -> None:
    """Run every case on every backend and print the figures (raw, leak, hang, disagreements)."""
    counts: dict[str, collections.Counter[str]] = {b: collections.Counter() for b in BACKENDS}
    sites: dict[str, collections.Counter[str]] = {b: collections.Counter() for b in BACKENDS}
    disagreements = []
    skip_jax_huge = os.environ.get("AL_SKIP_HUGE") == "1"
    for name, parameter, index in CASES:
        value = BAD[PARAMS[parameter][0]][index]
        results = {}
        for b in BACKENDS:
            if skip_jax_huge and _huge(value):
                results[b] = ("skipped", "")
                continue
            results[b] = outcome(b, name, parameter, value)
            kind = results[b][0].split(":")[0]
            counts[b][kind] += 1
            if kind in ("raw", "leak", "hang"):
                sites[b][f"{name}({parameter}={value!r}) -> {results[b][0]} {results[b][1]}"] += 1
        if len({k for k, _ in comparable(parameter, results).values()}) > 1:
            disagreements.append((name, parameter, value, {b: r[0] for b, r in results.items()}))
    print(f"{len(CASES)} cases per backend")
    for b in BACKENDS:
        print(b, dict(counts[b]))
    print("cross-backend disagreements:", len(disagreements))
    if "-v" in sys.argv:
        for b in BACKENDS:
            print(f"--- {b}")
            for s in sites[b]:
                print("  ", s[:300])
        print("--- disagreements")
        for d in disagreements:
            print("  ", d)


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    campaign()
