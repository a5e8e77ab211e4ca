"""The compiled replay of the element-wise plans, chosen once, at import.

``arraylayer._dispatch`` (a small C extension, ``arraylayer/_dispatch.c``) is built by
``pip install`` where a C compiler exists. It holds no rule: the Python planner in
``api/elementwise.py`` decides every plan and stores it here too (:func:`compiled`'s ``store``);
a call the C side has no plan for, or whose plan raises, runs the Python function, which decides
and raises as it always does. Without the extension (no compiler at install time), or with
``ARRAYLAYER_PURE_PYTHON=1`` in the environment, :data:`ACTIVE` is False and the public functions
are the Python ones. The same replay serves ``Array``'s operators (:func:`operator_method`), the
Array namespaces' element-wise functions (:func:`on_arrays`) and ``al.add(A, B)`` on Arrays; the public
``promote_types`` is made here too (:data:`promote_types`, ``arraylayer/_promotion.c``), and ``Array``'s
``__getitem__`` for plain keys (:func:`getitem_method`, ``arraylayer/_getitem.c``).

Why plain C against CPython's API: building it needs nothing but a C compiler (setuptools, pinned
in pyproject.toml, drives it), while Cython or Rust/PyO3 would add a build tool and a toolchain to
every install for a few hundred lines that only compare pointers and call callables.

Under torch.compile, Dynamo cannot trace C; :func:`prepare_for_dynamo` (run when ``torch._dynamo``
is imported) tells it to trace each function's Python twin in its place, and gives ``Array`` back its
Python operator methods (Dynamo traces an operator of a Python class only when it is a Python
function): from then on, in that process, the operators take the pure-Python path.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Final

from arraylayer.context import TRACED_TWINS
from arraylayer.dtypes import Dtype
from arraylayer.dtypes import promotion
from arraylayer.dtypes.policies import Policy
from arraylayer.dtypes.promotion import POLICY
from arraylayer.runtime.c_extensions import optional_extension

_dispatch: Any = optional_extension("_dispatch")
if _dispatch is not None:
    _dispatch.configure(POLICY.var, POLICY)

#: True when the public element-wise functions are the compiled ones.
ACTIVE: Final = _dispatch is not None


def _compiled_promote_types() -> Callable[..., Any]:
    """The public ``promote_types``: where the extension is active, a builtin that answers two Dtypes
    from the active policy's table (``arraylayer/_promotion.c``: the Python function's first two dict
    look-ups, without the Python ``__hash__`` calls) and runs the Python function for everything else;
    the Python function itself otherwise. Dynamo traces the Python function in its place."""
    python = promotion.promote_types
    make = getattr(_dispatch, "promotion", None)  # None: no extension, or one built before _promotion.c
    if make is None:
        return python
    fast = make(python, Dtype, Policy, promotion._KNOWN_POLICIES,
                               f"promote_types(a, b)\n--\n\n{python.__doc__ or ''}")
    if fast is None:
        return python
    TRACED_TWINS[fast] = python
    return fast  # type: ignore[no-any-return]


#: ``arraylayer.promote_types``
promote_types: Final = _compiled_promote_types()

#: Every dispatcher made, for :func:`clear` and :func:`prepare_for_dynamo`.
_DISPATCHERS: Final[list[Any]] = []
#: The dispatchers of the Array namespaces (:func:`on_arrays`): their plans are their function's.
_WRAPPERS: Final[list[Any]] = []
#: (class, name, compiled operator method, its Python method), for :func:`prepare_for_dynamo`
OPERATORS: Final[list[tuple[type, str, Any, Callable[..., Any]]]] = []
_FORMS: Final = {"binary": 0, "reflected": 1, "unary": 2}
#: (class, compiled ``__getitem__``, its Python method) once made, for :func:`prepare_for_dynamo`
GETITEM: Final[list[tuple[type, Any, Callable[..., Any]]]] = []
#: what the compiled ``__getitem__`` does with plain keys on a native class (``arraylayer/_getitem.c``)
GETITEM_PLANS: Final = {"python": 0, "numpy": 1, "torch": 2}

Store = Callable[..., None]


def compiled(function: Callable[..., Any], name: str, parameters: str, arity: int
             ) -> tuple[Callable[..., Any], Store | None]:
    """``function``'s public form and the way to store a plan for it: the compiled function and its
    ``store`` when the extension is active, else ``function`` itself and None.

    ``store(type1, dtype1, type2, dtype2, policy, run, cast1, cast2, guard)`` (see
    ``_dispatch.Dispatcher.store``): None for a Python scalar's dtype, any policy, no cast."""
    if _dispatch is None:
        return function, None
    dispatcher = _dispatch.Dispatcher(function, name, _signed(name, parameters, function.__doc__), arity,
                                      function.__module__)
    dispatcher.parameters = parameters
    dispatcher.accepts_wrapped = True  # like the Python function: wrappers are checked in its planning path
    _DISPATCHERS.append(dispatcher)
    store = dispatcher.store

    def store_plan(type1: type, dtype1: Any, type2: type | None, dtype2: Any, policy: str | None,
                   run: Callable[..., Any], cast1: Any, cast2: Any, guard: int) -> None:
        store(type1, dtype1, type2, dtype2, policy, run, _cast_form(cast1), _cast_form(cast2), guard)

    return dispatcher.public, store_plan


