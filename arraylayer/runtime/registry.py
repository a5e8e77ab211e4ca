"""The registry of backends, backend selection, and inference of an array's backend.

``set_backend`` sets the process-wide backend, ``use_backend`` a scope for one thread
or task (contextvars). ``backend_of(*arrays)`` finds the backend from the arrays'
types, cached per type, and never imports a framework: an array of a framework that
is not imported cannot exist.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from arraylayer.runtime.backend import Backend
from arraylayer.context import Setting, bump_epoch, reads_setting, reads_tables, traced_as
from arraylayer.dtypes import did_you_mean
from arraylayer.errors import BackendMismatchError, BackendNotInstalledError, UnknownBackendError

__all__ = [
    "register_backend",
    "available_backends",
    "installed_backends",
    "get_backend",
    "set_backend",
    "use_backend",
    "current_backend",
    "backend_of",
]

ENTRY_POINT_GROUP: Final = "arraylayer.backends"

# name -> "module:Class" (resolved on first use) or the class itself.
_REGISTERED: dict[str, str | type[Backend]] = {
    "numpy": "arraylayer.backends.numpy:NumpyBackend",
    "jax": "arraylayer.backends.jax:JaxBackend",
    "torch": "arraylayer.backends.torch:TorchBackend",
    "tensorflow": "arraylayer.backends.tensorflow:TensorflowBackend",
    "dask": "arraylayer.backends.dask:DaskBackend",
}
_BUILT_IN: Final = frozenset(_REGISTERED)
_INSTANCES: dict[str, Backend] = {}
_entry_points_read = False
# Called with no argument whenever what a stored plan relies on may have changed: a backend
# registered (or replaced) at run time, or support declarations changed (support.clear_caches).
_CHANGE_LISTENERS: list[Callable[[], None]] = []


def on_registry_change(listener: Callable[[], None]) -> None:
    """Call ``listener()`` whenever a backend is registered or support declarations change."""
    _CHANGE_LISTENERS.append(listener)


def registry_changed() -> None:
    """Tell every listener (the element-wise plan caches) that registrations changed."""
    for listener in _CHANGE_LISTENERS:
        listener()


def register_backend(name: str, target: str | type[Backend]) -> None:
    """Register a backend class (or its ``"module:Class"`` path) under ``name``.

    ``name`` is a new identifier-like string (the built-in names cannot be replaced);
    ``target`` is a :class:`Backend` subclass or a ``"package.module:Class"`` string.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise UnknownBackendError(
            f"register_backend(name={name!r}, ...): a backend name is a non-empty identifier-like string "
            "such as 'mlx'."
        )
    if name in _BUILT_IN:
        raise UnknownBackendError(
            f"register_backend(name={name!r}, ...): {name!r} is a built-in backend and cannot be replaced; "
            "register yours under another name."
        )
    well_formed = (isinstance(target, type) and issubclass(target, Backend)) or (
        isinstance(target, str) and target.count(":") == 1 and all(
            part and all(p.isidentifier() for p in part.split(".")) for part in target.split(":")))
    if not well_formed:
        raise UnknownBackendError(
            f"register_backend({name!r}, target={target!r}): the target is a subclass of "
            "arraylayer.runtime.backend.Backend or a 'package.module:ClassName' string."
        )
    _REGISTERED[name] = target
    _INSTANCES.pop(name, None)
    bump_epoch()
    registry_changed()


def _read_entry_points() -> None:
    global _entry_points_read
    if _entry_points_read:
        return
    _entry_points_read = True
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        _REGISTERED.setdefault(point.name, point.value)


def available_backends() -> tuple[str, ...]:
    """Every registered backend: the four built-in ones and third-party entry points."""
    _read_entry_points()
    return tuple(_REGISTERED)


