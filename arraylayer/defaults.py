"""Default dtypes, and inference of a function's ``dtype`` argument.

The four defaults (int32, uint32, float32 and complex64 out of the box) are
:class:`~arraylayer.context.Setting` objects: ``set_default_*`` changes the
process-wide value, ``use_default_*`` overrides it for one thread or task.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Final

from .context import Setting, reads_setting
from .dtypes import _ALIASES, Dtype, DtypeLike, as_dtype
from .errors import InvalidDtypeError

__all__ = [
    "default_int_dtype",
    "default_uint_dtype",
    "default_float_dtype",
    "default_complex_dtype",
    "set_default_int_dtype",
    "set_default_uint_dtype",
    "set_default_float_dtype",
    "set_default_complex_dtype",
    "use_default_int_dtype",
    "use_default_uint_dtype",
    "use_default_float_dtype",
    "use_default_complex_dtype",
    "use_default_dtypes",
    "default_dtype",
    "infer_dtype",
]


def _of_kind(kind: str, setter: str):  # type: ignore[no-untyped-def]
    def validate(value: object) -> Dtype:
        dtype = as_dtype(value)
        if dtype.kind != kind:
            raise InvalidDtypeError(
                f"{setter} needs a {_KIND_WORDS[kind]} dtype, got {dtype}; "
                f"choose one of {', '.join(d for d in _ALIASES.values() if d.kind == kind)}."
            )
        return dtype

    return validate


_KIND_WORDS: Final = {"int": "signed integer", "uint": "unsigned integer", "float": "real floating-point",
                      "complex": "complex"}

DEFAULT_INT: Final = Setting("default_int_dtype", "int32", _of_kind("int", "the default int dtype"))
DEFAULT_UINT: Final = Setting("default_uint_dtype", "uint32", _of_kind("uint", "the default uint dtype"))
DEFAULT_FLOAT: Final = Setting("default_float_dtype", "float32", _of_kind("float", "the default float dtype"))
DEFAULT_COMPLEX: Final = Setting(
    "default_complex_dtype", "complex64", _of_kind("complex", "the default complex dtype")
)



# The readers return plain names (a tracing compiler such as torch.compile can treat a str as
# a constant, not a Dtype); the public functions turn them back into Dtype singletons.
@reads_setting
def _default_int_name() -> str:
    return str(DEFAULT_INT.var.get(DEFAULT_INT.process))


@reads_setting
def _default_uint_name() -> str:
    return str(DEFAULT_UINT.var.get(DEFAULT_UINT.process))


@reads_setting
def _default_float_name() -> str:
    return str(DEFAULT_FLOAT.var.get(DEFAULT_FLOAT.process))


@reads_setting
def _default_complex_name() -> str:
    return str(DEFAULT_COMPLEX.var.get(DEFAULT_COMPLEX.process))


def default_int_dtype() -> Dtype:
    """The dtype a Python int becomes when nothing else decides (int32 unless changed)."""
    return _ALIASES[_default_int_name()]


def default_uint_dtype() -> Dtype:
    """The unsigned accumulator dtype of reductions (uint32 unless changed)."""
    return _ALIASES[_default_uint_name()]


def default_float_dtype() -> Dtype:
    """The dtype a Python float becomes when nothing else decides (float32 unless changed)."""
    return _ALIASES[_default_float_name()]


def default_complex_dtype() -> Dtype:
    """The dtype a Python complex becomes when nothing else decides (complex64 unless changed)."""
    return _ALIASES[_default_complex_name()]


def set_default_int_dtype(dtype: DtypeLike) -> Dtype:
    """Set the process-wide default int dtype (a signed integer dtype); returns it."""
    return DEFAULT_INT.set_process(dtype)


def set_default_uint_dtype(dtype: DtypeLike) -> Dtype:
    """Set the process-wide default uint dtype (an unsigned integer dtype); returns it."""
    return DEFAULT_UINT.set_process(dtype)


def set_default_float_dtype(dtype: DtypeLike) -> Dtype:
    """Set the process-wide default float dtype (a real floating-point dtype); returns it."""
    return DEFAULT_FLOAT.set_process(dtype)


def set_default_complex_dtype(dtype: DtypeLike) -> Dtype:
    """Set the process-wide default complex dtype; returns it."""
    return DEFAULT_COMPLEX.set_process(dtype)


def use_default_int_dtype(dtype: DtypeLike):  # type: ignore[no-untyped-def]
    """Context manager: the default int dtype for this thread or task, inside the block."""
    return DEFAULT_INT.scope(dtype)


def use_default_uint_dtype(dtype: DtypeLike):  # type: ignore[no-untyped-def]
    """Context manager: the default uint dtype for this thread or task, inside the block."""
    return DEFAULT_UINT.scope(dtype)


def use_default_float_dtype(dtype: DtypeLike):  # type: ignore[no-untyped-def]
    """Context manager: the default float dtype for this thread or task, inside the block."""
    return DEFAULT_FLOAT.scope(dtype)


def use_default_complex_dtype(dtype: DtypeLike):  # type: ignore[no-untyped-def]
    """Context manager: the default complex dtype for this thread or task, inside the block."""
    return DEFAULT_COMPLEX.scope(dtype)


@contextmanager
def use_default_dtypes(
    *,
    int: DtypeLike | None = None,  # noqa: A002 - the kinds' own names read best here
    uint: DtypeLike | None = None,
    float: DtypeLike | None = None,  # noqa: A002
    complex: DtypeLike | None = None,  # noqa: A002
) -> Iterator[None]:
    """Context manager for several defaults at once, e.g. 64-bit ones:
    ``use_default_dtypes(int="int64", float="float64", complex="complex128")``."""
    with ExitStack() as stack:
        for setting, value in ((DEFAULT_INT, int), (DEFAULT_UINT, uint), (DEFAULT_FLOAT, float),
                               (DEFAULT_COMPLEX, complex)):
            if value is not None:
                stack.enter_context(setting.scope(value))
        yield


def default_dtype_of_kind(pytype: type) -> Dtype:
    """The current default dtype for the Python type ``bool``, ``int``, ``float`` or ``complex``."""
    return _DEFAULT_OF_PYTYPE[pytype]()


_DEFAULT_OF_PYTYPE: Final = {bool: lambda: _ALIASES["bool"], int: default_int_dtype, float: default_float_dtype,
                              complex: default_complex_dtype}


# Kind order used to pick the dtype of a mix of Python scalars: bool < int < float < complex.
_SCALAR_RANK: Final = {bool: 0, int: 1, float: 2, complex: 3}
_RANKED_TYPES: Final = (bool, int, float, complex)


def _scan(item: Any, arrays: list[Any]) -> int:
    """Highest scalar rank in ``item`` (nested lists/tuples walked); arrays are collected."""
    rank = _SCALAR_RANK.get(type(item))
    if rank is not None:
        return rank
    if isinstance(item, (list, tuple)):
        return max((_scan(element, arrays) for element in item), default=-1)
    if hasattr(item, "dtype"):
        arrays.append(item)
        return -1
    # numpy scalars and other numbers that are subclasses of the Python types
    for pytype in reversed(_RANKED_TYPES):
        if isinstance(item, pytype):
            return _SCALAR_RANK[pytype]
    return -1


def infer_dtype(dtype: DtypeLike | None, *items: Any) -> Dtype:
    """The dtype a function should produce, in the order Ivy's "Data Types" notes give.

    1. ``dtype``, when given;
    2. else the dtype of the array arguments among ``items`` (joined on the lattice
       when there are several);
    3. else the default dtype of the highest kind among the *relevant* Python scalars
       in ``items`` (nested lists and tuples are walked): bool, then int, float, complex;
    4. else the default float dtype.

    Call it inline, ``dtype = infer_dtype(dtype, fill_value)``; with a ``dtype``
    already given it is one dict look-up. Each item must be None (ignored), a Python number,
    an array, or a rectangular nested list/tuple of those: anything else (a str, bytes, a dict,
    a set, an arbitrary object, a ragged list) raises InvalidArgumentTypeError or
    InvalidArgumentError instead of being read as "no information" (float32).
    """
    for index, item in enumerate(items):
        if item is not None:
            from .api.arguments import array_like

            array_like(item, f"items[{index}]" if len(items) > 1 else "item")
    return _infer_dtype(dtype, *items)


def _infer_dtype(dtype: DtypeLike | None, *items: Any) -> Dtype:
    """:func:`infer_dtype` without checking ``items`` (for callers that check them, or pass
    arguments their own checks see next)."""
    if dtype is not None:
        try:
            return _ALIASES[dtype]
        except (KeyError, TypeError):
            return as_dtype(dtype)
    arrays: list[Any] = []
    rank = -1
    for item in items:  # a loop, not max() over a generator: torch.compile traces this one
        rank = max(rank, _scan(item, arrays))
    if arrays:
        from .promotion import lattice_join_of_arrays

        return lattice_join_of_arrays(arrays)
    if rank < 0:
        return default_float_dtype()
    return default_dtype_of_kind(_RANKED_TYPES[rank])


def default_dtype(dtype: DtypeLike | None = None, item: Any = None, as_native: bool = False) -> Any:
    """The dtype to use for a call, as :func:`infer_dtype` decides it from one ``item``.

    With ``as_native=True`` the active backend's native dtype object is returned.
    """
    result = infer_dtype(dtype) if item is None else infer_dtype(dtype, item)
    if as_native:
        from .native import as_native_dtype

        return as_native_dtype(result)
    return result
