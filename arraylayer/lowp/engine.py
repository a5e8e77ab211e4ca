"""The one cast engine: every conversion into or out of a low-precision format is a :class:`Request`,
served by the first registered :class:`Implementation` that takes it.

The rule is one (:mod:`.reference`, from the formats' data); the implementations are ways to run it
faster where a framework allows, each checked bit for bit against the reference on every code of
every format (tests/test_lowp_engine.py). They register themselves here, in the order they are tried:

====== ================= ===================================================================
order  implementation    where it runs
====== ================= ===================================================================
10     ``one_kernel``    jax arrays on an accelerator (the rule under ``jax.jit``); torch's
                         contiguous GPU tensors (Triton kernels) — :mod:`.one_kernel`
20     ``c_tables``      torch's eager contiguous CPU tensors, where ``arraylayer._codes`` is
                         built — :mod:`.cpu_codes`
30     ``native``        the framework's own cast where its bits are ml_dtypes' or need only a
                         fix-up of the out-of-range or NaN codes — :mod:`.native_casts`
100    ``reference``     everywhere: the portable rule with the framework's integer ops
====== ================= ===================================================================

:func:`choose` is the one place that decides, and says why: ``arraylayer.lowp.explain(x, format)``
prints it for an array.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Protocol

from arraylayer.errors import InvalidArgumentError
from arraylayer.lowp import reference
from arraylayer.lowp._ops import ops_of
from arraylayer.lowp.formats import FORMATS, Format, get_format

__all__ = ["Implementation", "Request", "choose", "explain", "implementations", "register", "request_for", "run"]

#: What a request asks: the codes of a float/int array ("encode"), the values of codes or of a native
#: low-precision array ("decode"), or an array of the framework's own low-precision dtype ("cast").
OPERATIONS = ("encode", "decode", "cast")
#: The modules whose import registers an acceleration (loaded on the first request).
ACCELERATIONS = ("arraylayer.lowp.one_kernel", "arraylayer.lowp.cpu_codes", "arraylayer.lowp.native_casts")


@dataclass
class Request:
    """One cast: ``op`` of the native array ``x`` (dtype ``source``) by the ops of its framework.

    ``dtype`` is decode's target; ``stored`` that ``x`` is a native low-precision array (not uint8
    codes); ``portable`` that only the rule itself may run (``encode(..., native=False)``: the tests
    compare both paths)."""

    op: str
    ops: Any
    x: Any
    format: Format
    source: str
    saturate: bool = False
    dtype: str = "float32"
    stored: bool = False
    portable: bool = False
    _wide: Any = field(default=None, repr=False)

    @property
    def wide(self) -> Any:
        """``x`` widened to float32 for encoding (:func:`reference.widened`), computed once."""
        if self._wide is None:
            self._wide = reference.widened(self.ops, self.x, self.source)
        return self._wide


class Implementation(Protocol):
    """A way to serve requests: ``declines`` says why it does not take one ("" when it does) and
    ``run`` gives the result, or None where it could not run after all (the next one is tried)."""

    name: str
    order: int
    operations: tuple[str, ...]

    def declines(self, request: Request) -> str: ...

    def run(self, request: Request) -> Any | None: ...


class Reference:
    """The portable rule: takes every request."""

    name, order, operations = "reference", 100, OPERATIONS

    def declines(self, request: Request) -> str:
        return ""

    def run(self, request: Request) -> Any:
        ops, f = request.ops, request.format
        if request.op == "decode":
            codes = reference.native_codes(ops, request.x, f) if request.stored else request.x
            return reference.gather(ops, ops.table((f.name, request.dtype), reference.decode_table, codes), codes, f.bits)
        if request.op == "cast":
            return as_native(ops, run(_as_encode(request)), f)
        if not f.is_float:
            return reference.encode_int(ops, request.x, request.source, f, request.saturate)
        return finish_float64(request, reference.encode_float(ops, request.wide, f, request.saturate))


def _as_encode(request: Request) -> Request:
    return Request("encode", request.ops, request.x, request.format, request.source, request.saturate)


def as_native(ops: Any, codes: Any, f: Format) -> Any:
    """The uint8 ``codes`` as an array of the framework's own dtype for ``f`` (which it holds): a view
    where it has a bitcast; TensorFlow has none, and XLA none for types narrower than a byte: there
    through float32 (int32), where every value is exact."""
    if ops.name == "tensorflow" or (ops.name == "jax" and f.bits < 8):
        wide = "float32" if f.is_float else "int32"
        return ops.astype(run(Request("decode", ops, codes, f, "uint8", dtype=wide)), f.name)
    return ops.from_codes(codes, f.name)


def finish_float64(request: Request, codes: Any) -> Any:
    """``codes`` with the float64 values that XLA's and TensorFlow's narrowing flushes (below float32's
    normals) encoded as ml_dtypes does, for float8_e8m0fnu."""
    if request.source == "float64" and request.format.specials == "e8m0" and request.ops.name in ("jax", "tensorflow"):
        return reference.below_float32_normals(request.ops, request.x, codes)
    return codes


def _unwrap(x: Any) -> tuple[Any, Any]:
    """``(native, wrapper class)`` for an arraylayer.Array, ``(x, None)`` otherwise. The class is
    recognised by name, not imported: the api layer reaches this module through the low-precision rule."""
    cls = type(x)
    return (x.native, cls) if cls.__name__ == "Array" and cls.__module__ == "arraylayer.array" else (x, None)


def _wrap(y: Any, wrapped: Any) -> Any:
    """``y`` in the wrapper class that :func:`_unwrap` found (as it is when None)."""
    return wrapped(y) if wrapped else y


def as_format(format: str | Format) -> Format:
    """The :class:`Format` named ``format`` (a Format itself as it is)."""
    return format if type(format) is Format else get_format(format)


def request_for(op: str, x: Any, format: str | Format, *, saturate: bool = False, dtype: str = "float32") -> Request:
    """The engine's request for ``op`` ("encode", "cast" or "decode") of the array ``x`` in ``format``."""
    if op not in OPERATIONS:
        raise InvalidArgumentError(f"op={op!r}: one of {', '.join(OPERATIONS)}.")
    x, _ = _unwrap(x)
    ops = ops_of(x)
    source = ops.dtype_name(x)
    return Request(op, ops, x, as_format(format), source, saturate, dtype=dtype, stored=source in FORMATS)


