"""The toolkit's bad-input campaign: every argument of the model toolkit's functions (layers,
optimizers, schedules, gradient transforms, mixed precision, random, attention and losses,
checkpoints, the low-precision casts) replaced, one at a time, by each hostile value of its role,
on every backend. As tests/test_bad_input.py does for the namespace, each outcome must be a result
or an arraylayer error with a message (never "raw": raised inside a framework; never "leak": a
plain Python error from arraylayer's own lines; never "hang"), and the same class of outcome on
every backend that has the function ("disagreement" otherwise).

``python tests/toolkit_campaign.py [-v]`` runs every case and prints the figures per family and
backend (``-v`` lists each failure); tests/test_toolkit_campaign.py runs a fixed-seed sample in CI
and every case under ``AL_TOOLKIT_CAMPAIGN=all`` (``nox -s badinput``).
"""

from __future__ import annotations

import collections
import math
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any, Final


import arraylayer as al
from arraylayer import layers

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tests.test_bad_input import BACKENDS, _Obj, call_outcome  # noqa: E402

X: Final = ("A", "float32", [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])  # (batch 2, features 3)
SEQ: Final = ("A", "float32", [[[0.5, -1.0, 2.0, 1.0]] * 3] * 2)  # (batch 2, length 3, features 4)
IDS: Final = ("A", "int32", [[0, 1, 2], [2, 1, 0]])
LABELS: Final = ("A", "int32", [0, 2])
IMAGE: Final = ("A", "float32", [[[[0.5, 1.0]] * 3] * 3])  # NHWC (1, 3, 3, 2)

#: hostile values per role
BAD: Final[dict[str, list[Any]]] = {
    "size": [0, -2, 3.0, 2.5, "3", True, None, 2**70, (3,), _Obj()],
    "number": [math.nan, math.inf, -math.inf, -1.0, 0.0, 2**1100, True, "0.1", None, [0.1], _Obj()],
    "count": [-1, 0, 1.5, "2", None, 2**70, True],
    "tree": [None, [], {}, {"w": None}, {"w": "abc"}, {1: 2}, "params", 3, _Obj(), {"w": [[1.0]]},
             {"x": {"y": {"z": []}}}],
    "array": [None, "abc", _Obj(), [[1, 2], [3]], [], 3, ("A", "float32", []), ("A", "int8", [1, 2]),
              ("A", "float32", [float("nan"), 1.0]), ("A", "bool", [True, False]), ("A", "float32", [[[1.0]]])],
    "key": [None, 3, "key", _Obj(), ("A", "float32", [1.0, 2.0]), ("A", "int32", [1, 2, 3])],
    "shape": [(-1,), (2.5,), "x", (2**31,) * 3, 2**70, (True, 2), -3, (2, None)],
    "dtype": ["flaot32", "int8", "bool", 3, _Obj(), "complex64"],
    "flag": [None, "yes", 2, 1.5],
    "string": ["", "nope", 3, None, "compute=flaot16", "compute=bfloat16,output", "\udcff"],
    "path": ["", "/dev/null", "/nonexistent/dir/file.safetensors", 3, None, "/proc/self/mem"],
    "step": [-1, 1.5, "3", True, 2**70, None],
    "callable": [None, 3, "relu", _Obj()],
}


def materialise(value: Any, backend: str) -> Any:
    """Abstract values on ``backend``: ("A", dtype, values) an array, ("K", seed) a key, ("P", layer,
    args, kwargs) a layer's parameters, ("S", optimizer, params) an optimizer's state, ("O", name,
    args) an optimizer, ("L", scale) a loss scale."""
    if isinstance(value, tuple) and value and value[0] in _MAKERS:
        return _MAKERS[value[0]](*value[1:])
    if isinstance(value, list):
        return [materialise(v, backend) for v in value]
    if isinstance(value, dict):
        return {k: materialise(v, backend) for k, v in value.items()}
    return value


