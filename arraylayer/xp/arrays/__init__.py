"""The Array API namespaces of :class:`arraylayer.Array`, one per backend:
``arraylayer.xp.arrays.numpy``, ``.jax``, ``.torch``, ``.tensorflow``.

``Array.__array_namespace__()`` returns the one of the array's backend. The namespace is
closed: every function takes Arrays (and Python scalars, and native arrays of that backend)
and returns Arrays (tuples and named tuples of Arrays; 0-d results as 0-d Arrays), creation
functions make Arrays of that backend whatever backend is active, and its dtype attributes
are the very :class:`~arraylayer.Dtype` objects ``Array.dtype`` returns.

Each function is generated once from the signature of the arraylayer function it serves:
one ``type(p) is Array`` probe per array parameter, the call, and ``object.__new__`` plus a
slot store for the result; no decorator, no per-call look-up of the backend.
``arraylayer.xp.<backend>`` (native arrays in and out) is the namespace to pass as ``xp=``.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

from arraylayer.api.dispatch import SCALAR_CLASSES, array_role, source_signature
from arraylayer.array import Array
from arraylayer.runtime.compiled_dispatch import on_arrays
from arraylayer.runtime.devices import canonical_device
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.runtime.registry import BACKEND, backend_of, get_backend
from arraylayer.xp import lib_module
from arraylayer.xp.arrays.info import ArrayInfo, namespace_dtypes, runtime_dtype_getter

__all__ = ["populate", "array_function"]

# Functions run with the namespace's backend made the active one: these, and every function
# without an array parameter (zeros, arange, fft.fftfreq ...), which would use the active one.
_BACKEND_CHOSEN: Final = frozenset({"asarray", "from_dlpack"})
_CONSTANTS: Final = {"e": math.e, "inf": math.inf, "nan": math.nan, "pi": math.pi, "newaxis": None}
_SEQUENCES: Final = (list, tuple)
# The submodules of the standard's extensions, by the arraylayer.api module that holds them.
_EXTENSIONS: Final = ("linalg", "fft")


def _items(items: Any) -> Any:
    """A list or tuple with its Arrays replaced by their native arrays (itself when it has none)."""
    for item in items:
        if type(item) is Array:
            return type(items)(y._native if type(y) is Array else y for y in items)
    return items


def _nested(items: Any) -> Any:
    """Nested lists/tuples with every Array in them replaced by its native array (``asarray([[a00,
    a01], [a10, a11]])`` of 0-d Arrays)."""
    return type(items)(item._native if type(item) is Array else _nested(item) if type(item) in _SEQUENCES else item
                       for item in items)


def _values(mapping: dict[str, Any]) -> dict[str, Any]:
    return {key: value._native if type(value) is Array else value for key, value in mapping.items()}


def _device(device: Any) -> Any:
    """A device argument in arraylayer's vocabulary (framework device objects accepted)."""
    return device if device is None else canonical_device(device)


class _Wrapper:
    """Wraps what a function of one backend's namespace returns: native arrays of the backend
    become Arrays, NumPy scalars 0-d Arrays, arrays of another backend are moved over.
    ``wrapper.wrap`` is the function (a closure: cheaper to call than an instance)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        #: the exact native classes seen so far (the generated functions' one-probe check)
        self.classes: set[type] = set()
        #: class of a NumPy scalar seen so far -> its conversion to a 0-d array of this backend
        self.scalars: dict[type, Callable[[Any], Any]] = {}
        #: NumPy's scalar classes -> their conversion to a 0-d array of this backend, for the array
        #: arguments of the namespace's functions (empty on NumPy, where they are NumPy's own): a
        #: NumPy scalar (np.float64(nan), as xarray's fill values are) is a 0-d array of the
        #: namespace's backend, as it is next to an Array in an operator
        self.arguments: dict[type, Callable[[Any], Any]] = {} if backend.name == "numpy" else dict.fromkeys(
            _numpy_scalar_classes(), self._scalar_converter())
        self.wrap = self._wrap_function()

    def _wrap_function(self) -> Callable[[Any], Any]:
        classes, scalars, backend = self.classes, self.scalars, self.backend

        def wrap(result: Any) -> Any:
            cls = type(result)
            if cls in classes:
                return _new_array(result)
            convert = scalars.get(cls)
            if convert is not None:
                array = _new_object(Array)
                array._native = convert(result)
                return array
            if result is None or cls in SCALAR_CLASSES or isinstance(result, (str, Dtype)):
                return result
            if isinstance(result, tuple):
                items = [wrap(item) for item in result]
                return cls(*items) if hasattr(result, "_fields") else cls(items)
            if isinstance(result, list):
                return [wrap(item) for item in result]
            if isinstance(result, Array):
                return result
            if cls.__module__ == "numpy" and isinstance(result, sys.modules["numpy"].generic):
                scalars[cls] = self._scalar_converter()  # a NumPy scalar: a 0-d array
                return wrap(result)
            if isinstance(result, backend.array_types):
                classes.add(cls)
                return _new_array(result)
            return self._foreign(result)

        return wrap

    def _foreign(self, result: Any) -> Any:
        """An array of another backend (computed where another backend is active and the call
        had no array to choose this one) moved to this backend; anything else as it is."""
        try:
            source = backend_of(result)
        except Exception:  # noqa: BLE001 - not an array at all (an Info object, a Python value)
            return result
        if isinstance(result, source.array_types):
            from arraylayer.api.interchange import to_backend

            return self.wrap(to_backend(result, self.backend.name))
        return result

    def _scalar_converter(self) -> Callable[[Any], Any]:
        asarray = sys.modules["numpy"].asarray
        backend = self.backend
        if backend.name == "numpy":
            return asarray  # type: ignore[no-any-return]
        return lambda scalar: backend.asarray(asarray(scalar), backend.dtype_of(scalar))


def _numpy_scalar_classes() -> tuple[type, ...]:
    """NumPy's numeric and bool scalar classes (np.float64, np.int8, np.bool ...)."""
    import numpy

    return tuple({t for t in numpy.sctypeDict.values() if issubclass(t, (numpy.number, numpy.bool_))})


