"""arraylayer: write array code once, run it on NumPy, JAX, PyTorch and TensorFlow
with one set of dtype semantics.

This module is the public face: it re-exports, and holds no logic of its own
beyond the module-level look-ups of backend-dependent names (``valid_dtypes`` ...).
Importing it imports no array framework (not even NumPy).
"""

from __future__ import annotations

import gc as _gc
import sys as _sys
from typing import Any

# Importing the namespace leaves some 14,000 new objects (and more pass through). In a process that has
# just imported torch, that is enough to start the full collection torch's import left due (some 70 ms
# over torch's objects), so the collector pauses while the modules load and that collection runs where
# it would have run without arraylayer.
_collecting = _gc.isenabled()
_gc.disable()
try:
    from arraylayer.api import CATEGORIES as _CATEGORIES  # (the dtypes, runtime, support and api folders)
    from arraylayer.array import Array
finally:
    if _collecting:
        _gc.enable()
from arraylayer import errors
from arraylayer.api import fft, linalg
from arraylayer.api.info import __array_namespace_info__
from arraylayer.context import (
    checked_scalars,
    narrow_64bit,
    set_checked_scalars,
    set_narrow_64bit,
    use_checked_scalars,
    use_narrow_64bit,
)
from arraylayer.dtypes.defaults import (
    default_complex_dtype,
    default_float_dtype,
    default_int_dtype,
    default_uint_dtype,
    set_default_complex_dtype,
    set_default_float_dtype,
    set_default_int_dtype,
    set_default_uint_dtype,
    use_default_complex_dtype,
    use_default_dtypes,
    use_default_float_dtype,
    use_default_int_dtype,
    use_default_uint_dtype,
)
from arraylayer.runtime.devices import default_device, set_default_device, use_device
from arraylayer.dtypes import (
    Dtype,
    FInfo,
    IInfo,
    all_complex_dtypes,
    all_dtypes,
    all_float8_dtypes,
    all_float_dtypes,
    all_int_dtypes,
    all_low_precision_dtypes,
    all_low_precision_float_dtypes,
    all_low_precision_int_dtypes,
    all_numeric_dtypes,
    all_uint_dtypes,
    as_dtype,
    dtype_bits,
    finfo,
    iinfo,
    is_bool_dtype,
    is_complex_dtype,
    is_float_dtype,
    is_int_dtype,
    is_numeric_dtype,
    is_uint_dtype,
    register_dtype_alias,
)
from arraylayer.errors import (
    AllocationError,
    ArrayLayerError,
    AxisError,
    BackendMismatchError,
    BackendNotInstalledError,
    CheckpointError,
    DeviceError,
    ControlFlowError,
    GradientError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidDtypeError,
    LinAlgError,
    OutOfBoundsIndexError,
    ScalarOverflowError,
    TypePromotionError,
    UnknownBackendError,
    UnsupportedDtypeError,
    UnsupportedOperationError,
)
from arraylayer.runtime.guard_filter import torch_guard_filter
from arraylayer.dtypes.inference import infer_dtype
from arraylayer.api.interchange import dev, to_backend, to_device
from arraylayer.runtime.native import as_arraylayer_dtype, as_native_dtype, default_dtype, promote_types_of_inputs
from arraylayer.dtypes.promotion import (
    can_cast,
    dtype_promotion,
    get_dtype_promotion,
    lattice_result_type,
    promotion_policies,
    result_type,
    set_dtype_promotion,
)
from arraylayer.runtime.compiled_dispatch import promote_types
from arraylayer.runtime.registry import (
    available_backends,
    backend_of,
    current_backend,
    get_backend,
    installed_backends,
    register_backend,
    set_backend,
    use_backend,
)
from arraylayer.support import UnverifiedVersionWarning, function_supported_dtypes, function_unsupported_dtypes
from arraylayer.version import __array_api_version__, __version__  # noqa: F401 - public attributes

