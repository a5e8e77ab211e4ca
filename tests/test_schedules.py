"""Learning-rate schedules: values against NumPy formulas (float64) on every backend, use as the
learning rate of every optimizer, and one trace of a compiled step across steps."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from test_compile_and_grad import compiled_backend  # noqa: F401 - a fixture

import arraylayer as al

S = al.schedules
STEPS = np.arange(0, 25)


# -- NumPy oracles, written from the formulas -------------------------------------------------------------------
def np_linear(t, start, end, n):
    return start + (end - start) * np.clip(t / n, 0.0, 1.0)


def np_cosine(t, init, n, alpha):
    return init * ((1 - alpha) * 0.5 * (1 + np.cos(np.pi * np.minimum(t, n) / n)) + alpha)


def np_exponential(t, init, rate, n, staircase):
    e = t / n
    return init * rate ** (np.floor(e) if staircase else e)


def np_piecewise(t, bounds, values):
    return np.asarray(values)[np.searchsorted(bounds, t, side="right")]


CASES = {
    "constant": (lambda: S.constant(0.3), lambda t: np.full(t.shape, 0.3)),
    "linear warm-up": (lambda: S.linear(0.0, 0.1, 8), lambda t: np_linear(t, 0.0, 0.1, 8)),
    "linear decay": (lambda: S.linear(1.0, 0.25, 5), lambda t: np_linear(t, 1.0, 0.25, 5)),
    "cosine": (lambda: S.cosine_decay(0.5, 20), lambda t: np_cosine(t, 0.5, 20, 0.0)),
    "cosine alpha": (lambda: S.cosine_decay(2.0, 12, alpha=0.1), lambda t: np_cosine(t, 2.0, 12, 0.1)),
    "exponential": (lambda: S.exponential_decay(1.0, 0.9, 3), lambda t: np_exponential(t, 1.0, 0.9, 3, False)),
    "step decay": (lambda: S.exponential_decay(0.1, 0.5, 7, staircase=True),
                   lambda t: np_exponential(t, 0.1, 0.5, 7, True)),
    "piecewise": (lambda: S.piecewise_constant([3, 10, 11], [1.0, 0.5, 0.25, 0.01]),
                  lambda t: np_piecewise(t, [3, 10, 11], [1.0, 0.5, 0.25, 0.01])),
    "join": (lambda: S.join([S.constant(0.2), S.linear(0.2, 0.0, 4), S.exponential_decay(0.05, 0.5, 2)], [5, 12]),
             lambda t: np.where(t < 5, 0.2, np.where(t < 12, np_linear(t - 5, 0.2, 0.0, 4),
                                                     np_exponential(t - 12, 0.05, 0.5, 2, False)))),
    "warm-up cosine": (lambda: S.warmup_cosine_decay(1.0, 4, 16, alpha=0.05),
                       lambda t: np.where(t < 4, np_linear(t, 0.0, 1.0, 4), np_cosine(t - 4, 1.0, 16, 0.05))),
}


def values(backend: str, schedule: Any) -> np.ndarray:
    out = []
    with al.use_backend(backend):
        for t in STEPS:
            rate = schedule(al.asarray(int(t), dtype=al.int32))
            assert al.Dtype(rate.dtype) is al.float32 and tuple(rate.shape) == ()
            assert al.backend_of(rate).name == backend
            out.append(float(np.asarray(al.to_backend(rate, "numpy"))))
    return np.asarray(out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_schedules_match_their_formulas(backend, name):
    make, oracle = CASES[name]
    # float32 results against float64 formulas: a few float32 ulps
    np.testing.assert_allclose(values(backend, make()), oracle(STEPS.astype(np.float64)), rtol=1e-6, atol=1e-7)


def test_a_python_int_count_uses_the_active_backend():
    with al.use_backend("numpy"):
        assert float(S.linear(0.0, 1.0, 4)(2)) == 0.5
    with pytest.raises(al.InvalidArgumentTypeError, match="count"):
        S.constant(0.1)(1.5)


@pytest.mark.parametrize("make, match", [
    (lambda: S.linear(0.0, 1.0, 0), "steps"),
    (lambda: S.cosine_decay(1.0, -3), "steps"),
    (lambda: S.exponential_decay(1.0, 0.0, 5), "rate"),
    (lambda: S.constant(float("nan")), "value"),
    (lambda: S.piecewise_constant([5, 3], [1.0, 0.5, 0.1]), "increasing"),
    (lambda: S.piecewise_constant([5], [1.0]), "boundaries"),
    (lambda: S.join([S.constant(1.0), 0.5], [3]), "schedules\\[1\\]"),
    (lambda: S.linear("0", 1.0, 3), "start"),
])
def test_bad_schedule_arguments_are_refused(make, match):
    with pytest.raises((al.InvalidArgumentError, al.InvalidArgumentTypeError), match=match):
        make()


# -- schedules as learning rates ------------------------------------------------------------------------------------
def _tree(backend: str, values: Any) -> Any:
    with al.use_backend(backend):
        return {key: al.asarray(value, dtype="float32") for key, value in values.items()}


P0, G = {"w": [1.0, -2.0, 0.5]}, {"w": [0.5, 1.0, -4.0]}
RATES = S.piecewise_constant([2], [0.1, 0.025])


@pytest.mark.parametrize("name", ["sgd", "sgd momentum", "adam", "adamw"])
def test_every_optimizer_takes_a_schedule(backend, name):
    """A schedule gives the same parameters as a new optimizer per step with that step's rate."""
    make = {"sgd": lambda lr: al.optim.sgd(lr), "sgd momentum": lambda lr: al.optim.sgd(lr, momentum=0.5),
            "adam": lambda lr: al.optim.adam(lr), "adamw": lambda lr: al.optim.adamw(lr, weight_decay=0.1)}[name]
    scheduled, params = make(RATES), _tree(backend, P0)
    state = scheduled.init(params)
    by_hand, hand_state = params, make(0.1).init(params)
    for step in range(4):
        params, state = scheduled.update(_tree(backend, G), state, params)
        by_hand, hand_state = make(0.1 if step < 2 else 0.025).update(_tree(backend, G), hand_state, by_hand)
    assert int(np.asarray(al.to_backend(state["schedule_count"], "numpy"))) == 4
    np.testing.assert_allclose(np.asarray(al.to_backend(params["w"], "numpy")),
                               np.asarray(al.to_backend(by_hand["w"], "numpy")), rtol=1e-6, atol=1e-7)


