"""Default dtypes.

The four defaults (int32, uint32, float32 and complex64 out of the box) are
:class:`~arraylayer.context.Setting` objects: ``set_default_*`` changes the
process-wide value, ``use_default_*`` overrides it for one thread or task.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Final

from arraylayer.context import Setting, reads_setting
from arraylayer.dtypes import ALIASES, Dtype, DtypeLike, as_dtype, set_default_resolver
from arraylayer.errors import InvalidDtypeError

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
]


def _of_kind(kind: str, setter: str):  # type: ignore[no-untyped-def]
    def validate(value: object) -> Dtype:
        dtype = as_dtype(value)
        if dtype.category != kind:
            raise InvalidDtypeError(
                f"{setter} needs a {_KIND_WORDS[kind]} dtype, got {dtype}; "
                f"choose one of {', '.join(d.name for d in ALIASES.values() if d.category == kind)}."
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
    return ALIASES[_default_int_name()]


def default_uint_dtype() -> Dtype:
    """The unsigned accumulator dtype of reductions (uint32 unless changed)."""
    return ALIASES[_default_uint_name()]


def default_float_dtype() -> Dtype:
    """The dtype a Python float becomes when nothing else decides (float32 unless changed)."""
    return ALIASES[_default_float_name()]


def default_complex_dtype() -> Dtype:
    """The dtype a Python complex becomes when nothing else decides (complex64 unless changed)."""
    return ALIASES[_default_complex_name()]


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


_DEFAULT_OF_PYTYPE: Final = {bool: lambda: ALIASES["bool"], int: default_int_dtype, float: default_float_dtype,
                              complex: default_complex_dtype}
_DEFAULT_OF_CATEGORY: Final = {"int": default_int_dtype, "uint": default_uint_dtype, "float": default_float_dtype,
                               "complex": default_complex_dtype}

set_default_resolver(lambda category: _DEFAULT_OF_CATEGORY[category]())
