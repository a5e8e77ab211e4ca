"""The few native operations the portable casts need, one small class per framework.

Integer bit operations, ``where``, gathers from a small table and bit casts between a float and
the integer of its width. Every method is the framework's own op, so the casts built on them run
eagerly and under ``jax.jit``, ``torch.compile`` and ``tf.function``. The class is chosen from the
array's type and cached (einops' pattern); a framework is imported only when one of its arrays
arrives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.context import replaying
from arraylayer.errors import InvalidArgumentTypeError

_INT_OF_FLOAT = {"float16": "int16", "bfloat16": "int16", "float32": "int32", "float64": "int64"}


class NumpyOps:
    name = "numpy"

    def __init__(self) -> None:
        import ml_dtypes

        self.xp = np
        self._ml = ml_dtypes

    def dtype_name(self, x: Any) -> str:
        return x.dtype.name

    def float_bits(self, x: Any) -> Any:
        return x.view(_INT_OF_FLOAT[x.dtype.name])

    def astype(self, x: Any, name: str) -> Any:
        return x.astype(self.native_dtype(name))

    def native_dtype(self, name: str) -> Any:
        return getattr(self._ml, name) if name == "bfloat16" or not hasattr(np, name) else np.dtype(name)

    def table(self, key: tuple[str, str], make: Any, like: Any) -> Any:
        """The table ``make(*key)`` (a NumPy array) as an array of this framework, beside ``like``."""
        return make(*key)

    def codes_of(self, y: Any) -> Any:
        return y.view(np.uint8)

    def from_codes(self, codes: Any, name: str) -> Any:
        return codes.view(self.native_dtype(name))

    def traced(self, x: Any) -> bool:
        """Whether ``x`` is a tracer of JAX's (its ops then go to XLA's compiler as one program)."""
        return False

    def accelerated(self, x: Any) -> bool:
        """Whether ``x`` may live on an accelerator (a GPU's conversions drop the sign of NaNs)."""
        return False

    def own_cast_unlike_eager(self, x: Any, source: str) -> bool:
        """Whether the framework's own cast of ``x`` (of dtype ``source``) to float8 may give other
        bits than it does eagerly, where NATIVE_ENCODE's modes were measured: then the encoder
        takes the portable rule."""
        return False

    def bits_float32(self, bits: Any) -> Any:
        """The float32 array whose bit patterns are the int32 array ``bits``."""
        return bits.view(np.float32)

    def host(self, x: Any, name: str) -> Any:
        """``x`` (of the format ``name``) as an ml_dtypes NumPy array over the same bytes, where the
        framework runs eagerly on the CPU; None where it does not (a GPU, a tracer), or where the
        array already is NumPy's. See :meth:`TorchOps.host`."""
        return None

    #: The dtype of a pair's index: uint16 holds every pair of 8-bit codes, and NumPy's ``take`` reads it
    #: as it is (3x faster than an int32 index built in two casts); JAX gathers int32 indices.
    index_dtype = "uint16"

    def take(self, table: Any, index: Any) -> Any:
        # a pair's uint16 index through np.take (2.5x faster than indexing); codes by indexing, which
        # Dynamo can trace where a table is built inside torch.compile (its NumPy take refuses uint8)
        return np.take(table, index) if index.dtype == np.uint16 else table[index]

    def pair(self, a: Any, b: Any, bits: int) -> Any:
        """The index ``a << bits | b`` of two keys (uint8 arrays or Python ints), of :attr:`index_dtype`."""
        if type(a) is int:
            return self.astype(b, self.index_dtype) | (a << bits)
        return self.shl(self.astype(a, self.index_dtype), bits) | b

    def shr(self, x: Any, s: Any) -> Any:
        return np.right_shift(x, s)

    def shl(self, x: Any, s: Any) -> Any:
        return np.left_shift(x, s)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return np.where(c, a, b)

    def maximum(self, x: Any, v: Any) -> Any:
        return np.maximum(x, v)

    def minimum(self, x: Any, v: Any) -> Any:
        return np.minimum(x, v)

    def clip(self, x: Any, low: float, high: float) -> Any:
        return np.where(np.isnan(x), x, np.clip(x, low, high))

    def trunc_mod(self, x: Any, modulus: int) -> Any:
        return np.fmod(np.trunc(x), modulus)

    def abs(self, x: Any) -> Any:
        return np.abs(x)

    def isnan(self, x: Any) -> Any:
        return np.isnan(x)

    def matmul(self, a: Any, b: Any) -> Any:
        return np.matmul(a, b)

    def amax(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return np.max(np.abs(x), axis=axis, keepdims=keepdims)


class JaxOps(NumpyOps):
    name = "jax"
    index_dtype = "int32"

    def __init__(self) -> None:
        import jax
        import jax.numpy as jnp

        super().__init__()
        self.xp, self._lax, self._jax = jnp, jax.lax, jax
        self._tables: dict[Any, Any] = {}  # (format, dtype, device) -> array

    def traced(self, x: Any) -> bool:
        return isinstance(x, self._jax.core.Tracer)

    def accelerated(self, x: Any) -> bool:
        return self.traced(x) or any(device.platform != "cpu" for device in x.devices())

    def own_cast_unlike_eager(self, x: Any, source: str) -> bool:
        # XLA folds a float16/bfloat16 widening into the float8 conversion, which then keeps the
        # float16 NaN's payload: float8_e5m2 NaNs other than ml_dtypes'
        return source != "float32" and self.traced(x)

    def bits_float32(self, bits: Any) -> Any:
        return self._lax.bitcast_convert_type(bits, self.xp.float32)

    def float_bits(self, x: Any) -> Any:
        return self._lax.bitcast_convert_type(x, self.native_dtype(_INT_OF_FLOAT[x.dtype.name]))

    def native_dtype(self, name: str) -> Any:
        if name.endswith("64") and not self._jax.config.jax_enable_x64:
            from arraylayer.errors import UnsupportedDtypeError

            raise UnsupportedDtypeError(
                f"{name} on jax needs jax_enable_x64 (jax.config.update('jax_enable_x64', True)); without it "
                "JAX would silently give 32 bits. Decode to float32 instead."
            )
        return getattr(self.xp, name)

    def table(self, key: tuple[str, str], make: Any, like: Any) -> Any:
        """One array per table and device, made once (a copy to the device per call would cost more
        than a cast of a million values on a GPU); a constant of the program while JAX traces."""
        devices = None if isinstance(like, self._jax.core.Tracer) else like.devices()
        if devices is None or len(devices) != 1:
            return self.xp.asarray(make(*key), dtype=self.native_dtype(key[1]))
        (device,) = devices
        table = self._tables.get((*key, device))
        if table is None:
            table = self._tables[(*key, device)] = self._jax.device_put(
                self.xp.asarray(make(*key), dtype=self.native_dtype(key[1])), device)
        return table

    def codes_of(self, y: Any) -> Any:
        return self._lax.bitcast_convert_type(y, self.xp.uint8)

    def from_codes(self, codes: Any, name: str) -> Any:
        return self._lax.bitcast_convert_type(codes, self.native_dtype(name))

    def take(self, table: Any, index: Any) -> Any:
        return self.xp.take(table, index.astype(self.xp.int32), mode="clip")

    def shr(self, x: Any, s: Any) -> Any:
        return self.xp.right_shift(x, s)

    def shl(self, x: Any, s: Any) -> Any:
        return self.xp.left_shift(x, s)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.xp.where(c, a, b)

    def maximum(self, x: Any, v: Any) -> Any:
        return self.xp.maximum(x, v)

    def minimum(self, x: Any, v: Any) -> Any:
        return self.xp.minimum(x, v)

    def clip(self, x: Any, low: float, high: float) -> Any:
        return self.xp.where(self.xp.isnan(x), x, self.xp.clip(x, low, high))

    def trunc_mod(self, x: Any, modulus: int) -> Any:
        return self.xp.fmod(self.xp.trunc(x), modulus)

    def abs(self, x: Any) -> Any:
        return self.xp.abs(x)

    def isnan(self, x: Any) -> Any:
        return self.xp.isnan(x)

    def matmul(self, a: Any, b: Any) -> Any:
        return self.xp.matmul(a, b, preferred_element_type=self.xp.float32)

    def amax(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self.xp.max(self.xp.abs(x), axis=axis, keepdims=keepdims)


class DaskOps(NumpyOps):
    """dask arrays: the casts run NumPy's chunk by chunk (``map_blocks``); the scaled functions'
    reductions and matmul go through NumPy's functions, which dask arrays implement."""

    name = "dask"

    def codes_of(self, y: Any) -> Any:
        return y.map_blocks(np.ndarray.view, np.uint8, dtype=np.uint8)

    def from_codes(self, codes: Any, name: str) -> Any:
        dtype = self.native_dtype(name)
        return codes.map_blocks(np.ndarray.view, dtype, dtype=dtype)

    def take(self, table: Any, index: Any) -> Any:
        return index.map_blocks(table.__getitem__, dtype=table.dtype)


class TorchOps:
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        self._tables: dict[Any, Any] = {}  # (format, dtype, device) -> tensor

    def dtype_name(self, x: Any) -> str:
        return str(x.dtype)[6:]  # "torch.float32"

    def traced(self, x: Any) -> bool:  # measured: Inductor keeps the widening before a float8 cast
        return False

    def accelerated(self, x: Any) -> bool:
        return x.device.type != "cpu"

    def own_cast_unlike_eager(self, x: Any, source: str) -> bool:
        # Inside torch.compile, Inductor's GPU code converts to float8 with the GPU's saturating
        # conversion: float8_e5m2 overflow gave the largest value, not inf (462,006 of 1,114,112
        # patterns), on an H200 with torch 2.11 (benchmarks/gpu_compile_casts.py). The portable rule
        # gave ml_dtypes' bits there (tests/test_gpu.py). Inductor's CPU code gave them natively.
        return x.device.type != "cpu" and self.torch.compiler.is_compiling()

    def bits_float32(self, bits: Any) -> Any:
        return bits.view(self.torch.float32)

    def float_bits(self, x: Any) -> Any:
        return x.view(getattr(self.torch, _INT_OF_FLOAT[self.dtype_name(x)]))

    def astype(self, x: Any, name: str) -> Any:
        return x.to(self.native_dtype(name))

    def native_dtype(self, name: str) -> Any:
        return getattr(self.torch, name)

    def table(self, key: tuple[str, str], make: Any, like: Any) -> Any:
        """One tensor per table and device, made once; while Dynamo traces, made afresh and not
        stored (it would guard the dict's contents on every call: see arraylayer.context.replaying)."""
        if replaying():
            return self._made(key, make, like.device)
        key = (*key, like.device)
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = self._made(key[:2], make, like.device)
        return table

    def _made(self, key: tuple[str, str], make: Any, device: Any) -> Any:
        values = make(*key)
        if key[1] == "bfloat16":  # torch reads no ml_dtypes array: the bits, viewed
            return self.torch.from_numpy(values.view(np.int16)).view(self.torch.bfloat16).to(device)
        return self.torch.from_numpy(values).to(device)

    def host(self, x: Any, name: str) -> Any:
        """Eager torch on the CPU: the bytes as NumPy's, no copy. The rule's gather then runs in NumPy
        (one ``take``; the same table, so the same bits), where torch's own ops would each wake its
        thread pool for a few microseconds of work. Not while Dynamo traces (``.numpy()`` breaks a graph),
        nor inside ``torch.func`` transforms (``vmap``'s batched tensors have no storage to read)."""
        if x.device.type != "cpu" or x.requires_grad or replaying() or self.torch.compiler.is_compiling():
            return None
        import ml_dtypes

        try:
            return x.view(self.torch.uint8).numpy().view(getattr(ml_dtypes, name))
        except RuntimeError:  # a torch.func wrapper: "Cannot access data pointer of Tensor that doesn't have storage"
            return None

    def from_host(self, y: Any, name: str) -> Any:
        """A NumPy result of :meth:`host`'s arrays as a tensor over its bytes: the format's codes
        viewed as its torch dtype; any other dtype (bool, float32, int32) as it is."""
        if y.dtype.kind == "V" or y.dtype.name == name:  # ml_dtypes' types have their own kinds
            return self.torch.from_numpy(np.ascontiguousarray(y).view(np.uint8)).view(self.native_dtype(name))
        return self.torch.from_numpy(np.ascontiguousarray(y))

    def codes_of(self, y: Any) -> Any:
        return y.view(self.torch.uint8)

    def from_codes(self, codes: Any, name: str) -> Any:
        return codes.view(self.native_dtype(name))

    def take(self, table: Any, index: Any) -> Any:  # index_select: 1000x faster than table[index] on CPU
        torch = self.torch
        if index.dtype is not torch.int32 and index.dtype is not torch.int64:  # int32 indices: 4 bytes, not 8
            index = index.to(torch.int32)
        return torch.index_select(table, 0, index.reshape(-1)).reshape(index.shape)

    def pair(self, a: Any, b: Any, bits: int) -> Any:
        """As NumpyOps.pair, in place on the one int32 copy of ``a``."""
        torch = self.torch
        if type(a) is int:
            return b.to(torch.int32, copy=True).bitwise_or_(a << bits)
        high = a.to(torch.int32, copy=True).bitwise_left_shift_(bits)
        return high.bitwise_or_(b) if type(b) is int or b.shape == high.shape else high | b  # broadcast: isin

    def shr(self, x: Any, s: Any) -> Any:
        return self.torch.bitwise_right_shift(x, s)

    def shl(self, x: Any, s: Any) -> Any:
        return self.torch.bitwise_left_shift(x, s)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        return self.torch.where(c, a, b)

    def maximum(self, x: Any, v: Any) -> Any:
        return self.torch.clamp(x, min=v)

    def minimum(self, x: Any, v: Any) -> Any:
        return self.torch.clamp(x, max=v)

    def clip(self, x: Any, low: float, high: float) -> Any:
        return self.torch.clamp(x, low, high)  # NaN stays NaN

    def trunc_mod(self, x: Any, modulus: int) -> Any:
        return self.torch.fmod(self.torch.trunc(x), modulus)

    def abs(self, x: Any) -> Any:
        return self.torch.abs(x)

    def isnan(self, x: Any) -> Any:
        return self.torch.isnan(x)

    def matmul(self, a: Any, b: Any) -> Any:
        return self.torch.matmul(a, b)

    def amax(self, x: Any, axis: Any, keepdims: bool) -> Any:
        a = self.torch.abs(x)
        return self.torch.amax(a, dim=() if axis is None else axis, keepdim=keepdims)


class TensorflowOps:
    name = "tensorflow"

    def __init__(self) -> None:
        import tensorflow as tf

        self.tf = tf
        self._tables: dict[Any, Any] = {}  # key -> eager constant

    def dtype_name(self, x: Any) -> str:
        return x.dtype.name

    def traced(self, x: Any) -> bool:  # TensorFlow's float8 casts are not used for encoding
        return False

    def accelerated(self, x: Any) -> bool:  # inside tf.function the device is not known: the fix is cheap
        return not self.tf.executing_eagerly() or "CPU" not in x.device

    def own_cast_unlike_eager(self, x: Any, source: str) -> bool:  # its casts serve cast() only
        return False

    def bits_float32(self, bits: Any) -> Any:
        return self.tf.bitcast(bits, self.tf.float32)

    def host(self, x: Any, name: str) -> Any:
        """Eager TensorFlow on the CPU: the array's NumPy value (an ml_dtypes array, no copy). TF has no
        float8 bitcast, so its keys cost two float8 casts per operand, several times a float8 add of
        JAX; the NumPy gather reads the same table. Inside ``tf.function`` the graph keeps TF's ops."""
        return x.numpy() if self.tf.executing_eagerly() and "CPU" in x.device else None

    def from_host(self, y: Any, name: str) -> Any:
        return self.tf.convert_to_tensor(y)

    def float_bits(self, x: Any) -> Any:
        return self.tf.bitcast(x, getattr(self.tf, _INT_OF_FLOAT[x.dtype.name]))

    def astype(self, x: Any, name: str) -> Any:
        return self.tf.cast(x, self.native_dtype(name))

    def native_dtype(self, name: str) -> Any:
        return getattr(self.tf, name, None) or getattr(self.tf.dtypes.experimental, name)

    def table(self, key: tuple[str, str], make: Any, like: Any) -> Any:
        """Eagerly one constant per table, made once; inside a tf.function trace a graph constant."""
        if not self.tf.executing_eagerly():
            return self.tf.constant(make(*key))
        table = self._tables.get(key)
        if table is None:
            table = self._tables[key] = self.tf.constant(make(*key))
        return table

    def pair(self, a: Any, b: Any, bits: int) -> Any:
        """As NumpyOps.pair; TensorFlow's keys are int32 already."""
        tf = self.tf
        if type(a) is int:
            return tf.bitwise.bitwise_or(b, a << bits)
        return tf.bitwise.bitwise_or(tf.bitwise.left_shift(a, bits), b)

    def take(self, table: Any, index: Any) -> Any:
        return self.tf.gather(table, self.tf.cast(index, self.tf.int32))

    def shr(self, x: Any, s: Any) -> Any:
        return self.tf.bitwise.right_shift(x, self._like(s, x))

    def shl(self, x: Any, s: Any) -> Any:
        return self.tf.bitwise.left_shift(x, self._like(s, x))

    def _like(self, v: Any, x: Any) -> Any:
        return v if isinstance(v, self.tf.Tensor) or hasattr(v, "dtype") else self.tf.constant(v, x.dtype)

    def where(self, c: Any, a: Any, b: Any) -> Any:
        tf = self.tf
        if not hasattr(a, "dtype"):
            a = tf.cast(a, b.dtype)
        if not hasattr(b, "dtype"):
            b = tf.cast(b, a.dtype)
        return tf.where(c, a, b)

    def maximum(self, x: Any, v: Any) -> Any:
        return self.tf.maximum(x, self._like(v, x))

    def minimum(self, x: Any, v: Any) -> Any:
        return self.tf.minimum(x, self._like(v, x))

    def clip(self, x: Any, low: float, high: float) -> Any:
        tf = self.tf
        return tf.where(tf.math.is_nan(x), x, tf.clip_by_value(x, tf.cast(low, x.dtype), tf.cast(high, x.dtype)))

    def trunc_mod(self, x: Any, modulus: int) -> Any:
        tf = self.tf
        t = tf.where(x < 0, tf.math.ceil(x), tf.math.floor(x))
        return tf.truncatemod(t, tf.cast(modulus, x.dtype))

    def abs(self, x: Any) -> Any:
        return self.tf.abs(x)

    def isnan(self, x: Any) -> Any:
        return self.tf.math.is_nan(x)

    def matmul(self, a: Any, b: Any) -> Any:
        return self.tf.linalg.matmul(a, b)

    def amax(self, x: Any, axis: Any, keepdims: bool) -> Any:
        return self.tf.reduce_max(self.tf.abs(x), axis=axis, keepdims=keepdims)


#: by the array type's top module; an ml_dtypes scalar (``np.float32``-like, what NumPy gives for one element) is NumPy's
_BY_MODULE = {"numpy": NumpyOps, "ml_dtypes": NumpyOps, "dask": DaskOps, "jax": JaxOps, "jaxlib": JaxOps, "torch": TorchOps, "tensorflow": TensorflowOps}
_CACHE: dict[type, Any] = {}


def ops_of(x: Any) -> Any:
    """The ops of ``x``'s framework (cached per array type)."""
    cls = type(x)
    ops = _CACHE.get(cls)
    if ops is None:
        factory = _BY_MODULE.get(cls.__module__.partition(".")[0])
        if factory is None:
            raise InvalidArgumentTypeError(
                f"x of type {cls.__module__}.{cls.__qualname__} is not an array of numpy, jax, torch, "
                "tensorflow or dask; pass a native array (or an arraylayer.Array of one)."
            )
        ops = _CACHE[cls] = factory()
    return ops