_new_object: Final = object.__new__


def _new_array(native: Any) -> Array:
    array = object.__new__(Array)
    array._native = native
    return array


# The planned path of an elementwise function (see arraylayer.api.elementwise): native arrays of
# this backend (``_T``), one class and one dtype, whose kernel is already chosen.
_PLANNED: Final = """    cls = type({first})
    if {same_class}:
        try:
            dtype = {first}.dtype
            run = _plans[cls][dtype] if {same_dtype} else None
        except (AttributeError, KeyError):
            run = None
        if run is not None:
            a = _new(_A)
            try:  # free unless raised; then the public function raises arraylayer's error
                a._native = run({arguments})
            except Exception:
                a._native = _f({arguments})
            return a
"""


def array_function(function: Callable[..., Any], backend: Any, name: str, wrap: _Wrapper) -> Callable[..., Any]:
    """The namespace's version of ``function`` for ``backend``: generated source that unwraps
    Arrays, calls ``function`` (with ``backend`` active, for functions that take no array) and
    wraps the result."""
    inner = getattr(function, "__wrapped__", function)  # our unwrapping replaces accepting_wrapped's
    try:
        signature = inspect.signature(inner)
    except (TypeError, ValueError):
        signature = None
    namespace: dict[str, Any] = {"_f": inner, "_A": Array, "_new": object.__new__, "_T": wrap.classes,
                                 "_wrap": wrap.wrap, "_items": _items, "_values": _values, "_seq": _SEQUENCES,
                                 "_device": _device, "_V": BACKEND.var, "_B": backend, "_S": wrap.arguments}
    if signature is None:
        source = "def _public(*args, **kwargs):\n    args = _items(args)\n    kwargs = _values(kwargs)\n"
        call = "_f(*args, **kwargs)"
    else:
        parameters, arguments, defaults = source_signature(signature, "_d")
        namespace.update(defaults)
        lines = []
        for p in signature.parameters.values():
            n, role = p.name, "device" if p.name == "device" else array_role(p)
            if p.kind is p.VAR_POSITIONAL and role:
                lines.append(f"{n} = _items({n})")
            elif p.kind is p.VAR_KEYWORD and role:
                lines.append(f"{n} = _values({n})")
            elif role == "array":
                lines.append(f"if type({n}) is _A: {n} = {n}._native\n"
                             f"    elif type({n}) in _S: {n} = _S[type({n})]({n})")
            elif role == "either":
                lines.append(f"if type({n}) is _A: {n} = {n}._native\n"
                             f"    elif type({n}) in _seq: {n} = _items({n})\n"
                             f"    elif type({n}) in _S: {n} = _S[type({n})]({n})")
            elif role == "device":
                lines.append(f"if {n} is not None: {n} = _device({n})")
        source = f"def _public({', '.join(parameters)}):\n" + "".join(f"    {line}\n" for line in lines)
        call = f"_f({', '.join(arguments)})"
    positional = [p.name for p in signature.parameters.values()] if signature is not None else []
    if hasattr(inner, "plans") and len(positional) in (1, 2):
        # an elementwise function: its planned kernel for arrays of one class and dtype, directly
        namespace["_plans"] = inner.plans
        source += _PLANNED.format(arguments=", ".join(positional), same_class=" and ".join(
            [f"cls is type({n})" for n in positional[1:]] + ["cls in _T"]), same_dtype=" and ".join(
            f"dtype is {n}.dtype" for n in positional[1:]) or "True", first=positional[0])
    takes_arrays = signature is None or any(array_role(p) for p in signature.parameters.values())
    if name in _BACKEND_CHOSEN or not takes_arrays:
        source += f"    token = _V.set(_B)\n    try:\n        r = {call}\n    finally:\n        _V.reset(token)\n"
    else:
        source += f"    r = {call}\n"
    source += "    if type(r) in _T:\n        a = _new(_A)\n        a._native = r\n        return a\n    return _wrap(r)\n"
    exec(compile(source, f"<arraylayer.xp.arrays.{backend.name}.{name}>", "exec"), namespace)  # noqa: S102
    public = namespace["_public"]
    public.__name__ = public.__qualname__ = name
    public.__doc__ = function.__doc__
    public.__module__ = f"arraylayer.xp.arrays.{backend.name}"
    public.__wrapped__ = function
    return on_arrays(inner, public)  # a compiled element-wise function: its compiled form on Arrays