# The Array API functions: every public name of each category module (arraylayer/api/<category>.py).
_FUNCTIONS: dict[str, Any] = {name: getattr(module, name) for module in _CATEGORIES for name in module.__all__}
globals().update(_FUNCTIONS)
# The model toolkit (arraylayer/models/) loads on first use, so that ``import arraylayer`` costs
# only the namespace: ``al.nn``, ``al.scan`` or ``from arraylayer import layers`` import their module
# then (see __getattr__). Its modules keep their public import paths: ``import arraylayer.optim``
# finds the same module object as ``al.optim`` (_ToolkitAliases below).
_TOOLKIT_MODULES = {name: f"arraylayer.models.{name}" for name in (
    "checkpoint", "image", "initializers", "layers", "mixed_precision", "nn", "optim", "random", "schedules", "transforms")}
_TOOLKIT_NAMES = {
    **dict.fromkeys(("grad", "value_and_grad"), "arraylayer.models.autodiff"),
    **dict.fromkeys(("tree_leaves", "tree_map", "tree_map_with_path", "tree_paths"), "arraylayer.models.tree"),
    **dict.fromkeys(("scan", "map", "fori_loop", "while_loop", "cond", "switch", "associative_scan", "vmap",
                     "vectorize", "stop_gradient", "custom_gradient", "jvp"), "arraylayer.models.flow"),
    **dict.fromkeys(("erf", "erfc", "erfinv", "in_top_k", "istft", "logdet", "rsqrt", "scatter", "scatter_update",
                     "segment_max", "segment_min", "segment_prod", "segment_sum", "slice_update", "stft", "top_k",
                     "is_tensor", "saturate_cast", "slice", "einsum", "cdist", "extract_sequences", "view_as_complex",
                     "view_as_real", "view", "rearrange"),
                    "arraylayer.models.mathops"),
}


def _toolkit(name: str) -> Any:
    """The toolkit's module or function ``name``, imported now and kept as a plain attribute."""
    import importlib

    if name in _TOOLKIT_MODULES:
        value = importlib.import_module(_TOOLKIT_MODULES[name])
    else:
        value = getattr(importlib.import_module(_TOOLKIT_NAMES[name]), name)
    globals()[name] = value
    return value


class _ToolkitAliases:
    """Finds ``arraylayer.<toolkit module>`` (``import arraylayer.optim``) as the module in models/."""

    @staticmethod
    def find_spec(fullname: str, path: Any = None, target: Any = None) -> Any:
        package, _, name = fullname.rpartition(".")
        if package != __name__ or name not in _TOOLKIT_MODULES:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(fullname, _ToolkitAliases)

    @staticmethod
    def create_module(spec: Any) -> Any:
        return _toolkit(spec.name.rpartition(".")[2])

    @staticmethod
    def exec_module(module: Any) -> None:
        """The module ran when models/ imported it: nothing is left to run."""


_sys.meta_path.append(_ToolkitAliases)

# The dtypes every backend holds are plain attributes. The others (int64, uint16, uint32,
# uint64, float64, complex128) are looked up through __getattr__ below, so that, as seed 004
# asks, a dtype the active backend cannot hold is absent from the namespace in that context.
bool = Dtype("bool")  # noqa: A001 - the dtype's own name
int8 = Dtype("int8")
int16 = Dtype("int16")
int32 = Dtype("int32")
uint8 = Dtype("uint8")
bfloat16 = Dtype("bfloat16")
float16 = Dtype("float16")
float32 = Dtype("float32")
complex64 = Dtype("complex64")

# The low-precision family (float8_e4m3fn ... uint2) too: a backend that cannot store one lacks it.
_BACKEND_DEPENDENT_DTYPES = ("int64", "uint16", "uint32", "uint64", "float64", "complex128",
                             *map(str, all_low_precision_dtypes))
