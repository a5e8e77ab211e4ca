"""The "paddle" policy against every cell of seed 002's two tables, read from the seed at test time.

Tensor-tensor: ``-`` off the diagonal means Paddle refuses (TypePromotionError); on the diagonal
no promotion is needed and the dtype is kept. Tensor-scalar: the Python types ``bool``, ``int``,
``float``, ``complex`` are scalars under this policy (promote_types), and so are the values
``True``, ``1``, ``1.5``, ``1j`` (result_type), on either side.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from seeds import PADDLE_CODES, PADDLE_SCALARS, paddle_tensor_scalar, paddle_tensor_tensor

import arraylayer as al

TENSOR_TENSOR = paddle_tensor_tensor()
TENSOR_SCALAR = paddle_tensor_scalar()
SCALAR_VALUES = {bool: True, int: 1, float: 1.5, complex: 1j}
PADDLE_INTEGERS = ("u8", "i8", "i16", "i32", "i64")
NOT_IN_PADDLE = (al.uint16, al.uint32, al.uint64)

# KNOWN SEED ERRATUM. Seed 002's tensor-tensor table prints c64 + f64 = c64 and c64 + i64 = c128,
# the mirror images of its own f64 + c64 = c128 and i64 + c64 = c64 cells, although the same
# document promises commutativity ("Paddle ensures that calculations comply with the commutative
# property"). arraylayer implements the commutative reading, so these two cells are checked
# against their mirror cell instead of as printed.
ERRATUM = {("c64", "f64"), ("c64", "i64")}


@pytest.fixture(autouse=True)
def paddle():
    with al.dtype_promotion("paddle"):
        yield


def dtype(code: str) -> al.Dtype:
    return getattr(al, PADDLE_CODES[code])


def array(d: al.Dtype) -> np.ndarray:
    return np.ones(2, dtype=ml_dtypes.bfloat16 if d == "bfloat16" else str(d))


def expected_tensor_tensor(row: str, column: str) -> al.Dtype | None:
    """The seed's cell as a dtype; None where Paddle refuses."""
    cell = TENSOR_TENSOR[column, row] if (row, column) in ERRATUM else TENSOR_TENSOR[row, column]
    if cell == "-":
        return dtype(row) if row == column else None
    return dtype(cell)


def test_seed_erratum_is_exactly_the_two_documented_cells():
    asymmetric = {(r, c) for (r, c), cell in TENSOR_TENSOR.items() if cell != TENSOR_TENSOR[c, r]}
    assert asymmetric == ERRATUM | {(c, r) for r, c in ERRATUM}
    assert (TENSOR_TENSOR["c64", "f64"], TENSOR_TENSOR["f64", "c64"]) == ("c64", "c128")
    assert (TENSOR_TENSOR["c64", "i64"], TENSOR_TENSOR["i64", "c64"]) == ("c128", "c64")


@pytest.mark.parametrize(("row", "column"), sorted(ERRATUM), ids=[f"{r}+{c}" for r, c in sorted(ERRATUM)])
def test_erratum_cells_follow_their_mirror(row, column):
    """The commutative reading: c64 + f64 = c128 (as f64 + c64), c64 + i64 = c64 (as i64 + c64)."""
    mirror = dtype(TENSOR_TENSOR[column, row])
    assert al.promote_types(dtype(row), dtype(column)) is mirror
    assert al.promote_types(dtype(column), dtype(row)) is mirror
    assert al.result_type(array(dtype(row)), array(dtype(column))) is mirror
    assert al.promote_types(dtype(row), dtype(column)) != dtype(TENSOR_TENSOR[row, column])


@pytest.mark.parametrize(("row", "column"), sorted(TENSOR_TENSOR), ids=[f"{r}+{c}" for r, c in sorted(TENSOR_TENSOR)])
def test_tensor_tensor_cell(row, column):
    a, b = dtype(row), dtype(column)
    want = expected_tensor_tensor(row, column)
    if want is None:
        with pytest.raises(al.TypePromotionError) as info:
            al.promote_types(a, b)
        assert str(a) in str(info.value) and str(b) in str(info.value)
        assert "paddle" in str(info.value)
        with pytest.raises(al.TypePromotionError):
            al.result_type(array(a), array(b))
    else:
        assert al.promote_types(a, b) is want
        assert al.promote_types(str(a), str(b)) is want
        assert al.result_type(array(a), array(b)) is want
        assert al.lattice_result_type(array(a), array(b)) == (want, False)


