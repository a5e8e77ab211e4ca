"""An adversarial campaign against the model toolkit: hypothesis draws bad trees, shapes, dtypes,
sizes that are not ints, NaN/inf hyper-parameters and other optimizers' states, and every call
must end in a correct result or an ``arraylayer.errors.ArrayLayerError`` (never a bare KeyError,
TypeError or a framework's error from inside), of the same type on every installed backend; where
every backend gives a result, the results agree. Derandomised (a fixed seed) and small: CI runs it."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from conftest import selected_backends
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arraylayer as al
from arraylayer.models import layers
from arraylayer.models import mixed_precision as mp

CAMPAIGN = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

#: sizes, hyper-parameters and flags no toolkit function should trip over
NUMBERS = [0.1, 0.0, -1.0, 1.0, 2.0**15, math.nan, math.inf, -math.inf, 2**1100, True, "0.1", None, [0.1]]
SIZES = [3, 1, 0, -2, 3.0, 2.5, "3", True, None, np.int64(3), (3,)]
FLAGS = [False, True, 1, "yes", None]


@pytest.fixture(scope="module")
def backends(request: pytest.FixtureRequest) -> list[str]:
    return selected_backends(request.config)


def _host(tree: Any) -> list[np.ndarray]:
    """Every leaf as NumPy (dask computes here: a lazy error is raised here too)."""
    return [np.asarray(al.to_backend(leaf, "numpy"), dtype=np.float64) for leaf in al.tree_leaves(tree)]


def outcome(call: Callable[[], Any]) -> tuple[str, list[np.ndarray] | None]:
    """("ok", the result's leaves) or (the ArrayLayerError's type name, None); anything else propagates."""
    try:
        return "ok", _host(call())
    except al.ArrayLayerError as error:
        return type(error).__name__, None


def on_every_backend(backends: list[str], make: Callable[[str], Callable[[], Any]], rtol: float = 1e-5) -> str:
    """One outcome for ``make(backend)()`` on every backend: the same error type, or results that agree."""
    seen = {}
    for backend in backends:
        with al.use_backend(backend):
            seen[backend] = outcome(make(backend))
    kinds = {kind for kind, _ in seen.values()}
    assert len(kinds) == 1, {backend: kind for backend, (kind, _) in seen.items()}
    results = [leaves for _, leaves in seen.values() if leaves is not None]
    for other in results[1:]:
        assert len(other) == len(results[0])
        for a, b in zip(results[0], other, strict=True):
            np.testing.assert_allclose(b, a, rtol=rtol, atol=1e-5, equal_nan=True)
    return kinds.pop()


# -- optimizers -----------------------------------------------------------------------------------------------
P = {"w": np.arange(6.0).reshape(2, 3) / 7, "b": np.array([0.5, -1.0, 2.0])}
OPTIMIZERS: dict[str, Callable[[Any], Any]] = {
    "sgd": lambda h: al.optim.sgd(h), "momentum": lambda h: al.optim.sgd(0.1, h),
    "nesterov": lambda h: al.optim.sgd(0.1, 0.9, nesterov=h), "adam": lambda h: al.optim.adam(h),
    "adam b2": lambda h: al.optim.adam(b2=h), "adamw": lambda h: al.optim.adamw(weight_decay=h),
    "clip": lambda h: al.optim.from_transforms(al.transforms.clip_by_global_norm(h), al.transforms.scale(-0.1)),
    "decay first": lambda h: al.optim.from_transforms(al.transforms.add_decayed_weights(h), al.transforms.scale(-1.0)),
}
GRADIENTS: dict[str, Callable[[], Any]] = {
    "right": lambda: {"w": al.ones((2, 3)), "b": al.ones((3,))},
    "(1,) for (2, 3)": lambda: {"w": al.ones((1,)), "b": al.ones((3,))},
    "transposed": lambda: {"w": al.ones((3, 2)), "b": al.ones((3,))},
    "0-d": lambda: {"w": al.asarray(1.0), "b": al.ones((3,))},
    "missing b": lambda: {"w": al.ones((2, 3))},
    "extra": lambda: {"w": al.ones((2, 3)), "b": al.ones((3,)), "c": al.ones((1,))},
    "None leaf": lambda: {"w": None, "b": al.ones((3,))},
    "a list": lambda: [al.ones((2, 3)), al.ones((3,))],
    "Python floats": lambda: {"w": 1.0, "b": 1.0},
    "NaN": lambda: {"w": al.full((2, 3), math.nan), "b": al.ones((3,))},
}
STATES: dict[str, Callable[[Any, Any], Any]] = {
    "own": lambda optimizer, params: optimizer.init(params),
    "adam's": lambda optimizer, params: al.optim.adam().init(params),
    "momentum's": lambda optimizer, params: al.optim.sgd(0.1, 0.9).init(params),
    "a chain's": lambda optimizer, params: OPTIMIZERS["clip"](1.0).init(params),
    "empty dict": lambda optimizer, params: {},
    "None": lambda optimizer, params: None,
    "for other params": lambda optimizer, params: optimizer.init({"w": al.ones((1,)), "b": al.ones((3,))}),
}


@CAMPAIGN
@given(name=st.sampled_from(sorted(OPTIMIZERS)), hyper=st.sampled_from(NUMBERS),
       grads=st.sampled_from(sorted(GRADIENTS)), state=st.sampled_from(sorted(STATES)))
def test_optimizer_updates(backends, name, hyper, grads, state):
    try:
        optimizer = OPTIMIZERS[name](hyper)
    except al.ArrayLayerError:
        return  # construction needs no backend: refused alike everywhere

    def make(backend: str) -> Callable[[], Any]:
        def call() -> Any:
            params = al.tree_map(lambda v: al.asarray(v.tolist(), dtype="float32"), P)
            return optimizer.update(GRADIENTS[grads](), STATES[state](optimizer, params), params)
        return call

    kind = on_every_backend(backends, make)
    if grads in ("(1,) for (2, 3)", "transposed", "0-d", "missing b", "extra", "None leaf", "a list"):
        assert kind != "ok", "a gradient tree unlike the parameters must be refused"


def test_every_bad_gradient_tree_with_every_optimizer(backends):
    """The campaign above samples; this walks every gradient tree once per optimizer (a Python
    float leaf leaked AttributeError from three of them)."""
    for name in sorted(OPTIMIZERS):
        optimizer = OPTIMIZERS[name](True if name == "nesterov" else 0.1)
        for grads in sorted(GRADIENTS):
            def make(backend: str, grads: str = grads) -> Callable[[], Any]:
                def call() -> Any:
                    params = al.tree_map(lambda v: al.asarray(v.tolist(), dtype="float32"), P)
                    return optimizer.update(GRADIENTS[grads](), optimizer.init(params), params)
                return call

            expected = {"right": "ok", "NaN": "ok", "Python floats": "InvalidArgumentTypeError"}
            assert on_every_backend(backends, make) == expected.get(grads, "InvalidArgumentError"), (name, grads)


# -- layers ---------------------------------------------------------------------------------------------------
INITS: dict[str, Callable[[Any, Any], Any]] = {
    "dense": lambda k, n: layers.dense.init(k, n, 4), "dense out": lambda k, n: layers.dense.init(k, 4, n),
    "embedding": lambda k, n: layers.embedding.init(k, 5, n), "conv2d": lambda k, n: layers.conv2d.init(k, 4, 2, n),
    "layer_norm": lambda k, n: layers.layer_norm.init(k, n), "rms_norm": lambda k, n: layers.rms_norm.init(k, n),
    "mlp": lambda k, n: layers.mlp.init(k, 4, n), "attention": lambda k, n: layers.attention.init(k, 4, n),
    "block": lambda k, n: layers.transformer_block.init(k, 4, n, 8),
}


@CAMPAIGN
@given(name=st.sampled_from(sorted(INITS)), size=st.sampled_from(SIZES))
def test_layer_inits(backends, name, size):
    on_every_backend(backends, lambda backend: lambda: INITS[name](al.random.key(0), size))


APPLIES: dict[str, tuple[Callable[[Any], Any], Callable[..., Any]]] = {
    "dense": (lambda k: layers.dense.init(k, 4, 3), lambda p, x, **kw: layers.dense.apply(p, x, **kw)),
    "layer_norm": (lambda k: layers.layer_norm.init(k, 4), lambda p, x, **kw: layers.layer_norm.apply(p, x, **kw)),
    "rms_norm": (lambda k: layers.rms_norm.init(k, 4), lambda p, x, **kw: layers.rms_norm.apply(p, x, **kw)),
    "mlp": (lambda k: layers.mlp.init(k, 4, 6), lambda p, x, **kw: layers.mlp.apply(p, x, **kw)),
    "attention": (lambda k: layers.attention.init(k, 4, 2),
                  lambda p, x, **kw: layers.attention.apply(p, x, heads=2, **kw)),
    "block": (lambda k: layers.transformer_block.init(k, 4, 2, 8),
              lambda p, x, **kw: layers.transformer_block.apply(p, x, heads=2, **kw)),
}
PARAMS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "as made": lambda p: p, "a key dropped": lambda p: dict(sorted(p.items())[1:]),
    "None": lambda p: None, "a list": lambda p: list(p.values()), "empty": lambda p: {},
    "a leaf of another rank": lambda p: {k: (al.ones((2, 2, 2)) if hasattr(v, "shape") else v) for k, v in p.items()},
}
INPUTS: dict[str, Callable[[], Any]] = {
    "(2, 3, 4)": lambda: al.reshape(al.arange(24, dtype="float32"), (2, 3, 4)),
    "5 features": lambda: al.ones((2, 3, 5)), "0-d": lambda: al.asarray(1.0), "int32": lambda: al.ones((2, 3, 4), dtype="int32"),
    "a list": lambda: [[[1.0] * 4] * 3] * 2, "NaN": lambda: al.full((2, 3, 4), math.nan),
}
POLICIES = [None, "bfloat16", mp.policy("compute=bfloat16"), 3]


@CAMPAIGN
@given(name=st.sampled_from(sorted(APPLIES)), params=st.sampled_from(sorted(PARAMS)),
       x=st.sampled_from(sorted(INPUTS)), policy=st.sampled_from(POLICIES))
def test_layer_applies(backends, name, params, x, policy):
    init, apply = APPLIES[name]

    def make(backend: str) -> Callable[[], Any]:
        return lambda: apply(PARAMS[params](init(al.random.key(1))), INPUTS[x](), policy=policy)

    kind = on_every_backend(backends, make, rtol=2e-2 if policy is not None else 1e-4)
    if params in ("None", "a list", "empty"):
        assert kind != "ok"


# -- loss scaling, attention ------------------------------------------------------------------------------------
@CAMPAIGN
@given(initial=st.sampled_from([2.0**126, 2.0**15, *NUMBERS]), factor=st.sampled_from([2.0, 3.0, *NUMBERS]),
       bound=st.sampled_from([mp.MAX_SCALE, 2.0**20, *NUMBERS]), period=st.sampled_from([1, 2, *SIZES]),
       finite=st.sampled_from([True, False]))
def test_loss_scaling(backends, initial, factor, bound, period, finite):
    def make(backend: str) -> Callable[[], Any]:
        def call() -> Any:
            state = mp.loss_scale(initial)
            for _ in range(3):
                state = mp.adjust(state, al.asarray(finite), period=period, factor=factor, max_scale=bound)
            assert math.isfinite(float(al.to_backend(state.scale, "numpy")))  # never inf: it always recovers
            return state
        return call

    on_every_backend(backends, make)


@CAMPAIGN
@given(scale=st.sampled_from([None, 0.5, *NUMBERS]), causal=st.sampled_from(FLAGS),
       mask=st.sampled_from(["none", "bools", "ints", "True", "False", "numpy", "ragged", "a string", "wrong shape"]),
       rate=st.sampled_from([0.0, 0.5, math.nan, -0.1, 1.0]), keyed=st.booleans())
def test_dot_product_attention(backends, scale, causal, mask, rate, keyed):
    masks = {"none": None, "bools": [[True, False, True]] * 2, "ints": [[1, 0, 1]] * 2, "True": True, "False": False,
             "numpy": np.tril(np.ones((2, 3), bool)), "ragged": [[True], [True, False]], "a string": "yes",
             "wrong shape": [[True, False]] * 5}

    def make(backend: str) -> Callable[[], Any]:
        def call() -> Any:
            q = al.reshape(al.arange(8, dtype="float32"), (1, 2, 1, 4))
            k = al.reshape(al.linspace(-1.0, 1.0, 12, dtype="float32"), (1, 3, 1, 4))
            return al.nn.dot_product_attention(q, k, k, scale=scale, causal=causal, mask=masks[mask],
                                               dropout_rate=rate, key=al.random.key(3) if keyed else None)
        return call

    on_every_backend(backends, make, rtol=1e-4)


def test_huge_layers_are_refused_before_anything_is_allocated(backends):
    """2**24 x 2**24 weights: one random draw of 2**48 numbers, past the key's 2**32 counters."""
    for call in (lambda: layers.dense.init(al.random.key(0), 2**24, 2**24),
                 lambda: layers.embedding.init(al.random.key(0), 2**40, 4)):
        assert on_every_backend(backends, lambda backend, call=call: call) == "InvalidArgumentError"
