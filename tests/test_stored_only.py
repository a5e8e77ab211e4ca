"""Dtypes a backend stores but has no kernels for (torch 2.13's uint16/uint32/uint64): one rule
for every public function (docs/conformance.rst, "Stored but not computable"). uint16 and uint32
are computed in int64 (api/widened.py): every function runs on them without a framework
exception; uint64 stays stored only:

- An input of such a dtype is refused with arraylayer's UnsupportedDtypeError naming the remedy (astype, a wider dtype), by
  every function but astype and the creation functions (which only store); never a framework's
  NotImplementedError/RuntimeError.
- equal and not_equal take them (torch has eq/ne kernels for them).
- Where the standard types the *result* with such a dtype from an input torch computes with (the
  default uint accumulator of sum, prod, cumulative_sum, cumulative_prod, trace over uint8), the
  kernel computes in int64 and stores the result in that dtype: exact, since the wrap modulo 2**64
  of int64 arithmetic keeps the low bits; the result equals NumPy's.
Oracle: NumPy's result.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np
import pytest

import arraylayer as al

torch = pytest.importorskip("torch")
from test_bad_input import FUNCTIONS, valid_arguments  # noqa: E402
from test_dask import VALID_CALLS  # noqa: E402

STORED_ONLY: Final = ("uint16", "uint32", "uint64")
_MATRIX: Final = [[1, 2, 0, 3], [4, 0, 2, 1], [0, 3, 1, 2], [2, 1, 4, 0]]


def _materialised(value: Any, dtype: str) -> Any:
    """test_bad_input's abstract arguments on torch, every numeric array of ``dtype`` (small,
    non-negative integer values)."""
    if isinstance(value, list):
        return [_materialised(v, dtype) for v in value]
    if isinstance(value, tuple) and len(value) == 3 and value[0] == "A":
        if value[1] == "bool" or value[1].startswith("complex"):
            return al.asarray(value[2], dtype=value[1])
        return _stored(np.abs(np.round(np.asarray(value[2], dtype=float))).astype(np.int64), dtype)
    return value


def _stored(values: np.ndarray, dtype: str) -> Any:
    """A torch tensor of ``dtype`` holding ``values`` (al.asarray refuses a stored-only dtype)."""
    return torch.as_tensor(values.astype(np.int64)).to(getattr(torch, dtype))


def _outcome(name: str, dtype: str) -> Any:
    args, kwargs = VALID_CALLS.get(name) or valid_arguments(name, FUNCTIONS[name])
    with al.use_backend("torch"):
        try:
            return FUNCTIONS[name](*_materialised(args, dtype), **{k: _materialised(v, dtype) for k, v in kwargs.items()})
        except al.ArrayLayerError as error:  # anything else (torch's own) fails the test
            return error


@pytest.mark.parametrize("dtype", STORED_ONLY)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_refuses_a_stored_only_input_with_arraylayers_error(name, dtype):
    """No framework exception: the call runs, or raises UnsupportedDtypeError naming the dtype and
    the remedy (or another arraylayer error where the generic arguments, written for float input,
    do not suit integers: checked before any dtype)."""
    result = _outcome(name, dtype)
    if isinstance(result, al.UnsupportedDtypeError):
        assert dtype in str(result) and ("astype" in str(result) or "wider" in str(result)), result


ACCUMULATORS: Final = {
    "sum": lambda x: al.sum(x), "prod": lambda x: al.prod(x, axis=0),
    "cumulative_sum": lambda x: al.cumulative_sum(x, axis=1), "cumulative_prod": lambda x: al.cumulative_prod(x, axis=0),
    "linalg.trace": lambda x: al.linalg.trace(x, offset=1),
}


@pytest.mark.parametrize("dtype", ["uint8", *STORED_ONLY])
@pytest.mark.parametrize("name", sorted(ACCUMULATORS))
def test_accumulators_compute_a_stored_only_result_as_numpy(name, dtype):
    """sum/prod/cumulative_*/trace of unsigned input accumulate in the default uint dtype (uint32)
    or wider, which torch stores only: computed in int64, stored in that dtype, NumPy's values
    (wrap included: 250 * 200 ... modulo 2**32)."""
    host = (np.asarray(_MATRIX) * 61 + 200).astype(dtype)
    with al.use_backend("numpy"):
        want = np.asarray(ACCUMULATORS[name](host))
    with al.use_backend("torch"):
        got = ACCUMULATORS[name](_stored(host, dtype))
    assert al.Dtype(got.dtype) == al.Dtype(want.dtype)
    np.testing.assert_array_equal(np.asarray(al.to_backend(got, "numpy")), want)


@pytest.mark.parametrize("dtype", STORED_ONLY)
def test_equality_of_a_stored_only_array_is_torchs_own_and_matches_numpy(dtype):
    """equal/not_equal have torch kernels for uint16/32/64 (the suite compares a uint32 sum of uint8
    with a Python int); NumPy's answer, top bit set included. Ordering stays refused (no kernel)."""
    top = {"uint16": 2**15 + 5, "uint32": 2**31 + 5, "uint64": 2**63 + 5}[dtype]
    host = np.array([3, top, 7], dtype)
    other = np.array([3, top, 8], dtype)
    with al.use_backend("torch"):
        x, y = _stored(host, dtype), _stored(other, dtype)
        assert np.asarray(al.equal(x, y)).tolist() == (host == other).tolist()
        assert np.asarray(al.not_equal(x, y)).tolist() == (host != other).tolist()
        assert np.asarray(al.equal(x, 7)).tolist() == (host == 7).tolist()
        if al.as_dtype(dtype) in al.get_backend("torch").computes_as:  # computed in int64: NumPy's order
            assert np.asarray(al.less(x, y)).tolist() == (host < other).tolist()
            return
        with pytest.raises(al.UnsupportedDtypeError, match=dtype):
            al.less(x, y)