_MAKERS: Final[dict[str, Callable[..., Any]]] = {
    "A": lambda dtype, values: al.asarray(values, dtype=dtype),
    "K": lambda seed: al.random.key(seed),
    "P": lambda layer, args, kwargs: getattr(layers, layer).init(al.random.key(0), *args, **kwargs),
    "O": lambda name, args: getattr(al.optim, name)(*args),
    "S": lambda name, args, layer, init: getattr(al.optim, name)(*args).init(
        getattr(layers, layer).init(al.random.key(0), *init)),
    "L": lambda scale: al.mixed_precision.loss_scale(scale),
    "G": lambda layer, init: al.tree_map(al.ones_like, getattr(layers, layer).init(al.random.key(0), *init)),
}

DENSE: Final = ("P", "dense", (3, 2), {})


def _file(name: str) -> str:
    return os.path.join(tempfile.gettempdir(), f"arraylayer-campaign-{os.getpid()}-{name}.safetensors")


def _update(name: str) -> Callable[..., Any]:
    """``optimizer.update(grads, state, params)`` of a fresh ``name`` optimizer."""
    def update(grads: Any, state: Any, params: Any, learning_rate: Any = 0.1) -> Any:
        return getattr(al.optim, name)(learning_rate).update(grads, state, params)
    update.__name__ = f"{name}.update"
    return update


def _schedule_at(step: Any) -> Any:
    return al.schedules.warmup_cosine_decay(1e-3, 10, 100)(step)


def _saved(tree: Any, step: Any = 3, file: Any = None) -> Any:
    al.checkpoint.save(_file("save") if file is None else file, tree, step=step)


def _loaded(file: Any) -> Any:
    return al.checkpoint.load(file)


def _round_trip(tree: Any, like: Any) -> Any:
    path = _file("round")
    al.checkpoint.save(path, tree)
    return al.checkpoint.load(path, like)


