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
from test_compile_and_grad import compiled_backend, compiler, dtype, host, native  # noqa: F401 - a fixture

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
    for value, expected in zip(got, ([0, 0], [0, 1, 2], [1, 0], 3, [4, 6], [2, 1])):
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
