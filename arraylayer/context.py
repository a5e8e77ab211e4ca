"""Per-thread, per-task state: one :class:`Setting` per configurable value.

Each setting has a *process-wide* value, changed by the ``set_*`` functions, and a
*scoped* override held in a :class:`contextvars.ContextVar`, entered with the
context managers. A scoped override is seen only by the thread or async task (and
the tasks it spawns) that entered it, so concurrent code with different settings
never sees another's. Reading a setting is one ``ContextVar.get``.

Inside a scope, the scope wins: ``set_*`` changes the process-wide value, which
becomes visible once the scope is left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["Setting", "SETTING_READERS", "reads_setting", "TABLE_READERS", "reads_tables", "TRACED_TWINS", "traced_as",
           "EPOCH", "bump_epoch", "epoch_reading", "NARROW_64BIT", "narrow_64bit", "set_narrow_64bit", "use_narrow_64bit", "replaying", "watch_replay", "at_trace_end",
           "leave_traced_scopes", "CHECKED_SCALARS", "checked_scalars", "set_checked_scalars", "use_checked_scalars"]

#: The functions that read a setting. A tracing compiler that cannot follow
#: ``ContextVar.get`` (torch.compile's Dynamo) is told to call them at trace time and
#: treat their results as constants (see the torch backend), so settings are read once
#: per trace, as under jax.jit and tf.function.
SETTING_READERS: list[Callable[..., object]] = []


def reads_setting(function: Callable[..., T]) -> Callable[..., T]:
    """Register ``function`` in :data:`SETTING_READERS` and return it unchanged (no wrapper)."""
    SETTING_READERS.append(function)
    return function


#: Look-ups in tables fixed at import (promotion tables, dtype aliases, the backend of a class):
#: functions of their arguments alone that return None rather than raise. Dynamo calls them at
#: trace time and keeps their results as constants, so the tables they read are not guarded key
#: by key on every call of the compiled function (see the torch backend).
TABLE_READERS: list[Callable[..., object]] = []


def reads_tables(function: Callable[..., T]) -> Callable[..., T]:
    """Register ``function`` in :data:`TABLE_READERS` and return it unchanged (no wrapper)."""
    TABLE_READERS.append(function)
    return function


#: eager function -> what Dynamo traces in its place (same results, its tables read through
#: :data:`TABLE_READERS`): eager calls keep their own code, with nothing added.
TRACED_TWINS: dict[Callable[..., object], Callable[..., object]] = {}


def traced_as(eager: Callable[..., object]) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Register the decorated function as the one Dynamo traces in place of ``eager``."""
    def register(twin: Callable[..., T]) -> Callable[..., T]:
        TRACED_TWINS[eager] = twin
        return twin
    return register


#: The probes saying whether a compiler that *replays* Python is tracing now: torch.compile's
#: Dynamo, which turns every read of arraylayer's caches into a guard and every write into a
#: side effect replayed after the trace (so a cache filled while tracing fails a guard on the
#: next call, and the step compiles twice). jax.jit and tf.function run Python for real and
#: need no probe. The torch backend adds ``torch.compiler.is_compiling`` when it loads.
_REPLAY_PROBES: list[Callable[[], bool]] = []


def watch_replay(probe: Callable[[], bool]) -> None:
    """Add a probe to :func:`replaying` (once per probe)."""
    if probe not in _REPLAY_PROBES:
        _REPLAY_PROBES.append(probe)


#: Bumped by every change of arraylayer's process-wide state (a setting's process value, a registered
#: backend or dtype alias). Read by :func:`replaying` while Dynamo traces, so a compiled function
#: guards it and compiles again after such a change (see ``guard_filter``).
EPOCH = 0


def bump_epoch() -> None:
    """Record a change of arraylayer's process-wide state (see :data:`EPOCH`)."""
    global EPOCH
    EPOCH += 1


def epoch_reading(constant: Callable[..., T]) -> Callable[..., T]:
    """What Dynamo traces for a setting reader: a read of :data:`EPOCH` (which the compiled function
    then guards), and ``constant``, a copy of the reader that Dynamo calls at trace time."""
    def reader(*args: Any, **kwargs: Any) -> T:
        value = constant(*args, **kwargs)
        return value if EPOCH >= 0 else value  # always value: the comparison makes Dynamo read EPOCH
    return reader


def replaying() -> bool:
    """True while a replaying tracer (Dynamo) traces this call: the planning paths then compute
    their plans without storing them, so that tracing leaves arraylayer's caches as they were.
    Called on planning paths only, never on a planned fast path."""
    for probe in _REPLAY_PROBES:
        if probe():
            return EPOCH >= 0  # always True; the read makes Dynamo guard EPOCH
    return False


#: The scopes entered while a replaying tracer traces, innermost last (see :meth:`Setting.scope`).
#: One list serves every thread: Dynamo compiles one frame at a time (its compile lock), and an
#: attempt begins and ends in the thread, and so the context, that entered its scopes.
_TRACED_SCOPES: list[tuple[ContextVar[Any], Token[Any]]] = []

#: Ways to run a function when the trace attempt in progress ends, kept or abandoned (Dynamo
#: abandons an attempt at a graph break and traces the frame again): the torch backend's first
#: use adds Dynamo's. A scope a trace entered is left then at the latest, so that no value set
#: by an abandoned attempt is read by the next one.
_AT_TRACE_END: list[Callable[[Callable[[], None]], None]] = []


