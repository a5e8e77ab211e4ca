"""The dtypes: :class:`Dtype`, every dtype, kind queries, the ``all_*`` tuples, finfo/iinfo (the
names, categories and widths themselves are data in :mod:`arraylayer.dtypes.catalogue`).

The dtypes are the standard's fifteen, bfloat16, and the low-precision family (float8/6/4, int4/int2/int1;
``all_low_precision_dtypes``), which the ``all_*`` tuples of the standard's dtypes leave out.

A :class:`Dtype` is an object equal to its name (``arraylayer.float32 == "float32"``) that
hashes as its name, so a dict keyed by Dtypes is found by names and the other way round.
There is exactly one instance per dtype: ``Dtype("float32") is arraylayer.float32``.

Native dtype objects (``numpy.float32``, ``torch.int8``, ``tf.uint8``, ``jnp.bfloat16``)
are accepted wherever a dtype is, and resolved once: the first resolution of an
object is cached, so later look-ups are a single dict hit. No framework is imported
here (NumPy only inside :attr:`Dtype.numpy_dtype`); an object is only inspected if the
caller already holds it. Nothing of arraylayer is imported but its errors and that data: the Python
types ``int``, ``float`` and ``complex`` resolve through the resolver that
:mod:`arraylayer.dtypes.defaults` installs (:func:`set_default_resolver`).

The folder ``arraylayer/dtypes/`` owns the dtype core as data and rules: the Dtype objects (here), their
catalogue, JAX's lattices, the four promotion policies, promotion and casting rules, the default dtypes,
dtype inference, the public functions' dtype rules. It knows no backend.

May import: the base modules, ``lowp.formats`` (the low-precision formats as data).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Union

from arraylayer.dtypes.catalogue import CATALOGUE, CHAR, KIND_LETTER, LOW_PRECISION, native_name
from arraylayer.dtypes.numpy_face import NUMPY_DTYPE_ATTRIBUTES, AsNumpyDtype
from arraylayer.errors import InvalidDtypeError
from arraylayer.lowp.formats import FORMATS

__all__ = ["Dtype", "DtypeLike", "as_dtype", "all_dtypes", "all_numeric_dtypes", "all_int_dtypes",
           "all_uint_dtypes", "all_float_dtypes", "all_complex_dtypes", "all_low_precision_dtypes",
           "all_float8_dtypes", "all_low_precision_float_dtypes", "all_low_precision_int_dtypes",
           "is_bool_dtype", "is_int_dtype", "is_uint_dtype", "is_float_dtype", "is_complex_dtype",
           "is_numeric_dtype", "dtype_bits", "finfo", "iinfo", "FInfo", "IInfo"]


class Dtype:
    """One of arraylayer's dtypes: an object equal to its name, one instance per dtype.

    ``Dtype(x)`` accepts a dtype name (``"float32"``), another Dtype, a native dtype
    object of NumPy, JAX, PyTorch or TensorFlow, or one of the Python types ``bool``,
    ``int``, ``float`` and ``complex`` (which give the current default dtype of that
    kind). Anything else raises :class:`~arraylayer.InvalidDtypeError`, which lists
    the valid names and suggests the nearest one.

    ``kind`` is NumPy's one-letter code (``'b'``, ``'i'``, ``'u'``, ``'f'``, ``'c'``) of what the
    values mean; ``category`` is arraylayer's word for it (``"bool"``, ``"int"``, ``"uint"``,
    ``"float"``, ``"complex"``). ``numpy.dtype(d)`` works on NumPy 2.4 and later; ``d.numpy_dtype``
    on any NumPy. ``bits`` is the width of a value (4 for int4), ``itemsize`` the bytes a backend stores
    per element (1 for every low-precision type); ``is_low_precision`` marks the float8/6/4 and
    int4/int2 family, whose kind follows its meaning as JAX's does (float8 is "real floating").

    Once NumPy is imported, ``isinstance(d, numpy.dtype)`` is true (``d.__class__`` is ``numpy.dtype``;
    ``type(d)`` stays Dtype), and NumPy's dtype attributes (``type``, ``str``, ``byteorder``, ``names``...)
    are those of ``numpy.dtype(d)``: code written for NumPy's dtypes (xarray's ``maybe_promote``) takes a
    Dtype as the NumPy dtype it converts to, while a Dtype still equals and hashes as its name and keeps
    arraylayer's promotion rules.
    """

    __slots__ = ("name", "category", "kind", "bits", "itemsize", "char", "is_low_precision", "_hash")
    __class__ = AsNumpyDtype()  # type: ignore[assignment]  # numpy.dtype to isinstance, once NumPy is imported

    name: str
    category: str
    kind: str
    bits: int
    itemsize: int
    char: str
    is_low_precision: bool

    def __new__(cls, value: Any) -> Dtype:
        try:
            return ALIASES[value]
        except (KeyError, TypeError):
            return resolve(value)

    @classmethod
    def _make(cls, name: str) -> Dtype:
        self = object.__new__(cls)
        category, bits = CATALOGUE[name]
        for attribute, value in (("name", name), ("category", category), ("kind", KIND_LETTER[category]),
                                 ("bits", bits), ("itemsize", (bits + 7) // 8), ("char", CHAR[name]),
                                 ("is_low_precision", name in LOW_PRECISION), ("_hash", hash(name))):
            object.__setattr__(self, attribute, value)
        return self

    def __setattr__(self, attribute: str, value: Any) -> None:
        raise AttributeError(f"arraylayer.{self.name} is immutable: its {attribute!r} cannot be set.")

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        kind = type(other)  # type(), not __class__ (numpy.dtype, see dtypes.numpy_face)
        if kind is Dtype:
            return False
        if kind is str or isinstance(other, str):
            return other == self.name
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"arraylayer.{self.name}"

    def __format__(self, spec: str) -> str:
        return format(self.name, spec)

    def __reduce__(self) -> tuple[type[Dtype], tuple[str]]:
        return (Dtype, (self.name,))

    def __copy__(self) -> Dtype:
        return self

    def __deepcopy__(self, memo: Any) -> Dtype:
        return self

    def __getattr__(self, attribute: str) -> Any:
        # only for attributes not found: NumPy's dtype attributes, from numpy.dtype(self)
        if attribute in NUMPY_DTYPE_ATTRIBUTES:
            return getattr(self.numpy_dtype, attribute)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r}")

    @property
    def numpy_dtype(self) -> Any:
        """This dtype as a ``numpy.dtype`` (bfloat16 and the low-precision types through ml_dtypes);
        imports NumPy."""
        import numpy as np

        if self.name == "bfloat16" or self.is_low_precision:
            import ml_dtypes

            return np.dtype(getattr(ml_dtypes, self.name))
        return np.dtype(self.name)

    # NumPy 2.4 and later read this in ``numpy.dtype(d)`` (and so in ``numpy.dtype == d``).
    __numpy_dtype__ = numpy_dtype

    @property
    def is_bool(self) -> bool:
        return self.category == "bool"

    @property
    def is_integer(self) -> bool:
        """True for signed and unsigned integers (not bool)."""
        return self.category in ("int", "uint")

    @property
    def is_signed_integer(self) -> bool:
        return self.category == "int"

    @property
    def is_unsigned(self) -> bool:
        return self.category == "uint"

    @property
    def is_floating(self) -> bool:
        """True for real floating-point dtypes, bfloat16 included."""
        return self.category == "float"

    @property
    def is_complex(self) -> bool:
        return self.category == "complex"

    @property
    def is_numeric(self) -> bool:
        """True for every dtype but bool."""
        return self.category != "bool"


DtypeLike = Union[Dtype, str, type, Any]
"""Anything :class:`Dtype` accepts: a name, a Dtype, a native dtype object, or bool/int/float/complex."""

# The one instance of each dtype, in canonical order.
CANONICAL: Final[dict[str, Dtype]] = {name: Dtype._make(name) for name in CATALOGUE}

# Everything already known to resolve to a Dtype, keyed by the object itself. Plain
# strings hit the Dtype entries because a Dtype hashes and compares as its name.
ALIASES: dict[Any, Dtype] = dict(CANONICAL)

# NumPy's (and so JAX's) low-precision dtype objects and ml_dtypes' types -> Dtype, read by resolve().
_LOW_NUMPY: dict[Any, Dtype] = {}
_NUMPY_LIKE: Final = ("numpy", "ml_dtypes")

# Called as listener(native, dtype) for every new alias: the promotion tables add
# the alias as a key so that native dtypes are a single look-up there too.
_alias_listeners: list[Callable[[Any, Dtype], None]] = []

# category ("int", "uint", "float", "complex") -> its current default dtype (set by arraylayer.dtypes.defaults).
_default_resolver: list[Callable[[str], Dtype]] = []


def add_alias_listener(listener: Callable[[Any, Dtype], None]) -> None:
    """Call ``listener(native, dtype)`` for every alias registered from now on."""
    _alias_listeners.append(listener)


def set_default_resolver(resolver: Callable[[str], Dtype]) -> None:
    """Install ``resolver(category)``, the current default dtype of ``"int"``, ``"uint"``, ``"float"``
    or ``"complex"``: the Python types ``int``, ``float`` and ``complex`` resolve through it."""
    _default_resolver[:] = [resolver]


def _default_of(category: str) -> Dtype:
    return _default_resolver[0](category)  # arraylayer/__init__ imports defaults, which installs it


def register_dtype_alias(native: Any, dtype: DtypeLike) -> None:
    """Teach arraylayer that the native object ``native`` means ``dtype``.

    Backends call this for their dtype objects so that resolving them is one dict
    look-up. Unhashable objects are ignored (they resolve through the slow path).
    Canonical names, Python types and strings cannot be aliased, and an alias never
    changes its meaning: either would rewire promotion for the rest of the process.
    """
    target = as_dtype(dtype)
    array_like = not isinstance(native, type) and any(
        hasattr(native, a) for a in ("__dlpack__", "__array__", "__array_interface__")
    )
    if native is None or array_like or isinstance(native, (list, tuple, dict, set, bytes, int, float, complex)):
        # an array, a number, a container: not a dtype object (an array would alias its own hash)
        raise InvalidDtypeError(
            f"register_dtype_alias(native={native!r:.60}, ...): native must be a framework's dtype object "
            f"(such as numpy.dtype('float32') or torch.float32), not a {type(native).__qualname__}."
        )
    if isinstance(native, (str, Dtype)) or any(native is python_type for python_type in (bool, int, float, complex)):
        raise InvalidDtypeError(
            f"register_dtype_alias(native={native!r}, ...): dtype names and the Python types bool, int, "
            "float and complex have fixed meanings and cannot be aliased. Register a framework's dtype "
            "object instead."
        )
    if target.is_low_precision and type(native).__module__.split(".")[0] in _NUMPY_LIKE or (
            isinstance(native, type) and native.__module__.split(".")[0] in _NUMPY_LIKE):
        # NumPy's (ml_dtypes') low-precision dtype objects stay out of ALIASES and the promotion tables:
        # torch.compile cannot compare them with the keys it looks up there (a graph break)
        _LOW_NUMPY[native] = target
        return
    try:
        # Some native dtypes hash as, and compare equal to, a small int (tf.int32 == 3).
        # Such a key would turn the Python value 3 into a dtype, so it is never stored.
        if native == hash(native):
            return
        known = ALIASES.get(native)
    except TypeError:  # unhashable
        return
    if known is not None and known is not target:
        raise InvalidDtypeError(
            f"register_dtype_alias(native={native!r}, dtype={str(target)!r}): {native!r} already means "
            f"{known}; an alias cannot change its meaning."
        )
    ALIASES[native] = target
    for listener in _alias_listeners:
        listener(native, target)


def resolve(value: Any) -> Dtype:
    """Slow path of :class:`Dtype`: Python types, native objects, and the error."""
    if value is bool:
        return CANONICAL["bool"]
    if value is int or value is float or value is complex:
        return _default_of(_SCALAR_KINDS[value])
    if isinstance(value, str):
        raise _invalid(value)
    try:
        return _LOW_NUMPY[value]
    except (KeyError, TypeError):
        pass
    name = native_name(value)
    if name is None or name not in CANONICAL:
        raise _invalid(value)
    dtype = CANONICAL[name]
    try:
        register_dtype_alias(value, dtype)
    except TypeError:
        pass
    return dtype


def did_you_mean(value: object, choices: Any) -> str:
    """`` Did you mean 'x'?`` naming the choice nearest ``value`` (for error messages), or ``""``."""
    import difflib

    hint = difflib.get_close_matches(str(value).lower(), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" Did you mean {hint[0]!r}?" if hint else ""


def _invalid(value: Any) -> InvalidDtypeError:
    import difflib

    shown = repr(value)
    names = list(CANONICAL)
    candidate = str(value).rsplit(".", 1)[-1] if isinstance(value, (str, type)) or hasattr(value, "name") else ""
    if isinstance(value, type):
        candidate = value.__name__
    if candidate.lower() in ("int", "uint", "float", "complex"):  # a kind: its default dtype, not the nearest name
        kind = candidate.lower()
        default = _default_of(kind)
        also = "" if kind == "uint" else f"; the Python type {kind} gives it too"
        suggestion = f" Did you mean {str(default)!r} (the default {kind} dtype{also})?"
    else:
        hint = difflib.get_close_matches(candidate.lower(), names, n=1, cutoff=0.6)
        suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    if hasattr(value, "dtype") and not isinstance(value, type):
        suggestion += " (This looks like an array: pass its dtype, or use arraylayer.result_type.)"
    elif isinstance(value, (list, tuple, set, dict)):
        kind = type(value).__name__
        return InvalidDtypeError(
            f"{shown} is not an arraylayer dtype: a dtype was expected, got a {kind}. Pass one dtype such as 'float32' "
            f"(for a sequence of dtypes, call the function once per dtype). Valid dtypes are: {', '.join(names)}."
        )
    return InvalidDtypeError(
        f"{shown} is not an arraylayer dtype.{suggestion} Valid dtypes are: {', '.join(names)}."
    )


def as_dtype(value: DtypeLike) -> Dtype:
    """Resolve any dtype-like value to its :class:`Dtype` (same rules as ``Dtype(value)``)."""
    try:
        return ALIASES[value]
    except (KeyError, TypeError):
        return resolve(value)


def _by_kind(*kinds: str, low_precision: bool = False) -> tuple[Dtype, ...]:
    return tuple(d for name, d in CANONICAL.items()
                 if CATALOGUE[name][0] in kinds and d.is_low_precision == low_precision)


# The standard's dtypes and bfloat16 (what the official suite and the tests iterate) ...
all_dtypes: Final[tuple[Dtype, ...]] = tuple(d for d in CANONICAL.values() if not d.is_low_precision)
all_numeric_dtypes: Final = _by_kind("int", "uint", "float", "complex")
all_int_dtypes: Final = _by_kind("int", "uint")
all_uint_dtypes: Final = _by_kind("uint")
all_float_dtypes: Final = _by_kind("float")
all_complex_dtypes: Final = _by_kind("complex")
# ... and the low-precision family beside them (never in the tuples above).
all_low_precision_dtypes: Final = tuple(d for d in CANONICAL.values() if d.is_low_precision)
all_low_precision_float_dtypes: Final = _by_kind("float", low_precision=True)
all_low_precision_int_dtypes: Final = _by_kind("int", "uint", low_precision=True)
all_float8_dtypes: Final = tuple(d for d in all_low_precision_float_dtypes if d.bits == 8)

_SCALAR_KINDS: Final = {bool: "bool", int: "int", float: "float", complex: "complex"}


def _kind_of(x: Any) -> str:
    """The kind of a dtype-like, an array (anything with ``.dtype``) or a Python scalar."""
    kind = _SCALAR_KINDS.get(x.__class__)
    if kind is not None:
        return kind
    if isinstance(x, type) and x in _SCALAR_KINDS:  # the Python types themselves
        return _SCALAR_KINDS[x]
    if not isinstance(x, (str, type)) and hasattr(x, "dtype"):
        x = x.dtype
    return as_dtype(x).category


def is_bool_dtype(x: Any) -> bool:
    """True if ``x`` (a dtype, an array or a Python scalar) is boolean."""
    return _kind_of(x) == "bool"


def is_int_dtype(x: Any) -> bool:
    """True if ``x`` is a signed or unsigned integer (bool excluded)."""
    return _kind_of(x) in ("int", "uint")


def is_uint_dtype(x: Any) -> bool:
    """True if ``x`` is an unsigned integer."""
    return _kind_of(x) == "uint"


def is_float_dtype(x: Any) -> bool:
    """True if ``x`` is a real floating-point type (bfloat16 included)."""
    return _kind_of(x) == "float"


def is_complex_dtype(x: Any) -> bool:
    """True if ``x`` is complex."""
    return _kind_of(x) == "complex"


def is_numeric_dtype(x: Any) -> bool:
    """True if ``x`` is anything but bool."""
    return _kind_of(x) != "bool"


def dtype_bits(x: DtypeLike) -> int:
    """Storage width of a dtype (or an array's dtype, or a Python scalar's default dtype) in bits."""
    return _dtype_of(x).bits


@dataclass(frozen=True)
class FInfo:
    """Machine limits of a floating-point dtype (the Array API's ``finfo_object``).

    For a complex dtype the figures are those of its real component, and ``dtype``
    is that real dtype, as the standard specifies.
    """

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: Dtype


@dataclass(frozen=True)
class IInfo:
    """Machine limits of an integer dtype (the Array API's ``iinfo_object``)."""

    bits: int
    max: int
    min: int
    dtype: Dtype


_REAL_OF_COMPLEX: Final = {"complex64": "float32", "complex128": "float64"}


def _dtype_of(x: Any) -> Dtype:
    """The dtype of a dtype-like, an array, or a Python scalar (the default dtype of its kind)."""
    if x.__class__ in _SCALAR_KINDS:
        return as_dtype(x.__class__)
    if not isinstance(x, (str, type)) and hasattr(x, "dtype"):
        x = x.dtype
    return as_dtype(x)


#: (mantissa bits, exponent bits) of each real floating-point format: its limits follow from them.
_FLOAT_FORMATS: Final = {"bfloat16": (7, 8), "float16": (10, 5), "float32": (23, 8), "float64": (52, 11)}


def _float_limits(name: str, mantissa: int, exponent: int) -> FInfo:
    bias = 2 ** (exponent - 1) - 1
    largest = (2.0 - 2.0**-mantissa) * 2.0**bias
    return FInfo(bits=CATALOGUE[name][1], eps=2.0**-mantissa, max=largest, min=-largest,
                 smallest_normal=2.0 ** (1 - bias), dtype=CANONICAL[name])


def _format_limits(name: str) -> FInfo:
    """A low-precision float's limits, from its encoding (float8_e8m0fnu's ``min`` is its smallest
    value, as ml_dtypes says: the type is unsigned)."""
    f = FORMATS[name]
    return FInfo(bits=f.bits, eps=f.eps, max=f.max, min=f.min, smallest_normal=f.smallest_normal,
                 dtype=CANONICAL[name])


def _int_limits(name: str) -> IInfo:
    kind, bits = CATALOGUE[name]
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if kind == "int" else (0, 2**bits - 1)
    return IInfo(bits=bits, max=high, min=low, dtype=CANONICAL[name])


# Built once at import, in plain Python (no ml_dtypes, no numpy): finfo and iinfo are then a dict
# look-up, which torch.compile traces as constants (ml_dtypes' finfo objects it cannot trace).
_FINFO: Final[dict[str, FInfo]] = {name: _float_limits(name, *f) for name, f in _FLOAT_FORMATS.items()}
_FINFO.update({complex_: _FINFO[real] for complex_, real in _REAL_OF_COMPLEX.items()})
_FINFO.update({name: _format_limits(name) for name, f in FORMATS.items() if f.is_float})
_IINFO: Final[dict[str, IInfo]] = {name: _int_limits(name) for name, (kind, _) in CATALOGUE.items()
                                   if kind in ("int", "uint")}


def finfo(x: Any) -> FInfo:
    """Limits of a floating-point or complex dtype (or of an array's dtype), bfloat16 included."""
    return _limits(_FINFO, x, "finfo needs a floating-point or complex dtype", "iinfo for integer dtypes")


def iinfo(x: Any) -> IInfo:
    """Limits of an integer dtype (or of an array's dtype)."""
    return _limits(_IINFO, x, "iinfo needs an integer dtype", "finfo for floating-point and complex dtypes")


def _limits(table: dict[str, Any], x: Any, needs: str, instead: str) -> Any:
    dtype = _dtype_of(x)
    info = table.get(dtype)
    if info is None:
        raise InvalidDtypeError(f"{needs}, got {dtype}; use arraylayer.{instead}.")
    return info
