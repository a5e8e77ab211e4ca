"""``__array_namespace_info__``: what the active (or a given) backend offers, as the Array API asks."""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes.defaults import default_complex_dtype, default_float_dtype
from arraylayer.runtime.devices import canonical_device, default_device
from arraylayer.dtypes import Dtype
from arraylayer.runtime.registry import get_backend
from arraylayer.api.data_types import isdtype
from arraylayer.api.dispatch import index_dtype

__all__ = ["Info", "__array_namespace_info__"]

# Backends whose compiled mode cannot give data-dependent shapes (nonzero, unique, boolean masks).
_STATIC_SHAPES: Final = frozenset({"jax"})


class Info:
    """The inspection object returned by :func:`__array_namespace_info__` for one backend."""

    def __init__(self, backend: str | None = None) -> None:
        self._name = backend

    @property
    def _backend(self) -> Any:
        return get_backend(self._name).load()

    def capabilities(self) -> dict[str, Any]:
        """Whether boolean indexing and data-dependent shapes work, and the maximum rank."""
        dynamic = self._backend.name not in _STATIC_SHAPES
        return {"boolean indexing": dynamic, "data-dependent shapes": dynamic,
                "max dimensions": 64 if self._backend.name == "numpy" else None}

    def default_device(self) -> str:
        """The device creation functions use when none is given."""
        chosen = default_device()
        return chosen if chosen is not None else self._backend.devices()[0]

    def devices(self) -> tuple[str, ...]:
        """The devices of the backend, in arraylayer's vocabulary (a tuple since 2025.12)."""
        return tuple(self._backend.devices())

    def default_dtypes(self, *, device: str | None = None) -> dict[str, Dtype]:
        """The default dtypes: real floating, complex floating, integral and indexing."""
        self._check_device(device)
        return {"real floating": default_float_dtype(), "complex floating": default_complex_dtype(),
                "integral": index_dtype(), "indexing": index_dtype()}

    def dtypes(self, *, device: str | None = None, kind: str | tuple[str, ...] | None = None) -> dict[str, Dtype]:
        """The valid dtypes of the backend (of one kind or kinds), by name."""
        self._check_device(device)
        valid = self._backend.valid_dtypes()
        return {str(d): d for d in valid if kind is None or isdtype(d, kind)}

    def _check_device(self, device: str | None) -> None:
        if device is not None and canonical_device(device) not in self._backend.devices():
            self._backend.native_device(device)  # raises DeviceError naming what exists

    def __repr__(self) -> str:
        return f"<arraylayer namespace info for {self._backend.name!r}>"


def __array_namespace_info__() -> Info:  # noqa: N807 - the Array API's name
    """The Array API inspection object for the backend active here."""
    from arraylayer.runtime.registry import current_backend

    return Info(current_backend())
