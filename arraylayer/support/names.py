"""Public functions by name: the callables of the namespaces the package registers
(``arraylayer``, ``arraylayer.linalg``, ``arraylayer.fft``, and the model toolkit's ``nn``, ``layers``
and ``optim``), and the qualified name of each. A layer (a ``Layer`` pair or a ``StatefulLayer``) is
its functions: ``layers.dense.init``, ``layers.dense.apply``, ``layers.batch_norm.init_state``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from arraylayer.support.table import Uses, function_table

__all__ = ["register_namespace", "public_functions", "function_name", "function_uses"]

#: (prefix, module) of each public namespace, the main one first (its name wins for a shared function)
_NAMESPACES: list[tuple[str, Any]] = []
_PUBLIC: dict[str, Callable[..., Any]] = {}
_NAME_OF: dict[int, str] = {}


def register_namespace(prefix: str, module: Any) -> None:
    """Make the callables of ``module.__all__`` (classes left out) public functions named
    ``<prefix><name>``, and the functions of each layer there ``<prefix><name>.<field>``.
    ``module`` is a module, or the name of one imported when the functions are first listed (the
    model toolkit loads on first use). ``arraylayer`` registers itself (prefix ``""``), ``linalg.``,
    ``fft.``, ``nn.``, ``layers.`` and ``optim.`` when it is imported, so this module imports no
    namespace of its own choosing. Registering a namespace again changes nothing."""
    if (prefix, module) in _NAMESPACES:
        return
    _NAMESPACES.append((prefix, module))
    _PUBLIC.clear()
    _NAME_OF.clear()


def public_functions() -> dict[str, Callable[..., Any]]:
    """Every public function by qualified name: the callables of ``arraylayer.__all__`` (classes
    left out), of ``arraylayer.linalg.__all__`` as ``linalg.<name>``, of ``arraylayer.fft.__all__``
    as ``fft.<name>``, of the model toolkit as ``nn.<name>``, ``optim.<name>`` and
    ``layers.<name>.init`` / ``.apply`` (the registered namespaces, see :func:`register_namespace`)."""
    if not _PUBLIC:
        found: dict[str, Callable[..., Any]] = {}
        for prefix, module in _NAMESPACES:
            if isinstance(module, str):
                module = importlib.import_module(module)
            for name in module.__all__:
                obj = getattr(module, name)
                if callable(obj) and not isinstance(obj, type):
                    found[prefix + name] = obj
                elif isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a layer: its init, apply ...
                    found.update((f"{prefix}{name}.{field}", part) for field, part in zip(obj._fields, obj, strict=True)
                                 if callable(part))
        for name, obj in found.items():
            _NAME_OF.setdefault(id(obj), name)  # linalg.matmul is matmul: the main name wins
        _PUBLIC.update(found)
    return _PUBLIC


def function_name(fn: Any) -> str:
    """The qualified name of a public function, given the function itself or its name
    (``"add"``, ``"linalg.det"``, ``"arraylayer.linalg.det"``); ValueError for anything else."""
    table = function_table()
    functions = public_functions()
    if isinstance(fn, str):
        name = fn.removeprefix("arraylayer.")
        if name in table:
            return name
        if name not in functions:
            import difflib

            close = difflib.get_close_matches(name, list(table), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{fn!r} is not a public arraylayer function.{hint}")
        name = _NAME_OF[id(functions[name])]
    else:
        name = _NAME_OF.get(id(fn))  # type: ignore[assignment]
        if name is None or functions[name] is not fn:
            shown = getattr(fn, "__qualname__", None) or repr(fn)
            raise ValueError(
                f"{shown} is not a public arraylayer function; dtype support is known for arraylayer's own "
                f"functions (arraylayer.<name>, linalg.<name>, fft.<name>, nn.<name>, optim.<name> and "
                f"layers.<name>.init / .apply)."
            )
    if name not in table:
        raise ValueError(f"arraylayer.{name} has no row in the table of arraylayer/support/table.py (FUNCTIONS, or "
                         f"INDEPENDENT for a function that takes no arrays): its dtype support is unknown.")
    return name


def function_uses(fn: Any) -> Uses:
    """The :class:`Uses` row of a public function (the function or its name)."""
    return function_table()[function_name(fn)]
