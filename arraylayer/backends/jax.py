"""The JAX backend. The 64-bit dtypes are valid only while ``jax_enable_x64`` is on.

JAX silently narrows a requested 64-bit dtype to 32 bits when x64 is off; this adapter
refuses instead, naming the remedy. The flag is read on every check (it can change at
run time, and ``with jax.enable_x64(True):`` scopes it), and never changed here.

Opt-in: with :func:`arraylayer.set_narrow_64bit` (or ``use_narrow_64bit()``) on, a request
for a 64-bit dtype while x64 is off is served with the 32-bit dtype of the same kind, and a
warning says so once per process (for clients such as scikit-learn that ask for float64).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar, Final

from arraylayer.backends.builtin import AstypeCasts, BuiltinBackend
from arraylayer.context import narrow_64bit
from arraylayer.runtime.devices import DEVICE_KINDS, canonical_device
from arraylayer.dtypes import Dtype, all_dtypes, as_dtype
from arraylayer.errors import DeviceError
from arraylayer.runtime.layouts import C_OR_F, shareable

_X64_ONLY: Final = frozenset(("int64", "uint64", "float64", "complex128"))
#: the dtype a 64-bit request is narrowed to under narrow_64bit (same kind, 32 bits)
NARROWED: Final = {Dtype("int64"): Dtype("int32"), Dtype("uint64"): Dtype("uint32"),
                   Dtype("float64"): Dtype("float32"), Dtype("complex128"): Dtype("complex64")}
_VALID_X64: Final = all_dtypes
_VALID_X32: Final = tuple(d for d in all_dtypes if d not in _X64_ONLY)


class JaxBackend(AstypeCasts, BuiltinBackend):
    name: ClassVar[str] = "jax"
    weak_arrays: ClassVar[bool] = True
    dtype_holder: ClassVar[str] = "aval"  # ArrayImpl's and the tracers' dtype/weak_type: self.aval's
    type_roots: ClassVar[tuple[str, ...]] = ("jax", "jaxlib")
    narrows: ClassVar[bool] = True  # the 64-bit dtypes depend on jax_enable_x64
    #: the dtypes whose validity changes at run time (with jax_enable_x64)
    runtime_dtypes: ClassVar[frozenset[str]] = _X64_ONLY
    _warned_narrowing: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        # arraylayer device string <-> jax.Device, built on first use (it starts JAX's runtimes)
        self._by_name: dict[str, Any] | None = None
        self._by_device: dict[Any, str] = {}

    def _build_native_dtypes(self, module: Any) -> dict[Dtype, Any]:
        import jax.numpy as jnp

        # float6: XLA on the CPU refuses the type ("Invalid XLA PrimitiveType"), so it is invalid here
        return {**{d: jnp.dtype(str(d)) for d in all_dtypes}, **self._low_precision_natives(jnp.dtype)}

    def _array_types(self, module: Any) -> tuple[type, ...]:
        import jax.core

        # Tracers (inside jit/grad) are jax.Array instances only through __instancecheck__, not
        # subclasses, so the type-keyed lookup of backend_of needs their base class too.
        return (module.Array, jax.core.Tracer)

    # -- dtypes -----------------------------------------------------------------------------
    def _x64(self) -> bool:
        return bool(self.load().module.config.jax_enable_x64)

    def valid_dtypes(self) -> tuple[Dtype, ...]:
        return _VALID_X64 if self._x64() else _VALID_X32

    def check_valid(self, dtype: Dtype) -> Dtype:
        """``dtype``; while x64 is off, a 64-bit dtype raises the error naming the remedy, or,
        under ``narrow_64bit``, becomes its 32-bit counterpart (warning once)."""
        if dtype in _X64_ONLY and not self._x64():
            if not narrow_64bit():
                raise self.invalid_dtype_error(dtype)
            return self.narrowed(dtype)
        return super().check_valid(dtype)

    def narrowed(self, dtype: Dtype) -> Dtype:
        """The 32-bit dtype served for a 64-bit request under ``narrow_64bit`` (warns once)."""
        if not JaxBackend._warned_narrowing:
            JaxBackend._warned_narrowing = True
            warnings.warn(
                f"arraylayer.narrow_64bit is on and JAX runs without jax_enable_x64: a request for {dtype} is "
                f"served as {NARROWED[dtype]} (and likewise int64 -> int32, uint64 -> uint32, complex128 -> "
                "complex64). Results are computed in 32 bits. Turn on jax_enable_x64 for 64-bit results.",
                UserWarning, stacklevel=4,
            )
        return NARROWED[dtype]

    def remedy(self, dtype: Dtype) -> str:
        if dtype in _X64_ONLY:
            return (
                f"JAX holds {dtype} only with 64-bit mode on: call "
                'jax.config.update("jax_enable_x64", True) at startup, set the environment variable '
                "JAX_ENABLE_X64=1, or scope it with `with jax.enable_x64(True):`; or let arraylayer serve "
                "64-bit requests in 32 bits with arraylayer.set_narrow_64bit(True)."
            )
        return super().remedy(dtype)

    @property
    def native_dtype_class(self) -> type:
        import numpy as np

        return np.dtype

    # -- arrays -----------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Dtype, device: str | None = None) -> Any:
        native = self.as_native_dtype(dtype)
        target = None if device is None else self.native_device(device)
        jax = self.module
        if isinstance(obj, jax.Array) and obj.dtype == native and not obj.weak_type:
            if device is None or self._is_on(obj, device):
                return obj
        import jax.numpy as jnp

        if isinstance(obj, jax.Array):
            if target is not None and not self._is_on(obj, device):
                # a committed array (one that DLPack brought from NumPy is on the CPU) moves by
                # device_put; jnp.asarray(device=) refuses to take it to another platform
                obj = jax.device_put(obj, target)
            return jnp.asarray(obj, dtype=native)
        from arraylayer.arguments import convertible

        convertible(obj, dtype)
        return jnp.asarray(obj, dtype=native, device=target)

    def copy(self, x: Any) -> Any:
        import jax.numpy as jnp

        return jnp.array(x, copy=True)

    def from_dlpack(self, x: Any) -> Any:
        """A JAX array over ``x``'s memory where JAX can view it; a copy of a NumPy array in
        another order than C or Fortran, read-only, or of non-native byte order. A 64-bit ``x``
        without ``jax_enable_x64`` is an error (JAX would narrow it silently)."""
        import jax.numpy as jnp

        self._check_width(x)
        return jnp.from_dlpack(shareable(x, C_OR_F, writeable=True))

    def _check_width(self, x: Any) -> None:
        try:
            dtype = as_dtype(x.dtype)
        except Exception:  # noqa: BLE001 - no dtype, or one beyond arraylayer's (float8): JAX judges it
            return
        self.check_valid(dtype)

    def to_numpy(self, x: Any) -> Any:
        import numpy as np

        return np.asarray(x)

    # -- devices ----------------------------------------------------------------------------
    def _device_table(self) -> dict[str, Any]:
        if self._by_name is None:
            jax = self.load().module
            by_name: dict[str, Any] = {}
            for kind in DEVICE_KINDS:
                try:
                    found = jax.local_devices(backend=kind)
                except RuntimeError:  # no such platform here
                    continue
                for index, device in enumerate(found):
                    name = "cpu" if kind == "cpu" else f"{kind}:{index}"  # every CPU device is "cpu"
                    by_name.setdefault(name, device)
                    self._by_device[device] = name
            self._by_name = by_name
        return self._by_name

    def devices(self) -> tuple[str, ...]:
        return tuple(self._device_table())

    def device_of(self, x: Any) -> str:
        """The device of ``x``. A tracer (inside ``jax.grad``/``jit``/``vmap``) reports the device of
        its concrete value when it has one (``jax.grad`` run eagerly), else JAX's default device,
        where the traced computation runs unless placed otherwise."""
        self._device_table()
        if isinstance(x, self.module.core.Tracer):
            concrete = x.to_concrete_value()
            return self._default_device() if concrete is None else self.device_of(concrete)
        placed = x.devices()
        if len(placed) == 1:
            return self._name_of(next(iter(placed)))
        names = {self._name_of(device) for device in placed}
        if len(names) != 1:
            raise DeviceError(
                f"This JAX array is sharded over {len(placed)} devices ({', '.join(sorted(names))}), which have no "
                "one arraylayer name; x.sharding describes its layout. Gather it onto one device first "
                "(jax.device_put(x, device)) where one device is needed."
            )
        return names.pop()  # sharded over the CPU devices, all of which are "cpu"

    def placement_like(self, x: Any) -> Any:
        """``x``'s sharding (its one device, or its layout over several), so that ``zeros_like`` and
        the like keep it; None inside a trace, where JAX places the result."""
        if isinstance(x, self.module.core.Tracer):
            return None
        return x.sharding

    def _name_of(self, device: Any) -> str:
        try:
            return self._by_device[device]
        except KeyError:
            raise DeviceError(
                f"JAX device {device} (platform {device.platform!r}) has no arraylayer name; "
                f"arraylayer names: {', '.join(self.devices())}."
            ) from None

    def _default_device(self) -> str:
        """JAX's default device: ``jax_default_device`` (a device or a platform name) when set,
        else the first device of the default platform this process holds (in a jax.distributed
        world, ``jax.devices()`` lists every process's devices, the others' first)."""
        jax = self.module
        chosen = jax.config.jax_default_device
        if chosen is None or isinstance(chosen, str):
            chosen = jax.local_devices(backend=chosen)[0]
        return self._name_of(chosen)

    def native_device(self, device: str) -> Any:
        table = self._device_table()
        try:
            return table[canonical_device(device)]
        except KeyError:
            raise DeviceError(
                f"Device {device!r} is not available to JAX {self.version} here. "
                f"Available devices: {', '.join(table) or 'none'}."
            ) from None

    def _is_on(self, x: Any, device: str) -> bool:
        """True if ``x`` is a concrete array already on ``device`` (False for tracers: a
        ``device_put`` in the trace places them)."""
        return not isinstance(x, self.module.core.Tracer) and self.device_of(x) == canonical_device(device)

    def to_device(self, x: Any, device: str) -> Any:
        target = self.native_device(device)
        return x if self._is_on(x, device) else self.module.device_put(x, target)
