"""The world of ranks: joined once from the environment, a world of one when none is set.

The environment is the launcher's (``ARRAYLAYER_RANK`` ...) or torchrun's (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``). The world's backend (``initialize(backend=...)`` or
``ARRAYLAYER_BACKEND``, which ``launch --backend`` sets) picks its engine from ``engines.ENGINES``:
jax.distributed, TensorFlow's collective ops, or torch.distributed's gloo; the timeout given bounds
the joining and every collective.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from types import ModuleType

from arraylayer.distributed import engines
from arraylayer.errors import DistributedError, InvalidArgumentError

__all__ = ["initialize", "shutdown", "is_initialized", "rank", "world_size", "local_rank", "current"]


@dataclass
class World:
    rank: int
    size: int
    local_rank: int
    timeout: float
    backend: str | None = None
    engine: ModuleType | None = None  # joined when size > 1


_WORLD: World | None = None


def _env(*names: str) -> str | None:
    return next((os.environ[n] for n in names if n in os.environ), None)


def initialize(timeout: float = 60.0, backend: str | None = None) -> World:
    """Join the world the environment describes (a world of one when none does) on ``backend``'s engine
    (default: ``ARRAYLAYER_BACKEND``, else torch.distributed's gloo); idempotent."""
    global _WORLD
    if _WORLD is not None:
        return _WORLD
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise InvalidArgumentError(f"timeout must be a positive number of seconds, got {timeout!r}.")
    backend = backend or os.environ.get("ARRAYLAYER_BACKEND") or None
    engines.engine_name(backend)  # an unknown backend is refused in a world of one too
    size = int(_env("ARRAYLAYER_WORLD_SIZE", "WORLD_SIZE") or 1)
    rank_ = int(_env("ARRAYLAYER_RANK", "RANK") or 0)
    local = int(_env("ARRAYLAYER_LOCAL_RANK", "LOCAL_RANK") or 0)
    world = World(rank_, size, local, float(timeout), backend)
    if size > 1:
        engine = engines.load(backend)
        engine.join(rank_, size, float(timeout))
        world.engine = engine
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
    """Leave the world (the engine's own shutdown); ``initialize`` may be called again (not on jax and
    tensorflow, whose runtimes join once per process)."""
    global _WORLD
    if _WORLD is not None and _WORLD.engine is not None:
        _WORLD.engine.leave()
    _WORLD = None
