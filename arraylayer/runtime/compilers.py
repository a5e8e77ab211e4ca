"""Each framework's compiler by backend name, for scripts that compile one step written with
arraylayer on every backend (the examples, the benchmarks): ``compiler("jax")`` is ``jax.jit``.

The framework is imported when its compiler is asked for, never at this module's import.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final

__all__ = ["COMPILERS", "compiler"]

#: backend -> (the framework's module, the compiler's name in it)
_WHERE: Final = {"jax": ("jax", "jit"), "tensorflow": ("tensorflow", "function"), "torch": ("torch", "compile")}
#: backend -> its compiler as people write it
COMPILERS: Final = {"jax": "jax.jit", "tensorflow": "tf.function", "torch": "torch.compile"}


def compiler(backend: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """jax.jit, tf.function, or torch.compile (TorchInductor, graph breaks allowed) for ``backend``."""
    module, name = _WHERE[backend]
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
