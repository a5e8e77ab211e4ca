"""The "array_api" and "strict" policies against their rules, integer overflow under every policy,
and policy selection (set/get/scope, unknown names)."""

from __future__ import annotations

import itertools
import threading

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al

POLICIES = ("standard", "strict", "paddle", "array_api")
DTYPES = list(al.all_dtypes)
PAIRS = list(itertools.product(DTYPES, DTYPES))
PAIR_IDS = [f"{a}+{b}" for a, b in PAIRS]
SCALAR_VALUES = {int: 3, float: 2.5, complex: 1j}
DEFAULTS_64 = {"int": "int64", "float": "float64", "complex": "complex128"}


@pytest.fixture(autouse=True)
def restore_policy():
    """Every test leaves the process-wide promotion policy as it found it."""
    saved = al.get_dtype_promotion()
    try:
        yield
    finally:
        al.set_dtype_promotion(saved)


def array(d: al.Dtype) -> np.ndarray:
    return np.ones(2, dtype=ml_dtypes.bfloat16 if d == "bfloat16" else str(d))


def outcome(call):
    try:
        return call()
    except al.TypePromotionError:
        return None


def raises_naming(a, b, call, *words):
    with pytest.raises(al.TypePromotionError) as info:
        call()
    message = str(info.value)
    for word in (str(a), str(b), *words):
        assert word in message, (word, message)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


# ------------------------------------------------------------------------------------ array_api
def kind_class(d: al.Dtype) -> str:
    """The Array API standard's categories that promote among themselves."""
    return {"bool": "bool", "int": "integer", "uint": "integer", "float": "floating",
            "complex": "floating"}[d.category]


def _real_bits(d: al.Dtype) -> int:
    return d.bits // 2 if d.is_complex else d.bits


def array_api_spec(a: al.Dtype, b: al.Dtype) -> al.Dtype | None:
    """The standard's promotion tables (2024.12), written from its rules; None where undefined.
    bfloat16 is not in the standard and is not handled here."""
    if a == b:
        return a
    if kind_class(a) != kind_class(b):
        return None
    if kind_class(a) == "integer":
        if a.category == b.category:
            return a if a.bits > b.bits else b
        signed, unsigned = (a, b) if a.category == "int" else (b, a)
        if signed.bits > unsigned.bits:
            return signed
        return al.Dtype(f"int{2 * unsigned.bits}") if unsigned.bits < 64 else None
    bits = max(_real_bits(a), _real_bits(b))
    if a.is_complex or b.is_complex:
        return al.Dtype(f"complex{2 * max(bits, 32)}")
    return al.Dtype(f"float{bits}")


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=PAIR_IDS)
def test_array_api_dtype_pairs(a, b):
    with al.use_default_dtypes(**DEFAULTS_64):
        standard = al.promote_types(a, b)
    with al.dtype_promotion("array_api"):
        got = outcome(lambda: al.promote_types(a, b))
        if kind_class(a) != kind_class(b):
            raises_naming(a, b, lambda: al.promote_types(a, b), "array_api")
            raises_naming(a, b, lambda: al.result_type(array(a), array(b)))
            return
        # within a kind the table is the lattice's, where the lattice stays in the kind
        assert got == (standard if kind_class(standard) == kind_class(a) else None)
        if "bfloat16" not in (a, b):
            assert got == array_api_spec(a, b)
        if got is not None:
            assert al.result_type(array(a), array(b)) is got
        else:
            raises_naming(a, b, lambda: al.promote_types(a, b), "array_api")


def test_array_api_uint64_with_signed_integers_raises():
    with al.dtype_promotion("array_api"):
        for signed in (al.int8, al.int16, al.int32, al.int64):
            raises_naming(al.uint64, signed, lambda: al.promote_types(al.uint64, signed))  # noqa: B023
            raises_naming(signed, al.uint64, lambda: al.promote_types(signed, al.uint64))  # noqa: B023
        assert al.promote_types(al.uint32, al.int8) is al.int64
        assert al.promote_types(al.uint64, al.uint8) is al.uint64


def array_api_scalar_rule(d: al.Dtype, scalar: type) -> al.Dtype | None:
    """Python bool with bool arrays; int with integer and floating (real or complex) arrays;
    float with floating arrays; complex with floating arrays (2024.12: a real array becomes the
    complex dtype of its precision)."""
    if scalar is bool:
        return d if d.is_bool else None
    if scalar is int:
        return None if d.is_bool else d
    if scalar is float:
        return d if kind_class(d) == "floating" else None
    if d.is_complex:
        return d
    return {"float64": al.complex128}.get(d, al.complex64) if d.is_floating else None