def _already(array: Array, dtype: Any, device: Any) -> bool:
    """True if ``array`` already has the requested dtype and device (None: any)."""
    return (dtype is None or as_dtype(dtype) is array.dtype) and (
        device is None or canonical_device(device) == array.device)


def _asarray(asarray: Callable[..., Any], backend: Any, wrap: _Wrapper) -> Callable[..., Any]:
    """The namespace's asarray: Arrays unwrapped, arrays of another backend moved to this one
    (``to_backend``), then arraylayer's asarray with this backend active."""
    from arraylayer.api.interchange import to_backend

    name = backend.name

    def asarray_(obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None) -> Array:
        if type(obj) is Array:
            if not copy and _already(obj, dtype, device) and isinstance(obj._native, backend.array_types):
                return obj  # itself: item assignment on it stays visible (JAX, TensorFlow rebind)
            obj = obj._native
        elif type(obj) in _SEQUENCES:
            obj = _nested(obj)
        if not isinstance(obj, backend.array_types) and hasattr(obj, "shape") and hasattr(obj, "dtype"):
            try:
                source = backend_of(obj)
            except Exception:  # noqa: BLE001 - not an array of any backend: asarray judges it
                source = None
            if source is not None and source is not backend and isinstance(obj, source.array_types):
                obj = to_backend(obj, name)
        token = BACKEND.var.set(backend)
        try:
            result = asarray(obj, dtype=dtype, device=_device(device), copy=copy)
        finally:
            BACKEND.var.reset(token)
        return wrap.wrap(result)

    asarray_.__name__ = asarray_.__qualname__ = "asarray"
    asarray_.__doc__ = asarray.__doc__
    asarray_.__module__ = f"arraylayer.xp.arrays.{name}"
    return asarray_


def _functions(module: Any, backend: Any, wrap: _Wrapper) -> dict[str, Any]:
    functions = {}
    left_out = getattr(module, "NOT_IN_ARRAY_NAMESPACES", ())
    for name in module.__all__:
        if name in left_out:
            continue
        value = getattr(module, name)
        if name == "__array_namespace_info__" or isinstance(value, type) or not callable(value):
            continue
        functions[name] = array_function(value, backend, name, wrap)
    return functions


def populate(namespace: dict[str, Any], backend_name: str) -> None:
    """Fill a module's globals with the Array namespace of ``backend_name`` (imports its framework)."""
    import importlib

    import arraylayer

    from arraylayer import api

    backend = get_backend(backend_name)
    wrap = _Wrapper(backend)
    for module in api.CATEGORIES:
        namespace.update(_functions(module, backend, wrap))
    namespace["asarray"] = _asarray(api.creation.asarray, backend, wrap)
    namespace.update(namespace_dtypes(backend))
    if getattr(backend, "runtime_dtypes", None):
        namespace["__getattr__"] = runtime_dtype_getter(backend, namespace["__name__"])
    namespace.update(_CONSTANTS)
    namespace["__array_namespace_info__"] = _info_function(backend_name)
    for extension in _EXTENSIONS:
        try:
            module = importlib.import_module(f"arraylayer.api.{extension}")
        except ModuleNotFoundError:
            continue
        submodule = ModuleType(f"{namespace['__name__']}.{extension}", module.__doc__)
        submodule.__dict__.update(_functions(module, backend, wrap))
        submodule.__dict__["__all__"] = sorted(n for n in submodule.__dict__ if not n.startswith("_"))
        namespace[extension] = submodule
    namespace["lib"] = lib_module(namespace)
    namespace["__array_api_version__"] = arraylayer.__array_api_version__
    namespace.pop("populate", None)  # the module's own import of this function
    namespace["__all__"] = sorted(n for n in namespace if not n.startswith("_") and n != "annotations")


def _info_function(backend_name: str) -> Callable[[], ArrayInfo]:
    def __array_namespace_info__() -> ArrayInfo:  # noqa: N807 - the Array API's name
        """The Array API inspection object of this namespace's backend."""
        return ArrayInfo(backend_name)

    return __array_namespace_info__
