"""The promotion policies, each a precomputed table: ``table[a][b]`` is the whole answer.

A key is a :class:`~arraylayer.Dtype` or one of the Python types ``bool``, ``int``,
``float``, ``complex`` standing for a weak scalar of that kind. A cell is

* a :class:`~arraylayer.Dtype`: a strongly typed result;
* a Python type: a weak result, materialised by :meth:`Policy.materialise`
  (to the current default dtype under the lattice policies, to Paddle's own
  scalar defaults under ``"paddle"``);
* a :class:`Failure`: this policy does not promote the pair.

Plain strings look up the Dtype entries (a Dtype hashes as its name), and native
dtype objects are added as keys the first time they are resolved, so a promotion
is two dict look-ups whatever the caller passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, Union

from arraylayer.dtypes import defaults
from arraylayer.dtypes import CANONICAL, Dtype, add_alias_listener, as_dtype
from arraylayer.errors import TypePromotionError
from arraylayer.dtypes.lattice import CODES, STANDARD_LATTICE, STRICT_LATTICE, join_table, upper_sets
from arraylayer.lowp.formats import FLOAT_FORMATS, INT_FORMATS

__all__ = ["Failure", "Policy", "POLICIES", "key_name"]

Key = Union[Dtype, type]


_SCALAR_NAMES: Final = {bool: "Python bool", int: "Python int (weak)", float: "Python float (weak)",
                        complex: "Python complex (weak)"}


def key_name(key: Any) -> str:
    """How a key reads in a message: ``int8`` (for a native dtype too), or ``Python int (weak)``."""
    if key.__class__ is type and key in _SCALAR_NAMES:
        return _SCALAR_NAMES[key]
    try:
        return str(as_dtype(key))
    except TypeError:
        return repr(key)


class Failure:
    """A cell where a policy refuses to promote; :meth:`error` builds the exception."""

    __slots__ = ("policy", "why")

    def __init__(self, policy: str, why: str) -> None:
        self.policy = policy
        self.why = why

    def error(self, a: Any, b: Any) -> TypePromotionError:
        low = next((key for key in (a, b) if _low_precision(key)), None)
        if low is not None:
            wider = "float32" if as_dtype(low).is_floating else "int32"
            return TypePromotionError(
                f"Input dtypes ({key_name(a)}, {key_name(b)}) have no implicit promotion under the "
                f"{self.policy!r} dtype promotion policy: a low-precision dtype (float8, float6, float4, "
                f"int4, int2) is never widened or mixed implicitly (JAX's rule). Write the cast you mean, "
                f"such as x.astype({wider!r}) on the {key_name(low)} input (arraylayer.astype(x, {wider!r}))."
            )
        return TypePromotionError(
            f"Input dtypes ({key_name(a)}, {key_name(b)}) have no implicit promotion under the "
            f"{self.policy!r} dtype promotion policy: {self.why}. Cast one input explicitly to the "
            f"dtype you want, or switch policy with arraylayer.dtype_promotion('standard')."
        )

    def __repr__(self) -> str:
        return f"Failure({self.policy!r})"


Cell = Union[Dtype, type, Failure]


def _low_precision(key: Any) -> bool:
    if key.__class__ is type and key in _SCALAR_NAMES:
        return False
    try:
        return as_dtype(key).is_low_precision
    except (TypeError, ValueError):
        return False


class Policy:
    """A named rule set: the promotion table, weak materialisation and safe casts.

    ``build`` (instead of ``table`` and ``castable``) makes them on first use: the policies other than
    the default are built when a program first asks for them, not at ``import arraylayer``."""

    __slots__ = ("name", "summary", "table", "weak_dtype", "castable", "_build", "_aliases")

    def __init__(
        self,
        name: str,
        summary: str,
        table: dict[Any, dict[Any, Cell]] | None,
        weak_dtype: dict[type, Callable[[], Dtype]],
        castable: dict[Any, frozenset[Dtype]] | None,
        build: Callable[[], tuple[dict[Any, dict[Any, Cell]], dict[Any, frozenset[Dtype]]]] | None = None,
    ) -> None:
        self.name = name
        self.summary = summary
        self.weak_dtype = weak_dtype
        self._build = build
        self._aliases: list[tuple[Any, Dtype]] = []  # replayed on a table built later
        if build is None:
            self.table, self.castable = table, castable  # type: ignore[assignment]

    def __getattr__(self, attribute: str) -> Any:
        """``table`` and ``castable`` of a policy built on first use (called only while they are unset)."""
        if attribute not in ("table", "castable") or self._build is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r}")
        self.table, self.castable = self._build()
        self._build = None
        for native, dtype in self._aliases:
            self._alias(native, dtype)
        return getattr(self, attribute)

    def materialise(self, cell: Cell, a: Any, b: Any) -> Dtype:
        """Turn a non-Dtype cell into a Dtype (weak result) or raise (failure)."""
        if cell.__class__ is Failure:
            raise cell.error(a, b)  # type: ignore[union-attr]
        return self.weak_dtype[cell]()  # type: ignore[index]

    def add_alias(self, native: Any, dtype: Dtype) -> None:
        """Make ``native`` a key equivalent to ``dtype`` (called once per new native object)."""
        self._aliases.append((native, dtype))
        if self._build is None:
            self._alias(native, dtype)

    def _alias(self, native: Any, dtype: Dtype) -> None:
        row = self.table[dtype]
        self.table[native] = row
        for other in {id(r): r for r in self.table.values()}.values():
            other[native] = other[dtype]
        self.castable[native] = self.castable[dtype]

    def __repr__(self) -> str:
        return f"Policy({self.name!r})"


def _key(code: str) -> Key:
    target = CODES[code]
    return target if isinstance(target, type) else CANONICAL[target]


def _with_bool_alias(table: dict[Any, dict[Any, Cell]]) -> dict[Any, dict[Any, Cell]]:
    """Under the lattice a Python bool is simply the bool dtype (it is not weak)."""
    dtype_bool = CANONICAL["bool"]
    table[bool] = table[dtype_bool]
    for row in table.values():
        row[bool] = row[dtype_bool]
    return table


def _lattice_table(lattice: dict[str, tuple[str, ...]], policy: str, allows: Callable[[str, str, str | None], str | None]) -> dict[Any, dict[Any, Cell]]:
    joins = join_table(lattice)
    keys = {code: _key(code) for code in lattice}  # once per code, not once per cell
    table: dict[Any, dict[Any, Cell]] = {}
    for (a, b), joined in joins.items():
        refusal = allows(a, b, joined)
        cell: Cell = Failure(policy, refusal) if refusal else keys[joined]  # type: ignore[index]
        table.setdefault(keys[a], {})[keys[b]] = cell
    return _with_bool_alias(table)


def _lattice_castable(lattice: dict[str, tuple[str, ...]]) -> dict[Any, frozenset[Dtype]]:
    """Safe casts: ``b`` is reachable from ``a`` on the lattice (so ``can_cast(a, join(a, x))``)."""
    result: dict[Any, frozenset[Dtype]] = {}
    for code, above in upper_sets(lattice).items():
        result[_key(code)] = frozenset(_key(c) for c in above if not isinstance(CODES[c], type))
    result[bool] = result[CANONICAL["bool"]]
    return result


_LATTICE_WEAK: Final[dict[type, Callable[[], Dtype]]] = {
    int: defaults.default_int_dtype,
    float: defaults.default_float_dtype,
    complex: defaults.default_complex_dtype,
}


def _standard_allows(a: str, b: str, joined: str | None) -> str | None:
    return None if joined else "the lattice has no common upper bound"


def _strict_allows(a: str, b: str, joined: str | None) -> str | None:
    if joined is None:
        return "strict mode allows no implicit promotion between different dtypes"
    return None


_ARRAY_API_CATEGORY: Final = {
    **{c: "bool" for c in ("b1",)},
    **{c: "integral" for c in ("u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", "i*")},
    **{c: "inexact" for c in ("bf", "f2", "f4", "f8", "c8", "c16", "f*", "c*")},
    **{c: "integral" for c in INT_FORMATS},
    **{c: "inexact" for c in FLOAT_FORMATS},
}


def _array_api_allows(a: str, b: str, joined: str | None) -> str | None:
    """The Array API standard (2024.12): no mixed-kind promotion, except that Python
    int, float and complex scalars join floating-point arrays of any precision."""
    cat_a, cat_b = _ARRAY_API_CATEGORY[a], _ARRAY_API_CATEGORY[b]
    if cat_a != cat_b:
        if "i*" in (a, b) and {cat_a, cat_b} == {"integral", "inexact"}:
            return None
        return f"the Array API standard does not promote {cat_a} with {cat_b} dtypes (mixed kinds)"
    if joined is None or _ARRAY_API_CATEGORY[joined] != cat_a:
        return "the Array API standard does not promote uint64 with signed integers"
    return None


# ---------------------------------------------------------------------------------------------
# Paddle (seed 002). Rows and columns use the seed's codes. The tensor-tensor table below is the
# seed's, except for the complex64 row: the seed prints c64+f64 = c64 and c64+i64 = c128, the
# mirror images of its own f64+c64 = c128 and i64+c64 = c64 cells, although the same document
# promises commutativity. We keep the commutative reading (complex with float64 -> complex128;
# complex with any integer -> the complex dtype). "-" off the diagonal: Paddle raises; on the
# diagonal: no promotion is needed and the dtype is kept.
_PADDLE_CODES: Final = {
    "bool": "bool", "u8": "uint8", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64",
    "c64": "complex64", "c128": "complex128",
}
_PADDLE_TENSOR_TENSOR: Final = """
      bf16  f16   f32   f64   bool  u8    i8    i16   i32   i64   c64   c128