#: (family, name, function, valid arguments {parameter: (value, role)}); positional parameters first, in order
TARGETS: Final[list[tuple[str, str, Callable[..., Any], dict[str, tuple[Any, str]]]]] = [
    ("layers", "dense.init", layers.dense.init, {"key": (("K", 0), "key"), "in_features": (3, "size"),
                                                 "out_features": (2, "size"), "dtype": (None, "dtype"), "bias": (True, "flag")}),
    ("layers", "dense.apply", layers.dense.apply, {"params": (DENSE, "tree"), "x": (X, "array")}),
    ("layers", "embedding.apply", layers.embedding.apply, {"params": (("P", "embedding", (3, 4), {}), "tree"),
                                                           "ids": (IDS, "array")}),
    ("layers", "layer_norm.apply", layers.layer_norm.apply, {"params": (("P", "layer_norm", (3,), {}), "tree"),
                                                             "x": (X, "array"), "eps": (1e-5, "number")}),
    ("layers", "rms_norm.init", layers.rms_norm.init, {"key": (("K", 0), "key"), "features": (3, "size")}),
    ("layers", "mlp.apply", layers.mlp.apply, {"params": (("P", "mlp", (3, 4), {}), "tree"), "x": (X, "array"),
                                               "activation": (al.nn.relu, "callable")}),
    ("layers", "conv2d.apply", layers.conv2d.apply, {"params": (("P", "conv2d", (2, 1, 3), {}), "tree"),
                                                     "x": (IMAGE, "array"), "stride": (1, "size")}),
    ("layers", "attention.apply", layers.attention.apply, {"params": (("P", "attention", (4, 2), {}), "tree"),
                                                           "x": (SEQ, "array"), "heads": (2, "size"),
                                                           "causal": (False, "flag"), "dropout_rate": (0.0, "number")}),
    ("layers", "transformer_block.init", layers.transformer_block.init, {"key": (("K", 0), "key"), "features": (4, "size"),
                                                                         "heads": (2, "size"), "hidden": (8, "size")}),
    ("optim", "sgd", al.optim.sgd, {"learning_rate": (0.1, "number"), "momentum": (0.9, "number"), "nesterov": (False, "flag")}),
    ("optim", "adam", al.optim.adam, {"learning_rate": (0.1, "number"), "b1": (0.9, "number"), "b2": (0.999, "number"),
                                      "eps": (1e-8, "number")}),
    ("optim", "adam.init", lambda params: al.optim.adam(0.1).init(params), {"params": (DENSE, "tree")}),
    ("optim", "adam.update", _update("adam"), {"grads": (("G", "dense", (3, 2)), "tree"),
                                               "state": (("S", "adam", (0.1,), "dense", (3, 2)), "tree"),
                                               "params": (DENSE, "tree"), "learning_rate": (0.1, "number")}),
    ("optim", "sgd.update", _update("sgd"), {"grads": (("G", "dense", (3, 2)), "tree"),
                                             "state": (("S", "sgd", (0.1,), "dense", (3, 2)), "tree"),
                                             "params": (DENSE, "tree")}),
    ("schedules", "warmup_cosine_decay", al.schedules.warmup_cosine_decay,
     {"peak": (1e-3, "number"), "warmup_steps": (10, "count"), "decay_steps": (100, "count"), "alpha": (0.0, "number")}),
    ("schedules", "exponential_decay", al.schedules.exponential_decay,
     {"init": (1e-3, "number"), "rate": (0.5, "number"), "steps": (10, "count"), "staircase": (False, "flag")}),
    ("schedules", "schedule(step)", _schedule_at, {"step": (5, "step")}),
    ("transforms", "clip_by_global_norm", al.transforms.clip_by_global_norm, {"max_norm": (1.0, "number")}),
    ("transforms", "add_decayed_weights", al.transforms.add_decayed_weights, {"weight_decay": (0.01, "number")}),
    ("mixed_precision", "policy", al.mixed_precision.policy, {"spec": ("compute=bfloat16", "string")}),
    ("mixed_precision", "loss_scale", al.mixed_precision.loss_scale, {"initial": (2.0**15, "number")}),
    ("mixed_precision", "scale_loss", al.mixed_precision.scale_loss, {"state": (("L", 2.0**15), "tree"),
                                                                     "loss": (("A", "float32", 1.5), "array")}),
    ("mixed_precision", "unscale", al.mixed_precision.unscale, {"state": (("L", 2.0**15), "tree"),
                                                               "grads": (("G", "dense", (3, 2)), "tree")}),
    ("mixed_precision", "adjust", al.mixed_precision.adjust, {"state": (("L", 2.0**15), "tree"),
                                                             "finite": (("A", "bool", True), "array"),
                                                             "period": (2000, "count"), "factor": (2.0, "number")}),
    ("random", "key", al.random.key, {"seed": (0, "step")}),
    ("random", "normal", al.random.normal, {"key": (("K", 0), "key"), "shape": ((2, 3), "shape"), "dtype": (None, "dtype")}),
    ("random", "uniform", al.random.uniform, {"key": (("K", 0), "key"), "shape": ((2, 3), "shape"),
                                              "dtype": (None, "dtype"), "minval": (0.0, "number"), "maxval": (1.0, "number")}),
    ("random", "randint", al.random.randint, {"key": (("K", 0), "key"), "shape": ((2, 3), "shape"),
                                              "minval": (0, "step"), "maxval": (5, "step")}),
    ("random", "split", al.random.split, {"key": (("K", 0), "key"), "num": (2, "count")}),
    ("random", "bernoulli", al.random.bernoulli, {"key": (("K", 0), "key"), "p": (0.5, "number"), "shape": ((3,), "shape")}),
    ("random", "categorical", al.random.categorical, {"key": (("K", 0), "key"), "logits": (X, "array")}),
    ("random", "permutation", al.random.permutation, {"key": (("K", 0), "key"), "n": (5, "count")}),
    ("random", "truncated_normal", al.random.truncated_normal, {"key": (("K", 0), "key"), "lower": (-1.0, "number"),
                                                                "upper": (1.0, "number"), "shape": ((3,), "shape")}),
    ("nn", "dot_product_attention", al.nn.dot_product_attention,
     {"q": (SEQ, "array"), "k": (SEQ, "array"), "v": (SEQ, "array"), "causal": (False, "flag"), "scale": (None, "number")}),
    ("nn", "cross_entropy", al.nn.cross_entropy, {"logits": (X, "array"), "labels": (LABELS, "array"),
                                                  "label_smoothing": (0.0, "number")}),
    ("nn", "softmax", al.nn.softmax, {"x": (X, "array")}),
    ("checkpoint", "save", _saved, {"tree": (DENSE, "tree"), "step": (3, "step"), "file": (None, "path")}),
    ("checkpoint", "load", _loaded, {"file": ("/nonexistent.safetensors", "path")}),
    ("checkpoint", "round trip", _round_trip, {"tree": (DENSE, "tree"), "like": (None, "tree")}),
    ("lowp", "astype float8", lambda x, saturate=False: al.astype(x, "float8_e4m3fn", saturate=saturate),
     {"x": (X, "array"), "saturate": (False, "flag")}),
    ("lowp", "lowp.encode", al.lowp.encode, {"x": (("A", "float32", [1.0, 2.0]), "array"), "format": ("int4", "string"),
                                             "saturate": (False, "flag")}),
]