@pytest.mark.parametrize("scalar", [bool, int, float, complex], ids=lambda t: t.__name__)
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_array_api_python_scalars(d, scalar):
    want = array_api_scalar_rule(d, scalar)
    value = True if scalar is bool else SCALAR_VALUES[scalar]
    with al.dtype_promotion("array_api"):
        if want is None:
            with pytest.raises(al.TypePromotionError):
                al.promote_types(d, scalar)
            with pytest.raises(al.TypePromotionError):
                al.promote_types(scalar, d)
            with pytest.raises(al.TypePromotionError):
                al.result_type(array(d), value)
            with pytest.raises(al.TypePromotionError):
                al.result_type(value, array(d))
        else:
            assert al.promote_types(d, scalar) is want
            assert al.promote_types(scalar, d) is want
            assert al.result_type(array(d), value) is want
            assert al.result_type(value, array(d)) is want


# --------------------------------------------------------------------------------------- strict
@pytest.mark.parametrize(("a", "b"), PAIRS, ids=PAIR_IDS)
def test_strict_different_dtypes_raise_naming_both(a, b):
    with al.dtype_promotion("strict"):
        if a == b:
            assert al.promote_types(a, b) is a
            assert al.result_type(array(a), array(b)) is a
        else:
            raises_naming(a, b, lambda: al.promote_types(a, b), "strict", "standard")
            raises_naming(a, b, lambda: al.result_type(array(a), array(b)), "standard")


STRICT_SCALAR_KINDS = {int: {"int", "uint", "float", "complex"}, float: {"float", "complex"},
                       complex: {"complex"}}


@pytest.mark.parametrize("scalar", [int, float, complex], ids=lambda t: t.__name__)
@pytest.mark.parametrize("d", DTYPES, ids=str)
def test_strict_weak_scalars_allowed_only_into_a_fitting_kind(d, scalar):
    allowed = d.category in STRICT_SCALAR_KINDS[scalar]
    with al.dtype_promotion("strict"):
        for call in (lambda: al.promote_types(d, scalar), lambda: al.promote_types(scalar, d),
                     lambda: al.result_type(array(d), SCALAR_VALUES[scalar]),
                     lambda: al.result_type(SCALAR_VALUES[scalar], array(d))):
            if allowed:
                assert call() is d
            else:
                with pytest.raises(al.TypePromotionError):
                    call()


def test_strict_documented_examples():
    with al.dtype_promotion("strict"):
        assert al.promote_types("float32", int) is al.float32
        assert al.result_type(np.ones(2, np.float32), 1) is al.float32
        raises_naming("int32", "float", lambda: al.promote_types("int32", float), "standard")
        raises_naming("float32", "int32", lambda: al.promote_types("float32", "int32"), "standard")
        # Python bool is the (strong) bool dtype: no implicit path to int
        assert al.promote_types(bool, "bool") is al.bool
        with pytest.raises(al.TypePromotionError):
            al.promote_types(bool, "int8")
        # weak with weak stays allowed: int joins float
        assert al.lattice_result_type(1, 2.5) == (al.float32, True)


def test_strict_message_names_native_dtypes_as_dtypes():
    """NumPy scalar types are strong dtypes: the message must not call them weak Python scalars."""
    with al.dtype_promotion("strict"):
        for _ in range(2):  # the second call takes the cached-alias path
            with pytest.raises(al.TypePromotionError) as info:
                al.promote_types(np.int32, np.float32)
            message = str(info.value)
            assert "int32" in message and "float32" in message
            assert "weak" not in message and "Python" not in message, message


# ------------------------------------------------------------------------------------- overflow
@pytest.mark.parametrize("policy", POLICIES)
def test_python_int_out_of_range_raises_in_every_policy(policy):
    with al.dtype_promotion(policy):
        for dtype, bad in ((np.int8, 1000), (np.int8, 128), (np.int8, -129), (np.uint8, -1), (np.uint8, 256),
                           (np.uint64, 2**64), (np.int64, -(2**63) - 1)):
            for args in ((np.ones(2, dtype), bad), (bad, np.ones(2, dtype)), (np.dtype(dtype).name, bad)):
                with pytest.raises(al.ScalarOverflowError) as info:
                    al.result_type(*args)
                assert isinstance(info.value, OverflowError)
                assert not isinstance(info.value, al.TypePromotionError)
                assert str(bad) in str(info.value) and np.dtype(dtype).name in str(info.value)
        for dtype, good in ((np.int8, 127), (np.int8, -128), (np.uint8, 255), (np.uint8, 0),
                            (np.uint64, 2**64 - 1), (np.int64, -(2**63))):
            assert al.result_type(np.ones(2, dtype), good) == np.dtype(dtype).name
        # no integer result, no check
        assert al.result_type(np.ones(2, np.float32), 2**70) is al.float32


