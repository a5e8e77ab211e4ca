"""What works inside the frameworks' compilers (jax.jit, tf.function, torch.compile with
fullgraph=True): the settings' context managers, finfo/iinfo, nn.one_hot, optimizers whose
hyper-parameters are traced values (one trace for every value), and the traced-int caveat
with its checked mode. Compiled functions are few and tiny: torch.compile is slow on 2 cores."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_compile_and_grad import compiled_backend, compiler, dtype, host, native  # noqa: F401, F811 - a fixture

import arraylayer as al


def counted(backend: str, f: Callable[..., Any]) -> tuple[Callable[..., Any], list[int]]:
    """``f`` under the backend's compiler, and a list that grows by one per trace."""
    traces: list[int] = []
    if backend == "torch":
        import torch

        torch._dynamo.reset()

        def count(graph: Any, inputs: Any) -> Any:  # torch.compile calls its backend once per graph
            traces.append(1)
            return graph.forward

        return torch.compile(f, backend=count, fullgraph=True), traces

    def traced(*args: Any) -> Any:  # jax.jit and tf.function run Python once per trace
        traces.append(1)
        return f(*args)

    return compiler(backend)(traced), traces


def assert_process_settings_untouched() -> None:
    assert (al.get_dtype_promotion(), al.default_float_dtype(), al.default_int_dtype(), al.current_backend()) == (
        "standard", "float32", "int32", "numpy")


# -- settings' context managers ---------------------------------------------------------------------------------
def test_settings_scopes_inside_the_compiler(compiled_backend):
    backend = compiled_backend

    def f(b, i8, i16):
        with al.use_backend(backend), al.use_default_dtypes(float="float16", int="int16"):
            zeros, count = al.zeros(2), al.arange(3)
        with al.use_default_float_dtype("bfloat16"), al.use_default_int_dtype("int8"):
            half, small = al.astype(b, al.default_float_dtype()), al.sum(i8)
        with al.dtype_promotion("standard"):
            widened = al.add(i8, i16)
        return zeros, count, half, small, widened, al.add(b, 1)

    args = native(backend, [True, False], "bool"), native(backend, [1, 2], "int8"), native(backend, [3, 4], "int16")
    got = compiler(backend)(f)(*args)
    assert [dtype(backend, x) for x in got] == ["float16", "int16", "bfloat16", "int8", "int16", "int32"]
    for value, expected in zip(got, ([0, 0], [0, 1, 2], [1, 0], 3, [4, 6], [2, 1]), strict=True):
        np.testing.assert_array_equal(host(backend, value), expected)
    assert_process_settings_untouched()


def test_a_policy_scope_refuses_inside_the_compiler(compiled_backend):
    backend = compiled_backend

    def f(i8, i16):
        with al.dtype_promotion("strict"):
            return al.add(i8, i16)

    # torch.compile(fullgraph=True) reports an exception raised while tracing as its own Unsupported
    # ("Observed exception"), naming ours; jax.jit and tf.function raise ours
    expected = __import__("torch")._dynamo.exc.Unsupported if backend == "torch" else al.TypePromotionError
    with pytest.raises(expected, match="TypePromotionError|no implicit promotion"):
        compiler(backend)(f)(native(backend, [1], "int8"), native(backend, [2], "int16"))
    assert_process_settings_untouched()


def test_a_scope_is_left_when_dynamo_stops_tracing_inside_it():
    """Dynamo abandons a trace at a graph break and traces the frame again: the second attempt
    must not see the value the first one set (the add before the block is int32, not strict)."""
    torch = pytest.importorskip("torch")
    torch._dynamo.reset()

    def f(b):
        before = al.add(b, 1)
        with al.use_default_float_dtype("float16"):
            inside = al.astype(b, al.default_float_dtype())
            torch._dynamo.graph_break()
            after = al.astype(b, al.default_float_dtype())
        return before, inside, after, al.astype(b, al.default_float_dtype())

    got = torch.compile(f, backend="eager")(torch.tensor([True, False]))
    assert [str(x.dtype) for x in got] == ["torch.int32", "torch.float16", "torch.float16", "torch.float32"]
    assert_process_settings_untouched()


