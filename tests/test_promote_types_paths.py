"""The compiled ``promote_types`` (arraylayer/_promotion.c) and the Python one give the same outcome.

``al.promote_types`` is a builtin where the C extension is active: it answers two arguments whose cell
in the active policy's table is a Dtype, and runs the Python function
(``arraylayer.dtypes.promotion.promote_types``) for everything else. Here every pair of dtype-likes
(Dtypes, names, NumPy dtypes, the Python scalar types, misspelt names, arrays) is given to both, under
every policy, set process-wide and in a scope, and the results, or the exceptions' class and message,
must be identical.
"""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer.dtypes import promotion
from arraylayer.runtime import compiled_dispatch

KEYS = [*al.all_dtypes, al.bfloat16, al.float8_e4m3fn, al.int4, "float32", "int8", "uint64",
        np.dtype("float16"), np.dtype("int64"), int, float, complex, bool, "flaot32", np.ones(2)]


def outcome(function, a, b):
    try:
        return ("ok", function(a, b))
    except Exception as error:  # noqa: BLE001 - the outcome compared is the exception itself
        return (type(error), str(error))


def agree_on_every_pair():
    for a in KEYS:
        for b in KEYS:
            fast, python = outcome(al.promote_types, a, b), outcome(promotion.promote_types, a, b)
            assert fast == python, (a, b)
            if fast[0] == "ok":
                assert fast[1] is python[1], (a, b)  # the same Dtype object


def test_the_public_function_is_the_compiled_one_where_the_extension_is():
    if compiled_dispatch.ACTIVE:
        assert type(al.promote_types).__name__ == "builtin_function_or_method"
        assert al.promote_types.__doc__.startswith(promotion.promote_types.__doc__.strip()[:40])
    else:
        assert al.promote_types is promotion.promote_types
    assert list(__import__("inspect").signature(al.promote_types).parameters) == ["a", "b"]


@pytest.mark.parametrize("policy", al.promotion_policies())
def test_every_pair_agrees_in_a_scope(policy):
    with al.dtype_promotion(policy):
        agree_on_every_pair()


@pytest.mark.parametrize("policy", al.promotion_policies())
def test_every_pair_agrees_under_the_process_wide_policy(policy):
    before = al.get_dtype_promotion()
    al.set_dtype_promotion(policy)
    try:
        agree_on_every_pair()
    finally:
        al.set_dtype_promotion(before)


def test_a_scope_is_read_on_every_call():
    assert al.promote_types(al.float32, al.int8) is al.float32
    with al.dtype_promotion("strict"):
        with pytest.raises(al.TypePromotionError, match="strict"):
            al.promote_types(al.float32, al.int8)
        with al.dtype_promotion("paddle"):
            assert al.promote_types(al.float16, al.bfloat16) is al.float32
    assert al.promote_types(al.float32, al.int8) is al.float32


def test_keywords_and_wrong_arity_behave_as_the_python_function():
    assert al.promote_types(a="int8", b=al.uint8) is al.int16
    assert al.promote_types(al.int8, b=al.uint8) is al.int16
    for args in [(), (al.int8,), (al.int8, al.int8, al.int8)]:
        with pytest.raises(TypeError) as fast:
            al.promote_types(*args)
        with pytest.raises(TypeError) as python:
            promotion.promote_types(*args)
        assert str(fast.value) == str(python.value)


def test_torch_compile_traces_it_without_a_graph_break():
    torch = pytest.importorskip("torch")

    def f(x):
        dtype = al.promote_types(al.float32, al.int8)
        return x + (1.0 if dtype is al.float32 else 2.0)

    compiled = torch.compile(f, fullgraph=True, backend="eager")
    assert compiled(torch.ones(2)).tolist() == [2.0, 2.0]
