"""The operators of ``arraylayer.Array``: each is the arraylayer function of the same meaning.

:data:`OPERATORS` is the table (method name, function, form); :func:`install` makes each
method once and sets it on the class. A method reads its function and that function's plan
cache (``function.plans``, see ``arraylayer.api.elementwise``) from :data:`_OPERATIONS`, a
module global keyed by the function's name (the Array class is the global ``_ARRAY``): two Arrays of one class and dtype take the cached
kernel directly, with no second Python call. (A global, not closure cells: torch.compile's
Dynamo gives the cells of an operator method no source, and would have to wrap every key of
the plan cache, other frameworks' dtypes included, as constants, which it cannot.)
When the C extension is active, the binary and unary methods are its compiled forms
(``compiled_dispatch.operator_method``), which replay the same plans and run these methods
for everything else.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Final

from arraylayer.api.dispatch import WRAPPERS
from arraylayer.api.elementwise import (
    abs,
    add,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    less,
    less_equal,
    multiply,
    negative,
    not_equal,
    positive,
    pow,
    remainder,
    subtract,
)
from arraylayer.api.linear_algebra import matmul
from arraylayer.runtime.compiled_dispatch import fill_slots, operator_method, python_function
from arraylayer.dtypes import Dtype
from arraylayer.array.inplace import combine
from arraylayer.runtime.registry import backend_of

__all__ = ["OPERATORS", "install", "operand", "zero_d"]

_PYTHON_SCALARS: Final = (bool, int, float, complex)
_SCALAR_CLASSES: Final = frozenset(_PYTHON_SCALARS)
_object_new: Final = object.__new__
_NO_PLANS: Final[dict[Any, Any]] = {}
#: function name -> (function, its plan cache), read by the operator methods.
_OPERATIONS: Final[dict[str, tuple[Callable[..., Any], dict[type, dict[Any, Any]]]]] = {}
#: the Array class, set by :func:`install` (a global for the same reason)
_ARRAY: type = object

# name -> (function, form): "binary", "reflected" (function(other, self)), "unary", or the
# in-place symbol ("+=" ...: computed by the function, stored with self's dtype and shape).
OPERATORS: Final[dict[str, tuple[Callable[..., Any], str]]] = {
    # arithmetic
    "__add__": (add, "binary"), "__radd__": (add, "reflected"), "__iadd__": (add, "+="),
    "__sub__": (subtract, "binary"), "__rsub__": (subtract, "reflected"), "__isub__": (subtract, "-="),
    "__mul__": (multiply, "binary"), "__rmul__": (multiply, "reflected"), "__imul__": (multiply, "*="),
    "__truediv__": (divide, "binary"), "__rtruediv__": (divide, "reflected"), "__itruediv__": (divide, "/="),
    "__floordiv__": (floor_divide, "binary"), "__rfloordiv__": (floor_divide, "reflected"),
    "__ifloordiv__": (floor_divide, "//="),
    "__mod__": (remainder, "binary"), "__rmod__": (remainder, "reflected"), "__imod__": (remainder, "%="),
    "__pow__": (pow, "binary"), "__rpow__": (pow, "reflected"), "__ipow__": (pow, "**="),
    "__matmul__": (matmul, "binary"), "__rmatmul__": (matmul, "reflected"), "__imatmul__": (matmul, "@="),
    "__neg__": (negative, "unary"), "__pos__": (positive, "unary"), "__abs__": (abs, "unary"),
    "__invert__": (bitwise_invert, "unary"),
    # bitwise
    "__and__": (bitwise_and, "binary"), "__rand__": (bitwise_and, "reflected"), "__iand__": (bitwise_and, "&="),
    "__or__": (bitwise_or, "binary"), "__ror__": (bitwise_or, "reflected"), "__ior__": (bitwise_or, "|="),
    "__xor__": (bitwise_xor, "binary"), "__rxor__": (bitwise_xor, "reflected"), "__ixor__": (bitwise_xor, "^="),
    "__lshift__": (bitwise_left_shift, "binary"), "__rlshift__": (bitwise_left_shift, "reflected"),
    "__ilshift__": (bitwise_left_shift, "<<="),
    "__rshift__": (bitwise_right_shift, "binary"), "__rrshift__": (bitwise_right_shift, "reflected"),
    "__irshift__": (bitwise_right_shift, ">>="),
    # comparisons (Arrays of bool; the reflected forms are Python's swapped operators)
    "__eq__": (equal, "binary"), "__ne__": (not_equal, "binary"),
    "__lt__": (less, "binary"), "__le__": (less_equal, "binary"),
    "__gt__": (greater, "binary"), "__ge__": (greater_equal, "binary"),
}


def zero_d(result: Any) -> Any:
    """A NumPy scalar (what NumPy's ufuncs give for 0-d arrays) as the 0-d array the standard
    asks for; anything else as it is. Operators call it only when the result's class is not the
    operand's, so the common path pays one identity check."""
    numpy = sys.modules.get("numpy")
    return numpy.asarray(result) if numpy is not None and isinstance(result, numpy.generic) else result


def operand(other: Any, native: Any) -> Any:
    """The native form of an operator's other operand next to ``native``: a NumPy scalar as a 0-d
    array of its dtype on ``native``'s backend (the rule on every backend); NotImplemented for what
    is not an array or a Python scalar (so Python tries the other operand's method, then raises
    TypeError)."""
    pair = WRAPPERS.get(type(other))
    if pair is not None:
        return pair[0](other)
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(other, numpy.generic) and not isinstance(native, numpy.ndarray):
        backend = backend_of(native)
        return backend.asarray(other, Dtype(other.dtype), backend.device_of(native))
    if isinstance(other, _PYTHON_SCALARS) or (hasattr(other, "dtype") and hasattr(other, "shape")):
        return other
    return NotImplemented


def _no_modulo(modulo: Any) -> None:
    if modulo is not None:
        raise TypeError("A modulo (pow's third argument) is not defined for arrays; compute "
                        "remainder(pow(x, y), m).")


def _binary(fn: str, reflected: bool) -> Callable[..., Any]:
    """``function(self, other)`` (``function(other, self)`` when reflected) on the native
    arrays, wrapped; NotImplemented for an operand that is neither an array nor a Python scalar."""

    def method(self: Any, other: Any, /, modulo: Any = None) -> Any:
        if modulo is not None:
            _no_modulo(modulo)
        function, plans = _OPERATIONS[fn]
        native = self._native
        kind = type(other)
        if kind is _ARRAY:
            other = other._native
            kind = type(other)
        elif kind not in _SCALAR_CLASSES:
            other = operand(other, native)
            if other is NotImplemented:
                return NotImplemented
        if kind is type(native):  # the planned path of an elementwise function: its cached kernel
            try:
                dtype = native.dtype
                run = plans[kind][dtype] if dtype is other.dtype else None
            except (AttributeError, KeyError):
                run = None
            if run is not None:
                try:  # free unless raised; then the public function raises arraylayer's error
                    result = run(other, native) if reflected else run(native, other)
                except Exception:
                    result = function(other, native) if reflected else function(native, other)
                array = _object_new(_ARRAY)
                array._native = result if result.__class__ is kind else zero_d(result)
                return array
        result = function(other, native) if reflected else function(native, other)
        array = _object_new(_ARRAY)
        array._native = result if result.__class__ is native.__class__ else zero_d(result)
        return array

    return method


def _unary(fn: str) -> Callable[..., Any]:
    def method(self: Any) -> Any:
        function, plans = _OPERATIONS[fn]
        native = self._native
        try:
            run = plans[type(native)][native.dtype]
        except (AttributeError, KeyError):
            run = function
        result = run(native)
        array = _object_new(_ARRAY)
        array._native = result if result.__class__ is native.__class__ else zero_d(result)
        return array

    return method


def _inplace(function: Callable[[Any, Any], Any], symbol: str) -> Callable[..., Any]:
    def method(self: Any, other: Any, /) -> Any:
        native = operand(other, self._native)
        if native is NotImplemented:
            return NotImplemented
        self._native = combine(function, self._native, native, symbol)
        return self

    return method


def install(cls: type) -> None:
    """Set every operator of :data:`OPERATORS` on ``cls`` (the Array class)."""
    global _ARRAY
    _ARRAY = cls
    for name, (function, form) in OPERATORS.items():
        fn = function.__name__
        _OPERATIONS[fn] = (function, getattr(python_function(function), "plans", _NO_PLANS))
        if form in ("binary", "reflected"):
            method = _binary(fn, form == "reflected")
            doc = f"arraylayer.{fn}({'other, self' if form == 'reflected' else 'self, other'})"
        elif form == "unary":
            method, doc = _unary(fn), f"arraylayer.{fn}(self)"
        else:
            method = _inplace(function, form)
            doc = f"self {form} other: arraylayer.{fn}, keeping self's dtype and shape"
        method.__name__ = name
        method.__qualname__ = f"{cls.__name__}.{name}"
        method.__doc__ = doc
        setattr(cls, name, operator_method(cls, name, function, method, form, zero_d))
    fill_slots(cls)
