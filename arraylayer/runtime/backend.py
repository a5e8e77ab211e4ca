"""The adapter contract: what every backend module implements.

A backend is one subclass of :class:`Backend` in one module. The five built-in ones
live in ``arraylayer/backends/``; a third-party package registers its class under the
entry-point group ``arraylayer.backends`` (``name = "package.module:ClassName"``).
Adding a backend is adding one module (and, outside arraylayer, one entry point).

Frameworks are imported lazily: an adapter's framework is imported the first time
that backend is *used*, never by :func:`backend_of` (which only recognises arrays of
frameworks already imported, since an array cannot exist otherwise).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from arraylayer.dtypes import Dtype, all_dtypes, all_low_precision_dtypes, as_dtype, register_dtype_alias
from arraylayer.errors import BackendNotInstalledError, UnsupportedDtypeError
from arraylayer.lowp.formats import STATUS

__all__ = ["Backend"]


class Backend(ABC):
    """One framework's adapter. Subclasses fill the class attributes and the methods.

    The framework is imported by :meth:`load`, once, the first time the backend is
    used; every method may assume it has been called.
    """

    name: ClassVar[str]
    #: the module that must import for this backend to be installed
    framework: ClassVar[str]
    #: ``pip install "arraylayer[<extra>]"`` installs the framework
    extra: ClassVar[str]
    #: top-level module names whose array types belong to this backend
    type_roots: ClassVar[tuple[str, ...]]
    #: the module holding this backend's kernels (see arraylayer/kernels/__init__.py)
    kernel_module: ClassVar[str]
    #: True when arrays carry a weak-type flag (JAX): two weak inputs make a weak result
    weak_arrays: ClassVar[bool] = False
    #: the attribute of its arrays whose ``dtype`` and ``weak_type`` are the array's (JAX's ``aval``): the
    #: compiled dispatch reads them there, without the array's Python properties ("": none)
    dtype_holder: ClassVar[str] = ""
    #: False when every arraylayer dtype is always valid here (nothing to load to answer)
    narrows: ClassVar[bool] = True
    #: True when arrays are chunked and lazy (dask): creation functions take ``chunks=``
    chunked: ClassVar[bool] = False

    def __init__(self) -> None:
        self.module: Any = None
        self._valid: tuple[Dtype, ...] | None = None  # valid_dtypes(), once loaded
        self._valid_seen: tuple[Dtype, ...] | None = None  # the valid_dtypes() that _valid_set holds
        self._valid_set: frozenset[Dtype] = frozenset()
        #: kernel name -> the framework's implementation (see arraylayer/kernels/__init__.py)
        self.kernels: dict[str, Any] = {}
        #: kernel name -> {version range: dtype names or groups} (see arraylayer/support/declarations.py)
        self.supported: dict[str, dict[str, tuple[str, ...]]] = {}
        self.unsupported: dict[str, dict[str, tuple[str, ...]]] = {}
        #: kernel name -> {version range: stored-only dtypes it computes exactly anyway} (support.computes_stored)
        self.computes_stored: dict[str, dict[str, tuple[str, ...]]] = {}
        #: stored dtype -> the wider dtype every kernel computes it in here (api/widened.py), and its keys
        self.computes_as: dict[Dtype, Dtype] = {}
        self.computed_wide: frozenset[Dtype] = frozenset()
        #: kernel name -> its unsupported dtypes here (filled by arraylayer.support)
        self.unsupported_cache: dict[str, frozenset[Dtype]] = {}
        self.native_dtypes: dict[Dtype, Any] = {}
        #: the native array type(s), known after load()
        self.array_types: tuple[type, ...] = ()
        #: the backend's arraylayer.models.nn kernels (``<kernel_module>.nn``), None where it has none
        self.nn_kernels: Any = None

    # -- life cycle -------------------------------------------------------------------------
    def load(self) -> Backend:
        """Import the framework and build the dtype maps (idempotent)."""
        if self.module is None:
            try:
                module = importlib.import_module(self.framework)
            except ImportError as error:
                raise BackendNotInstalledError(
                    f"The {self.name!r} backend needs {self.framework}, which cannot be imported here "
                    f"({error}). Install it with: pip install \"arraylayer[{self.extra}]\""
                ) from error
            self.native_dtypes = self._build_native_dtypes(module)
            for dtype, native in self.native_dtypes.items():
                register_dtype_alias(native, dtype)
            self.array_types = self._array_types(module)
            kernels = self._load_kernels()
            self.kernels = dict(kernels.KERNELS)
            self.supported = dict(getattr(kernels, "SUPPORTED", {}))
            self.unsupported = dict(getattr(kernels, "UNSUPPORTED", {}))
            self.computes_stored = dict(getattr(kernels, "COMPUTES_STORED", {}))
            self.computes_as = {as_dtype(n): as_dtype(w) for n, w in getattr(kernels, "COMPUTES_AS", {}).items()}
            self.computed_wide = frozenset(self.computes_as)
            self._kernels_loaded()
            self.nn_kernels = self._load_nn_kernels()
            self.module = module
        return self

    def _kernels_loaded(self) -> None:
        """Called by :meth:`load` once the kernel package is read, before the backend is published."""

    def _load_kernels(self) -> Any:
        """The module named by :attr:`kernel_module`, holding ``KERNELS`` (and the
        ``SUPPORTED``/``UNSUPPORTED`` declarations)."""
        return importlib.import_module(self.kernel_module)

    def _load_nn_kernels(self) -> Any:
        """``<kernel_module>.nn`` (convolution, pooling, erf for arraylayer.models.nn), or None."""
        try:
            return importlib.import_module(f"{self.kernel_module}.nn")
        except ModuleNotFoundError:
            return None

    @abstractmethod
    def _build_native_dtypes(self, module: Any) -> dict[Dtype, Any]:
        """Every arraylayer dtype this framework has a dtype object for (called once, by load)."""

    @abstractmethod
    def _array_types(self, module: Any) -> tuple[type, ...]:
        """The framework's array types (instances of these are this backend's arrays)."""

    @property
    def version(self) -> str:
        return str(self.load().module.__version__)

    # -- dtypes -----------------------------------------------------------------------------
    def valid_dtypes(self) -> tuple[Dtype, ...]:
        """The dtypes this backend can hold and compute with, as installed and configured now."""
        self.load()
        if self._valid is None:  # made once: the native dtypes are built once, at load (JAX overrides this)
            self._valid = tuple(d for d in all_dtypes if d in self.native_dtypes)
        return self._valid

    def low_precision_dtypes(self) -> tuple[Dtype, ...]:
        """The low-precision dtypes this backend stores: arrays of them exist, ``astype`` and creation
        work; every other function refuses them (see docs/low_precision.rst)."""
        self.load()
        return tuple(d for d in all_low_precision_dtypes if d in self.native_dtypes)

    def _low_precision_natives(self, native: Callable[[str], Any]) -> dict[Dtype, Any]:
        """``{dtype: native(name)}`` for the low-precision types the framework stores and casts
        (``lowp.formats.STATUS``: "computed" or "stored"); the others are invalid here. A backend the
        table does not know (a third party's) stores none unless it overrides this."""
        status = STATUS.get(self.name, {})
        return {d: native(d.name) for d in all_low_precision_dtypes if status.get(d.name) in ("computed", "stored")}

    def as_native_dtype(self, dtype: Any) -> Any:
        """The framework's dtype object for ``dtype``; UnsupportedDtypeError (naming the remedy)
        when the framework has no such dtype or cannot hold it as configured now."""
        self.load()
        return self.native_dtypes[self.check_valid(as_dtype(dtype))]

    def invalid_dtype_error(self, dtype: Dtype) -> UnsupportedDtypeError:
        """The error for a dtype this backend cannot hold, naming the remedy."""
        return UnsupportedDtypeError(
            f"{dtype} is not a valid dtype on the {self.name} backend ({self.framework} {self.version}). "
            f"{self.remedy(dtype)} Valid dtypes here: {', '.join(map(str, self.valid_dtypes()))}."
        )

    def remedy(self, dtype: Dtype) -> str:
        """What a user can do about an invalid ``dtype`` (adapters refine it)."""
        if dtype.is_low_precision and dtype in self.native_dtypes:
            wider = "float32" if dtype.is_floating else "int32"
            return (f"{self.name} stores {dtype}, but arraylayer computes only astype and creation with the "
                    f"low-precision dtypes for now: cast with arraylayer.astype(x, {wider!r}) first.")
        if dtype.is_low_precision:
            holders = [b for b, status in STATUS.items() if status[dtype.name] in ("computed", "stored")]
            wider = "float32" if dtype.is_floating else "int8"
            return (f"{self.framework} cannot store {dtype} here (it has no such dtype, or no cast into it). "
                    f"Use a backend that stores it ({', '.join(holders)}), or {wider} on this one.")
        return "Cast to a valid dtype first, or use another backend."

    def check_valid(self, dtype: Dtype) -> Dtype:
        """``dtype`` if this backend can hold it now, else the error naming the remedy."""
        # a low-precision dtype is held where the framework stores it; any other where it is valid
        # now (JAX's x64 can change). Set look-ups: astype into and out of float8 asks this per call.
        if dtype.is_low_precision:
            held = dtype in self.load().native_dtypes
        else:
            valid = self.valid_dtypes()
            if valid is not self._valid_seen:  # a tuple made once per configuration
                self._valid_seen, self._valid_set = valid, frozenset(valid)
            held = dtype in self._valid_set
        if not held:
            raise self.invalid_dtype_error(dtype)
        return dtype

    def dtype_of(self, x: Any) -> Dtype:
        """The arraylayer dtype of a native array of this backend."""
        return as_dtype(x.dtype)

    @property
    @abstractmethod
    def native_dtype_class(self) -> type:
        """The framework's dtype class (``numpy.dtype``, ``torch.dtype``, ...)."""

    # -- arrays -----------------------------------------------------------------------------
    @abstractmethod
    def asarray(self, obj: Any, dtype: Dtype, device: str | None = None) -> Any:
        """A strongly typed native array of ``dtype`` holding ``obj`` (a Python scalar, nested
        sequence, NumPy array or native array of this backend), on ``device`` (an arraylayer
        device string; None: the framework's default). Never copies an array that already has
        the right dtype and device. A dtype the backend cannot hold raises UnsupportedDtypeError
        (through :meth:`as_native_dtype`, the one place that checks validity)."""

    @abstractmethod
    def astype(self, x: Any, dtype: Dtype) -> Any:
        """``x`` cast to ``dtype``; ``x`` itself when it already has that dtype."""

    def caster(self, dtype: Dtype) -> Callable[[Any], Any]:
        """One callable that casts this backend's arrays of another dtype to ``dtype``, for cached
        plans: the framework's own cast, without :meth:`astype`'s per-call dtype checks."""
        return lambda x: self.astype(x, dtype)

    @abstractmethod
    def copy(self, x: Any) -> Any:
        """A new array equal to ``x`` that shares no memory with it."""

    @abstractmethod
    def from_dlpack(self, x: Any) -> Any:
        """A native array sharing memory with ``x`` (any DLPack producer)."""

    @abstractmethod
    def to_numpy(self, x: Any) -> Any:
        """A NumPy array with the same values and dtype (bfloat16 through ml_dtypes)."""

    # -- devices ----------------------------------------------------------------------------
    @abstractmethod
    def devices(self) -> tuple[str, ...]:
        """The devices of this backend, in arraylayer's vocabulary (``"cpu"``, ``"gpu:0"`` ...)."""

    @abstractmethod
    def device_of(self, x: Any) -> str:
        """The device of array ``x``, in arraylayer's vocabulary."""

    @abstractmethod
    def native_device(self, device: str) -> Any:
        """The framework's device object for an arraylayer device string; raises DeviceError
        naming the available devices when it does not exist here."""

    @abstractmethod
    def to_device(self, x: Any, device: str) -> Any:
        """``x`` on ``device`` (``x`` itself when it is already there)."""

    def placement_like(self, x: Any) -> Any:
        """The framework's placement for a new array made like ``x`` (``zeros_like`` ...): the
        native device of ``x``; adapters whose arrays can span devices return that layout (JAX:
        the sharding)."""
        return self.native_device(self.device_of(x))

    def __repr__(self) -> str:
        return f"<arraylayer backend {self.name!r}>"