# -- finfo, iinfo, one_hot ----------------------------------------------------------------------------------------
def test_finfo_iinfo_and_one_hot_inside_the_compiler(compiled_backend):
    backend = compiled_backend
    if backend == "torch":
        from torch._dynamo.utils import warn_once_cache

        warn_once_cache.clear()  # Dynamo warns once per process: let this trace warn again

    def f(x, labels):
        tiny = al.multiply(x, al.finfo(x.dtype).eps)
        clipped = al.minimum(al.add(labels, 100), al.iinfo(labels.dtype).max - 26)
        return tiny, clipped, al.nn.one_hot(labels, 3)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny, clipped, hot = compiler(backend)(f)(native(backend, [1.0, 2.0]), native(backend, [0, 2], "int8"))
    np.testing.assert_array_equal(host(backend, tiny), np.array([1.0, 2.0], np.float32) * np.finfo(np.float32).eps)
    np.testing.assert_array_equal(host(backend, clipped), [100, 101])  # int8's max is 127
    np.testing.assert_array_equal(host(backend, hot), np.eye(3, dtype=np.float32)[[0, 2]])
    assert not [w for w in caught if "incorrectness" in str(w.message)], [str(w.message) for w in caught]


# -- optimizers with traced hyper-parameters ----------------------------------------------------------------------
P0 = {"w": [[1.0, -2.0], [0.5, 3.0]], "b": [0.25, -0.75]}
G0 = {"w": [[0.5, -1.0], [2.0, 0.0]], "b": [1.0, -0.5]}
#: (learning_rate, b1, b2, eps, weight_decay, momentum) of two steps: a schedule's values
HYPER = [(0.01, 0.9, 0.999, 1e-3, 0.1, 0.5), (0.05, 0.8, 0.99, 1e-2, 0.2, 0.25)]


def _step(adam_params: Any, adam_state: Any, sgd_params: Any, sgd_state: Any, grads: Any, lr: Any, b1: Any,
          b2: Any, eps: Any, decay: Any, momentum: Any) -> Any:
    adamw, sgd = al.optim.adamw(lr, b1, b2, eps, decay), al.optim.sgd(lr, momentum=momentum)
    adam_params, adam_state = adamw.update(grads, adam_state, adam_params)
    sgd_params, sgd_state = sgd.update(grads, sgd_state, sgd_params)
    return adam_params, adam_state, sgd_params, sgd_state


def _traced_value(backend: str, value: float) -> Any:
    """How a schedule passes a value to a compiled step: jax.jit traces a Python float (a weak
    float32); tf.function and torch.compile would specialise on one, so it is a 0-d float32 tensor."""
    return value if backend == "jax" else native(backend, value)


def test_a_compiled_step_takes_traced_hyper_parameters_without_retracing(compiled_backend):
    backend = compiled_backend
    tree = lambda values: al.tree_map(lambda v: native(backend, v), values)  # noqa: E731
    adam_params, sgd_params, grads = tree(P0), tree(P0), tree(G0)  # no aliases: Dynamo guards on them
    init_adam, init_sgd = al.optim.adamw().init(adam_params), al.optim.sgd(0.1, momentum=0.5).init(sgd_params)
    fast, traces = counted(backend, _step)
    eager = compiled = (adam_params, init_adam, sgd_params, init_sgd)
    for hyper in HYPER:
        eager = _step(eager[0], eager[1], eager[2], eager[3], grads, *hyper)
        compiled = fast(compiled[0], compiled[1], compiled[2], compiled[3], grads,
                        *(_traced_value(backend, h) for h in hyper))
    assert len(traces) == 1  # a new value per step, one trace
    for got, want in zip(al.tree_leaves(compiled), al.tree_leaves(eager), strict=True):
        assert dtype(backend, got) == dtype(backend, want)
        np.testing.assert_allclose(host(backend, got), host(backend, want), rtol=2e-6, atol=1e-7)