bf16  bf16  f32   f32   f64   -     -     -     -     -     -     c64   c128
f16   f32   f16   f32   f64   -     -     -     -     -     -     c64   c128
f32   f32   f32   f32   f64   -     -     -     -     -     -     c64   c128
f64   f64   f64   f64   f64   -     -     -     -     -     -     c128  c128
bool  -     -     -     -     -     -     -     -     -     -     c64   c128
u8    -     -     -     -     -     -     -     -     -     -     c64   c128
i8    -     -     -     -     -     -     -     -     -     -     c64   c128
i16   -     -     -     -     -     -     -     -     -     -     c64   c128
i32   -     -     -     -     -     -     -     -     -     -     c64   c128
i64   -     -     -     -     -     -     -     -     -     -     c64   c128
c64   c64   c64   c64   c128  c64   c64   c64   c64   c64   c64   c64   c128
c128  c128  c128  c128  c128  c128  c128  c128  c128  c128  c128  c128  c128
"""
# Tensor (row) with Python scalar (column), seed 002 as printed.
_PADDLE_TENSOR_SCALAR: Final = """
      bool  int   float complex
bool  bool  i64   f32   c64
u8    u8    u8    f32   c64
i8    i8    i8    f32   c64
i16   i16   i16   f32   c64
i32   i32   i32   f32   c64
i64   i64   i64   f32   c64
bf16  bf16  bf16  bf16  c64
f16   f16   f16   f16   c64
f32   f32   f32   f32   c64
f64   f64   f64   f64   c128
c64   c64   c64   c64   c64
c128  c128  c128  c128  c128
"""
# Paddle has no uint16/32/64; arraylayer gives them the rules of Paddle's other integers.
_PADDLE_INTEGER_LIKE: Final = {"uint16": "int16", "uint32": "int32", "uint64": "int64"}
_PADDLE_SCALARS: Final[dict[str, type]] = {"bool": bool, "int": int, "float": float, "complex": complex}
_PADDLE_SCALAR_DEFAULTS: Final = {bool: "bool", int: "int64", float: "float32", complex: "complex64"}


def parse_table(text: str) -> dict[tuple[str, str], str]:
    """Parse a whitespace-aligned table: ``{(row, column): cell}`` with the codes as printed."""
    header, *rows = (line.split() for line in text.strip().splitlines())
    return {(row[0], column): cell for row in rows for column, cell in zip(header, row[1:], strict=True)}


def _paddle_table() -> dict[Any, dict[Any, Cell]]:
    def dtype(code: str) -> Dtype:
        return CANONICAL[_PADDLE_CODES[code]]

    refused = Failure(
        "paddle",
        "tensor with tensor promotes only floating-point with floating-point and complex with any dtype",
    )
    table: dict[Any, dict[Any, Cell]] = {d: {} for d in CANONICAL.values()}
    for (a, b), cell in parse_table(_PADDLE_TENSOR_TENSOR).items():
        table[dtype(a)][dtype(b)] = dtype(a) if a == b else (refused if cell == "-" else dtype(cell))
    # Paddle has no uint16/32/64: give them the rules of its other integers (same dtype only,
    # or with complex), symmetrically.
    for name, like in _PADDLE_INTEGER_LIKE.items():
        me, twin = CANONICAL[name], CANONICAL[like]
        for other in CANONICAL.values():
            cell = me if other == me else (table[twin][other] if other.is_complex else refused)
            table[me][other] = table[other][me] = cell
    for (a, scalar), cell in parse_table(_PADDLE_TENSOR_SCALAR).items():
        table[dtype(a)][_PADDLE_SCALARS[scalar]] = dtype(cell)
    for name, like in _PADDLE_INTEGER_LIKE.items():
        me, twin = CANONICAL[name], CANONICAL[like]
        for scalar in _PADDLE_SCALARS.values():
            result = table[twin][scalar]
            table[me][scalar] = me if result == twin else result
    _paddle_low_precision(table)
    # Scalars: symmetric to the tensor-scalar cells; scalar with scalar is the higher kind, weak.
    scalars = list(_PADDLE_SCALARS.values())
    for rank_a, a in enumerate(scalars):
        table[a] = {d: table[d][a] for d in CANONICAL.values()}
        for rank_b, b in enumerate(scalars):
            table[a][b] = scalars[max(rank_a, rank_b)]
    return table


def _paddle_low_precision(table: dict[Any, dict[Any, Cell]]) -> None:
    """arraylayer's rule for the low-precision types under "paddle" (Paddle documents none): a tensor
    joins only a tensor of its own dtype; a Python scalar joins it where JAX's lattice joins them."""
    joins = join_table(STANDARD_LATTICE)
    refused = Failure("paddle", "low-precision dtypes do not promote")
    scalar_codes = {bool: "b1", int: "i*", float: "f*", complex: "c*"}
    for low in (*FLOAT_FORMATS, *INT_FORMATS):
        me = CANONICAL[low]
        for other in CANONICAL.values():
            table[me][other] = table[other][me] = me if other is me else refused
        for scalar, code in scalar_codes.items():
            table[me][scalar] = me if joins[low, code] == low else refused


