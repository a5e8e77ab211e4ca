"""Array API namespaces bound to one backend: ``arraylayer.xp.numpy``, ``.jax``, ``.torch``,
``.tensorflow``.

Each is a module with the whole Array API surface (``__array_api_version__`` included) whose
dtype attributes are the framework's own dtype objects and whose creation functions always
make that framework's arrays, whatever backend is active. Point a conformance suite at one:
``ARRAY_API_TESTS_MODULE=arraylayer.xp.torch pytest array-api-tests/``.

These take and return *native* arrays (pass one as ``xp=`` to array-api-extra). The namespaces
of :class:`arraylayer.Array`, whose functions take and return Arrays, are in
``arraylayer.xp.arrays`` (see its docstring).

The folder ``arraylayer/xp/`` owns the Array API namespaces bound to one backend: native arrays
(``xp/<backend>.py``) or ``arraylayer.Array`` (``xp/arrays/``) in and out.

May import: the base modules, ``dtypes``, ``runtime``, ``api``, ``array``, the face ``arraylayer``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

__all__ = ["lib_module", "populate"]

# Functions that take no array, so the namespace's backend must be chosen for them.
_BACKEND_CHOSEN: Final = frozenset({"arange", "asarray", "empty", "eye", "from_dlpack", "full", "linspace", "ones",
                                    "zeros", "__array_namespace_info__"})
_CONSTANTS: Final = {"e": math.e, "inf": math.inf, "nan": math.nan, "pi": math.pi, "newaxis": None}


def _bound(function: Callable[..., Any], backend: str) -> Callable[..., Any]:
    from arraylayer.runtime.registry import use_backend

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        with use_backend(backend):
            return function(*args, **kwargs)

    return call


def _asarray_into(asarray: Callable[..., Any], backend: str) -> Callable[..., Any]:
    """The namespace's asarray: arrays of another backend are moved to this one first (the
    standard expects the namespace's own array type back)."""
    from arraylayer.api.interchange import to_backend
    from arraylayer.runtime.registry import backend_of, use_backend

    @functools.wraps(asarray)
    def call(obj: Any, /, **kwargs: Any) -> Any:
        with use_backend(backend):
            source = backend_of(obj)
            if source.name != backend and isinstance(obj, source.array_types):
                obj = to_backend(obj, backend)
            return asarray(obj, **kwargs)

    return call


def lib_module(namespace: dict[str, Any]) -> ModuleType:
    """The namespace's ``lib``: NumPy's ``lib.stride_tricks.sliding_window_view`` where clients
    (xarray's rolling) look for it, the namespace's own ``sliding_window_view``."""
    lib = ModuleType(f"{namespace['__name__']}.lib", "NumPy's lib functions clients look up: stride_tricks.")
    lib.stride_tricks = ModuleType(f"{lib.__name__}.stride_tricks", "sliding_window_view, as NumPy's.")
    lib.stride_tricks.sliding_window_view = namespace["sliding_window_view"]
    return lib


def populate(namespace: dict[str, Any], backend: str) -> None:
    """Fill a module's globals with the Array API namespace of ``backend`` (imports its framework)."""
    import arraylayer

    from arraylayer.api import CATEGORIES, fft, linalg
    from arraylayer.runtime.registry import get_backend

    native = get_backend(backend).load()
    names = {name: getattr(module, name) for module in CATEGORIES for name in module.__all__}
    for name, value in names.items():
        namespace[name] = _bound(value, backend) if name in _BACKEND_CHOSEN else value
    namespace["asarray"] = _asarray_into(names["asarray"], backend)
    namespace.update({str(d): native.native_dtypes[d] for d in native.valid_dtypes()})
    namespace.update(_CONSTANTS)
    for extension in (linalg, fft):
        short = extension.__name__.rsplit(".", 1)[1]
        module = ModuleType(f"{namespace['__name__']}.{short}", extension.__doc__)
        left_out = getattr(extension, "NOT_IN_ARRAY_NAMESPACES", ())
        module.__dict__.update({name: getattr(extension, name) for name in extension.__all__ if name not in left_out})
        namespace[short] = module
    for name in ("fftfreq", "rfftfreq"):  # they take no array: the namespace's backend makes them
        namespace["fft"].__dict__[name] = _bound(getattr(fft, name), backend)
    namespace["lib"] = lib_module(namespace)
    namespace["__array_api_version__"] = arraylayer.__array_api_version__
