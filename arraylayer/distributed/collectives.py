"""Collectives over trees of arrays: ``all_reduce``, ``all_gather``, ``broadcast``, ``barrier``.

Each call first exchanges a fixed-size signature of the call (its kind, the tree's paths, shapes and
dtypes) with the engine's own timed all-gather, so ranks that disagree all raise
DistributedMismatchError instead of hanging. The leaves then go through the world's engine
(``engines.ENGINES``) and come back in their own backend; inside ``tf.function`` and ``torch.compile``
they become the framework's graph collectives (``compiled.py``). Dtypes are kept: an int32 sum stays int32;
``"mean"`` follows ``arraylayer.mean`` (integers and bools give the default float dtype). Inside
``replicated_step`` they run over its devices instead (``devices.active()``).
"""

from __future__ import annotations

import hashlib
from typing import Any

import arraylayer as al
from arraylayer.distributed import compiled, devices
from arraylayer.distributed.world import World, current
from arraylayer.errors import DistributedMismatchError, InvalidArgumentError, InvalidDtypeError
from arraylayer.models.tree import tree_flatten, tree_paths

__all__ = ["all_reduce", "all_gather", "broadcast", "barrier", "exchange_signature"]

OPS = ("sum", "mean", "max", "min")


def _describe(kind: str, paths: list, leaves: list) -> str:
    return f"{kind}: " + ", ".join(f"{'/'.join(map(str, p)) or '<root>'} {al.Dtype(x.dtype)}{tuple(x.shape)}"
                                   for p, x in zip(paths, leaves, strict=True))


def _seconds(timeout: float | None) -> float:
    return current().timeout if timeout is None else float(timeout)


def exchange_signature(kind: str, leaves_or_tree: Any, timeout: float | None, paths: list | None = None) -> None:
    """All-gather a 32-byte digest of the call; DistributedMismatchError on every rank if any differs."""
    world = current()
    if world.size == 1:
        return
    leaves = leaves_or_tree
    text = _describe(kind, paths or [()] * len(leaves), leaves)
    rows = world.engine.gather_digest(world.rank, world.size, hashlib.sha256(text.encode()).digest(), _seconds(timeout))
    differ = [r for r, row in enumerate(rows) if row != rows[0]]
    if differ:
        raise DistributedMismatchError(
            f"rank {world.rank}: the ranks called different collectives (ranks {differ} differ from rank 0 in "
            f"kind, tree, shapes or dtypes); this rank called {text}")


def _back(result: Any, like: Any) -> Any:
    """The engine's result in the leaf's own backend."""
    name = al.backend_of(like).name
    return result if al.backend_of(result).name == name else al.to_backend(result, name)


def _traced(tree: Any, kind: str) -> tuple[str | None, World, str, list, Any]:
    """The compiler tracing the call in a world of several processes (None: eager, or a world of one),
    with the call's description (tensorflow checks it in the graph), the leaves and their rebuild."""
    world = current()
    leaves, rebuild = tree_flatten(tree)
    compiler = compiled.tracing(leaves) if world.size > 1 else None
    text = _describe(kind, tree_paths(tree), leaves) if compiler == "tensorflow" else ""
    return compiler, world, text, leaves, rebuild


def _prepare(tree: Any, kind: str, timeout: float | None) -> tuple[World, list, Any]:
    world = current()
    leaves, rebuild = tree_flatten(tree)
    for x in leaves:
        if al.backend_of(x).name == "dask":
            raise al.UnsupportedOperationError("arraylayer.distributed does not reduce dask arrays: a dask cluster "
                                               "already spreads one array over workers (compute the leaf first).")
    exchange_signature(kind, leaves, timeout, tree_paths(tree))
    return world, leaves, rebuild


