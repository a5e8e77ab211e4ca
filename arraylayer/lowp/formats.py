"""The low-precision family as data: one :class:`Format` per type, the fields of its encoding, and
what each framework calls it.

Everything a cast needs is derived from a few fields (bits, exponent/mantissa bits, bias, how the
type spells NaN and inf), so ``finfo``-like values are properties, not typed-in numbers; a test
checks them against ``ml_dtypes.finfo``/``iinfo``. Nothing here imports a framework.

Kinds of special values (``specials``):

- ``"ieee"``: inf is an all-ones exponent with a zero mantissa, NaN the same with the top mantissa
  bit set (float8_e5m2, float8_e4m3, float8_e3m4); out-of-range values overflow to inf.
- ``"fn"``: finite, with NaN: the all-ones code (S.1111.111) is NaN, no inf (float8_e4m3fn); out of
  range and inf become NaN.
- ``"fnuz"``: finite, one NaN at the negative-zero code 0x80, no negative zero (the ``fnuz`` types);
  out of range and inf become NaN, -0.0 becomes +0.0.
- ``"e8m0"``: unsigned powers of two, no zero, 0xFF is NaN (float8_e8m0fnu); zero, negative values,
  inf and out of range become NaN, values below the smallest become the smallest.
- ``"finite"``: no NaN, no inf (float6, float4): out of range and inf saturate to the largest value;
  NaN becomes a zero whose sign is the NaN's sign inverted (ml_dtypes' rule, kept for bit equality).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["Format", "FrozenRecord", "FORMATS", "FLOAT_FORMATS", "INT_FORMATS", "NATIVE", "STATUS", "get_format"]


class FrozenRecord:
    """A frozen value with named fields (``_FIELDS``, in order), equal and hashed by them, shown
    as ``Name(field=value, ...)``: what ``@dataclass(frozen=True)`` makes, written out because the
    ``dataclasses`` module would bring ``inspect`` into ``import arraylayer`` (issue 42)."""

    _FIELDS: tuple[str, ...] = ()

    def __init__(self, *args: Any, **values: Any) -> None:
        fields = self._FIELDS
        if len(args) > len(fields) or values.keys() & set(fields[:len(args)]):
            raise TypeError(f"{type(self).__name__}() takes the fields {', '.join(fields)}, each once")
        values.update(zip(fields, args, strict=False))  # (fewer args than fields: the rest by keyword)
        if values.keys() != set(fields):
            raise TypeError(f"{type(self).__name__}() takes the fields {', '.join(fields)}: given {sorted(values)}")
        for field in fields:
            object.__setattr__(self, field, values[field])

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, field) for field in self._FIELDS)

    def __repr__(self) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._FIELDS)})"

    def __eq__(self, other: object) -> bool:
        return self._values() == other._values() if other.__class__ is self.__class__ else NotImplemented  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot assign to {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: cannot delete {name!r}")


class Format(FrozenRecord):
    """One low-precision type: its encoding fields (integers have ``exponent_bits == 0``)."""

    _FIELDS = ("name", "bits", "exponent_bits", "mantissa_bits", "bias", "specials", "signed")
    name: str
    bits: int
    exponent_bits: int
    mantissa_bits: int
    bias: int
    specials: str  # ieee | fn | fnuz | e8m0 | finite | int
    signed: bool
    #: whether it is a floating format (not a field, not a property: read on every cast)
    is_float: bool

    def __init__(self, name: str, bits: int, exponent_bits: int = 0, mantissa_bits: int = 0, bias: int = 0,
                 specials: str = "int", signed: bool = True) -> None:
        super().__init__(name, bits, exponent_bits, mantissa_bits, bias, specials, signed)
        object.__setattr__(self, "is_float", specials != "int")

    @property
    def ml_dtypes_name(self) -> str:
        return self.name

    @property
    def sign_bit(self) -> int:
        """The sign bit's value in a code (0 for the unsigned types)."""
        return 1 << (self.bits - 1) if self.signed else 0

    @property
    def has_inf(self) -> bool:
        return self.specials == "ieee"

    @property
    def has_nan(self) -> bool:
        return self.specials in ("ieee", "fn", "fnuz", "e8m0")

    @property
    def inf_code(self) -> int | None:
        return ((1 << self.exponent_bits) - 1) << self.mantissa_bits if self.has_inf else None

    @property
    def nan_code(self) -> int | None:
        """The (positive) NaN code a cast produces; None where the type has no NaN."""
        if self.specials == "ieee":
            return self.inf_code | (1 << (self.mantissa_bits - 1))
        if self.specials == "fn":
            return (1 << (self.bits - 1)) - 1
        if self.specials == "fnuz":
            return 1 << (self.bits - 1)
        if self.specials == "e8m0":
            return (1 << self.bits) - 1
        return None

    @property
    def max_code(self) -> int:
        """The code of the largest finite value (of the largest integer for int types)."""
        if not self.is_float:
            return (1 << (self.bits - 1)) - 1 if self.signed else (1 << self.bits) - 1
        if self.specials == "ieee":
            return self.inf_code - 1
        if self.specials == "fn":
            return self.nan_code - 1
        if self.specials == "e8m0":
            return self.nan_code - 1
        return (1 << (self.bits - 1)) - 1  # fnuz, finite: the largest code without the sign bit

    # -- finfo-like values, derived from the fields (exact powers of two and sums of them) --------------
    def value(self, code: int) -> float:
        """The value of a non-special code, as a Python float (exact)."""
        if self.specials == "e8m0":
            return 2.0 ** (code - self.bias)
        sign = -1.0 if self.signed and code & self.sign_bit else 1.0
        magnitude = code & ~self.sign_bit
        exponent, mantissa = magnitude >> self.mantissa_bits, magnitude & ((1 << self.mantissa_bits) - 1)
        if exponent == 0:  # subnormal
            return sign * mantissa * 2.0 ** (1 - self.bias - self.mantissa_bits)
        return sign * (1 + mantissa / (1 << self.mantissa_bits)) * 2.0 ** (exponent - self.bias)

    @property
    def max(self) -> float:
        return self.value(self.max_code) if self.is_float else float(self.max_code)

    @property
    def rounding_bound(self) -> tuple[float, bool]:
        """``(bound, inclusive)``: ``|x| > bound`` (``>=`` where inclusive) rounds past the largest
        finite value: the midpoint above it, which a tie leaves to the even code."""
        top_exponent = ((self.max_code & ~self.sign_bit) >> self.mantissa_bits) - self.bias
        step = 2.0 ** (top_exponent - self.mantissa_bits)  # the spacing of the top binade
        return self.max + step / 2, bool(self.max_code & 1)

    @property
    def min(self) -> float:
        """The most negative finite value (the smallest positive for the unsigned float8_e8m0fnu)."""
        if not self.is_float:
            return float(-(1 << (self.bits - 1))) if self.signed else 0.0
        return -self.max if self.signed else self.value(0)

    @property
    def eps(self) -> float:
        return 2.0 ** -self.mantissa_bits

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** (1 - self.bias) if self.specials != "e8m0" else 2.0 ** -self.bias

    @property
    def smallest_subnormal(self) -> float:
        if self.specials == "e8m0":
            return self.smallest_normal
        return 2.0 ** (1 - self.bias - self.mantissa_bits)


