"""The dtypes and the inspection object of an Array namespace (``arraylayer.xp.arrays.<backend>``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arraylayer.api.info import Info
from arraylayer.context import narrow_64bit
from arraylayer.dtypes import Dtype

__all__ = ["ArrayInfo", "EXTENSION_DTYPES", "namespace_dtypes", "runtime_dtype_getter"]


def namespace_dtypes(backend: Any) -> dict[str, Dtype]:
    """The namespace's fixed dtype attributes: the arraylayer dtypes ``backend`` can hold, by
    name (the very objects ``Array.dtype`` returns), less those whose validity changes at run
    time (``backend.runtime_dtypes``: JAX's 64-bit dtypes), which :func:`runtime_dtype_getter`
    answers on each access."""
    runtime = getattr(backend, "runtime_dtypes", ())
    return {str(d): d for d in backend.valid_dtypes() if d not in runtime}


def runtime_dtype_getter(backend: Any, module: str) -> Callable[[str], Dtype]:
    """The module ``__getattr__`` of a namespace whose backend holds some dtypes only as
    configured (JAX: the 64-bit ones with jax_enable_x64). Such a dtype is there while the
    backend holds it; otherwise, under :func:`arraylayer.narrow_64bit`, the name gives the
    32-bit dtype it is narrowed to (``xp.float64 is xp.float32``); otherwise it is absent."""
    runtime = backend.runtime_dtypes

    def __getattr__(name: str) -> Dtype:  # noqa: N807 - the module protocol's name
        if name in runtime:
            dtype = Dtype(name)
            if dtype in backend.valid_dtypes():
                return dtype
            if narrow_64bit():
                return backend.narrowed(dtype)  # type: ignore[no-any-return]
            raise AttributeError(
                f"{module}.{name} is absent: the {backend.name} backend cannot hold {name} as configured now. "
                f"{backend.remedy(dtype)}"
            )
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__


#: arraylayer's dtypes beyond the standard's: attributes of the namespace where the backend holds
#: them, but not listed by ``dtypes()``, whose names the standard fixes
EXTENSION_DTYPES: Final = frozenset({"bfloat16", "float16"})


class ArrayInfo(Info):
    """``__array_namespace_info__()`` of an Array namespace: the truth about one backend, with the
    namespace's own dtype objects; ``device=`` takes arraylayer device strings, the framework's
    own device objects and whatever ``x.device`` returns. ``dtypes()`` lists the standard's
    dtypes the backend holds (``bfloat16`` and ``float16``, extensions, are attributes only)."""

    def dtypes(self, *, device: Any = None, kind: str | tuple[str, ...] | None = None) -> dict[str, Dtype]:
        return {name: d for name, d in super().dtypes(device=device, kind=kind).items()
                if name not in EXTENSION_DTYPES}

    def __repr__(self) -> str:
        return f"<arraylayer Array namespace info for {self._name!r}>"