_KIND_TUPLES = {
    "dtypes": all_dtypes,
    "numeric_dtypes": all_numeric_dtypes,
    "int_dtypes": all_int_dtypes,
    "uint_dtypes": all_uint_dtypes,
    "float_dtypes": all_float_dtypes,
    "complex_dtypes": all_complex_dtypes,
    "low_precision_dtypes": all_low_precision_dtypes,
}


def _narrowing_backend() -> Any:
    """The chosen backend if it may narrow the dtype set, loaded; else None."""
    from arraylayer.runtime.registry import chosen_backend

    backend = chosen_backend()
    if backend is None or not backend.narrows:
        return None
    return backend.load()


def _valid(group: str) -> tuple[Dtype, ...]:
    backend = _narrowing_backend()
    if backend is None:
        return _KIND_TUPLES[group]
    valid = (*backend.valid_dtypes(), *backend.low_precision_dtypes())
    return tuple(d for d in _KIND_TUPLES[group] if d in valid)


def _dtype_attribute(name: str) -> Dtype:
    dtype = Dtype(name)
    backend = _narrowing_backend()
    if backend is not None and dtype not in backend.valid_dtypes() and dtype not in backend.low_precision_dtypes():
        raise AttributeError(
            f"arraylayer.{name} is not available while the {backend.name} backend is active: "
            f"{backend.remedy(dtype)} It is available again under a backend that supports it "
            f"(e.g. arraylayer.use_backend('numpy'))."
        )
    return dtype


class DtypeGroup(tuple):  # type: ignore[type-arg]
    """The answer of ``arraylayer.valid_dtypes`` and friends: a tuple of dtypes for the active
    backend, which can also be asked about another one: ``al.valid_dtypes("torch")``."""

    name: str

    def __call__(self, backend: str) -> tuple[Dtype, ...]:
        from arraylayer.runtime.registry import use_backend

        with use_backend(backend):
            return tuple(__getattr__(self.name))


def _named_group(name: str, dtypes: tuple[Dtype, ...]) -> DtypeGroup:
    group = DtypeGroup(dtypes)
    group.name = name
    return group


def __getattr__(name: str) -> Any:
    """Backend-dependent names: the 64-bit/unsigned dtypes, valid_*/invalid_* tuples,
    NativeDtype and native_<dtype>, all answered for the backend active in this context; and
    the model toolkit's modules and functions, imported on first use."""
    if name in _TOOLKIT_MODULES or name in _TOOLKIT_NAMES:
        return _toolkit(name)
    if name in _BACKEND_DEPENDENT_DTYPES:
        return _dtype_attribute(name)
    if name.startswith("valid_") and name[6:] in _KIND_TUPLES:
        return _named_group(name, _valid(name[6:]))
    if name.startswith("invalid_") and name[8:] in _KIND_TUPLES:
        valid = _valid(name[8:])
        return _named_group(name, tuple(d for d in _KIND_TUPLES[name[8:]] if d not in valid))
    if name == "NativeDtype" or (name.startswith("native_") and name[7:] in (*all_dtypes, *all_low_precision_dtypes)):
        from arraylayer.runtime.registry import chosen_backend

        backend = chosen_backend()
        if backend is None:  # before any backend, native dtypes are arraylayer's own (seed 004)
            return Dtype if name == "NativeDtype" else Dtype(name[7:])
        backend.load()
        if name == "NativeDtype":
            return backend.native_dtype_class
        return backend.as_native_dtype(_dtype_attribute(name[7:]))
    raise AttributeError(f"module 'arraylayer' has no attribute {name!r}")


