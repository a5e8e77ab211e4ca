"""Algebraic properties of promotion: commutativity (every policy), idempotence and associativity
(the lattice policies), ``can_cast(a, promote_types(a, b))``, and ``result_type`` as a fold.

The key sets are small (15 dtypes + the Python types), so the properties are checked
exhaustively; hypothesis adds random argument spellings (arrays, names, NumPy dtypes, Python
values), argument orders and default dtypes.
"""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import arraylayer as al

POLICIES = ("standard", "strict", "paddle", "array_api")
LATTICE_POLICIES = ("standard", "strict")  # policies that are the join of a lattice
DTYPES = list(al.all_dtypes)
WEAK = [int, float, complex]
KEYS = DTYPES + WEAK  # seed 000's 18 types
KEYS_WITH_BOOL = KEYS + [bool]  # Python bool: the bool dtype (lattice policies) or a scalar (paddle)
DEFAULTS_64 = {"int": "int64", "float": "float64", "complex": "complex128"}
DEFAULTS_32 = {"int": "int32", "float": "float32", "complex": "complex64"}
KIND_OF_WEAK = {"bool": bool, "int": int, "float": float, "complex": complex}
HYPOTHESIS = settings(max_examples=200, deadline=None, derandomize=True)


def outcome(call):
    try:
        return call()
    except al.TypePromotionError:
        return "raises"


def any_outcome(call):
    """The result, or the exception's type (hypothesis compares two calls that must agree)."""
    try:
        return call()
    except al.TypePromotionError:
        return "raises"
    except Exception as error:  # noqa: BLE001 - compared, not swallowed
        return type(error)


def as_key(result: tuple[al.Dtype, bool]):
    """A (dtype, is_weak) result as a table key: a weak result is the Python type of its kind."""
    dtype, weak = result
    return KIND_OF_WEAK[dtype.category] if weak else dtype


def join(a, b):
    """The policy's join of two keys, weakness kept ("raises" where it refuses)."""
    if "raises" in (a, b):
        return "raises"
    return outcome(lambda: as_key(al.lattice_result_type(a, b)))


def name(k) -> str:
    return k.__name__ if isinstance(k, type) else str(k)


# ------------------------------------------------------------------------------- exhaustive
@pytest.mark.parametrize("defaults", [DEFAULTS_32, DEFAULTS_64], ids=["32bit", "64bit"])
@pytest.mark.parametrize("policy", POLICIES)
def test_promote_types_is_commutative(policy, defaults):
    with al.dtype_promotion(policy), al.use_default_dtypes(**defaults):
        for a, b in itertools.product(KEYS_WITH_BOOL, repeat=2):
            assert outcome(lambda: al.promote_types(a, b)) == outcome(lambda: al.promote_types(b, a)), (  # noqa: B023
                policy, name(a), name(b))
            assert join(a, b) == join(b, a), (policy, name(a), name(b))


@pytest.mark.parametrize("policy", POLICIES)
def test_a_dtype_with_itself_is_itself(policy):
    with al.dtype_promotion(policy):
        for d in DTYPES:
            assert al.promote_types(d, d) is d
            assert al.lattice_result_type(d, d) == (d, False)


@pytest.mark.parametrize("policy", LATTICE_POLICIES)
def test_lattice_join_is_idempotent(policy):
    with al.dtype_promotion(policy), al.use_default_dtypes(**DEFAULTS_64):
        for k in KEYS_WITH_BOOL:
            assert join(k, k) == (al.bool if k is bool else k), name(k)


@pytest.mark.parametrize("policy", LATTICE_POLICIES)
def test_lattice_join_is_associative_and_result_type_is_its_fold(policy):
    with al.dtype_promotion(policy), al.use_default_dtypes(**DEFAULTS_64):
        for a, b, c in itertools.product(KEYS_WITH_BOOL, repeat=3):
            left, right = join(join(a, b), c), join(a, join(b, c))
            assert left == right, (policy, name(a), name(b), name(c), left, right)
            assert outcome(lambda: as_key(al.lattice_result_type(a, b, c))) == left  # noqa: B023


