"""result_type on native arrays of every installed backend agrees with promote_types on their dtypes."""

from __future__ import annotations

import itertools

import pytest
from conftest import make_array

import arraylayer as al

PAIRS = list(itertools.combinations_with_replacement([str(d) for d in al.all_dtypes], 2))


def test_result_type_of_arrays_equals_promote_types_of_dtypes(backend):
    arrays = {str(d): make_array(backend, str(d)) for d in al.all_dtypes}
    for a, b in PAIRS:
        assert al.result_type(arrays[a], arrays[b]) == al.promote_types(a, b), (backend, a, b)
        assert al.result_type(arrays[a], arrays[b], 1) == al.promote_types(al.promote_types(a, b), int)


@pytest.mark.parametrize("policy", ["standard", "strict", "paddle", "array_api"])
def test_python_scalars_are_weak_on_every_backend(backend, policy):
    x = make_array(backend, "int8")
    f = make_array(backend, "float16")
    with al.dtype_promotion(policy):
        assert al.result_type(x, 1) is al.int8
        assert al.result_type(f, 2.5) is al.float16
        assert al.result_type(f, 2) is al.float16
        with pytest.raises(al.ScalarOverflowError, match="1000 does not fit int8"):
            al.result_type(x, 1000)
        with pytest.raises(OverflowError):
            al.result_type(make_array(backend, "uint8"), -1)


def test_jax_weak_typed_arrays_behave_as_python_scalars():
    jnp = pytest.importorskip("jax.numpy")
    weak_int, weak_float = jnp.asarray(2), jnp.asarray(2.0)
    assert weak_int.weak_type and weak_float.weak_type
    x8 = jnp.ones(3, dtype=jnp.int8)
    assert al.result_type(x8, weak_int) is al.int8
    assert al.result_type(jnp.ones(3, dtype=jnp.bfloat16), weak_float) is al.bfloat16
    assert al.lattice_result_type(weak_int, weak_float) == (al.float32, True)
    strong = jnp.asarray(2, dtype=jnp.int32)
    assert al.result_type(x8, strong) is al.int32