def _float(name: str, bits: int, e: int, m: int, bias: int, specials: str, signed: bool = True) -> Format:
    return Format(name, bits, e, m, bias, specials, signed)


FORMATS: Final[dict[str, Format]] = {
    f.name: f
    for f in (
        _float("float8_e4m3fn", 8, 4, 3, 7, "fn"),
        _float("float8_e5m2", 8, 5, 2, 15, "ieee"),
        _float("float8_e4m3fnuz", 8, 4, 3, 8, "fnuz"),
        _float("float8_e5m2fnuz", 8, 5, 2, 16, "fnuz"),
        _float("float8_e4m3b11fnuz", 8, 4, 3, 11, "fnuz"),
        _float("float8_e4m3", 8, 4, 3, 7, "ieee"),
        _float("float8_e3m4", 8, 3, 4, 3, "ieee"),
        _float("float8_e8m0fnu", 8, 8, 0, 127, "e8m0", signed=False),
        _float("float6_e2m3fn", 6, 2, 3, 1, "finite"),
        _float("float6_e3m2fn", 6, 3, 2, 3, "finite"),
        _float("float4_e2m1fn", 4, 2, 1, 1, "finite"),
        Format("int4", 4),
        Format("uint4", 4, signed=False),
        Format("int2", 2),
        Format("uint2", 2, signed=False),
        Format("int1", 1),
        Format("uint1", 1, signed=False),
    )
}
FLOAT_FORMATS: Final = tuple(n for n, f in FORMATS.items() if f.is_float)
INT_FORMATS: Final = tuple(n for n, f in FORMATS.items() if not f.is_float)

