"""``arraylayer.Array``: a thin wrapper around one native array whose operators are arraylayer's
functions.

``Array(x)`` holds a NumPy array, a JAX array, a torch tensor or a TensorFlow tensor/variable
``x`` (O(1), no copy); ``a.native`` gives it back (O(1)). Every operator calls the arraylayer
function of the same meaning (``a + b`` is ``arraylayer.add(a, b)``, ``a @ b`` is
``arraylayer.matmul``, ``a < b`` is ``arraylayer.less`` ...), so operator and function results
are identical, dtype and values, on every backend. Functions given wrappers return wrappers
(see ``arraylayer.api.dispatch.call_unwrapped``).

In-place operators (``a += b``) compute ``add(a, b)`` and store it with ``a``'s dtype and shape
(arraylayer.array.inplace): into the buffer on NumPy and torch, through views as NumPy does; by
rebinding on JAX, TensorFlow and dask, whose slices are copies. The dtype rule is item
assignment's: a cast may round within float or complex (float32 += float64 values), never narrow
integers or change kind (``int32 += 1.5`` raises TypePromotionError on every backend). A NumPy
scalar operand is a 0-d array of its dtype moved to the Array's backend (docs/copies_and_views.rst).

The wrapper works as a JAX pytree (registered when JAX is imported: arraylayer never imports
JAX itself), as a ``tf.function`` argument and result (TensorFlow's nest protocol), and inside
``torch.compile(fullgraph=True)``.

Limits, all the frameworks' own: with a native TensorFlow tensor on the left, comparisons
(``t < a``) raise TypeError, since TensorFlow never tries the right operand's method for them
(arithmetic does, and gets arraylayer's result); torch 2.13's Dynamo does not trace ``@`` and
``~`` on objects of user classes, so inside ``torch.compile(fullgraph=True)`` call
``arraylayer.matmul`` / ``arraylayer.bitwise_invert`` instead.

The folder ``arraylayer/array/`` owns ``arraylayer.Array`` (here), its operators, indexing (dask's
lazily too) and in-place assignment.

May import: the base modules, ``dtypes``, ``runtime``, ``lowp``, ``api``.
"""

from __future__ import annotations

import importlib
import math
import operator
import sys
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, Final

from arraylayer.array import indexing, indexing_dask
from arraylayer.api.dispatch import register_wrapper
from arraylayer.api.linear_algebra import matrix_transpose
from arraylayer.array.operators import install, operand, zero_d
from arraylayer.runtime.backend import Backend
from arraylayer.runtime.devices import canonical_device
from arraylayer.dtypes import Dtype
from arraylayer.errors import ArrayLayerError
from arraylayer.array.inplace import check_assignment, check_writeable, torch_refused
from arraylayer.runtime.layouts import shareable
from arraylayer.dtypes.promotion import result_type
from arraylayer.context import replaying
from arraylayer.runtime.compiled_dispatch import fill_getitem, getitem_clear, getitem_method, getitem_plan
from arraylayer.runtime.registry import backend_of, backend_of_class, on_registry_change
from arraylayer.version import __array_api_version__

__all__ = ["Array"]

# The Array API versions the namespaces serve: the one arraylayer implements and every earlier one
# (each revision is a superset of the one before).
# Only those up to ``__array_api_version__`` (arraylayer/version.py) are accepted.
_API_VERSIONS: Final = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
# native array class -> its backend's dtype_of (Array.dtype without finding the backend each time)
_DTYPE_OF: dict[type, Callable[[Any], Dtype]] = {}
# backend name -> its Array namespace module, imported on first use
_NAMESPACES: dict[str, ModuleType] = {}
# DLPack device types (dlpack.h) of arraylayer's device kinds, for backends without __dlpack_device__.
_DLPACK_DEVICE_TYPE: Final = {"cpu": 1, "gpu": 2}


def _backend(native: Any) -> Backend:
    return backend_of(native)


