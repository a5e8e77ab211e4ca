"""Dtype objects as NumPy-minded code sees them: ``isinstance(d, numpy.dtype)`` is true once NumPy
is imported (xarray's ``maybe_promote`` and pandas-style checks ask it), while ``type(d)`` stays
:class:`arraylayer.Dtype`, which keeps its equality, hash and promotion rules. C code checks the
real type and converts a Dtype through its ``__numpy_dtype__``, so nothing reads it as NumPy's struct.

NumPy refuses subclasses of its dtype ("Cannot subclass DType"), so the presentation is Python's
own: ``isinstance`` falls back to ``d.__class__`` when the real type does not match. Imports no NumPy.
"""

from __future__ import annotations

import sys
from typing import Any, Final

__all__ = ["AsNumpyDtype", "NUMPY_DTYPE_ATTRIBUTES"]


class AsNumpyDtype:
    """``Dtype.__class__`` on a Dtype: ``numpy.dtype`` once NumPy is imported, Dtype before. On the
    class itself, its real type (torch.compile's Dynamo stops constant-folding ``Dtype(...)`` when the
    class claims to be NumPy's). Only failed ``isinstance`` checks of a Dtype read it (measured: no
    cost on the per-call paths)."""

    def __get__(self, instance: Any, owner: Any = None) -> type:
        if instance is None:
            return type(owner)
        numpy_dtype = getattr(sys.modules.get("numpy"), "dtype", None)
        return numpy_dtype if isinstance(numpy_dtype, type) else type(instance)  # (NumPy half imported: not yet)


# np.dtype's attributes that a Dtype lacks (its kind, itemsize, char, name are its own): read from the
# numpy.dtype it converts to, for code that took it for one (see AsNumpyDtype).
NUMPY_DTYPE_ATTRIBUTES: Final = frozenset((
    "alignment", "base", "byteorder", "descr", "fields", "flags", "hasobject", "isalignedstruct", "isbuiltin",
    "isnative", "metadata", "names", "ndim", "newbyteorder", "num", "shape", "str", "subdtype", "type"))
