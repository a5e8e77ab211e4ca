"""arraylayer.models.mixed_precision: policies, and dynamic loss scaling's decisions on every backend (a
forced inf gradient skips the step and halves the scale; a run of finite steps doubles it), eager
and under the compilers. Oracle: the rules written out here as a Python loop."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_nn import host

import arraylayer as al
from arraylayer.models import mixed_precision as mp


def test_policy_from_a_string():
    p = mp.policy("params=float32,compute=bfloat16,output=float16")
    assert (str(p.param_dtype), str(p.compute_dtype), str(p.output_dtype)) == ("float32", "bfloat16", "float16")
    assert str(mp.policy("bfloat16").output_dtype) == "bfloat16"
    assert str(mp.policy("compute=float16").param_dtype) == "float32"
    with pytest.raises(al.InvalidArgumentError, match="not a field"):
        mp.policy("weights=float32")
    with pytest.raises(al.InvalidArgumentError, match="compute_dtype='int8'"):
        mp.Policy(compute_dtype="int8")


def test_policy_casts_floating_leaves_only(backend):
    with al.use_backend(backend):
        tree = {"w": al.ones((2,), dtype="float32"), "ids": al.asarray([1, 2], dtype="int32")}
    p = mp.policy("params=float32,compute=bfloat16,output=float16")
    cast = p.cast_to_compute(tree)
    assert str(al.Dtype(cast["w"].dtype)) == "bfloat16" and str(al.Dtype(cast["ids"].dtype)) == "int32"
    assert str(al.Dtype(p.cast_for_loss(cast)["w"].dtype)) == "float32"
    assert str(al.Dtype(p.cast_to_output(tree)["w"].dtype)) == "float16"


def oracle(finite_flags, scale=8.0, period=3, factor=2.0, min_scale=1.0):
    """The scale and count after each step, by the documented rule."""
    good, out = 0, []
    for finite in finite_flags:
        if not finite:
            scale, good = max(scale / factor, min_scale), 0
        elif good + 1 >= period:
            scale, good = scale * factor, 0
        else:
            good += 1
        out.append((scale, good))
    return out


FLAGS = [True, True, True, False, True, False, False, False, False, True, True, True, True]


def _run(backend, compile_it=False):
    def step(state, w, x):
        loss = al.sum(al.multiply(w, x))  # the gradient is x: inf where x holds inf
        grads = mp.unscale(state, al.grad(lambda w: mp.scale_loss(state, loss_of(w, x)))(w))
        finite = mp.all_finite(grads)
        new_w = mp.select(finite, al.subtract(w, al.multiply(grads, 0.1)), w)
        return mp.adjust(state, finite, period=3), new_w, finite, loss

    def loss_of(w, x):
        return al.astype(al.sum(al.multiply(w, x)), "float32")

    if compile_it:
        from test_compile_and_grad import compiler

        step = compiler(backend)(step)
    with al.use_backend(backend):
        state = mp.loss_scale(8.0)
        w = al.asarray([1.0, 2.0], dtype="float16")
    history = []
    for finite in FLAGS:
        with al.use_backend(backend):
            x = al.asarray([0.5, 1.0 if finite else math.inf], dtype="float16")
        before = host(w)
        state, w, flag, _ = step(state, w, x)
        history.append((float(host(state.scale)), int(host(state.good_steps))))
        assert bool(host(flag)) == finite
        assert (host(w) == before).all() != finite  # a non-finite step leaves the weights as they were
    return history


def test_loss_scaling_decisions(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no autodiff")
    assert _run(backend) == oracle(FLAGS)


def test_loss_scaling_decisions_under_the_compiler(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler")
    assert _run(backend, compile_it=True) == oracle(FLAGS)


def test_adjust_and_select_on_every_backend(backend):
    with al.use_backend(backend):
        state = mp.loss_scale(2.0)
        grads = {"a": al.asarray([1.0, 2.0], dtype="float16"), "b": al.asarray([math.nan], dtype="float32")}
        finite = mp.all_finite(grads)
        shrunk = mp.adjust(state, finite, min_scale=1.5)
        kept = mp.select(finite, {"a": al.zeros((2,), dtype="float16")}, {"a": al.ones((2,), dtype="float16")})
        unscaled = mp.unscale(state, {"a": grads["a"]})
    assert not bool(host(finite)) and float(host(shrunk.scale)) == 1.5  # not below min_scale
    assert host(kept["a"]).tolist() == [1.0, 1.0]
    assert str(al.Dtype(unscaled["a"].dtype)) == "float32" and host(unscaled["a"]).tolist() == [0.5, 1.0]


def test_bad_loss_scale_arguments():
    with pytest.raises(al.InvalidArgumentError, match="must be finite, > 0"):
        mp.loss_scale(0.0)
    with al.use_backend("numpy"):
        state = mp.loss_scale()
    with pytest.raises(al.InvalidArgumentError, match="period"):
        mp.adjust(state, np.asarray(True), period=0)


@pytest.mark.parametrize("initial", [math.inf, -math.inf, math.nan, 0.0, -1.0, 2.0**128])
def test_loss_scale_refuses_scales_that_cannot_recover(backend, initial):
    with al.use_backend(backend), pytest.raises(al.InvalidArgumentError, match="MAX_SCALE"):
        mp.loss_scale(initial)


@pytest.mark.parametrize("bad", [{"period": True}, {"period": 2.0}, {"factor": 1.0}, {"factor": math.inf},
                                 {"factor": math.nan}, {"min_scale": 0.0}, {"max_scale": math.inf},
                                 {"min_scale": 4.0, "max_scale": 2.0}])
def test_adjust_refuses_bad_hyper_parameters(bad):
    with al.use_backend("numpy"):
        state = mp.loss_scale()
    with pytest.raises(al.InvalidArgumentError):
        mp.adjust(state, np.asarray(True), **bad)
    with pytest.raises(al.InvalidArgumentTypeError, match="not a LossScale"):
        mp.adjust({"scale": 1.0}, np.asarray(True))
    with pytest.raises(al.InvalidArgumentTypeError, match="not a LossScale"):
        mp.unscale(2.0, {"g": np.ones(2)})


def test_the_scale_stops_at_max_scale_and_recovers(backend):
    """Without the bound, 2**127 * 2 is inf and inf / 2 stays inf: every later step was skipped."""
    with al.use_backend(backend):
        state = mp.loss_scale(2.0**126)
        yes, no = al.asarray(True), al.asarray(False)
    for _ in range(3):
        state = mp.adjust(state, yes, period=1)
        assert float(host(state.scale)) == mp.MAX_SCALE
    state = mp.adjust(state, no, period=1)
    assert float(host(state.scale)) == 2.0**126
    capped = mp.adjust(mp.adjust(state, yes, period=1, max_scale=2.0**10), yes, period=1, max_scale=2.0**10)
    assert float(host(capped.scale)) == 2.0**10