def _paddle_weak() -> dict[type, Callable[[], Dtype]]:
    return {pytype: (lambda d=CANONICAL[name]: d) for pytype, name in _PADDLE_SCALAR_DEFAULTS.items()}


def _castable_from_table(table: dict[Any, dict[Any, Cell]]) -> dict[Any, frozenset[Dtype]]:
    """``a`` casts safely to ``b`` when this policy promotes the pair to ``b``."""
    return {
        a: frozenset(b for b in CANONICAL.values() if row.get(b) is b)
        for a, row in table.items()
    }


def _build() -> dict[str, Policy]:
    """The four policies; only the default's tables are made now (the others on first use)."""
    standard = _lattice_table(STANDARD_LATTICE, "standard", _standard_allows)
    standard_cast = _lattice_castable(STANDARD_LATTICE)

    def array_api() -> tuple[dict[Any, dict[Any, Cell]], dict[Any, frozenset[Dtype]]]:
        table = _lattice_table(STANDARD_LATTICE, "array_api", _array_api_allows)
        return table, _castable_from_table(table)

    return {
        "standard": Policy(
            "standard",
            "JAX's promotion lattice with weak Python scalars (JAX's \"Type promotion semantics\")",
            standard, dict(_LATTICE_WEAK), standard_cast,
        ),
        "strict": Policy(
            "strict",
            "no implicit promotion between different dtypes; weak Python scalars of a fitting kind allowed",
            None, dict(_LATTICE_WEAK), None,
            build=lambda: (_lattice_table(STRICT_LATTICE, "strict", _strict_allows), dict(standard_cast)),
        ),
        "paddle": Policy(
            "paddle",
            "PaddlePaddle's rules (its \"Introduction to Data Type Promotion\"): tensor-tensor within floats and with complex only; "
            "tensor-scalar by kind",
            None, _paddle_weak(), None, build=lambda: (_paddle_table(), dict(standard_cast)),
        ),
        "array_api": Policy(
            "array_api",
            "the Array API standard's table (2024.12): no mixed-kind promotion",
            None, dict(_LATTICE_WEAK), None, build=array_api,
        ),
    }


POLICIES: Final[dict[str, Policy]] = _build()


def _on_alias(native: Any, dtype: Dtype) -> None:
    for policy in POLICIES.values():
        policy.add_alias(native, dtype)


add_alias_listener(_on_alias)
