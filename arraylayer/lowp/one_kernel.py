"""The casts as one compiled kernel where a framework would otherwise run the rule op by op.

The rule of :mod:`.casts` is a dozen element-wise integer operations (or a gather from a table of
the format's values). Run eagerly, each is a kernel launch and, on a GPU, a pass over memory: on
an H100 the float8 casts took 5-6x torch's own cast and decoding took 6x JAX's own conversion,
although every pass is memory-bound and the arithmetic is free. Compiled, the framework fuses them
into one pass, with the same operations and so the same bits:

* **jax**, arrays on an accelerator: the rule under ``jax.jit``, one XLA kernel per cast (on the
  CPU eager dispatch is cheap and the casts already meet their target; inside a user's ``jax.jit``
  the rule is traced into the user's own program, as before);
* **torch**, tensors on an accelerator with at least :data:`TORCH_MIN_ELEMENTS` elements: the rule
  under ``torch.compile`` (Inductor writes one Triton kernel; a second length compiles a kernel of
  any length, so at most two compilations per cast and dtype). Encoding takes the portable integer path there, whose bits do not depend on
  how a compiler lowers a float8 conversion. Smaller tensors, tensors that require grad, and
  calls made while Dynamo traces take the eager rule.

A cast that fails to compile (no Triton, say) runs the eager rule from then on and is listed in
:data:`FAILED` with the reason; the result is the same either way. :func:`everywhere` makes CPU
arrays eligible too, for the tests (CI has no GPU).
"""

from __future__ import annotations

import types
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from ..errors import ArrayLayerError

__all__ = ["compiled", "everywhere", "FAILED", "TORCH_MIN_ELEMENTS"]

#: Below this many elements a compiled torch call (its guards and wrapper, some tens of
#: microseconds of Python) costs more than the eager rule's few kernel launches save.
TORCH_MIN_ELEMENTS: Final = 1 << 16

#: key -> why that cast could not be compiled (it runs the eager rule instead).
FAILED: dict[tuple[Any, ...], str] = {}

_COMPILED: dict[tuple[Any, ...], Callable[..., Any]] = {}
_everywhere = False


@contextmanager
def everywhere() -> Iterator[None]:
    """Within the block, arrays on the CPU (of any size) take the compiled casts too: how the tests
    check them on a machine without a GPU."""
    global _everywhere
    before, _everywhere = _everywhere, True
    try:
        yield
    finally:
        _everywhere = before


def compiled(ops: Any, x: Any, key: tuple[Any, ...], rule: Callable[[], Callable[..., Any]]) -> Callable[..., Any] | None:
    """The compiled cast for ``key`` where ``x`` should take one, else None (run the eager rule).
    ``rule()`` gives the function of the arrays to compile; it is called once per key."""
    if not _eligible(ops, x):
        return None
    key = (ops.name, *key)
    function = _COMPILED.get(key)
    if function is None:
        if key in FAILED:
            return None
        function = _COMPILED[key] = _compile(ops, key, rule())
    return function


def _eligible(ops: Any, x: Any) -> bool:
    if ops.name == "jax":
        if ops.traced(x):
            return False
        return _everywhere or any(device.platform != "cpu" for device in x.devices())
    if ops.name == "torch":
        torch = ops.torch
        if x.requires_grad or torch.compiler.is_compiling():
            return False
        return _everywhere or (x.device.type != "cpu" and x.numel() >= TORCH_MIN_ELEMENTS)
    return False


def _compile(ops: Any, key: tuple[Any, ...], function: Callable[..., Any]) -> Callable[..., Any]:
    if ops.name == "jax":
        import jax

        return jax.jit(function)
    # dynamic=None: the first shape is compiled as it is, a second one as a symbolic length (the
    # arrays go in flat). dynamic=True would make the format's integers symbolic too, and Inductor's
    # kernel then spelled some negative NaNs of float8_e5m2 wrongly (measured on a CPU, torch 2.13).
    compiled_function = ops.torch.compile(_own_code(function, key), fullgraph=True)

    def run(*arrays: Any) -> Any:
        try:
            return compiled_function(*(a.reshape(-1) for a in arrays)).reshape(arrays[-1].shape)
        except ArrayLayerError:
            raise
        except Exception as error:  # noqa: BLE001 - any compiler failure: the eager rule gives the same bits
            FAILED[key] = f"{type(error).__name__}: {error}"
            _COMPILED.pop(key, None)
            warnings.warn(f"arraylayer.lowp: the compiled cast {key} failed ({FAILED[key][:200]}); "
                          "this cast runs op by op from now on (the same bits).", RuntimeWarning, stacklevel=3)
            return function(*arrays)

    return run


def _own_code(function: Callable[..., Any], key: tuple[Any, ...]) -> Callable[..., Any]:
    """A function calling ``function`` with a code object of its own: Dynamo keeps its compiled
    entries per code object (8 at most by default), and each cast is one entry of its own."""
    def call(*arrays: Any) -> Any:
        return function(*arrays)

    name = "cast_" + "_".join(str(part) for part in key).replace(".", "_").replace("-", "_")
    code = call.__code__.replace(co_name=name, co_qualname=name)
    return types.FunctionType(code, call.__globals__, name, None, call.__closure__)
