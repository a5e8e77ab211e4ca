"""The NumPy backend (bfloat16 through ml_dtypes). Always installed; CPU only."""

from __future__ import annotations

from typing import Any, ClassVar

from arraylayer.backends.builtin import AstypeCasts, BuiltinBackend
from arraylayer.runtime.devices import canonical_device
from arraylayer.dtypes import Dtype, all_dtypes
from arraylayer.errors import DeviceError
from arraylayer.runtime.layouts import shareable


class NumpyBackend(AstypeCasts, BuiltinBackend):
    name: ClassVar[str] = "numpy"
    extra: ClassVar[str] = "all"
    narrows: ClassVar[bool] = False  # every arraylayer dtype is valid here

    def _build_native_dtypes(self, module: Any) -> dict[Dtype, Any]:
        import ml_dtypes
        import numpy as np  # not ``module``: the dask backend shares these dtypes

        natives = {d: np.dtype(ml_dtypes.bfloat16 if d == "bfloat16" else str(d)) for d in all_dtypes}
        return {**natives, **self._low_precision_natives(lambda name: np.dtype(getattr(ml_dtypes, name)))}

    def _array_types(self, module: Any) -> tuple[type, ...]:
        return (module.ndarray, module.generic)

    def valid_dtypes(self) -> tuple[Dtype, ...]:
        """Every arraylayer dtype (NumPy with ml_dtypes holds them all)."""
        return all_dtypes

    def check_valid(self, dtype: Dtype) -> Dtype:
        return dtype

    @property
    def native_dtype_class(self) -> type:
        return self.load().module.dtype  # type: ignore[no-any-return]

    def asarray(self, obj: Any, dtype: Dtype, device: str | None = None) -> Any:
        if device is not None:
            self.native_device(device)
        import numpy as np

        native = self.as_native_dtype(dtype)
        if isinstance(obj, np.ndarray):
            return obj if obj.dtype == native else obj.astype(native)
        from arraylayer.arguments import convertible

        convertible(obj, dtype)
        return np.asarray(obj, dtype=native)

    def copy(self, x: Any) -> Any:
        return self.load().module.array(x, copy=True)

    def from_dlpack(self, x: Any) -> Any:
        return self.load().module.from_dlpack(shareable(x))  # DLPack has no byte order

    def to_numpy(self, x: Any) -> Any:
        return self.load().module.asarray(x)

    def devices(self) -> tuple[str, ...]:
        return ("cpu",)

    def device_of(self, x: Any) -> str:
        return "cpu"

    def native_device(self, device: str) -> Any:
        if canonical_device(device) != "cpu":
            raise DeviceError(f"NumPy arrays live on the CPU only; {device!r} is not available. Use 'cpu'.")
        return "cpu"

    def to_device(self, x: Any, device: str) -> Any:
        self.native_device(device)
        return x