class Array:
    """One native array of one backend, with arraylayer's semantics for its operators.

    ``Array(x)`` wraps ``x`` (a native array of an installed backend, or an Array) without
    copying. Operators, ``dtype`` (an arraylayer :class:`~arraylayer.Dtype`), ``device`` (an
    arraylayer device string) and ``__array_namespace__`` (``arraylayer.xp.arrays.<backend>``) follow
    the Array API standard; arraylayer's functions accept Arrays and return Arrays for them.
    """

    # _dtype: the dtype, read once (an Array's dtype never changes: in-place operators and item
    # assignment keep it; anything else makes a new Array)
    __slots__ = ("_native", "_dtype")
    # NumPy: return NotImplemented from ndarray's operators, so ``ndarray + Array`` reaches
    # Array.__radd__ (arraylayer's semantics) instead of making an object array.
    __array_ufunc__ = None
    __hash__ = None  # type: ignore[assignment]  # == is elementwise, so Arrays are unhashable

    _native: Any

    def __init__(self, native: Any, /) -> None:
        if isinstance(native, Array):
            native = native._native
        else:
            backend = _backend(native)
            if not isinstance(native, backend.array_types):
                raise TypeError(
                    f"arraylayer.Array wraps a native array (numpy.ndarray, jax.Array, torch.Tensor, tf.Tensor "
                    f"or tf.Variable); got {type(native).__module__}.{type(native).__qualname__}. Make one "
                    f"first, e.g. arraylayer.Array(arraylayer.asarray(obj))."
                )
        self._native = native

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        register_wrapper(cls, _unwrap, _wrapper_of(cls))

    # -- the wrapped array --------------------------------------------------------------------
    @property
    def native(self) -> Any:
        """The native array inside (the object itself, not a copy)."""
        return self._native

    @property
    def dtype(self) -> Dtype:
        """The arraylayer dtype of the array."""
        try:
            return self._dtype
        except AttributeError:  # the first read: from the native array, through a per-class cache
            native = self._native
            read = _DTYPE_OF.get(type(native))
            if read is None:
                read = _DTYPE_OF[type(native)] = _backend(native).dtype_of
            dtype = self._dtype = read(native)
            return dtype

    @property
    def shape(self) -> tuple[int | None, ...]:
        """The shape, as a tuple (None for a dimension unknown while tracing with TensorFlow)."""
        return tuple(self._native.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._native.shape)

    @property
    def size(self) -> int | None:
        """The number of elements (None when a dimension is unknown)."""
        shape = self.shape
        return None if None in shape else math.prod(shape)  # type: ignore[arg-type]

    @property
    def device(self) -> str:
        """The device, in arraylayer's vocabulary: ``"cpu"``, ``"gpu:0"`` ..."""
        native = self._native
        return _backend(native).device_of(native)

    @property
    def mT(self) -> Array:  # noqa: N802 - the Array API's name
        """The array with its last two axes swapped (``arraylayer.matrix_transpose``)."""
        return _wrap(matrix_transpose(self._native))

    @property
    def T(self) -> Array:  # noqa: N802 - the Array API's name
        """The transpose of a 2-d array (ValueError for other ranks: use ``mT`` or ``permute_dims``)."""
        if self.ndim != 2:
            raise ValueError(
                f"Array.T is defined for 2-d arrays only (this one has {self.ndim} dimensions); use x.mT to swap "
                f"the last two axes, or arraylayer.permute_dims(x, axes)."
            )
        return _wrap(matrix_transpose(self._native))

    @property
    def real(self) -> Array:
        """The real part, as NumPy's ``x.real`` (beyond the standard: ``arraylayer.real``)."""
        from arraylayer.api.elementwise import real

        return _wrap(real(self._native))

    @property
    def imag(self) -> Array:
        """The imaginary part, as NumPy's ``x.imag`` (zeros for real x; beyond the standard: ``arraylayer.imag``)."""
        from arraylayer.api.elementwise import imag

        return _wrap(imag(self._native))

    def round(self, decimals: int = 0) -> Array:
        """Rounded half to even at ``decimals`` places, as NumPy's ``x.round(decimals)`` (beyond
        the standard: ``arraylayer.round(x, decimals)``)."""
        from arraylayer.api.extensions import round as round_

        return _wrap(zero_d(round_(self._native, decimals)))

    def to_device(self, device: str, /, *, stream: Any = None) -> Array:
        """The array on ``device`` (an arraylayer device string; ``self`` when already there)."""
        if stream is not None:
            raise ValueError("Array.to_device takes no stream: every backend here synchronises on its own.")
        native = self._native
        moved = _backend(native).to_device(native, canonical_device(device))
        return self if moved is native else _wrap(moved)

    def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType:
        """The Array namespace of this array's backend: ``arraylayer.xp.arrays.<backend>``, whose
        functions take and return Arrays (``arraylayer.xp.<backend>`` is the one for native arrays)."""
        if api_version is not None and (api_version not in _API_VERSIONS or api_version > __array_api_version__):
            served = [v for v in _API_VERSIONS if v <= __array_api_version__]
            raise ValueError(
                f"arraylayer serves the Array API versions {', '.join(served)}; "
                f"got api_version={api_version!r}."
            )
        name = _backend(self._native).name
        namespace = _NAMESPACES.get(name)
        if namespace is None:
            try:
                namespace = _NAMESPACES[name] = importlib.import_module(f"arraylayer.xp.arrays.{name}")
            except ModuleNotFoundError:
                raise ArrayLayerError(
                    f"arraylayer has no Array namespace module for the {name!r} backend (arraylayer.xp.arrays "
                    f"has numpy, jax, torch and tensorflow); call the functions of arraylayer directly."
                ) from None
        return namespace

    # -- interchange ----------------------------------------------------------------------------
    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        """The DLPack capsule of the native array (TensorFlow's through tf.experimental.dlpack)."""
        native = self._native
        if dl_device is not None:  # its own device means "as is": TensorFlow refuses any dl_device
            if tuple(dl_device) != self.__dlpack_device__():
                raise BufferError(f"__dlpack__(dl_device={dl_device}): the Array is on {self.__dlpack_device__()} "
                                  f"and DLPack export does not move data; call to_device first.")
            dl_device = None
        if copy:  # copied here, the same on every backend (TensorFlow's exporter has no copy=)
            native, copy = _backend(native).copy(native), None
        producer = getattr(native, "__dlpack__", None)
        if producer is None:
            backend = _backend(native)
            if not backend.chunked:  # TensorFlow tensors export through a function
                return backend.module.experimental.dlpack.to_dlpack(native)
            producer = backend.to_numpy(native).__dlpack__  # dask: computed, as an export asks for memory
        if max_version is not None and max_version[0] < 1:  # a DLPack 0.x consumer: the legacy capsule,
            max_version = None  # every producer's default (JAX refuses to be asked below 0.5)
        options = {key: value for key, value in (("stream", stream), ("max_version", max_version),
                                                 ("dl_device", dl_device), ("copy", copy)) if value is not None}
        return producer(**options)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The DLPack (device type, device id) of the native array."""
        device = getattr(self._native, "__dlpack_device__", None)
        if device is not None:
            return device()  # type: ignore[no-any-return]
        kind, _, index = self.device.partition(":")
        return _DLPACK_DEVICE_TYPE[kind], int(index or 0)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        """A NumPy array with the same values (NumPy interoperability: ``np.asarray(a)``)."""
        import numpy as np

        native = self._native
        result = _backend(native).to_numpy(native)
        if type(result) is not np.ndarray:  # a NumPy scalar (TensorFlow's 0-d tensors give one)
            result = np.asarray(result)
        if dtype is not None:
            result = result.astype(dtype, copy=False)
        return np.array(result, copy=True) if copy else result

    def __tf_tensor__(self, dtype: Any = None, name: str | None = None) -> Any:
        """Refuse TensorFlow's implicit conversion, so that ``tf_tensor + a`` falls back to
        ``a.__radd__`` (arraylayer's semantics) instead of TensorFlow's."""
        raise TypeError(
            "arraylayer.Array is not converted to a tf.Tensor implicitly (its operators keep arraylayer's "
            "semantics). Pass a.native to TensorFlow, or put the Array on the left of the operator. (TensorFlow "
            "also shows this error when `tensor <op> array` reached arraylayer and arraylayer refused the "
            "operation: call the arraylayer function, e.g. arraylayer.subtract(tensor, array), to see why.)"
        )

    def __tf_flatten__(self) -> tuple[None, tuple[Any]]:
        """TensorFlow's nest protocol: an Array is the one native array inside it."""
        return None, (self._native,)

    @classmethod
    def __tf_unflatten__(cls, metadata: None, components: Sequence[Any]) -> Array:
        return _wrapper_of(cls)(components[0])

    def __tf_tracing_type__(self, context: Any) -> Any:
        """tf.function's type for an Array argument: a nest of the native tensor's type (one trace
        per shape and dtype, as for the tensor itself). Without it, tf.function would take the
        Array for a NumPy array (it has ``__array__``) and pass the function a tensor."""
        from tensorflow.core.function.trace_type import custom_nest_trace_type, trace_type_builder

        return custom_nest_trace_type.CustomNestTraceType(
            type(self), None, (trace_type_builder.from_value(self._native, context),)
        )

    # -- Python protocols -------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"arraylayer.Array({self._native!r})"

    def __str__(self) -> str:
        return str(self._native)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d arraylayer.Array")
        if shape[0] is None:
            raise TypeError("len() of an arraylayer.Array whose first dimension is unknown while tracing")
        return shape[0]

    def __iter__(self) -> Iterator[Array]:
        for index in range(len(self)):
            yield self[index]

    def _one_element(self, to: str, error: type[Exception] = TypeError) -> Any:
        """The Python scalar of a one-element array; ``error`` (NumPy's: ValueError for bool,
        TypeError for the others) when it has more or fewer elements."""
        size = self.size
        if size != 1:
            raise error(
                f"Only an array of one element converts to {to}; this one has shape {self.shape}. Reduce it "
                f"first (arraylayer.any, arraylayer.all, arraylayer.sum ...) or index one element."
            )
        native = self._native
        item = getattr(native, "item", None)
        if item is None:  # TensorFlow eager tensors, dask arrays (computed here: a Python value is asked for)
            return _backend(native).to_numpy(native).item()
        return item()

    def __bool__(self) -> bool:
        return bool(self._one_element("bool", ValueError))

    def __int__(self) -> int:
        if self.dtype.category == "complex":
            raise TypeError("int() of a complex array is undefined; take arraylayer.real or arraylayer.abs first.")
        return int(self._one_element("int"))

    def __float__(self) -> float:
        if self.dtype.category == "complex":
            raise TypeError("float() of a complex array is undefined; take arraylayer.real or arraylayer.abs first.")
        return float(self._one_element("float"))

    def __complex__(self) -> complex:
        return complex(self._one_element("complex"))

    def __index__(self) -> int:
        if self.dtype.category not in ("int", "uint"):
            raise TypeError(f"Only integer arrays are indices (__index__); this one is {self.dtype}.")
        return operator.index(self._one_element("an index"))

    # -- indexing ---------------------------------------------------------------------------------
    def __getitem__(self, key: Any, /) -> Array:
        """``native[key]`` with the standard's keys and NumPy's results and errors on every backend:
        JAX and TensorFlow go through arraylayer.array.indexing (bounds checks, integer arrays and 0-d
        masks on TensorFlow); Arrays in ``key`` are unwrapped; an element of a NumPy array is a 0-d
        view. (With the C extension, plain keys on NumPy and torch arrays take its compiled form.)"""
        native = self._native
        getitem = _GETITEM_PLANS.get(native.__class__)
        if getitem is None:
            getitem = _getitem_plan(native)
        result = getitem(native, _unwrap_key(key))
        return _wrap(result if result.__class__ is native.__class__ else zero_d(result))

    def __setitem__(self, key: Any, value: Any, /) -> None:
        """Assign ``value`` (an array, a NumPy scalar or a Python scalar, under arraylayer.array.inplace's
        dtype rule) to ``self[key]``: in place for NumPy, torch and tf.Variable, by rebinding to
        ``.at[key].set(value)`` for JAX and to a scatter for TensorFlow tensors."""
        native = self._native
        backend = _backend(native)
        dtype = backend.dtype_of(native)
        converted = operand(value, native)
        value = value if converted is NotImplemented else converted
        check_assignment(dtype, result_type(native, value), value, native)
        check_writeable(backend, native)
        value = backend.asarray(value, dtype)  # the value itself when it already is such an array
        key = _unwrap_key(key)
        if backend.name == "jax":
            indexing.jax_check_set(native, key)
            self._native = indexing.jax_set(native, key, value)
        elif backend.name == "tensorflow":
            updated = indexing.tensorflow_set(backend.module, native, key, value)
            if hasattr(native, "assign"):  # a tf.Variable keeps its identity
                native.assign(updated)
            else:
                self._native = updated
        elif backend.name == "torch":
            try:
                indexing.torch_set(native, key, value)
            except RuntimeError as error:
                if not native.requires_grad:
                    raise
                raise torch_refused(error, "x = al.where(mask, value, x) or set a copy (x.detach().clone())") from None
        elif backend.name == "dask":
            self._native = indexing_dask.dask_set(native, key, value)
        else:
            native[key] = value

    # the operators (a + b is arraylayer.add(a, b) ...) are set by array_operators.install, below


# -- wrapping and unwrapping -----------------------------------------------------------------------

def _new(cls: type[Array], native: Any) -> Array:
    array = object.__new__(cls)
    array._native = native
    return array


def _wrap(native: Any) -> Array:
    """An Array around ``native`` without checking it (for arrays arraylayer itself made)."""
    array = object.__new__(Array)
    array._native = native
    return array


def _wrapper_of(cls: type[Array]) -> Callable[[Any], Array]:
    return _wrap if cls is Array else (lambda native: _new(cls, native))


def _unwrap(array: Array) -> Any:
    return array._native


def _unwrap_key(key: Any) -> Any:
    """``key`` with Arrays as their native arrays (NumPy ones in a layout every framework reads)
    and Array slice bounds as Python ints."""
    if key.__class__ in _AS_IS:
        return key
    if isinstance(key, Array):
        return shareable(key._native)
    if key.__class__ is tuple:
        return tuple(_unwrap_key_part(k) for k in key)
    return _unwrap_key_part(key)


def _unwrap_key_part(k: Any) -> Any:
    if isinstance(k, Array):
        return shareable(k._native)
    if k.__class__ is slice and not indexing._plain_slice(k):
        return slice(*(None if b is None else operator.index(b) for b in (k.start, k.stop, k.step)))
    return indexing.python_part(k)


def _tensorflow_getitem(x: Any, key: Any) -> Any:
    import tensorflow as tf

    return indexing.tensorflow_getitem(tf, x, key)


# key parts that every backend's getitem takes as they are
_AS_IS: Final = frozenset({int, type(None), type(Ellipsis)})

# Backends whose own indexing is not the standard's: name -> getitem(native, key).
_STANDARD_GETITEM: dict[str, Callable[[Any, Any], Any]] = {
    "numpy": indexing.numpy_getitem,
    "jax": indexing.jax_getitem,
    "torch": indexing.torch_getitem,
    "tensorflow": _tensorflow_getitem,
    "dask": indexing_dask.dask_getitem,
}
# The getitem plans: native class -> its backend's getitem (filled on first use, emptied when the
# registry changes).
_GETITEM_PLANS: dict[type, Callable[[Any, Any], Any]] = {}
# Backends whose plain keys the compiled __getitem__ takes: name -> (module, class) of the one
# native class it takes them on, and its plan there (compiled_dispatch.GETITEM_PLANS).
_COMPILED_GETITEM: Final = {"numpy": ("numpy", "ndarray", "numpy"), "torch": ("torch", "Tensor", "torch")}


def _native_getitem(x: Any, key: Any) -> Any:
    return x[key]


def _getitem_plan(native: Any) -> Callable[[Any, Any], Any]:
    """The getitem of ``native``'s class, stored for the next call (in C too, for the classes of
    :data:`_COMPILED_GETITEM`); not stored while Dynamo traces, nor for a class of no backend's."""
    cls = native.__class__
    backend = backend_of_class(cls)
    if backend is None:  # no backend's class (an Array made with _wrap): the active backend's, as before
        return _STANDARD_GETITEM.get(_backend(native).name, _native_getitem)
    getitem = _STANDARD_GETITEM.get(backend.name, _native_getitem)
    if replaying():
        return getitem
    _GETITEM_PLANS[cls] = getitem
    compiled = _COMPILED_GETITEM.get(backend.name)
    if compiled is not None and getattr(sys.modules.get(compiled[0]), compiled[1], None) is cls:
        getitem_plan(cls, compiled[2])
    return getitem


def _forget_getitem_plans() -> None:
    _GETITEM_PLANS.clear()
    getitem_clear()


on_registry_change(_forget_getitem_plans)  # a backend registered at run time may own a class anew
register_wrapper(Array, _unwrap, _wrap)
install(Array)
Array.__getitem__ = getitem_method(Array, Array.__getitem__)  # type: ignore[method-assign]
fill_getitem(Array)
