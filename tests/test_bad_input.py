"""The bad-input suite: every public function, on every backend, with malformed and edge arguments.

Each case corrupts one parameter of one function (the others keep a valid value) with a value of
that parameter's role (array-like, axis, shape, count, dtype, device, ...). The outcome on each
backend must be a result or an arraylayer error with a message: never an exception raised from
inside numpy/jax/torch/tensorflow ("raw"), never a plain Python error from arraylayer's own code
("leak"), never a hang; and it must be the same outcome class on every backend. On dask a call
must also compute nothing ("computed"): arraylayer's checks there read metadata only, and those
that need values (indices in bounds) raise the same error when the result is computed, which
the suite does.

Three more families are generated (see "The generated families" below): non-arrays in every
array-like role (A), dtypes a backend stores but cannot compute with (B), extreme Python scalars
next to every dtype in every binary function (C). An outcome is fine when it is a result equal to
NumPy's (same dtype) or an arraylayer error; it fails as "raw" (raised inside a framework),
"leak" (a plain Python error from arraylayer's lines), "accepted" (garbage taken silently),
"wrong" (a result that is not NumPy's) or "disagreement" (another outcome class than NumPy's).

CI runs a fixed-seed sample of each family (``AL_BAD_INPUT_EXAMPLES`` sets the examples per
test). ``python tests/test_bad_input.py [roles] [A] [B] [C] [-v]`` (or ``nox -s badinput``) runs
every case and prints the figures per family and backend; ``-v`` lists each failure, ``toolkit`` runs
the cases of the model toolkit alone (nn, layers' init/apply, optim, the math ops beyond the standard
and the control flow: tests/model_calls.py's valid calls, their parameters' roles in TOOLKIT_ROLES).
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

import model_calls

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
    "x": ("array", MATRIX), "m": ("array", MATRIX), "a": ("array", MATRIX), "tup": ("arrays", [MATRIX, MATRIX]),
    "axis1": ("axis", 0), "axis2": ("axis", 1), "x1": ("array", MATRIX), "x2": ("array", MATRIX), "obj": ("array", [1, 2]),
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
    "v": ("array", MATRIX), "b": ("array", MATRIX), "weights": ("array", None), "atol": ("scalar", 1e-8),
    "equal_nan": ("flag", False), "nan": ("scalar", 0.0), "posinf": ("scalar", None), "neginf": ("scalar", None),
    "minlength": ("count", 0), "returned": ("flag", False), "density": ("flag", False), "right": ("flag", False),
    "rowvar": ("flag", True), "lower": ("flag", False), "rcond": ("scalar", None),
    # numpy_extra's names
    "ary": ("array", MATRIX), "indices_or_sections": ("int", 2), "arr": ("array", MATRIX), "values": ("array", MATRIX),
    "z": ("array", MATRIX), "deg": ("flag", False), "M": ("count", 4), "beta": ("scalar", 3.0), "N": ("count", None),
    "increasing": ("flag", False), "y": ("array", MATRIX), "dx": ("scalar", 1.0), "kth": ("int", 0),
    "condlist": ("arrays", [BOOLS]), "choicelist": ("arrays", [VECTOR]), "default": ("scalar", 0),
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
    "isclose": {"rtol": 1e-5}, "allclose": {"rtol": 1e-5}, "nan_to_num": {"copy": True},
    "percentile": {"q": 50.0}, "nanpercentile": {"q": [10.0, 90.0]}, "bincount": {"x": INTS, "length": 3},
    "digitize": {"bins": VECTOR}, "correlate": {"a": VECTOR, "v": VECTOR, "mode": "valid"}, "vdot": {"b": MATRIX},
    **dict.fromkeys(["split", "array_split"], {"axis": 0}), "trapezoid": {"axis": -1},
    "geomspace": {"start": 1.0, "stop": 3.0, "axis": 0}, "vander": {"x": VECTOR},
    "ldexp": {"x2": INTS}, "gcd": {"x1": INTS, "x2": INTS}, "lcm": {"x1": INTS, "x2": INTS},
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
                    and getattr(f, "__module__", "") in (f"arraylayer.api.{extension}", f"arraylayer.api.{extension}_more")):
                found[f"{extension}.{name}"] = f
    return {n: f for n, f in found.items() if n not in SKIP}


FUNCTIONS: Final = public_functions()

# -- the model toolkit, the math ops beyond the standard and the control flow ----------------------
#: Their valid calls are tests/model_calls.py's (shared with tests/test_support_models.py); their
#: parameters' roles are these (then PARAMS'), per function where a name means two things.
TOOLKIT: Final = {name: f for name, (f, _, _) in model_calls.calls().items()}
BAD.update({
    "key": [None, 3, "key", ("A", "float32", [1.0, 2.0]), _Obj()],
    "tree": [None, {}, [], "abc", 3, {"w": None}, _Obj()],
    "window": [0, -1, 1.5, "x", (2, 2, 2, 2), (0, 2), True, 2**70],
    "padding": ["NOPE", -1, 1.5, ((1,),), _Obj(), (1, 2, 3, 4, 5)],
    "policy": [3, "nope", _Obj()],
    "function": [None, 3, "relu"],
})
TOOLKIT_ROLES: Final[dict[str, str]] = {
    **dict.fromkeys(("logits", "labels", "predictions", "targets", "kernel", "q", "v", "table", "ids", "mean", "var",
                     "abs_", "angle", "inputs", "sequence_lengths", "label_lengths", "logit_lengths",
                     "depthwise_kernel", "pointwise_kernel", "mask", "xs", "init", "h0", "h", "data", "segment_ids",
                     "updates", "elems", "offset", "start_indices"), "array"),
    **dict.fromkeys(("num_classes", "groups", "block_size", "in_features", "out_features", "features", "hidden",
                     "heads", "vocabulary", "channels", "in_channels", "out_channels", "num_segments",
                     "sequence_length", "sequence_stride", "fft_length", "beam_width", "top_paths", "multiplier",
                     "ndim"), "count"),
    **dict.fromkeys(("window", "stride", "dilation", "kernel_size", "output_size", "output_padding"), "window"),
    "padding": "padding",
    **dict.fromkeys(("data_format", "reduction", "strategy"), "choice"),
    **dict.fromkeys(("rate", "eps", "epsilon", "alpha", "negative_slope", "threshold", "default_value", "b", "max_val",
                     "learning_rate", "b1", "b2", "momentum", "decay", "weight_decay", "eps1", "eps2", "decay_rate",
                     "clipping_threshold", "initial_accumulator_value", "label_smoothing", "stddev", "forget_bias",
                     "dropout_rate", "order", "p", "blank_index", "ignore_index", "mask_index"), "scalar"),
    **dict.fromkeys(("training", "approximate", "from_logits", "causal", "bias", "nesterov", "centered",
                     "merge_repeated", "sorted", "keepdims", "reverse"), "flag"),
    "key": "key", **dict.fromkeys(("params", "grads", "tree"), "tree"), "policy": "policy", "activation": "function",
    "subscripts": "choice", "center": "flag", "length": "count",
}
#: Roles of one function's parameters where they differ from TOOLKIT_ROLES.
TOOLKIT_SPECIAL_ROLES: Final[dict[str, dict[str, str]]] = {
    "nn.dot_product_attention": {"k": "array", "scale": "scalar"},
    **{f"nn.{n}": {"scale": "array"} for n in ("layer_norm", "batch_norm", "group_norm", "instance_norm",
                                              "rms_normalization")},
    "nn.moments": {"axes": "axis"}, "layers.batch_norm.apply": {"state": "tree"},
    "layers.lstm_cell.apply": {"state": "tree"}, "top_k": {"k": "count"}, "in_top_k": {"k": "count"},
    # the control flow carries trees (nested lists, dicts and None are trees): corrupted as trees, not arrays
    **{name: dict.fromkeys(("x", "xs", "init"), "tree") for name in model_calls.FLOW if name != "custom_gradient"},
}
#: Every function the campaign calls: the array API's and the toolkit's.
CAMPAIGN: Final = {**FUNCTIONS, **TOOLKIT}


def role(name: str, parameter: str) -> str | None:
    """The role of ``name``'s ``parameter`` (None: not corrupted)."""
    if name in TOOLKIT:
        found = TOOLKIT_SPECIAL_ROLES.get(name, {}).get(parameter) or TOOLKIT_ROLES.get(parameter)
        if found is not None:
            return found
    return PARAMS[parameter][0] if parameter in PARAMS else None


