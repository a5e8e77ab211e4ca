"""Checkpoints of a data-parallel run: every rank holds the same parameters, so rank 0 writes the file
and the others wait for it; the file is an ordinary checkpoint, read in one process on any backend."""

from __future__ import annotations

import os
from typing import Any

from arraylayer.distributed.collectives import barrier, broadcast
from arraylayer.distributed.world import current
from arraylayer.models import checkpoint

__all__ = ["save"]


def save(file: str | os.PathLike[str], tree: Any, *, step: int | None = None, root: int = 0,
         timeout: float | None = None) -> None:
    """Write ``tree`` to ``file`` from rank ``root`` (``arraylayer.checkpoint.save``: atomic, mode kept)
    and return on every rank once the file is complete. A failure to write on ``root`` is raised on
    every rank (as :class:`~arraylayer.errors.DistributedError` on the others), so no rank goes on
    believing the checkpoint exists. ``tree`` must have one structure on every rank."""
    world = current()
    failure = ""
    if world.rank == root:
        try:
            checkpoint.save(file, tree, step=step)
        except Exception as error:  # told to the other ranks below, then raised here
            failure, raised = f"{type(error).__name__}: {error}", error
    if world.size > 1:
        import numpy as np

        code = np.frombuffer(failure.encode()[:512].ljust(512, b"\0"), np.uint8).copy()
        told = bytes(np.asarray(broadcast(code, root=root, timeout=timeout))).rstrip(b"\0").decode(errors="replace")
        barrier(timeout)
        if told and world.rank != root:
            from arraylayer.errors import DistributedError

            raise DistributedError(f"rank {root} could not save the checkpoint {os.fspath(file)!r}: {told}")
    if failure:
        raise raised
