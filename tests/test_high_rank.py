"""Arrays of more than 8 axes compute as NumPy does on every backend.

Several TensorFlow CPU kernels stop at 8 axes (``SelectV2``, ``Where``, ``ReverseV2``,
``StridedSlice``; ``ArgMax`` at 7); arraylayer's TensorFlow kernels fold such tensors into fewer
axes around those ops (``kernels/tensorflow/_high_rank.py``). Two oracles: NumPy's result for the
functions that move or select elements, and, for every element-wise function, the same backend's
result on the same values laid out in two axes (an element-wise result cannot depend on the shape).
"""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer.kernels.names import KERNEL_NAMES

SHAPE = (1, 2, 1, 2, 1, 2, 1, 2, 1, 3)  # 10 axes, 48 elements
RNG = np.random.default_rng(20261126)
VALUES = RNG.uniform(0.1, 0.9, SHAPE).astype(np.float32)
VALUES.flat[[5, 17]] = VALUES.flat[[4, 16]]  # ties, for the sorts' and arg-reductions' order
MASK = VALUES > 0.5
EDGE = np.zeros(SHAPE[:-1] + (1,), np.float32)  # one more element along the last axis
COLUMN = RNG.uniform(0.1, 0.9, (1, 2) + (1,) * 8).astype(np.float32)  # broadcasts against SHAPE

# name -> (arraylayer call, NumPy's call: the oracle)
CALLS = {
    "flip": (lambda x: al.flip(x), np.flip),
    "flip axes": (lambda x: al.flip(x, axis=(1, -1)), lambda x: np.flip(x, axis=(1, -1))),
    "where": (lambda x: al.where(x > 0.5, x, al.asarray(COLUMN)), lambda x: np.where(x > 0.5, x, COLUMN)),
    "where scalar": (lambda x: al.where(x > 0.5, x, 0.0), lambda x: np.where(x > 0.5, x, np.float32(0))),
    "diff": (lambda x: al.diff(x, axis=3), lambda x: np.diff(x, axis=3)),
    "diff n=2 appended": (lambda x: al.diff(x, axis=-1, n=2, append=al.asarray(EDGE)),
                          lambda x: np.diff(x, axis=-1, n=2, append=EDGE)),
    "sort": (lambda x: al.sort(x, axis=-1), lambda x: np.sort(x, axis=-1)),
    "argsort": (lambda x: al.argsort(x, axis=3, stable=True), lambda x: np.argsort(x, axis=3, kind="stable")),
    "argmax": (lambda x: al.argmax(x, axis=-1), lambda x: np.argmax(x, axis=-1)),
    "argmin keepdims": (lambda x: al.argmin(x, axis=1, keepdims=True), lambda x: np.argmin(x, axis=1, keepdims=True)),
    "argmax all": (lambda x: al.argmax(x), np.argmax),
    "take_along_axis": (lambda x: al.take_along_axis(x, al.argsort(x, axis=-1, stable=True), axis=-1),
                        lambda x: np.take_along_axis(x, np.argsort(x, axis=-1, kind="stable"), axis=-1)),
    "nonzero": (lambda x: al.stack(al.nonzero(x > 0.5)), lambda x: np.stack(np.nonzero(x > 0.5))),
    "tril": (lambda x: al.tril(x), np.tril),
    "maximum": (lambda x: al.maximum(x, al.asarray(COLUMN)), lambda x: np.maximum(x, COLUMN)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_high_rank_matches_numpy(backend, name):
    call, oracle = CALLS[name]
    with al.use_backend(backend):
        result = np.asarray(al.to_backend(call(al.asarray(VALUES)), "numpy"))
    expected = np.asarray(oracle(VALUES))
    assert result.shape == expected.shape
    np.testing.assert_array_equal(result.astype(expected.dtype), expected)


def _operand(name: str, index: int) -> np.ndarray:
    """An input of the element-wise function ``name``, in a dtype and range it accepts."""
    if name.startswith("logical"):
        return MASK if index == 0 else ~MASK
    if name.startswith("bitwise"):
        return (VALUES * 8).astype(np.int32) + index  # 0..8: shifts within range
    if name == "acosh":
        return VALUES + np.float32(1)
    return VALUES if index == 0 else VALUES[..., ::-1].copy()


def _arity(name: str) -> int:
    one = {"abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil", "conj", "cos", "cosh",
           "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10", "logical_not",
           "negative", "positive", "real", "reciprocal", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt",
           "tan", "tanh", "trunc"}
    return 1 if name in one else 3 if name == "clip" else 2


@pytest.mark.parametrize("name", KERNEL_NAMES["elementwise"])
def test_elementwise_result_does_not_depend_on_rank(backend, name):
    function = getattr(al, name)
    operands = [_operand(name, i) for i in range(_arity(name))]
    if name == "clip":
        operands = [VALUES, VALUES * 0 + np.float32(0.3), VALUES * 0 + np.float32(0.6)]
    with al.use_backend(backend):
        high = function(*(al.asarray(a) for a in operands))
        flat = function(*(al.asarray(a.reshape(6, 8)) for a in operands))
        high, flat = (np.asarray(al.to_backend(r, "numpy")) for r in (high, flat))
    assert high.shape == SHAPE
    np.testing.assert_array_equal(high.reshape(6, 8), flat)
