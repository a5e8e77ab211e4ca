"""What every public function does between its arguments and a backend kernel.

* :func:`kernel` finds a backend's kernel for a dtype, or raises the UnsupportedDtypeError
  that names function, dtype, backend and version, before the framework is called.
* :func:`operand` turns one input into what the kernel contract promises (an array of the
  agreed dtype, or a Python scalar of that dtype's kind next to an array).
* :func:`not_defined` is the error for a dtype the Array API does not define a function for.
* :func:`index_result` casts index-valued kernel results to the default index dtype.
* :data:`WRAPPERS`, :func:`holds_wrapped` and :func:`call_unwrapped` let every public function
  take :class:`arraylayer.Array` wrappers and give them back: a function whose slow path finds
  a wrapper among its arguments calls itself again on the native arrays inside and wraps what
  comes back. Native calls never reach this code (see :func:`accepting_wrapped`).

No function here is a decorator: each public function calls what it needs, inline.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

from arraylayer.runtime.backend import Backend
from arraylayer.context import replaying
from arraylayer.dtypes.defaults import default_int_dtype
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import UnsupportedDtypeError
from arraylayer.runtime.guard_filter import own_namespace
from arraylayer.dtypes.inference import infer_dtype_unchecked
from arraylayer.dtypes.promotion import result_type
from arraylayer.runtime.registry import backend_of
from arraylayer.support import kernel_unsupported_dtypes, stored_only_dtypes
from arraylayer.api.scalars import scalar_converter
from arraylayer.api.signatures import signature_of
from arraylayer.api.wrapper_templates import function_from_source

__all__ = [
    "kernel", "unsupported_error", "not_defined", "operand", "as_array", "index_dtype", "index_result",
    "native_dtype", "native_device", "array_input", "promoted_inputs", "PYTHON_SCALARS",
    "WRAPPERS", "register_wrapper", "refuse_without_zero", "array_role", "source_signature", "holds_wrapped", "call_unwrapped", "call_wrapped_planned", "accepting_wrapped",
]

PYTHON_SCALARS: Final = (bool, int, float, complex)


def unsupported_error(name: str, dtype: Dtype, backend: Backend) -> UnsupportedDtypeError:
    """The error for a kernel that has no implementation for ``dtype`` on ``backend``."""
    if dtype in stored_only_dtypes(backend):  # torch uint16/32/64: held, never computed with
        return UnsupportedDtypeError(
            f"{name} cannot compute on {dtype} arrays on the {backend.name} backend: {backend.remedy(dtype)} "
            f"Convert first with arraylayer.astype(x, dtype), the one function that takes {dtype} arrays there."
        )
    others = [d for d in backend.valid_dtypes() if d.category == dtype.category and d not in kernel_unsupported_dtypes(backend, name)]
    hint = f"Cast to {' or '.join(map(str, others))} first, " if others else "Cast to a supported dtype first, "
    return UnsupportedDtypeError(
        f"{name} has no {dtype} kernel on the {backend.name} backend ({backend.framework} {backend.version}) "
        f"and no exact fallback. {hint}or use another backend (arraylayer.function_unsupported_dtypes("
        f"{name!r}) lists what is missing)."
    )


def kernel(backend: Backend, name: str, dtype: Dtype) -> Callable[..., Any]:
    """``backend``'s kernel ``name`` for inputs of ``dtype``; UnsupportedDtypeError where it has
    none, or where the backend stores ``dtype`` but cannot compute with it."""
    if dtype in kernel_unsupported_dtypes(backend, name):  # low-precision dtypes are here on every backend
        if dtype.is_low_precision and name in backend.kernels:
            return low_precision_kernel(backend, name, dtype)
        raise unsupported_error(name, dtype, backend)
    if dtype in backend.computed_wide:  # torch's uint16/uint32: in int64, cast back (api/widened.py)
        from arraylayer.api.widened import widened_kernel

        return widened_kernel(backend, name, dtype)
    return backend.kernels[name]


_RULE_KERNELS: Final[dict[tuple[Any, ...], Callable[..., Any]]] = {}


def low_precision_kernel(backend: Backend, name: str, dtype: Dtype) -> Callable[..., Any]:
    """The kernel ``name`` for a low-precision ``dtype`` by the one computation rule of every backend
    (arraylayer/lowp/compute.py: compute in float32 or int32, round once), or, for the functions that
    only move elements, the backend's kernel on the elements' bits (arraylayer/lowp/moving.py); cached
    per backend, name and dtype. UnsupportedDtypeError where the function is neither (or not defined
    for the dtype's kind), and for ``tril``/``triu`` of a format without zero."""
    key = (backend.name, name, dtype)
    found = _RULE_KERNELS.get(key)
    if found is None:
        from arraylayer.lowp.compute import FUNCTIONS, rule_kernel, wide_name
        from arraylayer.lowp.exact import refusal
        from arraylayer.lowp.formats import FORMATS
        from arraylayer.lowp.moving import MOVING, ZERO_FILLING, has_zero, moving_kernel, zero_refusal

        if name in MOVING:  # no value is made: the elements' bits move
            if name in ZERO_FILLING and not has_zero(dtype.name):
                raise UnsupportedDtypeError(zero_refusal(name, dtype.name))
            found = moving_kernel(backend, name, dtype)
        elif name in FUNCTIONS:
            wide = as_dtype(wide_name(FORMATS[dtype.name]))
            found = rule_kernel(name, dtype.name, backend.kernels[name], backend.native_dtypes[wide],
                                backend.native_dtypes[dtype])
        else:
            raise UnsupportedDtypeError(refusal(name, dtype.name, wide_name(FORMATS[dtype.name])))
        _RULE_KERNELS[key] = found
    return found


def not_defined(name: str, dtypes: tuple[Any, ...], takes: str) -> UnsupportedDtypeError:
    """The error for inputs of a dtype the function is not defined for (on any backend)."""
    shown = ", ".join(str(d) for d in dtypes)
    return UnsupportedDtypeError(
        f"{name} is not defined for {shown} inputs: it takes {takes}. Convert first, e.g. "
        f"arraylayer.astype(x, ...)."
    )


def as_array(backend: Backend, x: Any, dtype: Dtype) -> Any:
    """``x`` (an array of ``backend`` or a Python scalar/sequence) as an array of ``dtype``. Into or
    out of a low-precision dtype by ml_dtypes' rule, as ``astype`` casts (TensorFlow has no native
    cast from int8 to float8: float8 + int8 raised its UnimplementedError)."""
    if isinstance(x, backend.array_types):
        source = backend.dtype_of(x)
        if source is dtype:
            return x
        return low_precision_caster(backend, source, dtype)(x) if (dtype.is_low_precision or source.is_low_precision) \
            else backend.astype(x, dtype)
    return backend.asarray(x, dtype)


def low_precision_caster(backend: Backend, source: Dtype, target: Dtype) -> Callable[[Any], Any]:
    """The cast of native arrays of ``source`` into ``target`` (one of them low precision) by the
    conversion ``astype`` uses (arraylayer/lowp/convert.py)."""
    from arraylayer.lowp.convert import convert

    return functools.partial(convert, backend, source=source, target=target)


def operand(backend: Backend, x: Any, dtype: Dtype, scalar_ok: bool) -> Any:
    """One input of a binary kernel: an array of ``dtype``, or (when ``scalar_ok``: the other
    input is an array) a Python scalar converted to the Python type of ``dtype``'s kind (rounded
    to ``dtype`` first for half precision: see arraylayer/api/scalars.py)."""
    if scalar_ok and type(x) in SCALAR_CLASSES:
        return scalar_converter(dtype)(x)
    return as_array(backend, x, dtype)


SCALAR_CLASSES: Final = frozenset(PYTHON_SCALARS)


def index_dtype() -> Dtype:
    """The dtype of index-valued results (argmax, nonzero, argsort, unique counts ...): the
    default int dtype, the same on every backend (int32 out of the box; int64 with
    ``use_default_int_dtype("int64")`` for arrays of more than 2**31 - 1 elements)."""
    return default_int_dtype()


def index_result(backend: Backend, result: Any) -> Any:
    """An index-valued kernel result in the default index dtype (no copy when it already is)."""
    return backend.astype(result, index_dtype())


def array_input(x: Any) -> tuple[Backend, Any, Dtype]:
    """The backend of ``x``, ``x`` as an array of it (Python scalars and nested sequences
    become arrays of their inferred dtype), and its dtype."""
    backend = backend_of(x)
    if not isinstance(x, backend.array_types):
        x = backend.asarray(x, infer_dtype_unchecked(None, x))
    return backend, x, backend.dtype_of(x)


def promoted_inputs(*xs: Any) -> tuple[Backend, Dtype, list[Any]]:
    """The backend, the promoted dtype (active policy) and the inputs cast to it."""
    backend = backend_of(*xs)
    dtype = result_type(*xs)
    return backend, dtype, [as_array(backend, x, dtype) for x in xs]


def refuse_without_zero(function: str, dtype: Dtype) -> None:
    """UnsupportedDtypeError where ``dtype`` is a low-precision format without zero (float8_e8m0fnu)
    and ``function`` would have to write zeros (eye, tril, one_hot, scatter ...): they would be NaN."""
    if dtype.is_low_precision:
        from arraylayer.lowp.moving import has_zero, zero_refusal

        if not has_zero(dtype.name):
            raise UnsupportedDtypeError(zero_refusal(function, dtype.name))


def native_dtype(backend: Backend, dtype: Any) -> Any:
    """The framework's dtype object for a resolved dtype (validated for this backend)."""
    return backend.as_native_dtype(dtype if type(dtype) is Dtype else as_dtype(dtype))


def native_device(backend: Backend, device: str | None) -> Any:
    """The framework's device object for an arraylayer device string (None: framework default)."""
    return None if device is None else backend.native_device(device)


# -- wrapper arrays (arraylayer.Array) ------------------------------------------------------------

#: Wrapper class -> (unwrap, wrap): ``unwrap(w)`` is the native array inside ``w`` and ``wrap(x)``
#: a new wrapper of the native ``x``, both O(1). Filled by :func:`register_wrapper` (arraylayer.Array
#: registers itself and its subclasses); looked up by exact class, so a check is one dict probe.
WRAPPERS: dict[type, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {}
_SEQUENCES: Final = (list, tuple)


def register_wrapper(cls: type, unwrap: Callable[[Any], Any], wrap: Callable[[Any], Any]) -> None:
    """Make the public functions accept instances of ``cls`` and return ``cls`` instances for them."""
    WRAPPERS[cls] = (unwrap, wrap)


def holds_wrapped(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """True if a wrapper is among ``args``/``kwargs``, directly or as an item of a list or tuple
    argument (``concat([a, b])``)."""
    for x in args:
        cls = type(x)
        if cls in WRAPPERS or ((cls is list or cls is tuple) and _holds(x)):
            return True
    if kwargs:
        for x in kwargs.values():
            cls = type(x)
            if cls in WRAPPERS or ((cls is list or cls is tuple) and _holds(x)):
                return True
    return False


def _holds(items: list[Any] | tuple[Any, ...]) -> bool:
    for y in items:
        if type(y) in WRAPPERS:
            return True
    return False


def call_unwrapped(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``function`` called with every wrapper among its arguments replaced by its native array
    (lists and tuples of arguments included), and every native array in its result (or in a
    tuple, list or named tuple it returns) wrapped in the class of the first wrapper found."""
    wrap = None

    def unwrap(x: Any) -> Any:
        nonlocal wrap
        pair = WRAPPERS.get(type(x))
        if pair is not None:
            wrap = wrap or pair[1]
            return pair[0](x)
        if type(x) in _SEQUENCES:
            x, found = _unwrap_items(x)
            wrap = wrap or found
        return x

    native_args = [unwrap(x) for x in args]
    native_kwargs = {key: unwrap(x) for key, x in kwargs.items()}
    result = function(*native_args, **native_kwargs)
    return result if wrap is None else _wrap_result(result, wrap)


def call_wrapped_planned(function: Callable[..., Any], plans: dict[type, dict[Any, Any]], *xs: Any) -> Any:
    """An elementwise ``function`` called with wrappers ``xs``; when they are all of one wrapper
    class and one dtype, a plan is stored in ``plans[cls][dtype]`` (the function's own fast-path
    cache), so the next such call is one look-up: unwrap, the native call, wrap."""
    cls = type(xs[0])
    pair = WRAPPERS.get(cls)
    if pair is None or any(type(x) is not cls for x in xs):
        return call_unwrapped(function, xs, {})
    unwrap, wrap = pair
    dtype = xs[0].dtype
    if any(x.dtype is not dtype for x in xs):
        return call_unwrapped(function, xs, {})
    if len(xs) == 1:
        def run(x: Any) -> Any:
            return wrap(function(unwrap(x)))
    else:
        def run(x1: Any, x2: Any) -> Any:  # type: ignore[misc]
            return wrap(function(unwrap(x1), unwrap(x2)))
    result = run(*xs)
    if not replaying():
        plans.setdefault(cls, {})[dtype] = run
    return result


def _unwrap_items(items: list[Any] | tuple[Any, ...]) -> tuple[Any, Callable[[Any], Any] | None]:
    """A list or tuple with its wrappers unwrapped, and the wrap of the first one (None if none)."""
    wrap = None
    unwrapped = []
    for y in items:
        pair = WRAPPERS.get(type(y))
        if pair is not None:
            wrap = wrap or pair[1]
            y = pair[0](y)
        unwrapped.append(y)
    return (items if wrap is None else type(items)(unwrapped)), wrap


def _wrap_result(result: Any, wrap: Callable[[Any], Any]) -> Any:
    if isinstance(result, tuple):
        items = [_wrap_result(x, wrap) for x in result]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    if isinstance(result, list):
        return [_wrap_result(x, wrap) for x in result]
    if result is None or type(result) in SCALAR_CLASSES or isinstance(result, (str, Dtype)):
        return result
    backend = backend_of(result)
    return wrap(result) if isinstance(result, backend.array_types) else result


def array_role(parameter: Any) -> str:
    """How a parameter may hold arrays, read from its annotation: ``"array"`` (one array),
    ``"either"`` (an array, or a list/tuple of them; also for unannotated parameters) or ``""``
    (no array: dtypes, axes, flags)."""
    annotation = str(parameter.annotation) if parameter.annotation is not parameter.empty else "Any"
    if "Array" not in annotation and "Any" not in annotation:
        return ""
    if annotation == "Any" or any(word in annotation for word in ("Sequence", "list", "tuple")):
        return "either"
    return "array"


def source_signature(signature: Any, prefix: str) -> tuple[list[str], list[str], dict[str, Any]]:
    """The pieces of a generated function with ``signature``: its parameter list (defaults named
    ``<prefix><index>``), the call that passes every parameter on, and the defaults by name."""
    parameters, call, defaults = [], [], {}
    ordered = list(signature.parameters.values())
    star = False
    for index, p in enumerate(ordered):
        if p.kind is p.KEYWORD_ONLY and not star:
            parameters.append("*")
            star = True
        default = ""
        if p.default is not p.empty:
            defaults[f"{prefix}{index}"] = p.default
            default = f"={prefix}{index}"
        name = p.name
        if p.kind is p.VAR_POSITIONAL:
            parameters.append(f"*{name}")
            star = True
            call.append(f"*{name}")
        elif p.kind is p.VAR_KEYWORD:
            parameters.append(f"**{name}")
            call.append(f"**{name}")
        else:
            parameters.append(f"{name}{default}")
            call.append(f"{name}={name}" if p.kind is p.KEYWORD_ONLY else name)
        if p.kind is p.POSITIONAL_ONLY and (index + 1 == len(ordered) or ordered[index + 1].kind is not p.POSITIONAL_ONLY):
            parameters.append("/")
    return parameters, call, defaults


def accepting_wrapped(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` made to accept and return wrappers, for functions without a native fast path.

    The result is a function with ``function``'s own signature, generated once, whose first line
    checks only the parameters that may hold arrays (those annotated with ``Array``, or not
    annotated): one ``type(p) in WRAPPERS`` probe each (plus the items of sequence parameters),
    then the call. ``function`` itself comes back when no parameter may hold an array. Functions
    with a planned native fast path (the elementwise ones, marked ``accepts_wrapped``) make the
    same check in their planning path, which native calls with a planned dtype never reach.
    """
    if getattr(function, "accepts_wrapped", False) or getattr(getattr(function, "__self__", None),
                                                               "accepts_wrapped", False):
        return function  # (a compiled element-wise function: its dispatcher, __self__, says so)
    try:
        signature = signature_of(function)  # inspect.signature's answer, read from the code where it can
    except (TypeError, ValueError):  # no signature to copy: check every argument
        return _accepting_any(function)
    namespace = own_namespace({"_al_f": function, "_al_W": WRAPPERS, "_al_holds": _holds,  # unguarded when compiled
                               "_al_call": call_unwrapped, "_al_seq": _SEQUENCES})
    parameters, call, defaults = source_signature(signature, "_al_d")
    namespace.update(defaults)
    packed, kwargs_packed, checks = [], [], []
    for p in signature.parameters.values():
        name, role = p.name, array_role(p)
        if p.kind is p.VAR_POSITIONAL:
            packed.append(f"*{name}")
        elif p.kind is p.VAR_KEYWORD:
            kwargs_packed.append(f"**{name}")
        elif p.kind is p.KEYWORD_ONLY:
            kwargs_packed.append(f"{name!r}: {name}")
        else:
            packed.append(name)
        if not role:
            continue
        if p.kind is p.VAR_POSITIONAL:
            checks.append(f"_al_holds({name})")
        elif p.kind is p.VAR_KEYWORD:
            checks.append(f"_al_holds(list({name}.values()))")
        elif role == "either":
            checks.append(f"type({name}) in _al_W or (type({name}) in _al_seq and _al_holds({name}))")
        else:
            checks.append(f"type({name}) in _al_W")
    if not checks:
        return function
    source = (  # one line: wrapper_code.py holds these lines compiled (api/wrapper_templates.py)
        f"def public({', '.join(parameters)}): "
        f"return _al_call(_al_f, ({''.join(a + ', ' for a in packed)}), {{{', '.join(kwargs_packed)}}}) "
        f"if {' or '.join(checks)} else _al_f({', '.join(call)})\n"
    )
    ordered = signature.parameters.values()
    positional_defaults = tuple(p.default for p in ordered if p.default is not p.empty
                                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    keyword_defaults = {p.name: p.default for p in ordered if p.default is not p.empty and p.kind is p.KEYWORD_ONLY}
    public = function_from_source(source, f"<arraylayer.accepting_wrapped {function.__qualname__}>", namespace,
                                  positional_defaults, keyword_defaults)
    public = functools.update_wrapper(public, function)
    public.accepts_wrapped = True  # type: ignore[attr-defined]
    return public


def _accepting_any(function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def public(*args: Any, **kwargs: Any) -> Any:
        if holds_wrapped(args, kwargs):
            return call_unwrapped(function, args, kwargs)
        return function(*args, **kwargs)

    public.accepts_wrapped = True  # type: ignore[attr-defined]
    return public