def corruptible(name: str, f: Any) -> list[tuple[str, str]]:
    """(parameter, role) of each parameter of ``f`` this suite knows how to corrupt."""
    roles = [(p, role(name, p)) for p in inspect.signature(f).parameters]
    return [(p, r) for p, r in roles if r is not None]


def valid_arguments(name: str, f: Any) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments (abstract) of a valid call of ``f``."""
    if name in TOOLKIT:
        _, args, kwargs = model_calls.calls()[name]
        return list(args), dict(kwargs)
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
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "N":
        return _native(value[1], value[2])
    if type(value) is tuple and value and value[0] in ("K", "P", "S"):  # a key, a layer's parameters (a named
        # tuple, a loss scale's state, is a value: not one of these)
        return model_calls.materialise(value)
    if isinstance(value, list):
        return [materialise(v) for v in value]
    if isinstance(value, dict):
        return {k: materialise(v) for k, v in value.items()}
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


def computation_counter() -> Any:
    """A dask callback that counts the graphs dask computes while it is active (``with
    computation_counter() as counted:``, then ``counted.count``); dask is imported when called."""
    from dask.callbacks import Callback

    class Computations(Callback):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def _start(self, dsk: Any) -> None:
            self.count += 1

        def __enter__(self) -> Computations:
            super().__enter__()
            return self

    return Computations()


def outcome(backend: str, name: str, parameter: str, value: Any) -> tuple[str, str]:
    """(class, detail) of calling ``name`` on ``backend`` with ``parameter`` set to ``value``:
    "ok", "al:<ErrorType>", "raw:<module>", "leak:<ErrorType>", "hang" or "empty-message"; on
    dask, "computed" for a call that ran a graph (arraylayer must stay lazy there)."""
    f = CAMPAIGN[name]
    with al.use_backend(backend):
        args, kwargs = call_with(name, f, parameter, value)
    return call_outcome(backend, name, f, args, kwargs)[:2]


def call_outcome(backend: str, name: str, f: Any, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, str, Any]:
    """(class, detail, result) of ``f(*args, **kwargs)`` on ``backend``, abstract arrays
    materialised there; see :func:`outcome` for the classes."""
    with al.use_backend(backend):
        args, kwargs = materialise(args), {k: materialise(v) for k, v in kwargs.items()}
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(HANG_SECONDS)
        counter = computation_counter() if backend == "dask" else contextlib.nullcontext()
        try:
            with counter:
                result = f(*args, **kwargs)
            if getattr(counter, "count", 0):
                return "computed", f"{counter.count} graph(s) computed by {name}", None
            if backend == "dask":  # what the lazy result does when it runs: value checks happen then
                import dask

                (result,) = dask.compute(result)
            return "ok", "", result
        except _Hang:
            return "hang", "", None
        except ArrayLayerError as e:
            return (f"al:{type(e).__name__}" if str(e) else "empty-message"), str(e)[:200], None
        except Exception as e:  # noqa: BLE001 - classifying what escaped is the point
            frames = traceback.extract_tb(e.__traceback__)
            module = _module_of(frames[-1].filename) if frames else "?"
            kind = "raw" if module in FRAMEWORKS else "leak"
            where = f"{frames[-1].filename.rsplit('site-packages/', 1)[-1]}:{frames[-1].lineno}" if frames else "?"
            return f"{kind}:{type(e).__name__}", f"{where}: {str(e)[:160]}", None
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
    return [(name, p, i) for name, f in sorted(CAMPAIGN.items()) for p, role in corruptible(name, f)
            for i in range(len(BAD[role]))]


CASES: Final = cases()


def comparable(parameter: str, results: dict[str, Any]) -> dict[str, Any]:
    """The outcomes that must agree: ``chunks`` has a meaning on chunked backends only (the others
    refuse any value but None by design), so it is compared among those."""
    chunked = {b: r for b, r in results.items() if al.get_backend(b).chunked}
    return chunked if parameter == "chunks" else results


def check_role_case(name: str, parameter: str, index: int) -> list[Failure]:
    """The failures of ``name`` with ``parameter`` set to the ``index``-th bad value of its role."""
    value = BAD[role(name, parameter)][index]
    results = {b: outcome(b, name, parameter, value) for b in BACKENDS}
    call = f"{name}({parameter}={value!r:.60})"
    failures = [f for backend, (kind, detail) in results.items() for f in _escaped(kind, detail, backend, call)]
    compared = comparable(parameter, results)
    reference = compared.get("numpy", next(iter(compared.values())))[0]
    return failures + [("disagreement", b, f"{call}: {kind}, reference {reference}")
                       for b, (kind, _) in compared.items() if kind != reference]


def _check(name: str, parameter: str, index: int) -> None:
    failures = check_role_case(name, parameter, index)
    assert not failures, "\n".join(map(str, failures))


@settings(max_examples=int(os.environ.get("AL_BAD_INPUT_EXAMPLES", "120")), derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(case=st.sampled_from(CASES))
def test_bad_input_is_refused_alike_on_every_backend(case: tuple[str, str, int]) -> None:
    _check(*case)


def test_every_public_function_is_covered() -> None:
    """A new public function needs a row here: it must have at least one parameter this suite corrupts."""
    uncovered = [name for name, f in CAMPAIGN.items()
                 if inspect.signature(f).parameters and not corruptible(name, f)]
    assert not uncovered, f"add the parameters of {uncovered} to PARAMS"


# == The generated families ========================================================================
# Three families, each a property over a table of cases that hypothesis samples (a fixed-seed
# sample in CI; AL_BAD_INPUT_EXAMPLES raises it, ``nox -s badinput`` runs every case):
#   A. non-arrays (lists, ragged lists, None, str, bytes, dicts, sets, objects) in every array-like
#      role of every public function, interchange and dtype-inference functions included;
#   B. every dtype a backend stores but cannot compute with (torch's uint16/32/64), for every
#      function: an arraylayer error, or NumPy's result in the same dtype;
#   C. extreme Python scalars next to an array of every dtype, for every binary function, on
#      either side: NumPy's result (same dtype and values) or NumPy's arraylayer error.

#: Functions outside arraylayer.api that take arrays: (function, valid call, array slots).
OTHER_FUNCTIONS: Final[dict[str, tuple[Any, list[Any], tuple[int, ...]]]] = {
    "dev": (al.dev, [VECTOR], (0,)), "to_device": (al.to_device, [VECTOR, "cpu"], (0,)),
    "to_backend": (al.to_backend, [VECTOR, "numpy"], (0,)), "from_dlpack": (al.from_dlpack, [VECTOR], (0,)),
    "default_dtype": (al.default_dtype, [None, VECTOR], (1,)), "infer_dtype": (al.infer_dtype, [None, VECTOR], (1,)),
}
#: Parameters that hold arrays, by their role in PARAMS.
ARRAY_ROLES: Final = ("array", "arrays")


def _garbage(kind: str) -> bool:
    return kind not in ("list", "None")


def non_array_values() -> st.SearchStrategy[tuple[str, Any]]:
    """(kind, value): generated lists of numbers (valid array-likes) and ragged lists, and the
    values that are never arrays."""
    numbers = st.one_of(st.integers(-5, 5), st.floats(-4, 4, allow_nan=False))
    rows = st.lists(numbers, min_size=1, max_size=3)
    ragged = st.lists(rows, min_size=2, max_size=3).filter(lambda r: len({len(row) for row in r}) > 1)
    fixed = st.sampled_from([("None", None), ("str", "ab"), ("str", ""), ("bytes", b"ab"), ("dict", {1: 2}),
                             ("set", {1, 2}), ("object", _Obj()), ("mixed", [1.0, "a"]), ("nested-None", [None, 1])])
    return st.one_of(st.tuples(st.just("list"), st.lists(numbers, min_size=1, max_size=4)),
                     st.tuples(st.just("ragged"), ragged), fixed)


def array_slots() -> list[tuple[str, str]]:
    """(function, slot) of every array-like slot: a parameter name, ``<name>[0]`` (the first array
    of a sequence parameter) or ``*0`` (the first positional of a variadic function)."""
    slots = []
    for name, f in sorted(CAMPAIGN.items()):
        for p in inspect.signature(f).parameters.values():
            kind = role(name, p.name)
            if p.kind is p.VAR_POSITIONAL:
                if name not in TOOLKIT or name == "einsum":  # (the pooling layers' init takes anything: no parameters)
                    slots.append((name, f"*{len(valid_arguments(name, f)[0]) - 1}" if name in TOOLKIT else "*0"))
            elif kind == "array":
                slots.append((name, p.name))
            elif kind == "arrays":
                slots += [(name, p.name), (name, f"{p.name}[0]")]
    return slots + [(name, f"*{i}") for name, (_, _, positions) in OTHER_FUNCTIONS.items() for i in positions]


ARRAY_SLOTS: Final = array_slots()


def slot_call(name: str, slot: str, value: Any) -> tuple[Any, list[Any], dict[str, Any]]:
    """(function, args, kwargs) of a valid call of ``name`` with ``slot`` set to ``value``."""
    if name in OTHER_FUNCTIONS:
        f, args, _ = OTHER_FUNCTIONS[name]
        args = list(args)
        args[int(slot[1:])] = value
        return f, args, {}
    f = CAMPAIGN[name]
    if slot.startswith("*"):
        args, kwargs = valid_arguments(name, f)
        args[int(slot[1:])] = value
        return f, args, kwargs
    if slot.endswith("[0]"):
        parameter = slot[:-3]
        args, kwargs = valid_arguments(name, f)
        position = list(inspect.signature(f).parameters).index(parameter)
        sequence = kwargs[parameter] if parameter in kwargs else args[position]
        return (f, *call_with(name, f, parameter, [value, *list(sequence)[1:]]))
    return (f, *call_with(name, f, slot, value))


def _none_allowed(name: str, slot: str) -> bool:
    """None is a valid value of a parameter whose default is None (``sorter``, ``prepend`` ...)."""
    if name in OTHER_FUNCTIONS:
        return name == "default_dtype"  # item=None: no item
    parameter = slot.removesuffix("[0]")
    p = inspect.signature(CAMPAIGN[name]).parameters.get(parameter)
    return p is not None and p.default is None and not slot.endswith("[0]")


#: A failure: (kind, backend, what happened). Kinds: raw (a framework's exception), leak (a plain
#: Python error from arraylayer's own lines), accepted (garbage taken silently), wrong (a result
#: that is not NumPy's), disagreement (another outcome class than NumPy's), hang, computed, empty-message.
Failure = tuple[str, str, str]


def _escaped(cls: str, detail: str, backend: str, call: str) -> list[Failure]:
    """The failure of an outcome that is neither a result nor an arraylayer error."""
    return [] if cls == "ok" or cls.startswith("al:") else [(cls.split(":")[0], backend, f"{call}: {cls} {detail}")]


def check_non_array(name: str, slot: str, kind: str, value: Any) -> list[Failure]:
    """Family A: the failures of ``name`` with ``value`` (of ``kind``) in array slot ``slot``."""
    failures: list[Failure] = []
    classes = {}
    call = f"{name}({slot}={value!r:.40})"
    for backend in BACKENDS:
        f, args, kwargs = slot_call(name, slot, value)
        cls, detail, _ = call_outcome(backend, name, f, args, kwargs)
        classes[backend] = cls
        if cls == "ok" and _garbage(kind) and not (kind == "None" and _none_allowed(name, slot)):
            failures.append(("accepted", backend, call))
        failures += _escaped(cls, detail, backend, call)
    failures += [("disagreement", b, f"{call}: {c}, NumPy {classes['numpy']}") for b, c in classes.items()
                 if c != classes["numpy"]]
    return failures


@settings(max_examples=int(os.environ.get("AL_BAD_INPUT_EXAMPLES", "80")), derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(slot=st.sampled_from(ARRAY_SLOTS), value=non_array_values())
def test_non_arrays_in_every_array_role_are_refused_alike(slot: tuple[str, str], value: tuple[str, Any]) -> None:
    failures = check_non_array(*slot, *value)
    assert not failures, "\n".join(map(str, failures))


# -- B. dtypes a backend stores but cannot compute with ----------------------------------------------

def stored_only() -> dict[str, tuple[str, ...]]:
    from arraylayer.support import stored_only_dtypes

    return {b: tuple(sorted(str(d) for d in stored_only_dtypes(al.get_backend(b)))) for b in BACKENDS}


STORED_ONLY: Final = stored_only()


def _native(dtype: str, values: Any) -> Any:
    """An array of the active backend of ``dtype`` built natively (arraylayer refuses to create the
    dtypes this family is about, so they are made the way a user's framework would make them)."""
    import numpy as np

    array = np.asarray(values, dtype=dtype)
    backend = al.get_backend().name
    if al.Dtype(dtype).is_low_precision:  # no framework reads ml_dtypes' arrays alike: arraylayer moves the bits
        return al.to_backend(array, backend)
    if backend == "torch":
        import torch

        return torch.from_numpy(array)
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.constant(array)
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.asarray(array)
    if backend == "dask":
        import dask.array as da

        return da.from_array(array)
    return array


def _retyped(value: Any, dtype: str) -> Any:
    """An abstract argument with every numeric array in it made a native array of ``dtype``."""
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "A":
        if value[1] == "bool":
            return value
        return ("N", dtype, _as_ints(value[2]))
    if isinstance(value, list):
        return [_retyped(v, dtype) for v in value]
    if isinstance(value, dict):
        return {k: _retyped(v, dtype) for k, v in value.items()}
    return value


def _as_ints(values: Any) -> Any:
    return [_as_ints(v) for v in values] if isinstance(values, list) else abs(int(values))


def _stored_cases() -> list[tuple[str, str, str]]:
    """(backend, dtype, function) for every function with a numeric array argument."""
    cases = []
    for backend, dtypes in STORED_ONLY.items():
        for dtype in dtypes:
            for name, f in sorted(CAMPAIGN.items()):
                args, kwargs = valid_arguments(name, f)
                if (_retyped(args, dtype) != args or _retyped(list(kwargs.values()), dtype) != list(kwargs.values())
                        or "dtype" in inspect.signature(f).parameters):
                    cases.append((backend, dtype, name))
    return cases


STORED_CASES: Final = _stored_cases()


#: Functions whose values are unspecified: only their dtype and shape are compared.
_UNSPECIFIED_VALUES: Final = frozenset({"empty", "empty_like"})


def check_stored_only(backend: str, dtype: str, name: str) -> list[Failure]:
    """Family B: ``name`` on arrays of ``dtype`` (stored but not computable on ``backend``), and
    with ``dtype=`` that dtype where it takes one: an arraylayer error, or NumPy's result (same
    dtype, same values)."""
    f = CAMPAIGN[name]
    args, kwargs = valid_arguments(name, f)
    args, kwargs = _retyped(args, dtype), {k: _retyped(v, dtype) for k, v in kwargs.items()}
    names = list(inspect.signature(f).parameters)
    if "dtype" in names and names.index("dtype") < len(args):
        args[names.index("dtype")] = dtype
    elif "dtype" in names:
        kwargs["dtype"] = dtype
    cls, detail, result = call_outcome(backend, name, f, args, kwargs)
    call = f"{name}({dtype} arrays) on {backend}"
    if cls == "ok":
        ref_cls, _, reference = call_outcome("numpy", name, f, args, kwargs)
        if name in _UNSPECIFIED_VALUES and ref_cls == "ok":  # empty(): its memory is whatever was there
            agrees = (al.Dtype(result.dtype), tuple(result.shape)) == (al.Dtype(reference.dtype), tuple(reference.shape))
        else:
            agrees = ref_cls == "ok" and same_result(result, reference, backend)
        if not agrees:
            return [("wrong", backend, f"{call}: {_summary(result)} where NumPy gives {ref_cls} {_summary(reference)}")]
    return _escaped(cls, detail, backend, call)


@settings(max_examples=int(os.environ.get("AL_BAD_INPUT_EXAMPLES", "40")), derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(case=st.sampled_from(STORED_CASES or [("numpy", "", "")]))
def test_stored_but_uncomputable_dtypes_are_refused_or_exact(case: tuple[str, str, str]) -> None:
    if not case[1]:
        pytest.skip("no installed backend stores a dtype it cannot compute with")
    failures = check_stored_only(*case)
    assert not failures, "\n".join(map(str, failures))


# -- C. extreme Python scalars next to every dtype, for every binary function ------------------------

EXTREMES: Final = (1e300, -1e300, 2**70, -(2**70), float("inf"), float("nan"), 1e-320)
#: Sample values of an array per dtype kind.
SAMPLES: Final = {"bool": [True, False], "int": [1, 2], "uint": [1, 2], "float": [1.5, -2.0],
                  "complex": [1.5 + 1j, -2.0]}


#: Differences from NumPy's result that are documented as not unified (docs/errors.rst), by reason.
#: The campaign lists them as "known", apart from the failures.
KNOWN: Final = {
    "subnormal": "a subnormal value in or out: the CPU kernels of TensorFlow and XLA (JAX) flush subnormals "
                 "to zero; not unified",
    "complex": "complex arithmetic with an infinite or huge operand: torch's complex add (x + 1*y), "
               "TensorFlow's complex divide and each framework's complex pow make NaN parts where NumPy "
               "does not; not unified",
}


def _subnormal(reference: Any, dtype: str, scalar: Any) -> bool:
    import numpy as np

    if type(scalar) is float and scalar != 0 and abs(scalar) < 2.3e-308:
        return True
    values = np.asarray(reference).astype(np.complex128).ravel()
    tiny = float(al.finfo(dtype).smallest_normal) if dtype.startswith(("float", "bfloat", "complex")) else 0.0
    parts = np.abs(np.concatenate([values.real, values.imag]))
    return bool(np.any((parts > 0) & (parts < tiny)))


def known_difference(name: str, dtype: str, backend: str, reference: Any, scalar: Any) -> str:
    """The reason (a :data:`KNOWN` entry) when ``backend``'s result may differ from NumPy's
    ``reference`` by design; "" otherwise."""
    if backend in ("jax", "tensorflow") and hasattr(reference, "dtype") and _subnormal(
            reference, str(al.Dtype(reference.dtype)), scalar):
        return KNOWN["subnormal"]
    if dtype.startswith("complex") and (name == "pow" or not abs(scalar) < 3e38):
        return KNOWN["complex"]
    return ""


def _extreme_cases() -> list[tuple[str, str, int, bool]]:
    from arraylayer.api.elementwise import BINARY
    from arraylayer.dtypes import all_dtypes

    return [(name, str(d), i, first) for name in sorted(BINARY) for d in all_dtypes
            for i in range(len(EXTREMES)) for first in (True, False)]


EXTREME_CASES: Final = _extreme_cases()


def _tolerance(dtype: str) -> float:
    return {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-6, "complex64": 2e-6}.get(dtype, 1e-12)


def same_result(result: Any, reference: Any, backend: str) -> bool:
    """``result`` (of ``backend``) equals NumPy's ``reference``: same dtype, same values (NaN equal
    to NaN; inexact values within a few units of the dtype's last place)."""
    import numpy as np

    if isinstance(reference, (tuple, list)):
        return (isinstance(result, (tuple, list)) and len(result) == len(reference)
                and all(same_result(r, e, backend) for r, e in zip(result, reference, strict=True)))
    if not hasattr(reference, "dtype"):
        return result == reference or (result != result and reference != reference)
    if str(al.Dtype(result.dtype)) != str(al.Dtype(reference.dtype)):
        return False
    got = np.asarray(al.to_backend(result, "numpy")) if backend != "numpy" else np.asarray(result)
    want = np.asarray(reference)
    if got.shape != want.shape:
        return False
    if got.dtype.kind in "fc" or str(al.Dtype(reference.dtype)) == "bfloat16":
        got, want = got.astype(np.complex128), want.astype(np.complex128)
        tol = _tolerance(str(al.Dtype(reference.dtype)))
        return bool(np.allclose(got, want, rtol=tol, atol=0, equal_nan=True))
    return bool(np.array_equal(got, want))


def _summary(result: Any) -> str:
    if hasattr(result, "dtype"):
        values = al.to_backend(result, "numpy").tolist() if hasattr(result, "shape") else result
        return f"{al.Dtype(result.dtype)} {values}"[:120]
    return repr(result)[:120]


def check_extreme(name: str, dtype: str, index: int, first: bool) -> list[Failure]:
    """Family C: (failures, class per backend) of ``name`` with an array of ``dtype`` and the
    extreme scalar ``EXTREMES[index]`` (array first when ``first``). Backends that cannot hold
    ``dtype`` are left out."""
    scalar = EXTREMES[index]
    array = ("A", dtype, SAMPLES[al.Dtype(dtype).category])
    f = FUNCTIONS[name]
    args = [array, scalar] if first else [scalar, array]
    call = f"{name}({', '.join(repr(a) if a is scalar else dtype + ' array' for a in args)})"
    results: dict[str, tuple[str, Any]] = {}
    failures: list[Failure] = []
    for backend in BACKENDS:
        if dtype not in al.get_backend(backend).valid_dtypes():
            continue
        cls, detail, result = call_outcome(backend, name, f, args, {})
        results[backend] = (cls, result)
        failures += _escaped(cls, detail, backend, call)
    reference = results.get("numpy")
    for backend, (cls, result) in results.items():
        if reference is None or backend == "numpy" or not (cls == "ok" or cls.startswith("al:")):
            continue
        if cls != reference[0]:
            failures.append(("disagreement", backend, f"{call}: {cls}, NumPy {reference[0]}"))
        elif cls == "ok" and not same_result(result, reference[1], backend):
            known = known_difference(name, dtype, backend, reference[1], scalar)
            what = f"{call}: {_summary(result)}, NumPy {_summary(reference[1])}"
            failures.append(("known", backend, f"{what} ({known})") if known else ("wrong", backend, what))
    return failures


@settings(max_examples=int(os.environ.get("AL_BAD_INPUT_EXAMPLES", "60")), derandomize=True, deadline=None,
          suppress_health_check=list(HealthCheck), database=None)
@given(case=st.sampled_from(EXTREME_CASES))
def test_extreme_scalars_give_numpys_answer_on_every_backend(case: tuple[str, str, int, bool]) -> None:
    import numpy as np

    with np.errstate(all="ignore"):
        failures = [f for f in check_extreme(*case) if f[0] != "known"]
    assert not failures, "\n".join(map(str, failures))


# -- the cases named in issue 19, item 4 (one deterministic test each, every backend) -----------------

@pytest.mark.parametrize("value", [[1, 2], [[1], [1, 2]], None, "ab"])
def test_interchange_functions_refuse_non_arrays(backend: str, value: Any) -> None:
    with al.use_backend(backend):
        for call in (lambda: al.dev(value), lambda: al.to_device(value, "cpu"), lambda: al.from_dlpack(value)):
            with pytest.raises(al.InvalidArgumentTypeError, match="not"):
                call()


@pytest.mark.skipif("torch" not in BACKENDS, reason="torch is the backend that stores uint64 only")
@pytest.mark.parametrize("dtype", ["uint64"])  # uint16/uint32: computed in int64 (tests/test_backend_torch.py)
def test_torch_refuses_computing_on_dtypes_it_only_stores(dtype: str) -> None:
    import torch

    from arraylayer.runtime.registry import get_backend
    from arraylayer.support import stored_only_dtypes

    assert al.Dtype(dtype) in stored_only_dtypes(get_backend("torch"))
    u = torch.tensor([1, 2, 3]).to(getattr(torch, dtype))
    for f in (al.abs, al.negative, al.square, al.bitwise_invert, al.argmax, al.max, al.sort, al.nonzero, al.sign):
        with pytest.raises(al.UnsupportedDtypeError, match=r"arraylayer\.astype"):
            f(u)
    assert al.abs(al.astype(u, "int64")).tolist() == [1, 2, 3]
    assert al.astype(u, "int64").dtype == torch.int64


def test_named_argument_cases(backend: str) -> None:
    import numpy as np

    with al.use_backend(backend):
        x = al.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        with pytest.raises(al.InvalidArgumentError, match="do not broadcast"):
            al.take_along_axis(x, al.asarray([[0, 1], [1, 0], [0, 0]]), axis=0)
        empty = al.take_along_axis(x, al.asarray(np.zeros((2, 0), np.int32)), axis=1)
        assert tuple(empty.shape) == (2, 0)
        v = al.asarray([1.0, 2.0])
        assert al.to_backend(al.repeat(v, np.int64(2)), "numpy").tolist() == [1.0, 1.0, 2.0, 2.0]
        with np.errstate(all="ignore"):
            got = al.to_backend(al.floor_divide(al.ones(2), 1e300), "numpy")
            assert got.tolist() == (np.ones(2, np.float32) // np.float32(1e300)).tolist()
    with pytest.raises(al.InvalidDtypeError, match="dtype object"):
        al.register_dtype_alias(np.ones(2), "float32")
    with al.use_backend(None) as chosen:
        assert chosen.name == "numpy"


#: Fixed values of family A for the exhaustive campaign: (kind, value).
NON_ARRAY_SAMPLES: Final = [("list", [1.0, 2.0]), ("ragged", [[1.0], [1.0, 2.0]]), ("None", None), ("str", "ab"),
                            ("bytes", b"ab"), ("dict", {1: 2}), ("set", {1, 2}), ("object", _Obj()),
                            ("mixed", [1.0, "a"]), ("nested-None", [None, 1])]
#: What the campaign counts per backend, in this order.
FIGURES: Final = ("raw", "leak", "accepted", "wrong", "disagreement", "hang", "computed", "empty-message", "known")


def family_cases(family: str, toolkit: bool = False) -> list[tuple[Any, ...]]:
    """Every case of one family: ``roles`` (the malformed-argument table), ``A``, ``B`` or ``C``;
    with ``toolkit``, those of the toolkit's functions only (TOOLKIT: nn, layers, optim, the math ops
    and the control flow)."""
    if family == "roles":
        cases = list(CASES)
    elif family == "A":
        cases = [(*slot, *sample) for slot in ARRAY_SLOTS for sample in NON_ARRAY_SAMPLES]
    elif family == "B":
        cases = list(STORED_CASES)
    else:
        cases = list(EXTREME_CASES)
    if toolkit:
        position = 2 if family == "B" else 0
        cases = [c for c in cases if c[position] in TOOLKIT]
    return cases


def run_case(family: str, case: tuple[Any, ...]) -> list[Failure]:
    import numpy as np

    check = {"roles": check_role_case, "A": check_non_array, "B": check_stored_only, "C": check_extreme}[family]
    with np.errstate(all="ignore"):
        return check(*case)


def campaign(families: tuple[str, ...] = ("roles", "A", "B", "C"), verbose: bool = False,
             toolkit: bool = False) -> dict[str, Any]:
    """Run every case of ``families`` on every backend (``toolkit``: the toolkit's functions only);
    print and return the figures per family and backend (raw, leak = internal error, accepted, wrong,
    disagreement ...)."""
    import warnings

    warnings.simplefilter("ignore")
    figures: dict[str, Any] = {}
    for family in families:
        cases = family_cases(family, toolkit)
        counts = {b: collections.Counter() for b in BACKENDS}
        listed: list[Failure] = []
        for case in cases:
            failures = run_case(family, case)
            for kind, backend, what in failures:
                counts[backend][kind] += 1
                listed.append((kind, backend, what))
        figures[family] = {"cases": len(cases), "counts": counts, "failures": listed}
        print(f"family {family}: {len(cases)} cases (each on every backend)")
        print("  backend     " + " ".join(f"{k:>13}" for k in FIGURES))
        for b in BACKENDS:
            print(f"  {b:<11} " + " ".join(f"{counts[b][k]:>13}" for k in FIGURES))
        if verbose:
            for kind, backend, what in listed:
                print(f"    {kind} [{backend}] {what[:300]}")
    return figures


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    chosen = tuple(a for a in sys.argv[1:] if a in ("roles", "A", "B", "C")) or ("roles", "A", "B", "C")
    figures = campaign(chosen, verbose="-v" in sys.argv, toolkit="toolkit" in sys.argv)
    sys.exit(1 if any(f[0] != "known" for family in figures.values() for f in family["failures"]) else 0)