def _instance(name: str) -> Backend:
    """The (unloaded) adapter for ``name``; imports the adapter module, not its framework."""
    backend = _INSTANCES.get(name)
    if backend is None:
        if name not in _REGISTERED:
            _read_entry_points()
        if name not in _REGISTERED:
            raise UnknownBackendError(
                f"Unknown backend {name!r}; registered backends: {', '.join(available_backends())}."
                f"{did_you_mean(name, available_backends())}"
            )
        target = _REGISTERED[name]
        if isinstance(target, str):
            module_name, _, class_name = target.partition(":")
            target = getattr(importlib.import_module(module_name), class_name)
        backend = _INSTANCES[name] = target()
    return backend


def backend_instances() -> tuple[Backend, ...]:
    """The adapters created so far in this process (loaded or not), e.g. to clear their caches."""
    return tuple(_INSTANCES.values())


def installed_backends() -> tuple[str, ...]:
    """The registered backends whose framework can be imported here (checked without importing)."""
    return tuple(
        name for name in available_backends()
        if importlib.util.find_spec(_instance(name).framework.split(".")[0]) is not None
    )


def get_backend(name: str | None = None) -> Backend:
    """The loaded adapter for ``name`` (the active backend when None); imports its framework."""
    if name is None:
        return _active()
    if not isinstance(name, str):
        raise UnknownBackendError(f"A backend is named by a string ({', '.join(map(repr, available_backends()))}), "
                                  f"got {type(name).__name__}.")
    return _instance(name).load()


def _validate(name: object) -> Backend | None:
    if name is None or isinstance(name, Backend):
        return name
    if not isinstance(name, str):
        raise UnknownBackendError(f"A backend is named by a string, got {name!r}.")
    backend = _instance(name)
    if importlib.util.find_spec(backend.framework.split(".")[0]) is None:
        raise BackendNotInstalledError(
            f"The {name!r} backend needs {backend.framework}, which is not installed. "
            f"Install it with: pip install \"arraylayer[{backend.extra}]\""
        )
    return backend


# None until a backend is chosen: numpy is then used, and native_* names stay Dtype values.
BACKEND: Final = Setting("backend", None, _validate)


@reads_setting
def _chosen_backend_name() -> str | None:
    """The name of the backend chosen here, or None (a plain string: readable by tracing compilers)."""
    backend = BACKEND.var.get(BACKEND.process)
    return None if backend is None else backend.name


def chosen_backend() -> Backend | None:
    """The backend chosen here by set_backend/use_backend, or None when none was."""
    name = _chosen_backend_name()
    return None if name is None else _INSTANCES[name]


def _active() -> Backend:
    backend = _INSTANCES.get(_chosen_backend_name() or "numpy") or _instance("numpy")
    return backend if backend.module is not None else backend.load()


def set_backend(name: str | None) -> str:
    """Make ``name`` the process-wide backend (None: back to the numpy default).

    A ``use_backend`` scope still wins inside it. Imports the framework on first use only.
    """
    backend = BACKEND.set_process(name)
    return backend.name if backend is not None else "numpy"


@contextmanager
def use_backend(name: str) -> Iterator[Backend]:
    """Context manager: backend ``name`` for this thread or async task until the block ends
    (None: the numpy default, as for :func:`set_backend`)."""
    with BACKEND.scope(name) as backend:
        yield (backend if backend is not None else _instance("numpy")).load()


def current_backend() -> str:
    """The name of the active backend here (``"numpy"`` when nothing was set)."""
    return _chosen_backend_name() or "numpy"


# type -> Backend, or None for types that belong to no backend (Python scalars, lists).
_BY_TYPE: dict[type, Backend | None] = {bool: None, int: None, float: None, complex: None,
                                        list: None, tuple: None, type(None): None}


def _classify(cls: type) -> Backend | None:
    """The backend of a class seen for the first time (then cached in _BY_TYPE). Registered
    backends are tried before entry points are read (reading them is the slow part)."""
    root = cls.__module__.split(".")[0]
    for names in (lambda: tuple(_REGISTERED), available_backends):  # called in turn: entry points last
        for name in names():
            backend = _instance(name)
            if root in backend.type_roots and backend.framework.split(".")[0] in sys.modules:
                backend.load()
                if issubclass(cls, backend.array_types):
                    _BY_TYPE[cls] = backend
                    return backend
    _BY_TYPE[cls] = None
    return None


