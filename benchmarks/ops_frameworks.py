"""bench_ops.py's frameworks: how each one's native statements are written (its add, cast, sync,
compiler, the MLP written natively), the MLP written once with arraylayer, and how many arrays one
add allocates, counted per framework without timing."""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass
class Native:
    """One framework: its module names for the statements, how to make arrays, sync, compile."""

    name: str
    env: dict[str, Any]
    add: str  # the framework's add, as a statement prefix
    cast: str  # "{}" cast to float32
    sync: str  # "{}" made to wait for the result (jax), else "{}"
    array: Callable[[Any], Any]  # from a numpy array
    mlp: Callable[..., Any]  # the model written natively
    compile: Callable[[Callable[..., Any]], Callable[..., Any]] | None
    compiler: str = ""


def native_numpy() -> Native:
    import numpy as np

    return Native("numpy", {"np": np}, "np.add", "{}.astype(np.float32)", "{}", lambda x: x.copy(),
                  lambda x, params: x, None)


def native_jax() -> Native:
    import jax
    import jax.numpy as jnp

    def mlp(x: Any, params: Any) -> Any:
        for k, (w, b) in enumerate(params):
            x = jnp.matmul(x, w) + b
            if k < len(params) - 1:
                x = jnp.maximum(x, 0.0)
        return x

    return Native("jax", {"jnp": jnp}, "jnp.add", "{}.astype(jnp.float32)", "{}.block_until_ready()",
                  jnp.asarray, mlp, jax.jit, "jax.jit")


def native_torch() -> Native:
    import torch

    def mlp(x: Any, params: Any) -> Any:
        for k, (w, b) in enumerate(params):
            x = torch.matmul(x, w) + b
            if k < len(params) - 1:
                x = torch.relu(x)
        return x

    return Native("torch", {"torch": torch}, "torch.add", "{}.to(torch.float32)", "{}",
                  lambda x: torch.from_numpy(x.copy()), mlp, torch.compile, "torch.compile")


def native_tensorflow() -> Native:
    import tensorflow as tf

    def mlp(x: Any, params: Any) -> Any:
        for k, (w, b) in enumerate(params):
            x = tf.matmul(x, w) + b
            if k < len(params) - 1:
                x = tf.nn.relu(x)
        return x

    return Native("tensorflow", {"tf": tf}, "tf.add", "tf.cast({}, tf.float32)", "{}", tf.constant, mlp,
                  tf.function, "tf.function")


NATIVES: dict[str, Callable[[], Native]] = {
    "numpy": native_numpy, "jax": native_jax, "torch": native_torch, "tensorflow": native_tensorflow,
}


def mlp_arraylayer(x: Any, params: Any) -> Any:
    """The model, written once: every backend runs this same function."""
    import arraylayer as al

    for k, (w, b) in enumerate(params):
        x = al.add(al.matmul(x, w), b)
        if k < len(params) - 1:
            x = al.maximum(x, 0.0)
    return x


# -- allocations: one method per backend, each independent of machine speed -------------------------
def allocations_numpy(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> tuple[int, dict[str, Any]]:
    """tracemalloc. NumPy's default allocator reports every array data buffer to tracemalloc
    (PyTraceMalloc_Track), so the peak of traced memory during one call, with tracing started
    just before it, is the memory the call allocated, temporaries included, the same on any
    machine. Count = floor(peak / result bytes): a cast copy of an input would make it 2 (the
    Python objects of one call are a few hundred bytes). The result must own its data."""
    import tracemalloc

    import numpy as np

    fn(a, b)  # warm: plan caches filled, lazy imports done
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn(a, b)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    owns = out.base is None and not np.shares_memory(out, a) and not np.shares_memory(out, b)
    return peak // out.nbytes, {"peak_bytes": peak, "result_bytes": int(out.nbytes), "result_owns_data": owns}


def allocations_torch(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> tuple[int, dict[str, Any]]:
    """A TorchDispatchMode logging every aten operator the call runs (casts, copies, the add
    itself). An operator output whose storage is none of that operator's inputs' is a freshly
    allocated array; the count of those is exact and independent of the allocator, the
    thread count and the machine (a view shares its input's storage and is not counted)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class OperatorLog(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.fresh: list[tuple[str, int]] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            out = func(*args, **(kwargs or {}))
            inputs = {t.untyped_storage().data_ptr() for t in tree_flatten((args, kwargs))[0]
                      if isinstance(t, torch.Tensor)}
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in inputs:
                    self.fresh.append((str(func), t.untyped_storage().nbytes()))
            return out

    fn(a, b)
    with OperatorLog() as log:
        fn(a, b)
    return len(log.fresh), {"fresh_outputs": log.fresh}


def allocations_jax(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> tuple[int, dict[str, Any]]:
    """The call's jaxpr (``jax.make_jaxpr``): in eager mode every top-level equation is one
    dispatch whose outputs are fresh device buffers, so their number is the count (a cast
    would be a ``convert_element_type`` equation). Cross-checked at run time with
    ``jax.live_arrays()``: holding the result, one call adds exactly one live buffer."""
    import jax

    jaxpr = jax.make_jaxpr(fn)(a, b).jaxpr
    count = sum(len(eqn.outvars) for eqn in jaxpr.eqns)
    fn(a, b).block_until_ready()
    gc.collect()
    gc.disable()
    try:
        live = len(jax.live_arrays())
        out = fn(a, b)
        live = len(jax.live_arrays()) - live
    finally:
        gc.enable()
    del out
    return count, {"equations": [str(eqn.primitive) for eqn in jaxpr.eqns], "live_buffers_added": live}


def allocations_tensorflow(fn: Callable[[Any, Any], Any], a: Any, b: Any) -> tuple[int, dict[str, Any]]:
    """TensorFlow's eager op callbacks (the hook tfdbg uses) see every operation the call
    executes; each output of an eager operation is a freshly allocated tensor, so counting the
    outputs is exact (a cast would be a ``Cast`` operation). Cross-checked with the CPU
    allocator's own statistics (``get_memory_info``: peak minus current before the call;
    bytes, rounded up by the allocator)."""
    import tensorflow as tf
    from tensorflow.python.framework import op_callbacks

    seen: list[tuple[str, int]] = []

    def callback(op_type: str, inputs: Any, attrs: Any, outputs: Any, op_name: Any = None, graph: Any = None) -> None:
        seen.extend((op_type, int(o.shape.num_elements() or 0)) for o in outputs)

    fn(a, b)
    op_callbacks.add_op_callback(callback)
    try:
        fn(a, b)
    finally:
        op_callbacks.remove_op_callback(callback)
    details: dict[str, Any] = {"outputs": seen}
    try:
        tf.config.experimental.reset_memory_stats("CPU:0")
        before = tf.config.experimental.get_memory_info("CPU:0")["current"]
        out = fn(a, b)
        details["allocator_peak_bytes"] = tf.config.experimental.get_memory_info("CPU:0")["peak"] - before
        details["result_bytes"] = int(out.shape.num_elements()) * out.dtype.size
    except (ValueError, RuntimeError) as error:  # statistics not kept on this build
        details["allocator_peak_bytes"] = f"unavailable: {error}"
    return len(seen), details


ALLOCATIONS: dict[str, Callable[..., tuple[int, dict[str, Any]]]] = {
    "numpy": allocations_numpy, "jax": allocations_jax, "torch": allocations_torch,
    "tensorflow": allocations_tensorflow,
}
