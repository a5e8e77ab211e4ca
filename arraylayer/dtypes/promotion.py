"""Type promotion: ``promote_types``, ``result_type``, ``lattice_result_type``, ``can_cast``.

The active policy (``"standard"``, ``"strict"``, ``"paddle"`` or ``"array_api"``) is a
:class:`~arraylayer.context.Setting`. Its table answers a pair of dtypes with two
dict look-ups; everything else here is the slow path for arrays, Python scalars,
native dtype objects and errors.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Final, NamedTuple

from arraylayer.context import Setting, bump_epoch, checked_scalars, reads_setting, reads_tables
from arraylayer.dtypes import (
    ALIASES,
    Dtype,
    DtypeLike,
    add_alias_listener,
    as_dtype,
    did_you_mean,
    iinfo,
    resolve,
)
from arraylayer.errors import InvalidDtypeError, ScalarOverflowError
from arraylayer.dtypes.policies import POLICIES, Failure, Policy

__all__ = [
    "promote_types",
    "result_type",
    "lattice_result_type",
    "can_cast",
    "set_dtype_promotion",
    "get_dtype_promotion",
    "dtype_promotion",
    "promotion_policies",
]


# A new dtype alias is a change of arraylayer's state (context.EPOCH). The alias look-up is not a
# constant table reader: as one, torch 2.13's Dynamo failed its own guard in nn.one_hot ("name
# 'known_alias_1' is not defined"; tests/test_nn_agreement.py), so the aliases are guarded
# (al.torch_guard_filter drops those guards).
add_alias_listener(lambda native, dtype: bump_epoch())

# Every policy a setting has held, by name: readers return names (see current_policy).
_KNOWN_POLICIES: Final[dict[str, Policy]] = dict(POLICIES)


def _policy_named(name: object) -> Policy:
    if isinstance(name, Policy):
        _KNOWN_POLICIES[name.name] = name
        return name
    try:
        return POLICIES[name]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(
            f"Unknown dtype promotion policy {name!r}.{did_you_mean(name, POLICIES)} "
            f"Choose one of {', '.join(map(repr, POLICIES))}."
        ) from None


POLICY: Final = Setting("dtype_promotion", "standard", _policy_named)
_policy_var = POLICY.var

_PYTHON_SCALARS: Final = (bool, int, float, complex)
# A JAX weak-typed array of this kind behaves as the Python scalar of the same kind.
_WEAK_KEY_OF_KIND: Final = {"int": int, "float": float, "complex": complex}


def current_policy() -> Policy:
    """The :class:`~arraylayer.dtypes.policies.Policy` in force in this thread or task."""
    return _KNOWN_POLICIES[get_dtype_promotion()]


def promotion_policies() -> tuple[str, ...]:
    """The names of the available promotion policies."""
    return tuple(POLICIES)


def set_dtype_promotion(name: str) -> str:
    """Set the process-wide promotion policy: ``"standard"`` (default), ``"strict"``,
    ``"paddle"`` or ``"array_api"``. A :func:`dtype_promotion` scope still wins inside it."""
    return POLICY.set_process(name).name


@reads_setting
def get_dtype_promotion() -> str:
    """The name of the policy in force in this thread or task."""
    return _policy_var.get(POLICY.process).name


@contextmanager
def dtype_promotion(name: str) -> Iterator[str]:
    """Context manager: use policy ``name`` in this thread or task until the block ends."""
    with POLICY.scope(name) as policy:
        yield policy.name


def _dtype_key(x: Any) -> Any:
    """The table key of a dtype-like: a Python scalar type stays itself (a weak scalar)."""
    if x is int or x is float or x is complex or x is bool:
        return x
    if not isinstance(x, (str, type)) and hasattr(x, "dtype") and hasattr(x, "shape"):
        raise InvalidDtypeError(
            f"Expected a dtype, got an array of dtype {x.dtype}; use arraylayer.result_type for arrays."
        )
    try:
        return ALIASES[x]
    except (KeyError, TypeError):
        return resolve(x)


_SCALAR_KEYS: Final = {bool: bool, int: int, float: float, complex: complex}


def _arg_key(x: Any) -> Any:
    """The table key of any argument of result_type: Python scalar, array or dtype."""
    cls = type(x)
    key = _SCALAR_KEYS.get(cls)
    if key is not None:
        return key
    if cls is Dtype:
        return x
    if not isinstance(x, (str, type)):
        native = getattr(x, "dtype", None)
        if native is not None:  # an array (or a NumPy scalar)
            dtype = as_dtype(native)
            if getattr(x, "weak_type", False):
                return _WEAK_KEY_OF_KIND.get(dtype.category, dtype)
            return dtype
        if isinstance(x, _PYTHON_SCALARS):  # int/float subclasses (IntEnum, ...) are Python scalars too
            return next(t for t in reversed(_PYTHON_SCALARS) if isinstance(x, t))
    return _dtype_key(x)


def promote_types(a: DtypeLike, b: DtypeLike) -> Dtype:
    """The dtype of combining ``a`` and ``b`` under the active policy.

    ``a`` and ``b`` are dtypes (Dtype, name or native object); the Python types
    ``int``, ``float`` and ``complex`` stand for weak scalars of that kind, whose
    results materialise to the default dtype. Raises TypePromotionError where the
    policy has no promotion.
    """
    policy = current_policy()
    try:
        cell = policy.table[a][b]
    except (KeyError, TypeError):
        a, b = _dtype_key(a), _dtype_key(b)
        cell = policy.table[a][b]
    if type(cell) is Dtype:
        return cell  # type: ignore[return-value]
    return policy.materialise(cell, a, b)


def _fold(policy: Policy, args: tuple[Any, ...]) -> tuple[Dtype, bool]:
    if not args:
        raise ValueError("result_type needs at least one array, dtype or Python scalar.")
    table = policy.table
    first = _arg_key(args[0])
    acc = table[first][first]  # a lone key joined with itself: the lattice's Python bool is strong
    for x in args[1:]:
        key = _arg_key(x)
        cell = table[acc][key]
        if type(cell) is Failure:
            raise cell.error(acc, key)  # type: ignore[union-attr]
        acc = cell
    weak = type(acc) is not Dtype
    dtype: Dtype = policy.weak_dtype[acc]() if weak else acc
    if dtype.is_integer:
        check_ints_fit(args, dtype)
    return dtype, weak


def check_ints_fit(values: Iterable[Any], dtype: Dtype) -> None:
    """Every Python int among ``values`` (nested lists and tuples walked) must be representable
    in the integer ``dtype``: raises ScalarOverflowError instead of a silent wrap-around."""
    info = iinfo(dtype)
    for x in values:
        if isinstance(x, (list, tuple)):
            check_ints_fit(x, dtype)
        elif type(x) is int or (isinstance(x, int) and not isinstance(x, bool) and not hasattr(x, "dtype")):
            # type() first: torch.compile traces a Python int argument as a symbolic int, of type
            # int, on which it cannot trace hasattr
            if not info.min <= x <= info.max:
                raise ScalarOverflowError(
                    f"Python int {int(x)} does not fit {dtype} (range {info.min}..{info.max}): it would wrap "
                    f"around. Use a wider dtype for the array, or pass the value as a float."
                )
        elif getattr(x, "weak_type", False) and getattr(x.dtype, "kind", "") in "iu" and not x.shape:
            _check_weak_int(x, dtype, info)


def _check_weak_int(x: Any, dtype: Dtype, info: Any) -> None:
    """A JAX weak-typed integer array with a concrete value is checked like the Python int it
    stands for. Under ``jax.jit`` its value is unknown while tracing: it is not checked (JAX then
    wraps it, as it does natively) unless :func:`~arraylayer.checked_scalars` is on, which adds a
    check that runs with the compiled function."""
    try:
        value = int(x)
    except Exception:  # noqa: BLE001 - a tracer: no concrete value to check now
        if checked_scalars():
            sys.modules["jax"].debug.callback(_RunTimeCheck(dtype, info.min, info.max), x)
        return
    _refuse_wrap(value, dtype, info.min, info.max, "JAX weak-typed value")


def _refuse_wrap(value: int, dtype: Dtype, low: int, high: int, what: str) -> None:
    if not low <= value <= high:
        raise ScalarOverflowError(
            f"{what} {value} does not fit {dtype} (range {low}..{high}): it would wrap "
            f"around. Use a wider dtype for the array, or pass the value as a float."
        )


class _RunTimeCheck(NamedTuple):
    """The check ``jax.debug.callback`` runs with the compiled function: the traced int's values
    (several under ``jax.vmap``) must fit ``dtype``."""

    dtype: Dtype
    low: int
    high: int

    def __call__(self, values: Any) -> None:
        for value in sys.modules["numpy"].asarray(values).reshape(-1).tolist():
            _refuse_wrap(value, self.dtype, self.low, self.high, "Python int traced by jax.jit (checked_scalars):")


def result_type(*args: Any) -> Dtype:
    """The dtype of an operation on ``args`` (arrays, dtypes and Python scalars) under the active policy.

    Python scalars are weak (they take the array's dtype within their kind), and so
    are JAX weak-typed arrays. A Python int that does not fit an integer result raises
    :class:`~arraylayer.ScalarOverflowError`.
    """
    policy = current_policy()
    if len(args) == 2:  # the common case, without the general loop
        a, b = args
        if type(a) in _DTYPE_CLASSES and type(b) in _DTYPE_CLASSES:
            try:
                cell = policy.table[a][b]
            except KeyError:  # a misspelt name: the general path raises the helpful error
                return _fold(policy, args)[0]
        else:
            a, b = _arg_key(a), _arg_key(b)
            cell = _cell(policy, a, b)
            if cell is None:
                cell = policy.table[a][b]  # raises the KeyError of a key outside the table
        if type(cell) is Dtype:
            if (a is int or b is int) and cell.is_integer:  # type: ignore[union-attr]
                check_ints_fit(args, cell)  # type: ignore[arg-type]
            return cell  # type: ignore[return-value]
    return _fold(policy, args)[0]


@reads_tables
def _cell(policy: Policy, a: Any, b: Any) -> Any:
    """``policy.table[a][b]`` where it is a Dtype; None where it is not (a weak result, a failure:
    objects Dynamo cannot hold as constants) or where the table has no such cell."""
    try:
        cell = policy.table[a][b]
    except (KeyError, TypeError):
        return None
    return cell if type(cell) is Dtype else None


# Classes whose instances are looked up in the tables directly (names and Dtypes).
_DTYPE_CLASSES: Final = frozenset({Dtype, str})


def lattice_result_type(*args: Any) -> tuple[Dtype, bool]:
    """Like :func:`result_type`, but also says whether the result is weak.

    A weak result (the ``i*``, ``f*``, ``c*`` cells of JAX's promotion table) is materialised to the
    default dtype of its kind: ``lattice_result_type(1, 1.0) == (default_float_dtype(), True)``.
    """
    return _fold(current_policy(), args)


def can_cast(from_: Any, to: DtypeLike) -> bool:
    """True if ``from_`` (a dtype, a Python scalar type, or an array) casts safely to ``to``.

    Safe means ``to`` lies above ``from_`` on the promotion lattice, so
    ``can_cast(a, promote_types(a, b))`` always holds; under the ``"array_api"``
    policy it follows the standard's table instead (no cross-kind casts).
    """
    policy = current_policy()
    target = as_dtype(to)
    try:
        return target in policy.castable[from_]
    except (KeyError, TypeError):
        return target in policy.castable[_arg_key(from_)]


def lattice_join_of_arrays(arrays: list[Any]) -> Dtype:
    """The standard lattice's join of the arrays' dtypes (used to infer creation dtypes)."""
    return _fold(POLICIES["standard"], tuple(arrays))[0]