def all_reduce(tree: Any, op: str = "sum", *, timeout: float | None = None) -> Any:
    """Every leaf reduced over the ranks (``"sum"``, ``"mean"``, ``"max"``, ``"min"``), on every rank."""
    if op not in OPS:
        raise InvalidArgumentError(f"op must be one of {OPS}, got {op!r}.")
    leaves, _ = tree_flatten(tree)
    for x in leaves:
        dtype = al.Dtype(x.dtype)
        if dtype == al.bool and op == "sum":
            raise InvalidDtypeError("all_reduce 'sum' of a bool leaf: cast it to an integer dtype first.")
        if op in ("max", "min") and al.isdtype(dtype, "complex floating"):
            raise InvalidDtypeError(f"all_reduce {op!r} of a complex leaf: complex numbers have no order "
                                    f"(reduce their real and imaginary parts, or abs).")
    if op == "mean":
        tree_leaves, rebuild = tree_flatten(tree)
        tree = rebuild([x if al.isdtype(al.Dtype(x.dtype), ("real floating", "complex floating"))
                        else al.astype(x, al.result_type(1.0)) for x in tree_leaves])
    replicas = devices.active()
    if replicas is not None:  # inside replicated_step: over its devices
        tree_leaves, rebuild = tree_flatten(tree)
        return rebuild([replicas.reduce(x, op) for x in tree_leaves])
    wire_op = "sum" if op == "mean" else op
    compiler, world, text, leaves, rebuild = _traced(tree, f"all_reduce[{op}]")
    if compiler is not None:
        out = compiled.all_reduce(compiler, world, text, _seconds(timeout), leaves, wire_op)
    else:
        world, leaves, rebuild = _prepare(tree, f"all_reduce[{op}]", timeout)
        if world.size == 1:
            return rebuild(leaves)
        out = [_back(r, x) for r, x in zip(world.engine.all_reduce(world.rank, world.size, leaves, wire_op,
                                                                   _seconds(timeout)), leaves, strict=True)]
    if op == "mean":
        out = [al.astype(al.divide(y, world.size), al.Dtype(x.dtype)) for y, x in zip(out, leaves, strict=True)]
    return rebuild(out)


def all_gather(tree: Any, *, timeout: float | None = None) -> Any:
    """Every leaf of every rank, stacked along a new leading axis of length ``world_size()``."""
    replicas = devices.active()
    if replicas is not None:
        tree_leaves, rebuild = tree_flatten(tree)
        return rebuild([replicas.gather(x) for x in tree_leaves])
    compiler, world, text, leaves, rebuild = _traced(tree, "all_gather")
    if compiler is not None:
        return rebuild(compiled.all_gather(compiler, world, text, _seconds(timeout), leaves))
    world, leaves, rebuild = _prepare(tree, "all_gather", timeout)
    if world.size == 1:
        return rebuild([al.expand_dims(x, axis=0) for x in leaves])
    results = world.engine.all_gather(world.rank, world.size, leaves, _seconds(timeout))
    return rebuild([_back(r, x) for r, x in zip(results, leaves, strict=True)])


def broadcast(tree: Any, root: int = 0, *, timeout: float | None = None) -> Any:
    """Rank ``root``'s tree on every rank (the others' leaves give the shapes and dtypes)."""
    replicas = devices.active()
    if replicas is not None:
        tree_leaves, rebuild = tree_flatten(tree)
        return rebuild([replicas.gather(x)[root] for x in tree_leaves])
    world = current()
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < world.size:
        raise InvalidArgumentError(f"root must be a rank in [0, {world.size}), got {root!r}.")
    compiler, world, text, leaves, rebuild = _traced(tree, f"broadcast[{root}]")
    if compiler is not None:
        return rebuild(compiled.broadcast(compiler, world, text, _seconds(timeout), leaves, root))
    world, leaves, rebuild = _prepare(tree, f"broadcast[{root}]", timeout)
    if world.size == 1:
        return tree
    results = world.engine.broadcast(world.rank, world.size, leaves, root, _seconds(timeout))
    return rebuild([_back(r, x) for r, x in zip(results, leaves, strict=True)])


def barrier(timeout: float | None = None) -> None:
    """Wait until every rank reaches this call (a collective: a signature exchange)."""
    if devices.active() is not None:  # the replicas of one step run in lockstep
        return
    current()
    exchange_signature("barrier", [], timeout)
