"""The TensorFlow backend: ``tf.Tensor`` (eager and symbolic) and ``tf.Variable``.

Importing this module does not import TensorFlow; :meth:`TensorflowBackend.load` does.
Loading only builds dtype tables: nothing runs on TensorFlow's runtime until an array
is made or :meth:`~TensorflowBackend.valid_dtypes` / :meth:`~TensorflowBackend.devices`
is first asked, because the runtime's first use freezes ``tf.config`` (visible
devices, memory growth, virtual CPUs) for the rest of the process.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable
from typing import Any, ClassVar, Final

from arraylayer.backends.builtin import BuiltinBackend
from arraylayer.runtime.backend import Backend
from arraylayer.runtime.devices import canonical_device
from arraylayer.dtypes import Dtype, all_dtypes, as_dtype
from arraylayer.errors import DeviceError
from arraylayer.runtime.layouts import C, shareable

# TensorFlow's own device types -> arraylayer's device kinds (others are not arrays' homes).
_KINDS: Final = {"CPU": "cpu", "GPU": "gpu", "TPU": "tpu", "XLA_CPU": "cpu", "XLA_GPU": "gpu"}
# arraylayer's device kinds -> TensorFlow's device names, for ``tf.device``.
_TF_NAMES: Final = {"cpu": "/CPU:{}", "gpu": "/GPU:{}", "tpu": "/TPU:{}"}
# Wider dtypes that hold every value of a dtype, nearest first (for the remedy).
_WIDER: Final[dict[str, tuple[str, ...]]] = {
    "bool": ("int8", "uint8", "int32"), "int8": ("int16", "int32", "int64"), "int16": ("int32", "int64"),
    "int32": ("int64",), "int64": (), "uint8": ("int16", "uint16", "int32", "int64"),
    "uint16": ("int32", "uint32", "int64"), "uint32": ("int64", "uint64"), "uint64": (),
    "bfloat16": ("float32", "float64"), "float16": ("float32", "float64"), "float32": ("float64",),
    "float64": (), "complex64": ("complex128",), "complex128": (),
}


def _probe_ops(tf: Any, dtype: Dtype) -> dict[str, Callable[[Any], bool]]:
    """The checks run on ``x = [1, 0, 1]`` of ``dtype``: op name -> does it give the right answer."""
    native = tf.as_dtype(str(dtype))
    if dtype.is_bool:
        return {
            "equal": lambda x: bool(tf.reduce_all(tf.equal(x, x))),
            "logical_and": lambda x: tf.logical_and(x, x).numpy().tolist() == [True, False, True],
            "cast": lambda x: tf.cast(tf.cast(x, tf.int32), native).numpy().tolist() == [True, False, True],
        }
    wide = tf.complex128 if dtype.is_complex else tf.float64
    ops: dict[str, Callable[[Any], bool]] = {
        "add": lambda x: tf.cast(tf.add(x, x), wide).numpy().tolist() == [2, 0, 2],
        "multiply": lambda x: tf.cast(tf.multiply(x, x), wide).numpy().tolist() == [1, 0, 1],
        "equal": lambda x: tf.equal(x, x).numpy().tolist() == [True, True, True],
        "reduce_sum": lambda x: complex(tf.cast(tf.reduce_sum(x), wide).numpy()) == 2,
        "cast": lambda x: tf.cast(tf.cast(x, wide), native).dtype == native,
    }
    if not dtype.is_complex:  # complex numbers have no order
        ops["less"] = lambda x: tf.less(x, x + x).numpy().tolist() == [True, False, True]
    return ops


class TensorflowBackend(BuiltinBackend):
    name: ClassVar[str] = "tensorflow"
    type_roots: ClassVar[tuple[str, ...]] = ("tensorflow", "keras")
    narrows: ClassVar[bool] = True  # dtypes without CPU kernels are not valid

    def __init__(self) -> None:
        super().__init__()
        self._by_enum: dict[int, Dtype] = {}  # DataType enum -> Dtype (tf.DType hashes as that int)
        self._valid: tuple[Dtype, ...] | None = None
        self._valid_set: frozenset[Dtype] = frozenset()
        self._missing: dict[Dtype, tuple[str, ...]] = {}
        self._devices: tuple[str, ...] | None = None
        self._device_names: dict[str, str] = {}  # tensor.device string -> arraylayer device

    # -- life cycle -------------------------------------------------------------------------
    def load(self) -> Backend:
        if self.module is None:
            os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        return super().load()

    def _build_native_dtypes(self, module: Any) -> dict[Dtype, Any]:
        natives = {d: module.as_dtype(str(d)) for d in all_dtypes}
        # float8_e4m3fn and float8_e5m2 have a CPU cast; the other names of tf.dtypes.experimental have none
        natives.update(self._low_precision_natives(lambda name: getattr(module.dtypes.experimental, name)))
        self._by_enum = {native.as_datatype_enum: d for d, native in natives.items()}
        return natives

    def _array_types(self, module: Any) -> tuple[type, ...]:
        return (module.Tensor, module.Variable)

    # -- dtypes -----------------------------------------------------------------------------
    def valid_dtypes(self) -> tuple[Dtype, ...]:
        """The dtypes TensorFlow can compute with on the CPU, found once by a probe.

        On ``[1, 0, 1]`` of each dtype, eagerly on ``/CPU:0``, the probe checks that
        ``tf.add``, ``tf.multiply``, ``tf.equal``, ``tf.less`` (real dtypes only) and
        ``tf.reduce_sum`` run and give the right values, and that ``tf.cast`` to
        float64 (complex128 for complex dtypes) and back works. bool is checked with
        ``tf.equal``, ``tf.logical_and`` and ``tf.cast`` to int32 and back. A dtype
        failing any check, or whose constant cannot be made, is invalid.
        """
        if self._valid is None:
            self._probe()
        return self._valid  # type: ignore[return-value]

    def _probe(self) -> None:
        tf = self.load().module
        missing: dict[Dtype, tuple[str, ...]] = {}
        # init_scope: eager even when the first use is being traced inside tf.function
        with tf.init_scope(), tf.device("/CPU:0"):
            for dtype in all_dtypes:
                try:
                    x = tf.constant([True, False, True] if dtype.is_bool else [1, 0, 1], self.native_dtypes[dtype])
                except (TypeError, ValueError, tf.errors.OpError):
                    missing[dtype] = ("constant",)
                    continue
                failed = tuple(op for op, check in _probe_ops(tf, dtype).items() if not _passes(tf, check, x))
                if failed:
                    missing[dtype] = failed
        self._missing = missing
        self._valid_set = frozenset(d for d in all_dtypes if d not in missing)
        self._valid = tuple(d for d in all_dtypes if d in self._valid_set)

    def check_valid(self, dtype: Dtype) -> Dtype:
        if self._valid is None:
            self._probe()
        resolved = as_dtype(dtype)  # a tf.DType hashes as an int: never look it up directly
        if resolved not in self._valid_set and not (resolved.is_low_precision and resolved in self.native_dtypes):
            raise self.invalid_dtype_error(resolved)
        return resolved

    def remedy(self, dtype: Dtype) -> str:
        """Names the kernels the probe found missing and the nearest valid wider dtype."""
        valid = self.valid_dtypes()
        missing = self._missing.get(dtype)
        if not missing:
            return super().remedy(dtype)
        wider = next((w for w in _WIDER.get(dtype, ()) if w in valid), None)
        advice = (f"Cast to {wider} (it holds every {dtype} value) before computing, or use another backend."
                  if wider else "Use another backend for this dtype.")
        return f"TensorFlow on the CPU has no working {', '.join(missing)} for {dtype}. {advice}"

    def dtype_of(self, x: Any) -> Dtype:
        dtype = x.dtype
        try:
            return self._by_enum[dtype.as_datatype_enum]
        except (AttributeError, KeyError):  # not a tf.DType, or one of TF's non-array dtypes
            return as_dtype(dtype)

    @property
    def native_dtype_class(self) -> type:
        return self.load().module.dtypes.DType  # type: ignore[no-any-return]

    # -- arrays -----------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Dtype, device: str | None = None) -> Any:
        native = self.as_native_dtype(dtype)
        tf = self.module
        if isinstance(obj, self.array_types):
            same = obj.dtype.as_datatype_enum == native.as_datatype_enum
            if device is None or self.device_of(obj) == canonical_device(device):
                return obj if same else tf.cast(obj, native)
            with tf.device(self.native_device(device)):
                return tf.identity(obj) if same else tf.cast(obj, native)
        from arraylayer.arguments import convertible

        convertible(obj, dtype)
        if device is None:
            return _constant(tf, obj, native)
        with tf.device(self.native_device(device)):
            return _constant(tf, obj, native)

    def astype(self, x: Any, dtype: Dtype) -> Any:
        native = self.as_native_dtype(dtype)
        if x.dtype.as_datatype_enum == native.as_datatype_enum:
            return x
        return _truth(self.module, x) if dtype == "bool" else self.module.cast(x, native)

    def caster(self, dtype: Dtype) -> Callable[[Any], Any]:
        if dtype == "bool":
            return functools.partial(_truth, self.load().module)
        cast, native = self.load().module.raw_ops.Cast, self.as_native_dtype(dtype)
        # the Cast op itself: tf.cast's own Python (its checks, a name scope) costs as much again, and a
        # promotion's cast never starts from complex (the one case where tf.cast does more: the real part)
        return lambda x: cast(x=x, DstT=native)

    def copy(self, x: Any) -> Any:
        return self.load().module.identity(x)

    def from_dlpack(self, x: Any) -> Any:
        """Shares memory with ``x`` only when its buffer is 64-byte aligned: TensorFlow's CPU
        kernels abort the process on unaligned buffers (NumPy's allocations often are), so an
        unaligned or unknown buffer is copied exactly instead (through NumPy), as is a NumPy
        array TensorFlow's DLPack import refuses (not C order, read-only, non-native byte order)."""
        tf = self.load().module
        if isinstance(x, self.array_types):
            return x
        ready = shareable(x, C, writeable=True)
        address = _buffer_address(ready)
        if ready is not x or address is None or address % 64:
            import numpy as np

            return tf.constant(np.array(np.asarray(ready), copy=ready is x))  # torch's __array__ takes no copy=
        return tf.experimental.dlpack.from_dlpack(x.__dlpack__() if hasattr(x, "__dlpack__") else x)

    def to_numpy(self, x: Any) -> Any:
        return x.numpy()

    # -- devices ----------------------------------------------------------------------------
    def devices(self) -> tuple[str, ...]:
        """TensorFlow's logical devices; every CPU (virtual ones too) is ``"cpu"``."""
        if self._devices is None:
            found: dict[str, None] = {}
            for device in self.load().module.config.list_logical_devices():
                kind = _KINDS.get(device.device_type)
                if kind is not None:
                    found[canonical_device(f"{kind}:{device.name.rsplit(':', 1)[-1]}")] = None
            self._devices = tuple(found)
        return self._devices

    def device_of(self, x: Any) -> str:
        """The device of ``x``; a symbolic tensor not yet placed reports TensorFlow's default."""
        name = x.device
        try:
            return self._device_names[name]
        except KeyError:
            device = self._device_names[name] = self._parse_device(name)
            return device

    def _parse_device(self, name: str) -> str:
        if not name:
            return "gpu:0" if "gpu:0" in self.devices() else "cpu"
        spec = self.module.DeviceSpec.from_string(name)
        kind = _KINDS.get(spec.device_type or "")
        if kind is None:
            raise DeviceError(f"TensorFlow device {name!r} has no arraylayer equivalent (cpu, gpu:N, tpu:N).")
        return canonical_device(f"{kind}:{spec.device_index or 0}")

    def native_device(self, device: str) -> Any:
        """The ``tf.device`` name (``"/CPU:0"``, ``"/GPU:1"``) for an available device."""
        canonical = canonical_device(device)
        available = self.devices()
        if canonical not in available:
            raise DeviceError(
                f"Device {device!r} is not available to TensorFlow here; available: {', '.join(available)}."
            )
        kind, _, index = canonical.partition(":")
        return _TF_NAMES[kind].format(index or 0)

    def to_device(self, x: Any, device: str) -> Any:
        target = self.native_device(device)
        if self.device_of(x) == canonical_device(device):
            return x
        with self.module.device(target):
            return self.module.identity(x)


def _passes(tf: Any, check: Callable[[Any], bool], x: Any) -> bool:
    try:
        return bool(check(x))
    except (TypeError, ValueError, tf.errors.OpError):
        return False


def _constant(tf: Any, obj: Any, native: Any) -> Any:
    """``tf.constant``; where TF refuses a Python value (``[1.5]`` as int32, ``[1, 0]`` as bool,
    ``[[1], [2j]]`` with mixed types), NumPy converts it first, as the NumPy backend would.
    A Python ``-0.0`` (or a complex with a ``-0.0`` part) goes through NumPy too: TF's eager cache
    of scalar constants keys on the value, where ``-0.0 == 0.0``, and would hand back a cached ``+0.0``."""
    if _negative_zero_in(obj):
        import numpy as np

        return tf.constant(np.asarray(obj, dtype=native.as_numpy_dtype), native)
    try:
        return tf.constant(obj, native)
    except (TypeError, ValueError):
        import numpy as np

        return tf.constant(np.asarray(obj, dtype=native.as_numpy_dtype), native)


def _negative_zero_in(obj: Any) -> bool:
    """A Python float that is -0.0, or a complex with a -0.0 part."""
    parts = (obj,) if obj.__class__ is float else (obj.real, obj.imag) if obj.__class__ is complex else ()
    return any(part == 0.0 and math.copysign(1.0, part) < 0 for part in parts)


def _buffer_address(x: Any) -> int | None:
    """The address of a CPU array's first element (NumPy, torch, JAX), or None when unknown."""
    interface = getattr(x, "__array_interface__", None)
    if interface is not None:
        return int(interface["data"][0])
    for method in ("data_ptr", "unsafe_buffer_pointer"):
        if hasattr(x, method):
            try:
                return int(getattr(x, method)())
            except Exception:  # noqa: BLE001 - an accelerator buffer or a deleted array: unknown
                return None
    return None


def _truth(tf: Any, x: Any) -> Any:
    """``x`` as bool: nonzero is True. ``tf.cast`` reads only the real part of a complex value
    (``1j`` would be False)."""
    if x.dtype.is_complex:
        return tf.math.not_equal(x, tf.zeros((), x.dtype))
    return tf.cast(x, tf.bool)
