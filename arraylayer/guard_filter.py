"""torch.compile's guard filter for arraylayer: ``options={"guard_filter_fn": torch_guard_filter}``.

Dynamo checks a guard before every call of a compiled function for each Python value the traced
code read. arraylayer's traced code reads its own modules (functions, their defaults and closures,
tables fixed at import, caches that no result depends on), so a step through arraylayer checks
many more guards than the same step written in torch. This filter drops the guards on arraylayer's
own module state and keeps all others: the tensors' and the user's, and the one on
``context.EPOCH``, which every change of arraylayer's process-wide state bumps (``set_*``
settings, policies, default dtypes, the backend, registered backends and dtype aliases), so that
such a change still compiles again. Scoped settings (``with al.dtype_promotion(...)``) are read
when the function is traced, with or without the filter (docs/concepts.rst).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["torch_guard_filter"]

_PACKAGE = __name__.partition(".")[0]
#: The source Dynamo gives a module it imported for an inlined function: one of arraylayer's.
_OWN_MODULE = f"G['__import_{_PACKAGE}"
#: The one guard on arraylayer's state that the filter keeps.
_EPOCH = f"G['__import_{_PACKAGE}_dot_context'].EPOCH"


def _is_own(value: Any) -> bool:
    """An arraylayer module, or a function or class of one (a user's global such as ``al``)."""
    name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
    return isinstance(name, str) and (name == _PACKAGE or name.startswith(_PACKAGE + "."))


def torch_guard_filter(entries: Sequence[Any]) -> list[bool]:
    """For each of Dynamo's guard entries, whether to keep it: False for the guards on arraylayer's
    modules and on what is reached through them (a user global bound to arraylayer keeps the guard on
    its own identity), True for every other guard and for ``context.EPOCH``."""
    roots = tuple(f"{entry.name}{sep}" for entry in entries if entry.is_global and entry.has_value
                  and _OWN_MODULE not in entry.name and _is_own(entry.value) for sep in ".[")
    return [not entry.is_global or entry.name == _EPOCH
            or not (_OWN_MODULE in entry.name or entry.name.startswith(roots)) for entry in entries]
