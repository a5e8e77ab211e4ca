"""Functions of stacks with a zero-length axis give NumPy's (empty) result on every backend.

dask's automatic chunking divides by zero on some empty shapes (``da.from_array`` of a
(4, 1, 1, 1, 5, 0, 17) array); the official suite drew ``linalg.solve`` of such a stack.
"""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al

# name -> (arraylayer call, NumPy's call: the oracle, input shapes)
CALLS = {
    "solve": (al.linalg.solve, np.linalg.solve, [(4, 1, 1, 1, 5, 0, 0), (0, 17)]),
    "inv": (al.linalg.inv, np.linalg.inv, [(4, 1, 1, 1, 5, 17, 0, 0)]),
    "repeat": (lambda x: al.repeat(x, 2, axis=0), lambda x: np.repeat(x, 2, axis=0), [(4, 1, 1, 1, 5, 0, 17)]),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_empty_stack_matches_numpy(backend, name):
    call, oracle, shapes = CALLS[name]
    arrays = [np.empty(shape, np.float32) for shape in shapes]
    with al.use_backend(backend):
        result = np.asarray(al.to_backend(call(*(al.asarray(a) for a in arrays)), "numpy"))
    expected = oracle(*arrays)
    assert result.shape == expected.shape and result.dtype == expected.dtype
