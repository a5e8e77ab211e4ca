"""torch.compile's guard filter for arraylayer, the default of every ``torch.compile`` given none.

Dynamo checks a guard before every call of a compiled function for each Python value the traced
code read. arraylayer's traced code reads its own modules (functions, their defaults and closures,
tables fixed at import, caches that no result depends on), so a step through arraylayer checks
many more guards than the same step written in torch. This filter drops the guards on arraylayer's
own module state and keeps all others: the tensors' and the user's, and the one on
``context.EPOCH``, which every change of arraylayer's process-wide state bumps (``set_*``
settings, policies, default dtypes, the backend, registered backends and dtype aliases), so that
such a change still compiles again.

Once ``torch._dynamo`` is imported (by the first ``torch.compile``; arraylayer never imports it),
:func:`install_as_default` makes this filter the one Dynamo uses where ``torch.compile`` was given
none, so that a plain ``torch.compile(step)`` checks the same guards as the native step plus one
(torch offers no public default; it is installed on Dynamo's guard builder, the way
``backends/first_use.py`` prepares Dynamo for arraylayer). Every guard that is not on arraylayer's
state is kept, so code that does not use arraylayer is guarded as before. To keep every guard, give
``torch.compile`` a filter of your own: ``options={"guard_filter_fn": lambda entries: [True] *
len(entries)}``. Scoped settings (``with al.dtype_promotion(...)``) are read
when the function is traced, with or without the filter (docs/concepts.rst).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = ["install_as_default", "own_namespace", "torch_guard_filter"]

_PACKAGE = __name__.partition(".")[0]
#: The source Dynamo gives a module it imported for an inlined function: one of arraylayer's.
_OWN_MODULE = f"G['__import_{_PACKAGE}"
#: The one guard on arraylayer's state that the filter keeps.
_EPOCH = f"G['__import_{_PACKAGE}_dot_context'].EPOCH"
#: The source Dynamo gives the globals of a function that no module holds (code that ``exec``
#: ran in a namespace of its own): ``G['___unnamed_scope_<id of the dict>_c<compile>']``.
_SCOPE = "G['___unnamed_scope_"
#: The namespaces arraylayer ran generated code in, by id (kept alive here, so that an id seen
#: in a guard's name is never another dict's).
_OWN_NAMESPACES: dict[int, dict[str, Any]] = {}


def own_namespace(namespace: dict[str, Any]) -> dict[str, Any]:
    """``namespace``, recorded as arraylayer's own: the globals that arraylayer runs generated code
    in (the wrappers of ``api.dispatch.accepting_wrapped``). Dynamo names such a dict by its id,
    not by a module, so the filter knows it by that id and drops the guards on it and on what is
    reached through it (the wrapped function's code, the sequence types looked at), as it drops
    those on arraylayer's modules."""
    _OWN_NAMESPACES[id(namespace)] = namespace
    return namespace


def _in_own_namespace(name: str) -> bool:
    """Whether a guard's source starts at one of arraylayer's own namespaces."""
    if not name.startswith(_SCOPE):
        return False
    number = name[len(_SCOPE):].partition("_")[0]
    return number.isdigit() and int(number) in _OWN_NAMESPACES


def _is_own(value: Any) -> bool:
    """An arraylayer module, or a function or class of one (a user's global such as ``al``)."""
    name = value.__name__ if isinstance(value, ModuleType) else getattr(value, "__module__", None)
    return isinstance(name, str) and (name == _PACKAGE or name.startswith(_PACKAGE + "."))


def torch_guard_filter(entries: Sequence[Any]) -> list[bool]:
    """For each of Dynamo's guard entries, whether to keep it: False for the guards on arraylayer's
    modules and on what is reached through them (a user global bound to arraylayer keeps the guard on
    its own identity) and on the namespaces of its generated code (:func:`own_namespace`), True for
    every other guard and for ``context.EPOCH``.

    Dynamo builds the guards twice where a filter is given, and the first build's export record on
    each guard (types, code, the object's weakref) then meets the second build's: for an attribute
    that is a new object on each read, such as a tensor's ``.mT``, torch 2.13 compares the two
    tensors' weakrefs and raises "Boolean value of Tensor ... is ambiguous". The record is only a
    report, so it is cleared here, between the builds, and the second build writes it afresh."""
    for entry in entries:
        _clear_export_record(getattr(entry, "orig_guard", None))
    roots = tuple(f"{entry.name}{sep}" for entry in entries if entry.is_global and entry.has_value
                  and _OWN_MODULE not in entry.name and _is_own(entry.value) for sep in ".[")
    return [not entry.is_global or entry.name == _EPOCH
            or not (_OWN_MODULE in entry.name or entry.name.startswith(roots) or _in_own_namespace(entry.name))
            for entry in entries]


def _clear_export_record(guard: Any) -> None:
    for field in _EXPORT_RECORD:
        if getattr(guard, field, None) is not None:
            setattr(guard, field, None)


#: The fields of a Dynamo guard that its builds fill in for guard export (torch._guards.Guard).
_EXPORT_RECORD = ("guard_types", "code_list", "obj_weakref", "guarded_class_weakref")


def install_as_default(check_function_manager: type) -> None:
    """Make :func:`torch_guard_filter` the filter of Dynamo's guard builder (its
    ``CheckFunctionManager``) wherever it is given none; a filter given is used as it is."""
    original = check_function_manager.__init__
    if getattr(original, "_arraylayer_default_filter", False):
        return
    import inspect  # here, not at import: ``import arraylayer`` stays without inspect (issue 42)

    signature = inspect.signature(original)
    if "guard_filter_fn" not in signature.parameters:
        raise AttributeError("torch._dynamo's CheckFunctionManager takes no guard_filter_fn")

    @functools.wraps(original)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        if bound.arguments.get("guard_filter_fn") is None:
            bound.arguments["guard_filter_fn"] = torch_guard_filter
        original(*bound.args, **bound.kwargs)

    __init__._arraylayer_default_filter = True  # type: ignore[attr-defined]
    check_function_manager.__init__ = __init__
