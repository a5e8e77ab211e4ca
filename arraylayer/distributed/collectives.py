"""Collectives over trees of arrays: ``all_reduce``, ``all_gather``, ``broadcast``.

Each call first exchanges a fixed-size signature of the call (its kind, the tree's paths, shapes and
dtypes) with the engine's own all-gather, so ranks that disagree all raise DistributedMismatchError
instead of hanging. Dtypes are kept: an int32 sum stays int32; ``"mean"`` follows ``arraylayer.mean``
(integers and bools give the default float dtype). Leaves of any backend are reduced as torch tensors
(zero-copy from NumPy) and come back in their own backend.
"""

from __future__ import annotations

import datetime
import hashlib
from typing import Any

import numpy as np

import arraylayer as al
from arraylayer.distributed.world import current
from arraylayer.errors import (DistributedError, DistributedMismatchError, DistributedTimeoutError,
                               InvalidArgumentError, InvalidDtypeError)
from arraylayer.models.tree import tree_flatten, tree_paths

__all__ = ["all_reduce", "all_gather", "broadcast", "barrier", "exchange_signature"]

OPS = ("sum", "mean", "max", "min")


def _describe(kind: str, paths: list, leaves: list) -> str:
    return f"{kind}: " + ", ".join(f"{'/'.join(map(str, p)) or '<root>'} {al.Dtype(x.dtype)}{tuple(x.shape)}"
                                   for p, x in zip(paths, leaves, strict=True))


def _timeout(timeout: float | None) -> datetime.timedelta:
    return datetime.timedelta(seconds=current().timeout if timeout is None else timeout)


def _wait(work: Any, timeout: float | None, what: str) -> None:
    try:
        work.wait(timeout=_timeout(timeout))
    except Exception as error:
        message = str(error)
        if "imeout" in message or "imed out" in message:
            raise DistributedTimeoutError(f"rank {current().rank}: {what} did not complete within "
                                          f"{_timeout(timeout).total_seconds():g} s: {message.splitlines()[0]}") from None
        raise DistributedError(f"rank {current().rank}: {what} failed (a peer gone?): {message.splitlines()[0]}") from None


def exchange_signature(kind: str, leaves_or_tree: Any, timeout: float | None, paths: list | None = None) -> None:
    """All-gather a 32-byte digest of the call; DistributedMismatchError on every rank if any differs."""
    world = current()
    if world.size == 1:
        return
    import torch
    import torch.distributed as dist

    leaves = leaves_or_tree
    text = _describe(kind, paths or [()] * len(leaves), leaves)
    digest = torch.frombuffer(bytearray(hashlib.sha256(text.encode()).digest()), dtype=torch.int32).clone()
    rows = [torch.empty_like(digest) for _ in range(world.size)]
    _wait(dist.all_gather(rows, digest, async_op=True), timeout, kind)
    differ = [r for r, row in enumerate(rows) if not torch.equal(row, rows[0])]
    if differ:
        raise DistributedMismatchError(
            f"rank {world.rank}: the ranks called different collectives (ranks {differ} differ from rank 0 in "
            f"kind, tree, shapes or dtypes); this rank called {text}")


def _torch_of(x: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    return torch.from_numpy(np.array(al.to_backend(x, "numpy")))


def _back(t: Any, like: Any) -> Any:
    import torch

    if isinstance(like, torch.Tensor):
        return t
    return al.to_backend(t.numpy(), al.backend_of(like).name)


def _prepare(tree: Any, kind: str, timeout: float | None) -> tuple[list, Any]:
    leaves, rebuild = tree_flatten(tree)
    for x in leaves:
        if al.backend_of(x).name == "dask":
            raise al.UnsupportedOperationError("arraylayer.distributed does not reduce dask arrays: a dask cluster "
                                               "already spreads one array over workers (compute the leaf first).")
    exchange_signature(kind, leaves, timeout, tree_paths(tree))
    return leaves, rebuild


def all_reduce(tree: Any, op: str = "sum", *, timeout: float | None = None) -> Any:
    """Every leaf reduced over the ranks (``"sum"``, ``"mean"``, ``"max"``, ``"min"``), on every rank."""
    if op not in OPS:
        raise InvalidArgumentError(f"op must be one of {OPS}, got {op!r}.")
    leaves, rebuild = _prepare(tree, f"all_reduce[{op}]", timeout)
    world = current()
    out = []
    for x in leaves:
        dtype = al.Dtype(x.dtype)
        if dtype == al.bool and op in ("sum",):
            raise InvalidDtypeError("all_reduce 'sum' of a bool leaf: cast it to an integer dtype first.")
        if op == "mean" and not al.isdtype(dtype, ("real floating", "complex floating")):
            x = al.astype(x, al.result_type(1.0))
        if world.size == 1:
            out.append(x)
            continue
        import torch
        import torch.distributed as dist

        t = _torch_of(x)
        wire = t.to(torch.uint8) if t.dtype == torch.bool else (torch.view_as_real(t) if t.is_complex() else t)
        reduce_op = {"sum": dist.ReduceOp.SUM, "mean": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX,
                     "min": dist.ReduceOp.MIN}[op]
        _wait(dist.all_reduce(wire, reduce_op, async_op=True), timeout, f"all_reduce[{op}]")
        result = wire.to(torch.bool) if t.dtype == torch.bool else (torch.view_as_complex(wire) if t.is_complex() else wire)
        if op == "mean":
            result = result / world.size
        out.append(_back(result.to(t.dtype), x))
    return rebuild(out)


def all_gather(tree: Any, *, timeout: float | None = None) -> Any:
    """Every leaf of every rank, stacked along a new leading axis of length ``world_size()``."""
    leaves, rebuild = _prepare(tree, "all_gather", timeout)
    world = current()
    if world.size == 1:
        return rebuild([al.expand_dims(x, axis=0) for x in leaves])
    import torch
    import torch.distributed as dist

    out = []
    for x in leaves:
        t = _torch_of(x)
        rows = [torch.empty_like(t) for _ in range(world.size)]
        _wait(dist.all_gather(rows, t, async_op=True), timeout, "all_gather")
        out.append(_back(torch.stack(rows), x))
    return rebuild(out)


def broadcast(tree: Any, root: int = 0, *, timeout: float | None = None) -> Any:
    """Rank ``root``'s tree on every rank (the others' leaves give the shapes and dtypes)."""
    world = current()
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < world.size:
        raise InvalidArgumentError(f"root must be a rank in [0, {world.size}), got {root!r}.")
    leaves, rebuild = _prepare(tree, f"broadcast[{root}]", timeout)
    if world.size == 1:
        return tree
    import torch.distributed as dist

    out = []
    for x in leaves:
        t = _torch_of(x)
        _wait(dist.broadcast(t, src=root, async_op=True), timeout, "broadcast")
        out.append(_back(t, x))
    return rebuild(out)


def barrier(timeout: float | None = None) -> None:
    """Wait until every rank reaches this call (a collective: a signature exchange)."""
    current()
    exchange_signature("barrier", [], timeout)