def at_trace_end(schedule: Callable[[Callable[[], None]], None]) -> None:
    """Add a way to run a function when the current trace attempt ends (once per way)."""
    if schedule not in _AT_TRACE_END:
        _AT_TRACE_END.append(schedule)


def _enter_traced(setting: Setting[T], value: object) -> None:
    """Enter ``setting``'s scope for real while Dynamo traces (it cannot trace ``ContextVar.set``):
    registered in :data:`SETTING_READERS`, so Dynamo runs it at trace time, and the readers it
    then runs see the scope's value, as the Python run by jax.jit and tf.function does."""
    _TRACED_SCOPES.append((setting.var, setting.var.set(setting._validate(value))))
    for schedule in _AT_TRACE_END:
        schedule(leave_traced_scopes)


def _leave_traced() -> None:
    """Leave the innermost scope entered by :func:`_enter_traced`."""
    var, token = _TRACED_SCOPES.pop()
    var.reset(token)


def leave_traced_scopes() -> None:
    """Leave every scope a trace entered and did not leave (an attempt that stopped inside a
    ``with`` block)."""
    while _TRACED_SCOPES:
        _leave_traced()


SETTING_READERS.extend((_enter_traced, _leave_traced))


class Setting(Generic[T]):
    """A process-wide value with context-local overrides."""

    __slots__ = ("name", "var", "process", "_validate")

    def __init__(self, name: str, initial: T, validate: Callable[[object], T]) -> None:
        self.name = name
        self.var: ContextVar[T] = ContextVar(f"arraylayer.{name}")
        self._validate = validate
        self.process: T = validate(initial)

    def get(self) -> T:
        """The value in force here: the innermost scope's, else the process-wide one."""
        return self.var.get(self.process)

    def set_process(self, value: object) -> T:
        """Validate ``value`` and make it the process-wide value; returns it."""
        self.process = self._validate(value)
        bump_epoch()
        return self.process

    @contextmanager
    def scope(self, value: object) -> Iterator[T]:
        """Override the value for the current thread or task until the block ends. Inside a
        function that torch.compile traces, the scope is entered at trace time (the compiled
        graph holds the values read inside it as constants, as jax.jit's and tf.function's do)."""
        if replaying():
            _enter_traced(self, value)
            try:
                yield self._validate(value)
            finally:
                _leave_traced()
            return
        token = self.var.set(self._validate(value))
        try:
            yield self.var.get()
        finally:
            self.var.reset(token)

    def __repr__(self) -> str:
        return f"Setting({self.name}={self.get()!r})"


# -- narrowing 64-bit requests (JAX without jax_enable_x64) ------------------------------------------

def _flag(name: str) -> Callable[[object], bool]:
    """The validator of an on/off setting."""

    def validate(value: object) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"{name} takes True or False, got {value!r}.")
        return value

    return validate


#: Off by default: a 64-bit dtype the backend cannot hold as configured (JAX without
#: ``jax_enable_x64``) raises UnsupportedDtypeError naming the remedy. On: such a request is
#: served with the 32-bit dtype of the same kind (int64 -> int32, uint64 -> uint32, float64 ->
#: float32, complex128 -> complex64), with a one-time warning that says so.
NARROW_64BIT: Setting[bool] = Setting("narrow_64bit", False, _flag("narrow_64bit"))


@reads_setting
def narrow_64bit() -> bool:
    """Whether requests for 64-bit dtypes a backend cannot hold are narrowed to 32 bits here."""
    return NARROW_64BIT.var.get(NARROW_64BIT.process)


def set_narrow_64bit(on: bool) -> bool:
    """Narrow (True) or refuse (False, the default) 64-bit requests a backend cannot hold,
    process-wide. Today only JAX without ``jax_enable_x64`` cannot hold them."""
    return NARROW_64BIT.set_process(on)


def use_narrow_64bit(on: bool = True):  # type: ignore[no-untyped-def]
    """Context manager: :func:`set_narrow_64bit` for this thread or task, inside the block."""
    return NARROW_64BIT.scope(on)


# -- checking traced Python ints at run time (jax.jit) -----------------------------------------------

#: Off by default (no cost). On: a Python int that ``jax.jit`` traced (a weak-typed int array whose
#: value is unknown while tracing) and that meets a narrower integer array is checked when the
#: compiled function runs; one that does not fit raises there instead of wrapping around.
CHECKED_SCALARS: Setting[bool] = Setting("checked_scalars", False, _flag("checked_scalars"))


@reads_setting
def checked_scalars() -> bool:
    """Whether traced Python ints are checked against the array's integer dtype at run time here."""
    return CHECKED_SCALARS.var.get(CHECKED_SCALARS.process)


def set_checked_scalars(on: bool) -> bool:
    """Check (True) or not (False, the default) traced Python ints at run time, process-wide. Read
    while tracing: a function compiled before the change keeps what it was traced with."""
    return CHECKED_SCALARS.set_process(on)


def use_checked_scalars(on: bool = True):  # type: ignore[no-untyped-def]
    """Context manager: :func:`set_checked_scalars` for this thread or task, inside the block
    (around the first call of a jitted function, which traces it, or inside the function)."""
    return CHECKED_SCALARS.scope(on)