def hold(cls: type, holder: str) -> bool:
    """Tell the compiled dispatch where ``cls``'s instances keep their ``dtype`` and ``weak_type``: in
    their attribute ``holder`` (a backend's ``dtype_holder``); on the instances themselves when "".
    False when its table of such classes is full: then ``cls``'s plans stay in Python."""
    if holder and _dispatch is not None and cls not in _HELD:
        if not _dispatch.hold(cls, holder):
            return False
        _HELD.add(cls)
    return True


#: the classes given to :func:`hold`
_HELD: Final[set[type]] = set()


def _cast_form(cast: Any) -> Any:
    """A cast as the C side replays it: ``operator.methodcaller(name, arg)`` (NumPy's ``astype``) as
    ``(name, arg)``, the method called directly, without the bound method that methodcaller makes."""
    if type(cast) is operator.methodcaller:
        maker, arguments = cast.__reduce__()[:2]
        if maker is operator.methodcaller and len(arguments) == 2:
            return arguments
    return cast


def operator_method(cls: type, name: str, function: Callable[..., Any], method: Callable[..., Any], form: str,
                    zero_d: Callable[[Any], Any]) -> Callable[..., Any]:
    """The compiled form of an Array operator ``method`` of ``function`` (``form``: binary, reflected
    or unary): it unwraps Arrays and Python scalars, replays ``function``'s plan, wraps the result
    (``zero_d`` first when its class is not the operand's) and runs ``method`` for everything else.
    ``method`` itself when ``function`` is not compiled."""
    if _dispatch is None or form not in _FORMS:
        return method
    compiled_method = _dispatch.operator_method(cls, name, function, method, _FORMS[form], method.__doc__ or "",
                                                zero_d)
    if compiled_method is None:
        return method
    OPERATORS.append((cls, name, compiled_method, method))
    return compiled_method  # type: ignore[no-any-return]


def fill_slots(cls: type) -> None:
    """After :func:`operator_method` made ``cls``'s operators: point its number and comparison slots
    (``A + B``, ``A ** B``, ``-A``, ``A < B`` ...) at them directly, instead of through CPython's look-up
    of ``__add__`` (setting an operator on the class later puts that look-up back)."""
    if _dispatch is not None and OPERATORS:
        _dispatch.fill_slots(cls)


def getitem_method(cls: type, method: Callable[..., Any]) -> Callable[..., Any]:
    """The compiled form of ``cls.__getitem__`` (``method``): plain keys (ints, slices of ints,
    ``None``, ``...`` and tuples of those) on an Array of a native class planned by
    :func:`getitem_plan` index the native array and wrap the result; ``method`` runs for everything
    else. ``method`` itself without the extension, with one built before ``_getitem.c`` (stale), or
    before :func:`operator_method` made ``cls`` known to it."""
    make = getattr(_dispatch, "getitem_method", None)
    # the text signature first (CPython reads it from the doc): inspect.signature and the standard's suite see
    # the Python method's (self, key, /)
    doc = "__getitem__($self, key, /)\n--\n\n" + (method.__doc__ or "")
    compiled_method = None if make is None else make(cls, method, doc)
    if compiled_method is None:
        return method
    GETITEM.append((cls, compiled_method, method))
    return compiled_method  # type: ignore[no-any-return]


