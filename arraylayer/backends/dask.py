"""The dask backend: ``dask.array`` arrays, chunked and lazy, on one machine or a cluster.

Chunks are NumPy arrays (bfloat16 through ml_dtypes), so the dtypes, the values and the
native dtype objects are NumPy's; every arraylayer dtype is valid. The adapter never
computes: creating, casting and moving arrays build graph nodes, and only :meth:`to_numpy`
(used by ``to_backend`` on the way out) and the user's own ``.compute()`` run the graph.

Chunks: creation functions and ``to_backend(x, "dask", chunks=...)`` take dask's ``chunks``
(an int, a tuple, a dict per axis or ``"auto"``, dask's default of about 128 MiB per chunk).
"""

from __future__ import annotations

from typing import Any, ClassVar

from arraylayer.runtime.devices import canonical_device
from arraylayer.dtypes import Dtype
from arraylayer.errors import DeviceError
from arraylayer.runtime.layouts import shareable
from arraylayer.backends.numpy import NumpyBackend

#: dask's own default: chunks of about ``array.chunk-size`` (128 MiB), shaped by dask
DEFAULT_CHUNKS = "auto"


class DaskBackend(NumpyBackend):
    """NumPy's dtypes, casts and device (its chunks are NumPy arrays), over ``dask.array``."""

    name: ClassVar[str] = "dask"
    framework: ClassVar[str] = "dask.array"
    chunked: ClassVar[bool] = True

    def _array_types(self, module: Any) -> tuple[type, ...]:
        return (module.Array,)

    @property
    def version(self) -> str:
        import dask

        return str(dask.__version__)

    @property
    def native_dtype_class(self) -> type:
        import numpy as np

        return np.dtype

    # -- arrays -----------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Dtype, device: str | None = None, chunks: Any = DEFAULT_CHUNKS) -> Any:
        """A dask array of ``dtype``; a dask array is cast lazily (and rechunked only when
        ``chunks`` is given), anything else is converted through NumPy and chunked."""
        if device is not None:
            self.native_device(device)
        da = self.load().module
        if isinstance(obj, da.Array):
            x = self.astype(obj, dtype)
            return x if chunks is DEFAULT_CHUNKS else x.rechunk(chunks)
        values = super().asarray(obj, dtype)
        if values.size == 0 and chunks is DEFAULT_CHUNKS:  # dask's "auto" divides by zero on some empty shapes
            chunks = -1
        return da.from_array(values, chunks=chunks)

    def copy(self, x: Any) -> Any:
        """A new array object over ``x``'s graph: the standard's ``copy=True`` asks for a new array,
        and since a dask array is immutable (assignment builds a new graph) sharing the graph is
        a copy that adds no task (a real one would add one per chunk)."""
        import dask.array as da

        return da.Array(x.dask, x.name, x.chunks, meta=x._meta)

    def from_dlpack(self, x: Any) -> Any:
        """A dask array over the producer's memory (one chunk, shared); a dask array itself as is
        (it has no memory to share until computed)."""
        import numpy as np

        da = self.load().module
        return x if isinstance(x, da.Array) else da.from_array(np.from_dlpack(shareable(x)), chunks=-1)

    def to_numpy(self, x: Any) -> Any:
        """The computed values, as one NumPy array (this runs the graph)."""
        import numpy as np

        return np.asarray(x.compute())

    def native_device(self, device: str) -> Any:
        if canonical_device(device) != "cpu":
            raise DeviceError(
                f"dask arrays of NumPy chunks live in CPU memory (of this machine or of the cluster's "
                f"workers); {device!r} is not available. Use 'cpu'."
            )
        return "cpu"
