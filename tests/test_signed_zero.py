"""Signed zeros come out as NumPy's on every backend (NumPy float32 as the oracle).

TensorFlow's eager cache of scalar constants keys on the Python value, where ``-0.0 == 0.0``,
so once ``0.0`` had been made a later ``-0.0`` came back as ``+0.0``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import arraylayer as al

VALUES = [0.0, -0.0, 0.5, -0.5, 2.0, -2.0, 1.5, -1.5]
BINARY = ["multiply", "divide", "floor_divide", "remainder", "add", "subtract"]
UNARY = ["round", "ceil", "floor", "trunc", "negative", "abs"]


def assert_same_float(result, expected) -> None:
    got = np.asarray(result)
    if np.isnan(expected):
        assert np.isnan(got)
    else:
        assert (float(got), bool(np.signbit(got))) == (float(expected), bool(np.signbit(expected)))


@pytest.mark.parametrize("name", BINARY)
def test_binary_signed_zero_matches_numpy(backend, name):
    function, oracle = getattr(al, name), getattr(np, name)
    with al.use_backend(backend):
        al.asarray(0.0)  # a cached +0.0 must not stand in for a later -0.0
        for a, b in itertools.product(VALUES, VALUES):
            with np.errstate(all="ignore"):
                expected = oracle(np.float32(a), np.float32(b))
            with np.errstate(all="ignore"):
                for result in (function(al.asarray(a), b), function(a, al.asarray(b)),
                               function(al.asarray(a), al.asarray(b))):
                    assert_same_float(result, expected)


@pytest.mark.parametrize("name", UNARY)
def test_unary_signed_zero_matches_numpy(backend, name):
    with al.use_backend(backend):
        for a in VALUES:
            assert_same_float(getattr(al, name)(al.asarray(a)), getattr(np, name)(np.float32(a)))


def test_negative_zero_scalar_after_positive_zero(backend):
    with al.use_backend(backend):
        al.asarray(0.0)
        assert np.signbit(np.asarray(al.asarray(-0.0)))
        assert np.signbit(np.asarray(al.multiply(al.asarray([1.0]), -0.0)))[0]
        assert np.signbit(np.asarray(al.floor_divide(al.asarray(-0.0), 2.0)))
