"""Every cell of seed 000's 18x18 promotion table (JAX's lattice), read from the seed at test time.

A starred cell (``i*``, ``f*``, ``c*``) is a weak result. The seed's table was generated with
x64 on, so under 64-bit defaults a weak cell materialises to int64/float64/complex128; under
arraylayer's out-of-the-box 32-bit defaults it materialises to int32/float32/complex64.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from seeds import WEAK_TYPES, jax_code_dtype, jax_codes, jax_table

import arraylayer as al

TABLE = jax_table()
CELLS = [(row, column) for row in jax_codes() for column in jax_codes()]
IDS = [f"{row}+{column}" for row, column in CELLS]

DEFAULTS_64 = {"int": "int64", "float": "float64", "complex": "complex128"}
WEAK_64 = {int: al.int64, float: al.float64, complex: al.complex128}
WEAK_32 = {int: al.int32, float: al.float32, complex: al.complex64}
SCALAR_VALUES = {int: 1, float: 1.0, complex: 1j}


def as_type(code: str) -> al.Dtype | type:
    """The argument for a code: the Python type of a weak code, else the arraylayer dtype."""
    target = jax_code_dtype(code)
    return target if isinstance(target, type) else getattr(al, target)


def as_value(code: str):
    """A value of that code: a Python scalar for a weak code, else a small NumPy array."""
    target = jax_code_dtype(code)
    if isinstance(target, type):
        return SCALAR_VALUES[target]
    native = ml_dtypes.bfloat16 if target == "bfloat16" else target
    return np.ones(2, dtype=native)


def as_native(code: str):
    target = jax_code_dtype(code)
    if isinstance(target, type):
        return target
    return np.dtype(ml_dtypes.bfloat16) if target == "bfloat16" else np.dtype(target)


def expected(code: str, weak_dtypes: dict[type, al.Dtype]) -> tuple[al.Dtype, bool]:
    """(materialised dtype, is_weak) for a seed cell."""
    target = jax_code_dtype(code)
    if isinstance(target, type):
        return weak_dtypes[target], True
    return getattr(al, target), False


def test_seed_table_is_the_lattice_table():
    """Sanity of the parse: 18 codes, every non-weak code is its own join with itself."""
    assert len(TABLE) == 324
    assert set(jax_codes()) >= set(WEAK_TYPES)
    assert all(TABLE[code, code] == code for code in jax_codes())


@pytest.mark.parametrize(("row", "column"), CELLS, ids=IDS)
def test_lattice_result_type_of_types_matches_seed(row, column):
    with al.use_default_dtypes(**DEFAULTS_64):
        dtype, weak = al.lattice_result_type(as_type(row), as_type(column))
    want_dtype, want_weak = expected(TABLE[row, column], WEAK_64)
    assert (dtype, weak) == (want_dtype, want_weak), f"seed 000: {row} + {column} = {TABLE[row, column]}"
    assert dtype is want_dtype  # one Dtype instance per dtype


@pytest.mark.parametrize(("row", "column"), CELLS, ids=IDS)
def test_lattice_result_type_of_values_matches_seed(row, column):
    """Python scalar values (weak) and NumPy arrays (strong) give the same cell as the types."""
    with al.use_default_dtypes(**DEFAULTS_64):
        result = al.lattice_result_type(as_value(row), as_value(column))
        plain = al.result_type(as_value(row), as_value(column))
    want_dtype, want_weak = expected(TABLE[row, column], WEAK_64)
    assert result == (want_dtype, want_weak), f"seed 000: {row} + {column} = {TABLE[row, column]}"
    assert plain is want_dtype


@pytest.mark.parametrize(("row", "column"), CELLS, ids=IDS)
def test_promote_types_materialises_with_64bit_defaults(row, column):
    want_dtype, _ = expected(TABLE[row, column], WEAK_64)
    with al.use_default_dtypes(**DEFAULTS_64):
        assert al.promote_types(as_type(row), as_type(column)) is want_dtype
        # the same through dtype names and NumPy dtype objects
        names = [a if isinstance(a, type) else str(a) for a in (as_type(row), as_type(column))]
        assert al.promote_types(*names) is want_dtype
        assert al.promote_types(as_native(row), as_native(column)) is want_dtype


@pytest.mark.parametrize(("row", "column"), CELLS, ids=IDS)
def test_weak_cells_materialise_to_32bit_defaults(row, column):
    assert (al.default_int_dtype(), al.default_float_dtype(), al.default_complex_dtype()) == (
        al.int32, al.float32, al.complex64), "arraylayer's out-of-the-box defaults are 32-bit"
    want_dtype, want_weak = expected(TABLE[row, column], WEAK_32)
    assert al.lattice_result_type(as_type(row), as_type(column)) == (want_dtype, want_weak)
    assert al.promote_types(as_type(row), as_type(column)) is want_dtype
    assert al.result_type(as_value(row), as_value(column)) is want_dtype
