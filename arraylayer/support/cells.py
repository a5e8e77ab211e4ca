"""A support cell (:class:`Cell`) and the backend a query is about (:func:`resolve_backend`): what the
queries of the standard's dtypes (:mod:`.queries`) and of the low-precision ones (:mod:`.lowp`) share."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from arraylayer.runtime.backend import Backend

__all__ = ["Cell", "resolve_backend"]


class Cell(NamedTuple):
    """The support of one function for one input dtype on one backend.

    ``status``: ``"supported"``, ``"unverified"`` (supported as far as arraylayer knows, but
    the installed version is outside a declaration's ranges), ``"invalid"`` (the backend
    cannot hold the dtype as configured), ``"undefined"`` (the Array API does not define the
    function for the kind), ``"unsupported"`` (a kernel has no implementation) or
    ``"missing"`` (the backend provides no such kernel). ``why``: one sentence.
    """

    status: str
    why: str = ""

    @property
    def supported(self) -> bool:
        return self.status in ("supported", "unverified")


def resolve_backend(backend: Any) -> Backend:
    """``backend`` (a name, a Backend, or None for the active one) as a loaded Backend."""
    from arraylayer.runtime.backend import Backend
    from arraylayer.runtime.registry import get_backend

    if isinstance(backend, Backend):
        return backend.load()
    return get_backend(backend)
