"""The dtypes and the inspection object of an Array namespace (``arraylayer.xp.arrays.<backend>``)."""

from __future__ import annotations

from typing import Any

from ...api.info import Info
from ...dtypes import Dtype

__all__ = ["ArrayInfo", "namespace_dtypes"]


def namespace_dtypes(backend: Any) -> dict[str, Dtype]:
    """The namespace's dtype attributes: the arraylayer dtypes ``backend`` can hold now, by name
    (the very objects ``Array.dtype`` returns)."""
    return {str(d): d for d in backend.valid_dtypes()}


class ArrayInfo(Info):
    """``__array_namespace_info__()`` of an Array namespace: the truth about one backend, with the
    namespace's own dtype objects; ``device=`` takes arraylayer device strings, the framework's
    own device objects and whatever ``x.device`` returns."""

    def __repr__(self) -> str:
        return f"<arraylayer Array namespace info for {self._name!r}>"
