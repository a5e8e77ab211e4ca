"""Data parallelism: ``shard`` a global batch, ``data_parallel`` an optimizer (gradients averaged first)."""

from __future__ import annotations

from typing import Any

import arraylayer as al
from arraylayer.distributed.collectives import all_reduce
from arraylayer.distributed.world import current
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.optim import Optimizer
from arraylayer.models.transforms import GradientTransformation

__all__ = ["shard", "data_parallel", "data_parallel_transform"]


def shard(x: Any, axis: int = 0) -> Any:
    """This rank's contiguous part of ``x`` along ``axis``; the length must split evenly over the ranks."""
    world = current()
    n = x.shape[axis]
    if n % world.size:
        raise InvalidArgumentError(f"shard: axis {axis} has length {n}, which does not split evenly over "
                                   f"{world.size} ranks (pad or drop {n % world.size} rows).")
    part = n // world.size
    index = [slice(None)] * len(x.shape)
    index[axis] = slice(world.rank * part, (world.rank + 1) * part)
    return x[tuple(index)]


def data_parallel_transform() -> GradientTransformation:
    """A gradient transformation that averages the gradients over the ranks (stateless)."""
    return GradientTransformation(lambda params: {}, lambda grads, state, params=None: (all_reduce(grads, "mean"), state))


def data_parallel(optimizer: Optimizer) -> Optimizer:
    """``optimizer`` whose update first averages the gradients over the ranks (as DDP does)."""

    def update(grads: Any, state: Any, params: Any) -> tuple[Any, Any]:
        return optimizer.update(all_reduce(grads, "mean"), state, params)

    return Optimizer(optimizer.init, update)
