"""The world of ranks: joined once from the environment, a world of one when none is set.

The environment is the launcher's (``ARRAYLAYER_RANK`` ...) or torchrun's (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``). The engine is torch.distributed's process group
(gloo), joined through a TCP store with the timeout given, which also bounds every collective.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from typing import Any

from arraylayer.errors import DistributedError, InvalidArgumentError

__all__ = ["initialize", "shutdown", "is_initialized", "rank", "world_size", "local_rank", "current"]


@dataclass
class World:
    rank: int
    size: int
    local_rank: int
    timeout: float
    group: Any = None  # torch.distributed's default group when size > 1


_WORLD: World | None = None


def _env(*names: str) -> str | None:
    return next((os.environ[n] for n in names if n in os.environ), None)


def initialize(timeout: float = 60.0) -> World:
    """Join the world the environment describes (a world of one when none does); idempotent."""
    global _WORLD
    if _WORLD is not None:
        return _WORLD
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise InvalidArgumentError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    size = int(_env("ARRAYLAYER_WORLD_SIZE", "WORLD_SIZE") or 1)
    rank_ = int(_env("ARRAYLAYER_RANK", "RANK") or 0)
    local = int(_env("ARRAYLAYER_LOCAL_RANK", "LOCAL_RANK") or 0)
    world = World(rank_, size, local, float(timeout))
    if size > 1:
        import torch.distributed as dist

        addr = _env("ARRAYLAYER_MASTER_ADDR", "MASTER_ADDR") or "127.0.0.1"
        port = _env("ARRAYLAYER_MASTER_PORT", "MASTER_PORT")
        if port is None:
            raise DistributedError("WORLD_SIZE > 1 but no MASTER_PORT: start the script with "
                                   "'python -m arraylayer launch' or torchrun.")
        try:
            dist.init_process_group("gloo", init_method=f"tcp://{addr}:{port}", rank=rank_, world_size=size,
                                    timeout=datetime.timedelta(seconds=timeout))
        except Exception as error:  # the store's own timeout or a refused connection
            raise DistributedError(f"rank {rank_} could not join the world of {size} at {addr}:{port}: {error}") from error
        world.group = dist.group.WORLD
    _WORLD = world
    return world


def current() -> World:
    """The joined world; DistributedError before ``initialize``."""
    if _WORLD is None:
        raise DistributedError("arraylayer.distributed is not initialised: call arraylayer.distributed.initialize() first.")
    return _WORLD


def is_initialized() -> bool:
    return _WORLD is not None


def rank() -> int:
    """This process's rank, 0 .. world_size() - 1."""
    return current().rank


def world_size() -> int:
    """The number of processes in the world."""
    return current().size


def local_rank() -> int:
    """This process's rank on its host."""
    return current().local_rank


def shutdown() -> None:
    """Leave the world (destroys the process group); ``initialize`` may be called again."""
    global _WORLD
    if _WORLD is not None and _WORLD.size > 1:
        import torch.distributed as dist

        dist.destroy_process_group()
    _WORLD = None