def test_an_eager_torch_rate_tensor_is_read_at_each_update():
    torch = pytest.importorskip("torch")
    rate = torch.tensor(0.1)
    optimizer = al.optim.sgd(rate)
    p, g = torch.tensor([1.0, -2.0]), torch.tensor([0.5, 4.0])
    first, _ = optimizer.update(g, {}, p)
    rate.fill_(0.05)  # a schedule changes the rate in place
    second, _ = optimizer.update(g, {}, first)
    expected = np.array([1.0, -2.0]) - 0.1 * np.array([0.5, 4.0]) - 0.05 * np.array([0.5, 4.0])
    np.testing.assert_allclose(second.numpy(), expected, rtol=1e-6)


def test_an_array_rate_keeps_the_parameters_dtype(backend):
    low = "float16" if "float16" in al.valid_dtypes(backend) else "bfloat16"
    with al.use_backend(backend):
        p, g, rate = al.asarray([1.0, -2.0], dtype=low), al.asarray([0.5, 4.0], dtype=low), al.asarray(0.5)
    new, _ = al.optim.sgd(rate).update(g, {}, p)
    assert al.Dtype(new.dtype) is al.Dtype(low)  # a float32 rate, like a Python float, leaves float16 alone
    np.testing.assert_array_equal(np.asarray(al.to_backend(new, "numpy"), np.float64), [0.75, -4.0])


def test_an_array_hyper_parameter_must_be_0d_and_real(backend):
    with al.use_backend(backend):
        bad = [al.asarray([0.1, 0.2]), al.asarray(True)]
    for value in bad:
        with pytest.raises((al.InvalidArgumentError, al.InvalidArgumentTypeError), match="learning_rate"):
            al.optim.sgd(value)


# -- Python ints traced next to narrow integer arrays -------------------------------------------------------------
def test_jit_traced_int_wraps_unless_checked():
    jax = pytest.importorskip("jax")
    x = native("jax", [1, 2], "int8")
    with pytest.raises(al.ScalarOverflowError):  # eagerly: refused
        al.add(x, 300)
    wrapped = (np.array([1, 2]) + 300).astype(np.int8)  # what int8 arithmetic gives: 45, 46
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda x, n: al.add(x, n))(x, 300)), wrapped)

    checked, traces = counted("jax", lambda x, n: al.add(x, n))
    with al.use_checked_scalars():  # read when the first call traces
        np.testing.assert_array_equal(np.asarray(checked(x, 5)), [6, 7])
    np.testing.assert_array_equal(np.asarray(checked(x, -100)), [-99, -98])
    with pytest.raises(jax.errors.JaxRuntimeError, match="ScalarOverflowError.*300 does not fit int8"):
        np.asarray(checked(x, 300))
    assert len(traces) == 1  # the check runs with the compiled function: no retrace per value


def test_tf_function_has_no_traced_python_int():
    """tf.function makes a Python int part of the signature (checked while tracing, as eagerly);
    an int passed as a tensor is a strong int32, which widens the int8 array instead of wrapping."""
    tf = pytest.importorskip("tensorflow")
    add = tf.function(lambda x, n: al.add(x, n))
    x = native("tensorflow", [1, 2], "int8")
    with pytest.raises(al.ScalarOverflowError):
        add(x, 300)
    widened = add(x, tf.constant(300))
    assert dtype("tensorflow", widened) == "int32"
    np.testing.assert_array_equal(host("tensorflow", widened), [301, 302])


def test_torch_compile_guards_a_python_int():
    """Dynamo specialises a Python int argument (or guards the comparisons made with it): a new
    value that does not fit retraces, and the check refuses it."""
    torch = pytest.importorskip("torch")
    add, traces = counted("torch", lambda x, n: al.add(x, n))
    x = native("torch", [1, 2], "int8")
    np.testing.assert_array_equal(add(x, 5).numpy(), [6, 7])
    with pytest.raises(torch._dynamo.exc.Unsupported, match="ScalarOverflowError|does not fit int8"):
        add(x, 300)