# What each framework calls the type (an attribute of torch, of tf.dtypes.experimental, of jax.numpy),
# or None where it has no such name. A name is not yet a kernel: STATUS says what works.
_TORCH_FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")
_TF = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
       "float4_e2m1fn", "int4", "uint4", "int2", "uint2")
NATIVE: Final[dict[str, dict[str, str | None]]] = {
    "numpy": {n: n for n in FORMATS},  # ml_dtypes' scalar types
    "dask": {n: n for n in FORMATS},  # chunks of NumPy arrays
    "jax": {n: n for n in FORMATS},
    "torch": {n: (n if n in _TORCH_FLOAT8 or n in INT_FORMATS else None) for n in FORMATS},
    "tensorflow": {n: (n if n in _TF else None) for n in FORMATS},
}

# What the framework does with its native type, measured on CPU (numpy 2.4, ml_dtypes 0.6.0,
# jax 0.10.2, torch 2.13.0, tensorflow 2.21; tests/test_lowp_formats.py re-measures it):
#   "computed": stored, cast from/to float32 and some arithmetic;
#   "stored":   a cast from and to float32 works, no arithmetic;
#   "named":    the name exists but no cast into it works (torch's int1-7/uint1-7 shells; TensorFlow's
#               types without a CPU cast kernel); XLA on CPU refuses float6 ("Invalid XLA PrimitiveType");
#   None:       no such name.
# Every type is held, on every backend, by this package's uint8 container (one code per byte).
_TF_CAST = ("float8_e4m3fn", "float8_e5m2")
# jax.numpy names int1/uint1, but XLA on the CPU neither converts to them nor computes with them.
_ONE_BIT = ("int1", "uint1")
STATUS: Final[dict[str, dict[str, str | None]]] = {
    "numpy": {n: "computed" for n in FORMATS},
    "dask": {n: "computed" for n in FORMATS},
    "jax": {n: ("named" if n.startswith("float6") or n in _ONE_BIT else "computed") for n in FORMATS},
    "torch": {n: ("computed" if n in _TORCH_FLOAT8 else "named" if n in INT_FORMATS else None) for n in FORMATS},
    "tensorflow": {n: ("stored" if n in _TF_CAST else "named" if n in _TF else None) for n in FORMATS},
}


def get_format(name: str | Format) -> Format:
    """The :class:`Format` called ``name`` (a Format passes through)."""
    if isinstance(name, Format):
        return name
    try:
        return FORMATS[name]
    except (KeyError, TypeError):
        from arraylayer.errors import InvalidDtypeError

        raise InvalidDtypeError(
            f"format={name!r} is not a low-precision format of arraylayer.lowp; use one of "
            f"{', '.join(FORMATS)}."
        ) from None