_REGISTERED: list[Any] = [Reference()]
_loaded = False


def register(implementation: Any) -> None:
    """Add ``implementation`` (an :class:`Implementation`), tried in ``order`` (lower first); one of the
    same name is replaced."""
    _REGISTERED[:] = sorted([i for i in _REGISTERED if i.name != implementation.name] + [implementation],
                            key=lambda i: i.order)


def implementations() -> tuple[Any, ...]:
    """The registered implementations in the order they are tried (the accelerations loaded first)."""
    global _loaded
    if not _loaded:
        for module in ACCELERATIONS:
            import_module(module)
        _loaded = True
    return tuple(_REGISTERED)


def choose(request: Request) -> tuple[Any, list[tuple[str, str]]]:
    """The implementation that serves ``request``, and ``(name, why not)`` of each tried before it."""
    declined = []
    for implementation in implementations():
        why = "" if request.op in implementation.operations else f"does not {request.op}"
        why = why or implementation.declines(request)
        if not why:
            return implementation, declined
        declined.append((implementation.name, why))
    raise AssertionError("the reference takes every request")  # pragma: no cover


def run(request: Request) -> Any:
    """The result of ``request``: the first implementation that takes it and runs."""
    for implementation in _REGISTERED if _loaded else implementations():
        if request.op in implementation.operations and not implementation.declines(request):
            result = implementation.run(request)
            if result is not None:
                return result
    raise AssertionError("the reference takes every request")  # pragma: no cover


def explain(x: Any, format: str | Format, *, op: str = "encode", saturate: bool = False, dtype: str = "float32") -> str:
    """Which implementation would serve ``op`` ("encode", "cast" or "decode") of the native array ``x``
    in ``format``, and why each one tried before it does not: one line each."""
    implementation, declined = choose(request_for(op, x, format, saturate=saturate, dtype=dtype))
    lines = [f"{op} {format if isinstance(format, str) else format.name}: {implementation.name}"]
    lines += [f"  not {name}: {why}" for name, why in declined]
    return "\n".join(lines)