@pytest.mark.parametrize("policy", POLICIES)
def test_result_type_of_three_folds_promote_types(policy):
    """result_type(a, b, c) is promote_types(promote_types(a, b), c), the inner result kept weak when
    it is weak (materialising it early would be wrong: int8 + uint64 is the weak float, and that with
    bfloat16 is bfloat16, not float32)."""
    with al.dtype_promotion(policy):
        for a, b, c in itertools.product(KEYS_WITH_BOOL, repeat=3):
            inner = join(a, b)
            folded = "raises" if inner == "raises" else outcome(lambda: al.promote_types(inner, c))  # noqa: B023
            assert outcome(lambda: al.result_type(a, b, c)) == folded, (policy, name(a), name(b), name(c))  # noqa: B023
            if inner in DTYPES:  # a strong inner result: the plain fold
                assert folded == outcome(lambda: al.promote_types(al.promote_types(a, b), c))  # noqa: B023


@pytest.mark.parametrize("defaults", [DEFAULTS_32, DEFAULTS_64], ids=["32bit", "64bit"])
def test_can_cast_to_the_promoted_dtype(defaults):
    with al.use_default_dtypes(**defaults):
        for a, b in itertools.product(KEYS_WITH_BOOL, repeat=2):
            assert al.can_cast(a, al.promote_types(a, b)), (name(a), name(b))


def test_can_cast_between_dtypes_is_the_lattice_order():
    """Between two dtypes, a casts safely to b exactly when b is their join."""
    for a, b in itertools.product(DTYPES, repeat=2):
        assert al.can_cast(a, b) == (al.promote_types(a, b) is b), (a, b)
    assert not al.can_cast(al.float64, al.int8)
    assert not al.can_cast(al.int8, al.uint8)


# ------------------------------------------------------------------------------- hypothesis
def spellings(key) -> list:
    """Ways to pass a key to result_type: dtypes, names, NumPy dtypes and arrays, Python values."""
    if key is int:
        return [int, 0, 1, 7]
    if key is float:
        return [float, 0.5, 2.0]
    if key is complex:
        return [complex, 1j, 2 + 0j]
    if key is bool:
        return [bool, True, False]
    native = np.dtype(ml_dtypes.bfloat16) if key == "bfloat16" else np.dtype(str(key))
    return [key, str(key), native, np.ones(2, dtype=native), np.zeros((), dtype=native)]


keys = st.sampled_from(KEYS_WITH_BOOL)
spelled_keys = keys.flatmap(lambda k: st.tuples(st.just(k), st.sampled_from(spellings(k))))
defaults = st.fixed_dictionaries({
    "int": st.sampled_from(["int8", "int16", "int32", "int64"]),
    "float": st.sampled_from(["bfloat16", "float16", "float32", "float64"]),
    "complex": st.sampled_from(["complex64", "complex128"]),
})


@HYPOTHESIS
@given(policy=st.sampled_from(POLICIES), args=st.lists(spelled_keys, min_size=1, max_size=5), dflt=defaults)
def test_result_type_does_not_depend_on_how_arguments_are_spelled(policy, args, dflt):
    canonical = [k for k, _ in args]
    spelled = [v for _, v in args]
    with al.dtype_promotion(policy), al.use_default_dtypes(**dflt):
        assert any_outcome(lambda: al.result_type(*spelled)) == any_outcome(lambda: al.result_type(*canonical))
        assert any_outcome(lambda: al.lattice_result_type(*spelled)) == any_outcome(
            lambda: al.lattice_result_type(*canonical))


@HYPOTHESIS
@given(policy=st.sampled_from(LATTICE_POLICIES), data=st.data(), dflt=defaults)
def test_lattice_result_type_does_not_depend_on_argument_order(policy, data, dflt):
    args = data.draw(st.lists(spelled_keys, min_size=2, max_size=5).map(lambda xs: [v for _, v in xs]))
    shuffled = data.draw(st.permutations(args))
    with al.dtype_promotion(policy), al.use_default_dtypes(**dflt):
        assert any_outcome(lambda: al.lattice_result_type(*args)) == any_outcome(
            lambda: al.lattice_result_type(*shuffled))


@HYPOTHESIS
@given(policy=st.sampled_from(POLICIES), a=keys, b=keys, dflt=defaults)
def test_promote_types_is_commutative_whatever_the_defaults(policy, a, b, dflt):
    with al.dtype_promotion(policy), al.use_default_dtypes(**dflt):
        assert outcome(lambda: al.promote_types(a, b)) == outcome(lambda: al.promote_types(b, a))


@HYPOTHESIS
@given(a=keys, b=keys, dflt=defaults)
def test_can_cast_to_the_promoted_dtype_whatever_the_defaults(a, b, dflt):
    with al.use_default_dtypes(**dflt):
        assert al.can_cast(a, al.promote_types(a, b))