@pytest.mark.parametrize("policy", ["standard", "strict", "array_api"])
def test_lone_python_int_must_fit_the_default_int(policy):
    with al.dtype_promotion(policy):
        with pytest.raises(al.ScalarOverflowError, match=r"1099511627776.*int32"):
            al.result_type(2**40)
        with pytest.raises(al.ScalarOverflowError):
            al.result_type(2**40, 1)
        assert al.result_type(2**31 - 1) is al.int32
        with al.use_default_int_dtype("int64"):
            assert al.result_type(2**40) is al.int64
            with pytest.raises(al.ScalarOverflowError, match="int64"):
                al.result_type(2**63)


def test_lone_python_int_under_paddle_is_int64():
    with al.dtype_promotion("paddle"):
        assert al.result_type(2**40) is al.int64
        with pytest.raises(al.ScalarOverflowError, match=r"9223372036854775808.*int64"):
            al.result_type(2**63)


# ---------------------------------------------------------------------------- lone Python scalars
@pytest.mark.parametrize("policy", ["standard", "strict", "array_api"])
def test_lone_python_scalars_take_the_default_dtypes(policy):
    with al.dtype_promotion(policy):
        assert al.lattice_result_type(1) == (al.int32, True)
        assert al.lattice_result_type(1.5) == (al.float32, True)
        assert al.lattice_result_type(1j) == (al.complex64, True)
        assert al.lattice_result_type(True, False) == (al.bool, False)
        with al.use_default_dtypes(**DEFAULTS_64):
            assert al.result_type(1) is al.int64
            assert al.result_type(1.5) is al.float64
            assert al.result_type(1j) is al.complex128


@pytest.mark.parametrize("policy", ["standard", "strict", "array_api"])
def test_lone_python_bool_is_the_bool_dtype(policy):
    """Under the lattice policies a Python bool is the (strong) bool dtype, alone as in a pair."""
    with al.dtype_promotion(policy):
        assert al.result_type(True, True) is al.bool
        assert al.result_type(True) is al.bool
        assert al.result_type(bool) is al.bool
        assert al.lattice_result_type(True) == (al.bool, False)


# ---------------------------------------------------------------------------- policy selection
def test_policy_names_and_default():
    assert set(al.promotion_policies()) == set(POLICIES)
    assert al.get_dtype_promotion() == "standard"


def test_set_and_get_dtype_promotion():
    assert al.set_dtype_promotion("strict") == "strict"
    assert al.get_dtype_promotion() == "strict"
    with pytest.raises(al.TypePromotionError):
        al.promote_types("int32", "float32")
    al.set_dtype_promotion("standard")
    assert al.promote_types("int32", "float32") is al.float32


def test_scope_wins_over_process_wide_setting():
    al.set_dtype_promotion("array_api")
    with al.dtype_promotion("paddle") as name:
        assert name == "paddle"
        al.set_dtype_promotion("strict")
        assert al.get_dtype_promotion() == "paddle"
        assert al.promote_types("uint8", bool) is al.uint8
    assert al.get_dtype_promotion() == "strict"


def test_scope_is_local_to_the_thread():
    seen = []
    with al.dtype_promotion("paddle"):
        thread = threading.Thread(target=lambda: seen.append(al.get_dtype_promotion()))
        thread.start()
        thread.join()
        assert al.get_dtype_promotion() == "paddle"
    assert seen == ["standard"]


@pytest.mark.parametrize("bad", ["numpy", "Standard", "", None, 3])
def test_unknown_policy_name_lists_the_valid_ones(bad):
    al.set_dtype_promotion("strict")
    for call in (lambda: al.set_dtype_promotion(bad), lambda: al.dtype_promotion(bad).__enter__()):
        with pytest.raises(ValueError) as info:
            call()
        for name in POLICIES:
            assert repr(name) in str(info.value) or name in str(info.value)
    assert al.get_dtype_promotion() == "strict"