def cases() -> list[tuple[int, str, int]]:
    """(target index, parameter, bad value index) of every case."""
    return [(t, parameter, i) for t, (_, _, _, valid) in enumerate(TARGETS) for parameter, (_, role) in valid.items()
            for i in range(len(BAD[role]))]


CASES: Final = cases()


def outcome(case: tuple[int, str, int], backend: str) -> tuple[str, str]:
    """(class, detail) of one case on ``backend`` (see tests/test_bad_input.py's classes)."""
    index, parameter, bad = case
    _, _, function, valid = TARGETS[index]
    with al.use_backend(backend):
        try:
            arguments = {name: materialise(value, backend) for name, (value, _) in valid.items()}
        except Exception as e:  # noqa: BLE001 - the valid arguments themselves: a campaign bug, reported
            return f"setup:{type(e).__name__}", str(e)[:120]
        arguments[parameter] = materialise(BAD[valid[parameter][1]][bad], backend)
    return call_outcome(backend, TARGETS[index][1], function, [], arguments)[:2]


#: families whose functions must compute their inputs (a checkpoint writes their values)
_COMPUTING: Final = frozenset({"checkpoint"})

FAILING: Final = ("raw", "leak", "hang", "empty-message", "setup")


def check(case: tuple[int, str, int], backends: tuple[str, ...] = BACKENDS) -> list[tuple[str, str, str]]:
    """(backend, class, detail) of each failure of ``case``: a failing class, or another class of
    outcome than NumPy's (results are not compared here: tests/test_toolkit_hostile.py does)."""
    found = {backend: outcome(case, backend) for backend in backends}
    if TARGETS[case[0]][0] in _COMPUTING:  # writing a file computes a dask array: "computed" is its "ok"
        found = {b: ("ok", detail) if cls == "computed" else (cls, detail) for b, (cls, detail) in found.items()}
    failures = [(b, cls, detail) for b, (cls, detail) in found.items() if cls.split(":")[0] in FAILING]
    kinds = {b: cls.split(":")[0] for b, (cls, _) in found.items()}
    reference = kinds.get("numpy")
    failures += [(b, f"disagreement:{found[b][0]} vs numpy {found['numpy'][0]}", found[b][1])
                 for b in backends if reference and kinds[b] != reference and kinds[b] not in FAILING]
    return failures


def describe(case: tuple[int, str, int]) -> str:
    index, parameter, bad = case
    family, name, _, valid = TARGETS[index]
    return f"{family}/{name}({parameter}={BAD[valid[parameter][1]][bad]!r})"


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    counts: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for case in CASES:
        family = TARGETS[case[0]][0]
        for backend, cls, detail in check(case):
            counts[family, backend][cls.split(":")[0]] += 1
            if verbose:
                print(f"  {describe(case)} on {backend}: {cls} {detail}")
    print(f"{len(CASES)} cases x {len(BACKENDS)} backends ({', '.join(BACKENDS)})")
    total: collections.Counter[str] = collections.Counter()
    for (family, backend), counter in sorted(counts.items()):
        print(f"  {family:<16} {backend:<11} {dict(counter)}")
        total.update(counter)
    print(f"failures: {dict(total) or 0}")
    return 1 if total else 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.exit(main(sys.argv[1:]))
