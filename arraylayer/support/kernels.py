"""What a backend's kernels support at the installed version: its declarations (see
:mod:`~arraylayer.support.declarations`) and one rule on top of them.

Every kernel but ``astype`` is unsupported for the dtypes a backend stores but cannot
compute with (:func:`stored_only_dtypes`: torch's uint16/uint32/uint64), so the api layer
refuses them with UnsupportedDtypeError like any undeclared kernel, except where the kernel
package declares an exact route for them (``COMPUTES_STORED``, :func:`computes_stored`:
torch's sum/prod/cumulative_sum/cumulative_prod accumulate them in int64).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from arraylayer.context import reads_tables, replaying
from arraylayer.dtypes import Dtype
from arraylayer.support.declarations import covering_range, declared_entry, declared_unsupported

if TYPE_CHECKING:
    from arraylayer.runtime.backend import Backend

__all__ = ["kernel_unsupported_dtypes", "computes_stored", "stored_only_dtypes", "declaration_status"]


def kernel_unsupported_dtypes(backend: Backend, name: str) -> frozenset[Dtype]:
    """The dtypes for which ``backend``'s kernel ``name`` has no implementation at the installed
    version: the declared ones and, for every kernel but ``astype``, the dtypes the backend stores
    but cannot compute with (:func:`stored_only_dtypes`; one rule for every function, see
    docs/errors.rst), less those its backend computes exactly anyway (:func:`computes_stored`). The api layer refuses these before the framework is called. Cached per backend."""
    if replaying():  # under Dynamo a cache read is a guard, a cache write a recompile: compute it
        found = _traced_unsupported(backend, name)
        return _unsupported(backend, name) if found is None else found
    cache = backend.unsupported_cache
    found = cache.get(name)
    if found is None:
        backend.load()
        found = cache[name] = _unsupported(backend, name)
    return found


@reads_tables
def _traced_unsupported(backend: Backend, name: str) -> frozenset[Dtype] | None:
    """:func:`_unsupported`, read by Dynamo as a constant; None where it would raise or warn (a
    declaration that does not cover the installed version). It asks the declarations instead of
    turning warnings into errors: the Dynamo of torch 2.11 cannot trace a change of the warnings
    filters, and broke a compiled training step's graph at every kernel on it (seen on a GPU)."""
    version = backend.version
    for declarations in (backend.supported, backend.unsupported, backend.computes_stored):
        ranges = declarations.get(name)
        if ranges is not None and covering_range(ranges, version) is None:
            return None
    try:
        return _unsupported(backend, name)
    except Exception:  # noqa: BLE001 - the traced call of _unsupported reports it
        return None


def _unsupported(backend: Backend, name: str) -> frozenset[Dtype]:
    declared = declared_unsupported(name, backend.supported, backend.unsupported, backend.version, backend.name)
    if name in _ANY_STORED_DTYPE:
        return declared
    return declared | (stored_only_dtypes(backend) - computes_stored(backend, name))


def computes_stored(backend: Backend, name: str) -> frozenset[Dtype]:
    """The stored-only dtypes kernel ``name`` computes with anyway, by an exact route its kernel
    package declares in ``COMPUTES_STORED`` (torch's sum/prod/cumulative_*: in int64, cast back)."""
    declared = backend.computes_stored  # read at load(), so nothing is imported while Dynamo traces
    if name not in declared:
        return frozenset()
    return declared_entry(declared[name], backend.version, f"{backend.name} kernel {name!r}") or frozenset()


#: Backends whose valid dtypes follow a setting read per call (JAX: ``jax_enable_x64``); their
#: ``check_valid`` decides, so their stored-only dtypes are not cached here.
_CONFIGURED_VALIDITY: Final = frozenset({"jax"})
#: Kernels that run on every dtype a backend stores, computable or not: ``astype`` is the way out.
_ANY_STORED_DTYPE: Final = frozenset({"astype"})


def stored_only_dtypes(backend: Backend) -> frozenset[Dtype]:
    """The dtypes ``backend`` stores (arrays of them exist) but cannot compute with: torch's
    uint64 (its uint16/uint32 are computed in int64: kernels/torch COMPUTES_AS), TensorFlow's dtypes without CPU kernels (see ``valid_dtypes``)."""
    backend.load()
    if backend.name in _CONFIGURED_VALIDITY:  # its stored low-precision types are not configured
        return frozenset(backend.low_precision_dtypes())
    return frozenset(backend.native_dtypes) - frozenset(backend.valid_dtypes())


def declaration_status(backend: Backend, name: str) -> tuple[str, str | None]:
    """How ``backend`` declares kernel ``name`` at the installed version: ``("undeclared", None)``,
    ``("covered", range)`` or ``("unverified", None)`` (declared, but for other versions only)."""
    backend.load()
    ranges = backend.supported.get(name) or backend.unsupported.get(name)
    if not ranges:
        return ("undeclared", None)
    spec = covering_range(ranges, backend.version)
    return ("unverified", None) if spec is None else ("covered", spec)