__all__ = [
    "errors", "Dtype", "FInfo", "IInfo", "as_dtype", "register_dtype_alias",
    "bool", "int8", "int16", "int32", "uint8", "bfloat16", "float16", "float32", "complex64",
    "all_dtypes", "all_numeric_dtypes", "all_int_dtypes", "all_uint_dtypes", "all_float_dtypes",
    "all_complex_dtypes", "all_low_precision_dtypes", "all_low_precision_float_dtypes",
    "all_low_precision_int_dtypes", "all_float8_dtypes",
    "is_bool_dtype", "is_int_dtype", "is_uint_dtype", "is_float_dtype", "is_complex_dtype",
    "is_numeric_dtype", "dtype_bits", "finfo", "iinfo",
    "promote_types", "result_type", "lattice_result_type", "can_cast", "promote_types_of_inputs",
    "set_dtype_promotion", "get_dtype_promotion", "dtype_promotion", "promotion_policies",
    "default_int_dtype", "default_uint_dtype", "default_float_dtype", "default_complex_dtype",
    "set_default_int_dtype", "set_default_uint_dtype", "set_default_float_dtype",
    "set_default_complex_dtype", "use_default_int_dtype", "use_default_uint_dtype",
    "use_default_float_dtype", "use_default_complex_dtype", "use_default_dtypes",
    "default_dtype", "infer_dtype",
    "ArrayLayerError", "InvalidDtypeError", "TypePromotionError", "ScalarOverflowError",
    "UnsupportedDtypeError", "UnknownBackendError", "BackendNotInstalledError",
    "BackendMismatchError", "DeviceError", "InvalidArgumentError", "InvalidArgumentTypeError", "AxisError",
    "OutOfBoundsIndexError", "LinAlgError", "CheckpointError", "AllocationError",
    "available_backends", "installed_backends", "register_backend", "get_backend", "set_backend",
    "use_backend", "current_backend", "backend_of", "as_native_dtype", "as_arraylayer_dtype",
    "to_backend", "dev", "to_device", "default_device", "set_default_device", "use_device",
    "narrow_64bit", "set_narrow_64bit", "use_narrow_64bit", "checked_scalars", "set_checked_scalars",
    "use_checked_scalars", "torch_guard_filter",
    "linalg", "fft", "random", "nn", "optim", "schedules", "transforms", "checkpoint", "image", "initializers", "layers",
    "mixed_precision", "__array_api_version__", "__array_namespace_info__",
    "Array", "grad", "value_and_grad", "tree_map", "tree_leaves", "tree_map_with_path", "tree_paths", "UnsupportedOperationError", "GradientError",
    "scan", "map", "fori_loop", "while_loop", "cond", "switch", "associative_scan", "vmap", "stop_gradient",
    "custom_gradient", "jvp", "vectorize", "ControlFlowError",
    "top_k", "in_top_k", "segment_sum", "segment_prod", "segment_max", "segment_min", "rsqrt", "erf", "erfc",
    "erfinv", "logdet", "stft", "istft", "scatter", "scatter_update", "slice_update",
    "is_tensor", "saturate_cast", "slice", "einsum", "cdist", "extract_sequences", "view_as_complex", "view_as_real",
    "view", "rearrange", "function_supported_dtypes", "function_unsupported_dtypes", "UnverifiedVersionWarning",
    *sorted(_FUNCTIONS.keys() - {"can_cast", "finfo", "iinfo", "result_type", "__array_namespace_info__"}),
]

# The public namespaces, by name, for the dtype-support queries (function_supported_dtypes(al.add)).
from arraylayer.support.names import register_namespace as _register_namespace  # noqa: E402

for _prefix, _namespace in (("", _sys.modules[__name__]), ("linalg.", linalg), ("fft.", fft),
                            ("nn.", "arraylayer.models.nn"), ("layers.", "arraylayer.models.layers"),
                            ("optim.", "arraylayer.models.optim")):  # (the toolkit's by name: it loads on first use)
    _register_namespace(_prefix, _namespace)
del _prefix, _namespace

from arraylayer.backends import first_use as _first_use  # noqa: E402  (prepares tf.function/torch.compile; imports nothing)

_first_use.install()


def __dir__() -> list[str]:
    """The namespace's names, the toolkit's not yet imported included."""
    return sorted({*globals(), *__all__})
