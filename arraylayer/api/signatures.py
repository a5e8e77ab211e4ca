"""Function signatures read straight from a function's code object, without :mod:`inspect`.

``import arraylayer`` generates a wrapper for each of its ~200 public functions
(``api.dispatch.accepting_wrapped``) from the function's signature. ``inspect.signature`` costs
tens of microseconds a function and importing :mod:`inspect` (with ``ast``, ``dis`` and
``tokenize``) several milliseconds; a plain Python function's code object already holds the same
facts. :func:`signature_of` reads them for a plain function and asks :mod:`inspect` (imported
then) for anything else, so the result always equals ``inspect.signature``'s in the parts the
generated code reads: each parameter's ``name``, ``kind``, ``default`` and ``annotation``.
"""

from __future__ import annotations

from types import FunctionType
from typing import Any

__all__ = ["CodeParameter", "CodeSignature", "signature_of"]

_CO_VARARGS = 0x04
_CO_VARKEYWORDS = 0x08


class _Empty:
    """Marks a parameter without default or annotation (``inspect.Parameter.empty``'s role)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<empty>"


class CodeParameter:
    """One parameter: the attributes of ``inspect.Parameter`` that the wrapper generators read."""

    __slots__ = ("name", "kind", "default", "annotation")

    empty = _Empty()
    # The kinds, compared by identity (``p.kind is p.VAR_POSITIONAL``) as inspect's are.
    POSITIONAL_ONLY = "POSITIONAL_ONLY"
    POSITIONAL_OR_KEYWORD = "POSITIONAL_OR_KEYWORD"
    VAR_POSITIONAL = "VAR_POSITIONAL"
    KEYWORD_ONLY = "KEYWORD_ONLY"
    VAR_KEYWORD = "VAR_KEYWORD"

    def __init__(self, name: str, kind: str, default: Any, annotation: Any) -> None:
        self.name, self.kind, self.default, self.annotation = name, kind, default, annotation

    def __repr__(self) -> str:
        return f"<CodeParameter {self.kind} {self.name}>"


class CodeSignature:
    """The parameters of a plain function, by name in order (``inspect.Signature.parameters``)."""

    __slots__ = ("parameters",)

    def __init__(self, parameters: dict[str, CodeParameter]) -> None:
        self.parameters = parameters


def _is_plain(function: Any) -> bool:
    """A function whose code object alone says its signature (no ``__wrapped__``/``__signature__``
    redirect, which :func:`inspect.signature` would follow)."""
    return (type(function) is FunctionType and not hasattr(function, "__wrapped__")
            and not hasattr(function, "__signature__"))


def signature_of(function: Any) -> Any:
    """``function``'s signature: a :class:`CodeSignature` for a plain Python function, otherwise
    ``inspect.signature(function)`` (its TypeError or ValueError propagate)."""
    if not _is_plain(function):
        import inspect  # only for builtins, partials, wrapped functions: none on the import path

        return inspect.signature(function)
    code = function.__code__
    P, empty = CodeParameter, CodeParameter.empty
    names = code.co_varnames
    positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
    annotations = function.__annotations__
    defaults = function.__defaults__ or ()
    kwdefaults = function.__kwdefaults__ or {}
    first_default = positional - len(defaults)
    parameters: dict[str, CodeParameter] = {}
    for index in range(positional):
        name = names[index]
        kind = P.POSITIONAL_ONLY if index < code.co_posonlyargcount else P.POSITIONAL_OR_KEYWORD
        default = defaults[index - first_default] if index >= first_default else empty
        parameters[name] = P(name, kind, default, annotations.get(name, empty))
    after = positional + keyword_only
    if code.co_flags & _CO_VARARGS:
        name = names[after]
        parameters[name] = P(name, P.VAR_POSITIONAL, empty, annotations.get(name, empty))
        after += 1
    for index in range(positional, positional + keyword_only):
        name = names[index]
        parameters[name] = P(name, P.KEYWORD_ONLY, kwdefaults.get(name, empty), annotations.get(name, empty))
    if code.co_flags & _CO_VARKEYWORDS:
        name = names[after]
        parameters[name] = P(name, P.VAR_KEYWORD, empty, annotations.get(name, empty))
    return CodeSignature(parameters)
