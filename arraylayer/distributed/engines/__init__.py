"""The engine table: which framework's own collectives a world of a given backend runs on.

An engine is a module with ``launch_envs`` (the environment the launcher gives each rank), ``join`` and
``leave``, ``gather_digest`` (the timed all-gather of a call's signature) and ``all_reduce``,
``all_gather``, ``broadcast`` over a list of leaves. The engines import their framework only when used,
so the launcher picks one without importing jax or TensorFlow.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Final

from arraylayer.errors import InvalidArgumentError

__all__ = ["ENGINES", "DEFAULT", "engine_name", "load"]

#: backend name -> engine module (in this folder); no backend named: DEFAULT
ENGINES: Final = {"torch": "torch_gloo", "numpy": "torch_gloo", "dask": "torch_gloo",
                  "jax": "jax_dist", "tensorflow": "tf_collective"}
DEFAULT: Final = "torch_gloo"


def engine_name(backend: str | None) -> str:
    """The engine module's name for a world of ``backend`` (None or "": the default, torch's gloo)."""
    if not backend:
        return DEFAULT
    if backend not in ENGINES:
        raise InvalidArgumentError(f"no distributed engine for backend {backend!r}: use one of {sorted(ENGINES)} "
                                   f"(or none, for torch.distributed's gloo).")
    return ENGINES[backend]


def load(backend: str | None) -> ModuleType:
    """The engine module for a world of ``backend``."""
    return importlib.import_module(f"arraylayer.distributed.engines.{engine_name(backend)}")
