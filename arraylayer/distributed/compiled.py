"""Collectives inside the frameworks' compilers: ``tf.function`` and ``torch.compile`` in a world of
several processes, and a clear error for a process-local collective inside ``jax.jit``.

``tracing(leaves)`` names the compiler now tracing the call (None when it runs eagerly); the
collectives then build the framework's own graph collectives instead of calling the eager engine:

- **tensorflow**: ``CollectiveReduceV2`` / ``CollectiveGatherV2`` / ``CollectiveBcastSendV2`` /
  ``RecvV2`` as graph ops, in the world's group, with instance keys fixed at trace time from a counter
  of their own (every rank traces its functions in the same order, as MultiWorkerMirroredStrategy
  requires), an all_reduce one ``CollectiveReduceV2`` per wire dtype (its leaves concatenated); each
  call first gathers its signature's digest in the graph and asserts that every rank's
  is the same, so a mismatch fails on every rank instead of hanging. ``timeout_seconds`` is the world's.
- **torch**: ``torch.distributed._functional_collectives``, which Dynamo traces into the graph (no
  graph break) and which run on gloo; the leaves of one dtype travel in one flat buffer. Each call
  first gathers four numbers of its signature and compares them with ``torch._assert_async``.
- **jax**: a collective over process-local arrays has no place in one ``jax.jit`` program of several
  processes: the native way is ``replicated_step`` over a global mesh, which this error names.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import numpy as np

from arraylayer.distributed.engines.torch_gloo import _unwire, _wire  # imports torch only when called
from arraylayer.errors import UnsupportedOperationError

__all__ = ["tracing", "all_reduce", "all_gather", "broadcast"]

_TF_INSTANCE = {"next": 1 << 30}  # graph collectives' instance keys (the eager engine's start at 1 << 20)


def tracing(leaves: list) -> str | None:
    """The compiler tracing these leaves now ("jax", "tensorflow", "torch"), or None when eager."""
    if "torch" in sys.modules and sys.modules["torch"].compiler.is_compiling():
        return "torch"
    if "tensorflow" in sys.modules:
        tf = sys.modules["tensorflow"]
        if not tf.executing_eagerly() and any(isinstance(x, tf.Tensor) for x in leaves):
            return "tensorflow"
    if "jax" in sys.modules:
        tracer = sys.modules["jax"].core.Tracer
        if any(isinstance(x, tracer) for x in leaves):
            return "jax"
    return None


def _refuse_jax(what: str, size: int) -> None:
    raise UnsupportedOperationError(
        f"{what} on traced jax arrays inside jax.jit in a world of {size} processes: one jax program cannot "
        f"call a collective over each process's own arrays. Compile the step with "
        f"arraylayer.distributed.replicated_step(step_fn), which runs it over a global mesh of every process's "
        f"devices (its all_reduce is lax.psum), or call {what} outside the jitted function.")


# --- tensorflow: graph collective ops -------------------------------------------------------------------

def _tf_key() -> int:
    _TF_INSTANCE["next"] += 1
    return _TF_INSTANCE["next"]


def _tf_op(name: str, timeout: float, **arguments: Any) -> Any:
    import tensorflow as tf

    from arraylayer.distributed.engines import tf_collective

    with tf.device(tf_collective._STATE["device"]):
        return getattr(tf.raw_ops, name)(group_key=tf_collective._GROUP, instance_key=_tf_key(),
                                         timeout_seconds=timeout, **arguments)


def _tf_checked(world: Any, text: str, timeout: float) -> Any:
    """The in-graph signature check: every rank's digest gathered and compared (an op to depend on)."""
    import tensorflow as tf

    digest = np.frombuffer(hashlib.sha256(text.encode()).digest(), dtype=np.int32)[None]
    rows = _tf_op("CollectiveGatherV2", timeout, input=tf.constant(digest), group_size=world.size, ordering_token=[])
    same = tf.reduce_all(tf.equal(rows, rows[0:1]))
    return tf.debugging.Assert(same, [f"arraylayer DistributedMismatchError: rank {world.rank}: the ranks traced "
                                      f"different collectives (kind, tree, shapes or dtypes); this rank traced {text}"])


def _tf_run(world: Any, text: str, timeout: float, leaves: list, one: Any) -> list:
    import tensorflow as tf

    tensors = [tf.convert_to_tensor(x) for x in leaves]
    with tf.control_dependencies([_tf_checked(world, text, timeout)]):
        return [one(t) for t in tensors]


def _tf_reduce(world: Any, text: str, timeout: float, leaves: list, op: str) -> list:
    """One graph ``CollectiveReduceV2`` per wire dtype (the leaves of a dtype concatenated), after the check."""
    import tensorflow as tf

    from arraylayer.distributed.engines.tf_collective import _MERGE, reduce_grouped

    tensors = [tf.convert_to_tensor(x) for x in leaves]
    with tf.control_dependencies([_tf_checked(world, text, timeout)]):
        return reduce_grouped(tensors, op, lambda flat: _tf_op(
            "CollectiveReduceV2", timeout, input=flat, group_size=world.size, ordering_token=[],
            merge_op=_MERGE[op], final_op="Id"))


def _tf_gather(world: Any, text: str, timeout: float, leaves: list) -> list:
    from arraylayer.distributed.engines.tf_collective import _decode, _encode

    return _tf_run(world, text, timeout, leaves, lambda t: _decode(_tf_op(
        "CollectiveGatherV2", timeout, input=_encode(t, "gather")[None], group_size=world.size,
        ordering_token=[]), t, "gather"))


