"""The casts as one compiled kernel where a framework would otherwise run the rule op by op.

The rule of :mod:`.casts` is a dozen element-wise integer operations (or a gather from a table of
the format's values). Run eagerly on a GPU, each is a dispatch and a pass over memory: on an H100
decoding float8 through JAX took 6x JAX's own conversion (613 against 102 us for 2**22 values).
On **jax**, for arrays on an accelerator, the rule runs under ``jax.jit`` instead: XLA fuses it into
one kernel, with the same operations and so the same bits (the encoder takes its portable integer
path there, whose bits do not depend on how XLA folds a widening into a float8 conversion). On the
CPU, eager dispatch is cheap and the casts already meet their target; inside a user's own
``jax.jit`` the rule is traced into the user's program, as before.

**torch** cannot take that road: on an H200 with torch 2.11, the rule under ``torch.compile``
cost 150-175 us a call at every size from 2**16 to 2**24 values, the compiled function's own
per-call cost, against 16 us for torch's cast. Its tensors on a GPU take the rule written as
Triton kernels instead (:mod:`.triton_casts`), launched directly.

:func:`everywhere` makes CPU arrays eligible too, for the tests (CI has no GPU).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from arraylayer.lowp import engine, reference, triton_casts

__all__ = ["compiled", "everywhere"]

_COMPILED: dict[tuple[Any, ...], Callable[..., Any]] = {}
_everywhere = False


@contextmanager
def everywhere() -> Iterator[None]:
    """Within the block, arrays on the CPU take the compiled casts too: how the tests check them on
    a machine without a GPU."""
    global _everywhere
    before, _everywhere = _everywhere, True
    try:
        yield
    finally:
        _everywhere = before


def compiled(ops: Any, x: Any, key: tuple[Any, ...], rule: Callable[[], Callable[..., Any]]) -> Callable[..., Any] | None:
    """The compiled cast for ``key`` where ``x`` should take one, else None (run the eager rule).
    ``rule()`` gives the function of the arrays to compile; it is called once per key. Keys:
    ``("encode", format, saturate)``, ``("decode", format, dtype, stored)``, ``("cast", format)``."""
    compiler = _COMPILERS.get(ops.name)
    return None if compiler is None else compiler(ops, x, key, rule)


def _jax_jit(ops: Any, x: Any, key: tuple[Any, ...], rule: Callable[[], Callable[..., Any]]) -> Callable[..., Any] | None:
    """The rule under ``jax.jit``, compiled once per key, for an array on an accelerator (not a
    tracer: inside a user's ``jax.jit`` the rule is traced into the user's program)."""
    if ops.traced(x) or not (_everywhere or ops.accelerated(x)):
        return None
    key = (ops.name, *key)
    function = _COMPILED.get(key)
    if function is None:
        import jax  # loaded: x is its array

        function = _COMPILED[key] = jax.jit(rule())
    return function


def _triton(ops: Any, x: Any, key: tuple[Any, ...], rule: Callable[[], Callable[..., Any]]) -> Callable[..., Any] | None:
    """torch's Triton kernel for ``key`` (``"cast"``: torch's own cast is one kernel already), for a
    contiguous tensor on a GPU (on the CPU in Triton's interpreter, within :func:`everywhere`),
    outside ``torch.compile`` (which fuses the eager rule itself); else None. The kernels spell the
    rule themselves: ``rule`` is not used. Cheapest tests first: this runs on every cast."""
    if key[0] == "cast" or not x.is_contiguous():
        return None
    on_cpu = x.device.type != "cuda"
    if (on_cpu and not (_everywhere and triton_casts.interpreted())) or ops.torch.compiler.is_compiling():
        return None
    return triton_casts.launcher(ops.torch, key, on_cpu)


#: backend -> how it compiles a cast into one kernel (the other backends run the eager rule)
_COMPILERS: dict[str, Callable[..., Callable[..., Any] | None]] = {"jax": _jax_jit, "torch": _triton}


#: where each backend's one-kernel casts run (why a request elsewhere is declined)
_WHERE = {"jax": "not an eager jax array on an accelerator (inside jax.jit the rule is traced into the program)",
          "torch": "not a contiguous GPU tensor outside torch.compile (Triton's kernels)"}


class OneKernel:
    """The cast engine's acceleration for arrays on an accelerator: the reference rule compiled into
    one kernel (jax), or torch's Triton kernels. ("cast" is the native cast's: jitted there.)"""

    name, order, operations = "one_kernel", 10, ("encode", "decode")

    def declines(self, request: Any) -> str:
        if _COMPILERS.get(request.ops.name) is None:
            return f"{request.ops.name} has no one-kernel casts"
        if request.op == "encode" and not request.format.is_float:
            return "integer formats are encoded by the reference"
        return "" if self._compiled(request) else _WHERE[request.ops.name]

    def run(self, request: Any) -> Any | None:
        fused = self._compiled(request)
        if request.op == "encode":
            return fused(request.x)  # None: a Triton kernel that could not run
        ops, f = request.ops, request.format
        return fused(ops.table((f.name, request.dtype), reference.decode_table, request.x), request.x)

    @staticmethod
    def _compiled(request: Any) -> Callable[..., Any] | None:
        ops, f, x = request.ops, request.format, request.x
        if request.op == "encode":
            key = ("encode", f.name, request.saturate)
            return compiled(ops, x, key, lambda: partial(_encode_rule, ops, f, request.saturate))
        key = ("decode", f.name, request.dtype, request.stored)
        return compiled(ops, x, key, lambda: partial(_decode_rule, ops, f, request.stored))


def _encode_rule(ops: Any, f: Any, saturate: bool, x: Any) -> Any:
    """The reference encoding of ``x``, as one function of the array to compile."""
    return engine.Reference().run(engine.Request("encode", ops, x, f, ops.dtype_name(x), saturate))


def _decode_rule(ops: Any, f: Any, stored: bool, table: Any, codes: Any) -> Any:
    """The reference decoding of ``codes`` by a gather from ``table``: the codes of a native array
    read inside the kernel too."""
    return reference.gather(ops, table, reference.native_codes(ops, codes, f) if stored else codes, f.bits)


engine.register(OneKernel())