def fill_getitem(cls: type) -> bool:
    """After :func:`getitem_method`'s method is set on ``cls``: point its mapping slot (``A[key]``) at it
    directly (setting ``__getitem__`` on the class later puts CPython's look-up back)."""
    return bool(GETITEM) and bool(_dispatch.fill_getitem(cls))


def getitem_plan(native_class: type, plan: str) -> bool:
    """Tell the compiled ``__getitem__`` what plain keys on ``native_class`` need (a key of
    :data:`GETITEM_PLANS`: "numpy", "torch", or "python" for the Python method). False where it
    does not take it (no compiled ``__getitem__``, or its table is full)."""
    return bool(GETITEM) and bool(_dispatch.getitem_plan(native_class, GETITEM_PLANS[plan]))


def getitem_planned(native_class: type) -> str:
    """What the compiled ``__getitem__`` does with plain keys on ``native_class`` now (a key of
    :data:`GETITEM_PLANS`)."""
    plan = _dispatch.getitem_planned(native_class) if GETITEM else 0
    return next(name for name, code in GETITEM_PLANS.items() if code == plan)


def getitem_clear() -> None:
    """Forget every :func:`getitem_plan` (the Array module does, with its own plans, when the
    registry changes)."""
    if GETITEM:
        _dispatch.getitem_clear()


def _signed(name: str, parameters: str, doc: str | None) -> str:
    """A builtin's docstring with its signature first (what ``inspect.signature`` reads)."""
    return f"{name}($self, {parameters}, /)\n--\n\n{doc or ''}"


def on_arrays(function: Callable[..., Any], fallback: Callable[..., Any]) -> Callable[..., Any]:
    """The compiled form of an Array namespace's ``fallback`` for compiled ``function``: Arrays (and
    Python scalars) in, ``function``'s plans replayed, an Array out; ``fallback`` for everything else
    (and ``fallback`` itself when ``function`` is not compiled)."""
    dispatcher = getattr(function, "__self__", None)
    if _dispatch is None or type(dispatcher) is not _dispatch.Dispatcher:
        return fallback
    name = fallback.__name__
    wrapper = _dispatch.Dispatcher(fallback, name, _signed(name, dispatcher.parameters, fallback.__doc__),
                                   dispatcher.arity, fallback.__module__, plans_of=dispatcher, wraps=True)
    _WRAPPERS.append(wrapper)
    return wrapper.public  # type: ignore[no-any-return]


def python_function(function: Callable[..., Any]) -> Callable[..., Any]:
    """The Python function behind a compiled one (``function`` itself otherwise)."""
    dispatcher = getattr(function, "__self__", None)
    return dispatcher.fallback if type(dispatcher) is getattr(_dispatch, "Dispatcher", None) else function


def clear() -> None:
    """Forget every compiled plan (called by ``api.elementwise.clear_plans``)."""
    for dispatcher in _DISPATCHERS:
        dispatcher.clear()


def prepare_for_dynamo() -> None:
    """Make torch.compile trace each compiled function's Python twin (Dynamo cannot trace C), and
    put the Python operator methods and ``__getitem__`` back on the Array class."""
    for cls, name, _, python in OPERATORS:
        setattr(cls, name, python)
    for cls, _, python in GETITEM:
        cls.__getitem__ = python  # type: ignore[method-assign]
    if not _DISPATCHERS:
        return
    from torch._dynamo.decorators import substitute_in_graph
    from torch._dynamo.trace_rules import _polyfilled_function_ids

    for dispatcher in [*_DISPATCHERS, *_WRAPPERS]:
        if id(dispatcher.public) not in _polyfilled_function_ids:
            _TWINS.append(dispatcher.fallback)
            substitute_in_graph(dispatcher.public, skip_signature_check=True)(
                _traced(len(_TWINS) - 1, dispatcher.public.__name__))


#: the Python functions Dynamo traces for the compiled ones (see :func:`_traced`)
_TWINS: Final[list[Callable[..., Any]]] = []


def _traced(index: int, name: str) -> Callable[..., Any]:
    """What Dynamo traces for compiled function ``name``: the Python function, reached through a
    module global. Dynamo builds a polyfill without a source, and so would every closure cell of
    the Python function (its plan cache, whose keys include other frameworks' dtypes, which Dynamo
    cannot hold as constants); reached through a global, it has one, as when called directly."""

    def traced(*args: Any) -> Any:
        return _TWINS[index](*args)

    traced.__name__ = traced.__qualname__ = name
    return traced