def _tf_broadcast(world: Any, text: str, timeout: float, leaves: list, root: int) -> list:
    from arraylayer.distributed.engines.tf_collective import _decode, _encode

    def one(t: Any) -> Any:
        wire = _encode(t, "broadcast")
        if world.rank == root:
            got = _tf_op("CollectiveBcastSendV2", timeout, input=wire, group_size=world.size)
        else:
            got = _tf_op("CollectiveBcastRecvV2", timeout, group_size=world.size, shape=wire.shape, T=wire.dtype)
        return _decode(got, t, "broadcast")

    return _tf_run(world, text, timeout, leaves, one)


# --- torch: functional collectives, traced by Dynamo ------------------------------------------------------

def _torch_checked(world: Any, kind: str, leaves: list) -> None:
    """The in-graph signature check: four numbers of the call (its kind, the leaves' count, sizes, ranks
    and dtypes, computed when Dynamo traces it) gathered and compared with ``torch._assert_async``."""
    import torch
    import torch.distributed as tdist
    import torch.distributed._functional_collectives as funcol

    code = [sum((i + 1) * ord(c) for i, c in enumerate(kind)), len(leaves),
            sum((i + 1) * t.numel() for i, t in enumerate(leaves)),
            sum((i + 1) * (64 * t.ndim + 4 * t.dtype.itemsize + 2 * t.dtype.is_floating_point + t.is_complex())
                for i, t in enumerate(leaves))]
    rows = funcol.all_gather_tensor(torch.tensor(code, dtype=torch.int64)[None], 0, tdist.group.WORLD)
    torch._assert_async(torch.all(rows == rows[0:1]), f"arraylayer DistributedMismatchError: rank {world.rank}: "
                        f"the ranks compiled different collectives (kind, leaves, shapes or dtypes); this rank: {kind}")


def _torch_reduce(world: Any, text: str, timeout: float, leaves: list, op: str) -> list:
    import torch
    import torch.distributed as tdist
    import torch.distributed._functional_collectives as funcol

    _torch_checked(world, f"all_reduce[{op}]", leaves)
    wires = [_wire(t, op) for t in leaves]
    groups: dict[Any, list[int]] = {}
    for i, w in enumerate(wires):
        groups.setdefault(w.dtype, []).append(i)
    out = list(wires)
    for members in groups.values():  # one round trip per dtype, as the eager engine
        flat = funcol.all_reduce(torch.cat([wires[i].reshape(-1) for i in members]), op, tdist.group.WORLD)
        for i, part in zip(members, flat.split([wires[i].numel() for i in members]), strict=True):
            out[i] = part.reshape(wires[i].shape)
    return [_unwire(w, t, op) for w, t in zip(out, leaves, strict=True)]


def _torch_gather(world: Any, text: str, timeout: float, leaves: list) -> list:
    import torch.distributed as tdist
    import torch.distributed._functional_collectives as funcol

    _torch_checked(world, "all_gather", leaves)
    return [_unwire(funcol.all_gather_tensor(_wire(t)[None], 0, tdist.group.WORLD), t) for t in leaves]


def _torch_broadcast(world: Any, text: str, timeout: float, leaves: list, root: int) -> list:
    import torch.distributed as tdist
    import torch.distributed._functional_collectives as funcol

    _torch_checked(world, f"broadcast[{root}]", leaves)
    return [_unwire(funcol.broadcast(_wire(t), root, tdist.group.WORLD), t) for t in leaves]


#: compiler -> the engine whose world its graph collectives join
_ENGINES = {"tensorflow": "tf_collective", "torch": "torch_gloo"}
_REDUCE = {"tensorflow": _tf_reduce, "torch": _torch_reduce}
_GATHER = {"tensorflow": _tf_gather, "torch": _torch_gather}
_BROADCAST = {"tensorflow": _tf_broadcast, "torch": _torch_broadcast}


def _engine_of(compiler: str, world: Any, what: str) -> None:
    if compiler == "jax":
        _refuse_jax(what, world.size)
    engine = world.engine.__name__.rsplit(".", 1)[1]
    if _ENGINES[compiler] != engine:
        raise UnsupportedOperationError(
            f"{what} inside the {compiler} compiler in a world whose engine is {engine}: compiled collectives run "
            f"on the compiler's own framework; launch with --backend {compiler}.")


def all_reduce(compiler: str, world: Any, text: str, timeout: float, leaves: list, op: str) -> list:
    """``leaves`` reduced with ``op`` ("sum", "max", "min") as ops of the compiler's graph."""
    _engine_of(compiler, world, f"all_reduce[{op}]")
    return _REDUCE[compiler](world, text, timeout, leaves, op)


def all_gather(compiler: str, world: Any, text: str, timeout: float, leaves: list) -> list:
    """``leaves`` of every rank stacked along a new leading axis, as ops of the compiler's graph."""
    _engine_of(compiler, world, "all_gather")
    return _GATHER[compiler](world, text, timeout, leaves)


def broadcast(compiler: str, world: Any, text: str, timeout: float, leaves: list, root: int) -> list:
    """Rank ``root``'s leaves on every rank, as ops of the compiler's graph."""
    _engine_of(compiler, world, f"broadcast[{root}]")
    return _BROADCAST[compiler](world, text, timeout, leaves, root)
