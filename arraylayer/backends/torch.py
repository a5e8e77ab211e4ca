"""The PyTorch backend. torch is imported by :meth:`TorchBackend.load`, never at module import.

bfloat16 crosses to and from NumPy as raw 16-bit words (torch cannot read or write
ml_dtypes arrays). uint16/uint32/uint64 are valid only where torch can compute with
them, which a probe decides once at load.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Final

from arraylayer.backends.builtin import BuiltinBackend
from arraylayer.runtime.backend import Backend
from arraylayer.runtime.devices import parse_device
from arraylayer.dtypes import Dtype, all_dtypes, as_dtype
from arraylayer.errors import DeviceError
from arraylayer.runtime.layouts import shareable

# The dtypes torch may hold but not compute with, and the wider dtype to use instead.
_PROBED: Final = {"uint16": "int32", "uint32": "int64", "uint64": "int64 (for values below 2**63)"}
# torch device type -> arraylayer device kind.
_KINDS: Final = {"cpu": "cpu", "cuda": "gpu"}


def _computes(torch: Any, native: Any) -> bool:
    """True if add, multiply, a comparison and a sum of ``native`` tensors run on CPU and are right."""
    try:
        one = torch.ones(2, dtype=native)
        two = one + one
        return bool((one * two < two + two).all()) and int(two.sum()) == 4
    except Exception:  # any failure (NotImplementedError, RuntimeError ...) means no kernel
        return False


class _NumpyDtypes(dict):  # type: ignore[type-arg]
    """Dtype -> numpy.dtype, each made when first asked: bfloat16's imports ml_dtypes (~60 ms),
    which a first call on tensors does not need."""

    def __missing__(self, dtype: Any) -> Any:
        made = self[dtype] = as_dtype(dtype).numpy_dtype
        return made


class TorchBackend(BuiltinBackend):
    name: ClassVar[str] = "torch"
    narrows: ClassVar[bool] = True  # uint16/32/64 are invalid where torch lacks kernels

    def __init__(self) -> None:
        super().__init__()
        self._valid: tuple[Dtype, ...] = ()
        self._from_native: dict[Any, Dtype] = {}  # torch.dtype -> Dtype, for dtype_of
        self._numpy_dtypes: dict[Dtype, Any] = {}  # Dtype -> numpy.dtype, for asarray
        self._low_to_torch: dict[Any, Any] = {}
        self._low_to_numpy: dict[Any, Any] = {}
        self._np: Any = None

    def _build_native_dtypes(self, module: Any) -> dict[Dtype, Any]:
        """Every dtype torch has an object for; also runs the probe (see :meth:`valid_dtypes`),
        so that both exist before :meth:`load` publishes the module."""
        import numpy as np

        natives = {d: getattr(module, d.name) for d in all_dtypes if isinstance(getattr(module, d.name, None), module.dtype)}
        self._valid = tuple(d for d in natives if d not in _PROBED or _computes(module, natives[d]))
        # the float8 types it stores; its int1-7/uint1-7 are shells and float4_e2m1fn_x2 packs two values
        natives.update(self._low_precision_natives(lambda name: getattr(module, name)))
        self._from_native = {native: d for d, native in natives.items()}
        self._numpy_dtypes = _NumpyDtypes()
        # float8 numpy.dtype <-> torch.dtype: torch's numpy bridge knows neither, so their bytes move as
        # uint8. Keyed by name (NumPy side) and Dtype: ml_dtypes is imported only when one crosses.
        self._low_to_torch = {d.name: natives[d] for d in natives if d.is_low_precision}
        self._low_to_numpy = {natives[d]: d for d in natives if d.is_low_precision}
        self._np = np
        return natives

    def _kernels_loaded(self) -> None:
        """uint16/uint32 are valid also where the probe fails but every kernel computes them in a
        wider dtype (the kernel package's ``COMPUTES_AS``: int64 on torch 2.13)."""
        self._valid = tuple(d for d in self.native_dtypes if d in self._valid or d in self.computes_as)

    def _array_types(self, module: Any) -> tuple[type, ...]:
        return (module.Tensor,)

    def load(self) -> Backend:
        """Also lets the planning paths know when Dynamo traces them (see ``context.replaying``);
        ``torch.compiler.is_compiling`` is a flag read, which imports nothing. What Dynamo itself
        needs is done by ``first_use`` when ``torch._dynamo`` is imported (by the first
        ``torch.compile``), so an eager first use never pays for importing it."""
        if self.module is None:
            super().load()
            from arraylayer.context import watch_replay

            watch_replay(self.module.compiler.is_compiling)
        return self

    @property
    def native_dtype_class(self) -> type:
        return self.load().module.dtype  # type: ignore[no-any-return]

    # -- dtypes -----------------------------------------------------------------------------
    def valid_dtypes(self) -> tuple[Dtype, ...]:
        """The dtypes torch can hold and compute with here. uint16/uint32/uint64 are probed once
        at load: ``ones + ones``, ``*``, ``<`` and ``.sum()`` on small CPU tensors of that dtype;
        a dtype for which any of these raises (torch has no kernel) or is wrong is invalid."""
        self.load()
        return self._valid

    def remedy(self, dtype: Dtype) -> str:
        if dtype in _PROBED:
            return (
                f"torch {self.version} can store {dtype} tensors but lacks kernels for basic arithmetic on "
                f"them. Use a wider signed dtype, {_PROBED[dtype]}, or another backend (numpy, jax)."
            )
        return super().remedy(dtype)

    def dtype_of(self, x: Any) -> Dtype:
        try:
            return self._from_native[x.dtype]
        except KeyError:
            return as_dtype(x.dtype)  # raises InvalidDtypeError naming the dtype

    # -- arrays -----------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Dtype, device: str | None = None) -> Any:
        dtype = as_dtype(dtype)
        native = self.as_native_dtype(dtype)
        torch, np = self.module, self._np
        target = None if device is None else self.native_device(device)
        if isinstance(obj, torch.Tensor):
            if obj.dtype == native and (target is None or obj.device == target):
                return obj
            return obj.to(device=target, dtype=native)
        if isinstance(obj, (np.ndarray, np.generic)):
            tensor = self._from_numpy(np.asarray(obj).astype(self._numpy_dtypes[dtype], copy=False))
            return tensor if target is None else tensor.to(target)
        from arraylayer.arguments import convertible

        convertible(obj, dtype)
        return torch.as_tensor(obj, dtype=native, device=target)

    def _from_numpy(self, array: Any) -> Any:
        """A CPU tensor of the same dtype, sharing memory unless the array is read-only, has
        negative strides or non-native byte order (torch supports none of them)."""
        array = shareable(array, writeable=True)
        if array.dtype == self._numpy_dtypes["bfloat16"]:
            return self.module.from_numpy(array.view(self._np.uint16)).view(self.module.bfloat16)
        low = self._low_to_torch.get(array.dtype.name)
        if low is not None:
            return self.module.from_numpy(array.view(self._np.uint8)).view(low)
        return self.module.from_numpy(array)

    def astype(self, x: Any, dtype: Dtype) -> Any:
        native = self.as_native_dtype(dtype)
        return x if x.dtype == native else x.to(native)

    def caster(self, dtype: Dtype) -> Callable[[Any], Any]:
        native = self.as_native_dtype(dtype)
        return lambda x: x.to(native)  # a lambda: torch.compile cannot trace operator.methodcaller

    def copy(self, x: Any) -> Any:
        return x.clone()

    def from_dlpack(self, x: Any) -> Any:
        """A tensor over ``x``'s memory; a copy of a NumPy array torch cannot view (negative strides
        abort the process inside torch's DLPack import)."""
        torch, np = self.load().module, self._np
        x = shareable(x, writeable=True)
        if isinstance(x, np.ndarray) and x.dtype == self._numpy_dtypes["bfloat16"]:
            return torch.from_dlpack(x.view(np.uint16)).view(torch.bfloat16)  # DLPack has no ml_dtypes
        return torch.from_dlpack(x)

    def to_numpy(self, x: Any) -> Any:
        torch = self.load().module
        x = x.detach().cpu().resolve_conj().resolve_neg()
        if x.dtype == torch.bfloat16:
            return x.view(torch.uint16).numpy().view(self._numpy_dtypes["bfloat16"])
        low = self._low_to_numpy.get(x.dtype)
        if low is not None:
            return x.view(torch.uint8).numpy().view(self._numpy_dtypes[low])
        return x.numpy()

    # -- devices ----------------------------------------------------------------------------
    def devices(self) -> tuple[str, ...]:
        cuda = self.load().module.cuda
        gpus = cuda.device_count() if cuda.is_available() else 0
        return ("cpu", *(f"gpu:{i}" for i in range(gpus)))

    def device_of(self, x: Any) -> str:
        device = x.device
        kind = _KINDS.get(device.type)
        if kind is None:
            raise DeviceError(f"torch device {device} has no arraylayer name; known here: {', '.join(self.devices())}.")
        return kind if kind == "cpu" else f"{kind}:{device.index or 0}"

    def native_device(self, device: str) -> Any:
        kind, index = parse_device(device)
        name = "cpu" if kind == "cpu" else f"{kind}:{index}"
        available = self.devices()
        if name not in available:
            build = "" if self.module.version.cuda else f" (this torch {self.version} build has no CUDA)"
            raise DeviceError(
                f"Device {device!r} is not available on the torch backend{build}. "
                f"Available devices: {', '.join(available)}."
            )
        return self.module.device("cpu") if kind == "cpu" else self.module.device("cuda", index)

    def to_device(self, x: Any, device: str) -> Any:
        target = self.native_device(device)
        return x if x.device == target else x.to(target)