def backend_of_class(cls: type) -> Backend | None:
    """The backend whose arrays are of class ``cls`` (None: no backend's), as :func:`backend_of`
    finds it for one such array, without the active backend's default."""
    return _BY_TYPE[cls] if cls in _BY_TYPE else _classify(cls)


def prepare_for_tracing(*array_types: type) -> None:
    """Do now what the first call on ``array_types`` would do (read entry points, make every
    adapter, load the arrays' backend): a tracing compiler cannot follow those steps."""
    for name in available_backends():
        try:
            _instance(name)
        except Exception:  # a broken third-party entry point is reported when it is used
            continue
    for cls in array_types:
        if cls not in _BY_TYPE:
            _classify(cls)


def backend_of(*arrays: Any) -> Backend:
    """The backend of the arrays among ``arrays`` (non-arrays are ignored); the active backend
    when there are none. Arrays of two backends raise BackendMismatchError."""
    found: Backend | None = None
    for x in arrays:
        cls = type(x)  # type(), not __class__: torch.compile resolves it for Python scalars too
        backend = _BY_TYPE[cls] if cls in _BY_TYPE else _classify(cls)
        if backend is None or backend is found:
            continue
        if found is not None:
            raise _mismatch(arrays, found, backend, cls)
        found = backend
    return found if found is not None else _active()


@reads_tables
def _backend_names(classes: tuple[type, ...]) -> tuple[str | None, ...] | None:
    """The name of each class's backend (None: no backend's); None if one is not classified yet."""
    if not all(cls in _BY_TYPE for cls in classes):
        return None
    return tuple(None if _BY_TYPE[cls] is None else _BY_TYPE[cls].name for cls in classes)  # type: ignore[union-attr]


@traced_as(backend_of)
def _traced_backend_of(*arrays: Any) -> Backend:
    """What Dynamo traces for :func:`backend_of`: the classes' backends read as one constant."""
    classes = tuple(type(x) for x in arrays)
    names = _backend_names(classes)
    if names is None:  # a class seen for the first time
        for cls in classes:
            if cls not in _BY_TYPE:
                _classify(cls)
        names = _backend_names(classes) or ()
    found = None
    for cls, name in zip(classes, names, strict=False):
        if name is not None and name != found:
            if found is not None:
                raise _mismatch(arrays, _INSTANCES[found], _INSTANCES[name], cls)
            found = name
    return _INSTANCES[found] if found is not None else _active()


def _mismatch(arrays: tuple[Any, ...], found: Backend, backend: Backend, cls: type) -> BackendMismatchError:
    """The error for arrays of two backends; a NumPy scalar (np.float32(1)) is named as one."""
    scalar = next((x for x in arrays if _is_numpy_scalar(x)), None)
    if scalar is not None:
        other = backend if found.name == "numpy" else found
        kind = type(scalar).__name__
        return BackendMismatchError(
            f"A NumPy scalar (numpy.{kind} {scalar}) next to {other.name} arrays: NumPy scalars are NumPy "
            f"arrays to arraylayer. Pass a Python number instead ({kind.rstrip('0123456789')}(x) or x.item()), "
            f"or an array of the {other.name} backend (arraylayer.to_backend(x, {other.name!r}))."
        )
    return BackendMismatchError(
        f"Arrays of two backends in one call: {found.name} ({type_name(arrays, found)}) and "
        f"{backend.name} ({cls.__module__}.{cls.__qualname__}). Move one with "
        f"arraylayer.to_backend(x, {found.name!r}) first."
    )


def _is_numpy_scalar(x: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return numpy is not None and isinstance(x, numpy.generic)


def type_name(arrays: tuple[Any, ...], backend: Backend) -> str:
    for x in arrays:
        if _BY_TYPE.get(x.__class__) is backend:
            return f"{x.__class__.__module__}.{x.__class__.__qualname__}"
    return backend.name
