"""The optional C threefry kernel (arraylayer/_threefry.c) against dropout_masks.py's NumPy path
(the same bits for keep masks and split keys, at tile edges, counters near 2**32 and every kind
of key word), against jax.random's bits, and through nn.dropout / random.split on every backend.

Skipped where the extension is not built (the NumPy path then serves, and
tests/test_nn_fused.py checks it against jax.random)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import arraylayer as al
from arraylayer.models import dropout_masks

dropout_masks._load_numpy()
kernel = dropout_masks._kernel
needs_kernel = pytest.mark.skipif(kernel is None, reason="arraylayer._threefry is not built (setup.py build_ext)")
RNG = np.random.default_rng(2323)
#: key words: zero, all ones, the top bit, and random ones
WORDS = [(0, 0), (2**32 - 1, 2**32 - 1), (2**31, 1), *(tuple(int(w) for w in RNG.integers(0, 2**32, 2)) for _ in range(3))]
SIZES = (0, 1, 7, 2**16 - 1, 2**16 + 3)  # the NumPy path works in tiles of 2**16


@needs_kernel
@pytest.mark.parametrize("words", WORDS, ids=str)
def test_keep_masks_match_numpy(words):
    for size in SIZES:
        for first in (0, 12345, 2**32 - size):
            for threshold in (0, 1, 2**31, 12345 << 9, 2**32 - 2**9):
                got, expected = np.empty(size, bool), np.empty(size, bool)
                kernel.keep(got, *words, first, threshold)
                dropout_masks._keep_numpy(expected, *words, first, threshold)
                np.testing.assert_array_equal(got, expected, err_msg=f"size {size}, first {first}, {threshold}")


@needs_kernel
@pytest.mark.parametrize("words", WORDS, ids=str)
def test_blocks_match_numpy(words):
    for size in SIZES:
        for first in (0, 2**32 - size):
            got, expected = np.empty((size, 2), np.uint32), np.empty((size, 2), np.uint32)
            kernel.blocks(got, *words, first)
            dropout_masks._blocks_numpy(expected, *words, first)
            np.testing.assert_array_equal(got, expected)


@needs_kernel
def test_blocks_are_jax_random_bits(x64_off):
    """jax.random.split's keys are threefry blocks of the counters 0, 1, ... (JAX's partitionable
    default and its classic form agree on this for the split of a raw key)."""
    jax = pytest.importorskip("jax")
    for seed in (0, 1, 2**31 - 1):
        words = tuple(int(w) for w in np.asarray(jax.random.key_data(jax.random.key(seed))))
        got = np.empty((5, 2), np.uint32)
        kernel.blocks(got, *words, 0)
        np.testing.assert_array_equal(got, np.asarray(jax.random.key_data(jax.random.split(jax.random.key(seed), 5))))


@needs_kernel
def test_bad_buffers_raise_value_errors():
    with pytest.raises(ValueError, match="1-byte"):
        kernel.keep(np.empty(4, np.uint32), 1, 2, 0, 5)
    with pytest.raises(ValueError, match="uint32 pairs"):
        kernel.blocks(np.empty(3, np.uint32), 1, 2, 0)
    with pytest.raises(TypeError):
        kernel.keep(np.empty(4, bool)[::2], 1, 2, 0, 5)  # not writable as one contiguous buffer


def test_dropout_and_split_are_jax_random_on_every_backend(backend, x64_off):
    jax = pytest.importorskip("jax")
    shape = (16, 4, 9, 32)
    host = al.get_backend(backend).to_numpy
    with al.use_backend(backend):
        key = al.random.key(5)
        kept = np.asarray(host(al.nn.dropout(key, al.ones(shape), 0.1))) != 0
        split = np.asarray(host(al.random.split(key, 3))).astype(np.uint32)
    np.testing.assert_array_equal(kept, np.asarray(jax.random.bernoulli(jax.random.key(5), 0.9, shape)))
    np.testing.assert_array_equal(split, np.asarray(jax.random.key_data(jax.random.split(jax.random.key(5), 3))))


def test_pure_python_switch_leaves_the_numpy_path():
    code = "import arraylayer.models.dropout_masks as d; print(d.COMPILED)"
    env = dict(os.environ, ARRAYLAYER_PURE_PYTHON="1", PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert dropout_masks.COMPILED is (kernel is not None)