@pytest.mark.parametrize(("row", "column"), sorted(TENSOR_SCALAR), ids=[f"{r}+{c}" for r, c in sorted(TENSOR_SCALAR)])
def test_tensor_scalar_cell(row, column):
    a, scalar = dtype(row), PADDLE_SCALARS[column]
    want = dtype(TENSOR_SCALAR[row, column])
    value = SCALAR_VALUES[scalar]
    assert al.promote_types(a, scalar) is want
    assert al.promote_types(scalar, a) is want
    assert al.result_type(array(a), value) is want
    assert al.result_type(value, array(a)) is want


def test_documented_python_type_examples():
    assert al.promote_types("uint8", bool) is al.uint8  # bool is a scalar here, not the bool dtype
    assert al.promote_types("bool", int) is al.int64
    assert al.promote_types(bool, "bool") is al.bool
    # the seed's own sample: a Python float with an int64 tensor gives float32
    assert al.result_type(1.0, np.ones((3, 3), dtype=np.int64)) is al.float32
    assert al.result_type(np.ones((3, 3), dtype=np.float16), 1.0) is al.float16


@pytest.mark.parametrize("defaults", [{}, {"int": "int64", "float": "float64", "complex": "complex128"},
                                      {"int": "int16", "float": "float16"}])
def test_python_scalars_alone_take_paddles_defaults_whatever_arraylayers_are(defaults):
    """Paddle's scalar defaults: int -> int64, float -> float32, bool -> bool, complex -> complex64."""
    with al.use_default_dtypes(**defaults):
        assert al.result_type(7) is al.int64
        assert al.result_type(7.5) is al.float32
        assert al.result_type(True) is al.bool
        assert al.result_type(7j) is al.complex64
        assert al.promote_types(int, int) is al.int64
        assert al.promote_types(float, float) is al.float32


# ------------------------------------------------------ uint16/32/64: like Paddle's other integers
@pytest.mark.parametrize("u", NOT_IN_PADDLE, ids=str)
@pytest.mark.parametrize("other", al.all_dtypes, ids=str)
def test_wide_unsigned_with_tensors_follow_paddle_integers(u, other):
    """Same dtype: itself. With complex: what every Paddle integer gets from the seed. Else: refused."""
    if other == u:
        assert al.promote_types(u, other) is u
        return
    if other.is_complex:
        with_complex = {TENSOR_TENSOR[i, c] for i in PADDLE_INTEGERS for c in PADDLE_CODES
                        if PADDLE_CODES[c] == other}
        assert len(with_complex) == 1, "seed 002 treats all its integers alike with complex"
        want = dtype(with_complex.pop())
        assert al.promote_types(u, other) is want
        assert al.promote_types(other, u) is want
        assert al.result_type(array(u), array(other)) is want
        return
    for a, b in ((u, other), (other, u)):
        with pytest.raises(al.TypePromotionError) as info:
            al.promote_types(a, b)
        assert str(a) in str(info.value) and str(b) in str(info.value)
    with pytest.raises(al.TypePromotionError):
        al.result_type(array(u), array(other))


@pytest.mark.parametrize("u", NOT_IN_PADDLE, ids=str)
@pytest.mark.parametrize("scalar", list(PADDLE_SCALARS.values()), ids=lambda t: t.__name__)
def test_wide_unsigned_with_scalars_follow_paddle_integers(u, scalar):
    """Where the seed's integer rows keep the tensor's dtype, so does uint16/32/64; else the same cell."""
    column = next(c for c, t in PADDLE_SCALARS.items() if t is scalar)
    cells = {"itself" if TENSOR_SCALAR[i, column] == i else TENSOR_SCALAR[i, column] for i in PADDLE_INTEGERS}
    assert len(cells) == 1, "seed 002 treats all its integers alike with scalars"
    cell = cells.pop()
    want = u if cell == "itself" else dtype(cell)
    assert al.promote_types(u, scalar) is want
    assert al.promote_types(scalar, u) is want
    assert al.result_type(array(u), SCALAR_VALUES[scalar]) is want
    assert al.result_type(SCALAR_VALUES[scalar], array(u)) is want


def test_python_ints_must_fit_the_tensor_dtype():
    with pytest.raises(al.ScalarOverflowError, match="1000"):
        al.result_type(np.ones(2, np.int8), 1000)
    with pytest.raises(al.ScalarOverflowError):
        al.result_type(np.ones(2, np.uint16), -1)
    assert al.result_type(np.ones(2, np.uint64), 2**64 - 1) is al.uint64