def _compile_counting(backend: str, step: Any) -> tuple[Any, Any]:
    """``step`` compiled, and a function giving how many times it was traced: Python calls under
    jax.jit, Dynamo's compiled graphs and recompilations under torch.compile, tf.function's
    concrete functions."""
    if backend == "jax":
        import jax

        calls = []

        def counted(*args):
            calls.append(1)
            return step(*args)

        return jax.jit(counted), lambda: len(calls)
    if backend == "torch":
        import torch
        from torch._dynamo.utils import counters

        torch._dynamo.reset()
        counters.clear()
        return (torch.compile(step, backend="eager", fullgraph=True),
                lambda: counters["stats"]["unique_graphs"] + sum(counters["recompiles"].values()))
    import tensorflow as tf

    compiled = tf.function(step)
    return compiled, compiled.experimental_get_tracing_count


def test_a_compiled_step_with_a_schedule_traces_once(compiled_backend):
    backend = compiled_backend
    optimizer = al.optim.adamw(S.warmup_cosine_decay(0.1, 2, 6), weight_decay=0.01)
    x = _tree(backend, {"x": np.linspace(-1, 1, 6).reshape(3, 2).tolist()})["x"]

    def step(params, state):
        loss, grads = al.value_and_grad(lambda p: al.mean(al.square(al.matmul(x, p["w"]))))(params)
        params, state = optimizer.update(grads, state, params)
        return params, state

    params = _tree(backend, {"w": [[1.0], [-0.5]]})
    eager = compiled = (params, optimizer.init(params))
    fast, traces = _compile_counting(backend, step)
    for _ in range(6):  # warm-up, then decay: a new rate every step
        eager, compiled = step(*eager), fast(*compiled)
    assert traces() == 1
    assert int(np.asarray(al.to_backend(compiled[1]["schedule_count"], "numpy"))) == 6
    np.testing.assert_allclose(np.asarray(al.to_backend(compiled[0]["w"], "numpy")),
                               np.asarray(al.to_backend(eager[0]["w"], "numpy")), rtol=1e-6, atol=1e-7)


def test_a_schedule_value_is_checked_like_a_rate():
    with pytest.raises(al.InvalidArgumentError, match="schedule's value"):
        p = {"w": np.ones(2, np.float32)}
        opt = al.optim.sgd(S.constant(-1.0))
        opt.update(p, opt.init(p), p)
    assert math.isclose(float(S.constant(0.5)(np.asarray(3, np.int32))), 0.5)
