"""What the toolkit's bad-input campaign found last (tests/test_bad_input.py, "toolkit"), held on every
backend: an empty vmap batch, a mask no weight decay reads, pads and windows beyond any array."""

from __future__ import annotations

import numpy as np
import pytest
from oracles import to_numpy

import arraylayer as al
from arraylayer.errors import AllocationError, InvalidArgumentError, InvalidArgumentTypeError


def test_vmap_over_an_empty_batch_gives_empty_outputs(backend):
    """jax.vmap and torch.func.vmap trace an empty batch; the Python loop learns the outputs from one
    trial on zeros, so every backend gives the same shapes and dtypes."""
    x = al.to_backend(np.zeros((0, 3), np.float32), backend)
    total, doubled = al.vmap(lambda v: (al.sum(v), al.multiply(v, 2.0)))(x)
    assert to_numpy(backend, total).shape == (0,) and to_numpy(backend, doubled).shape == (0, 3)
    assert to_numpy(backend, doubled).dtype == np.float32


@pytest.mark.parametrize("optimizer", ["lion", "lamb", "adamw"])
def test_a_mask_that_is_no_tree_nor_predicate_is_refused_at_once(optimizer):
    """Also where weight_decay is 0 and no decay would read the mask (lion's and lamb's default)."""
    with pytest.raises(InvalidArgumentTypeError, match="mask is int"):
        getattr(al.optim, optimizer)(mask=3)


@pytest.mark.parametrize("mode", ["constant", "reflect"])
def test_pads_beyond_memory_or_any_array_are_arraylayer_errors(backend, mode):
    x = al.to_backend(np.ones(16, np.float32), backend)
    with pytest.raises(InvalidArgumentError, match="the result of pad"):
        al.pad(x, 2**62, mode=mode)


def test_stft_of_a_huge_fft_length_is_refused_before_it_allocates(backend):
    """center=True pads by fft_length // 2: beyond what any backend holds, pad's shape check refuses it."""
    x = al.to_backend(np.ones(16, np.float32), backend)
    with pytest.raises((InvalidArgumentError, AllocationError)):
        al.stft(x, 8, 4, 2**62)


def test_windows_and_strides_longer_than_any_axis_are_refused(backend):
    x = al.to_backend(np.ones((1, 1, 4, 4), np.float32), backend)
    with pytest.raises(InvalidArgumentError, match="at most"):
        al.nn.unfold(x, 2, stride=2**70)
    np.testing.assert_array_equal(to_numpy(backend, al.nn.unfold(x, 2, stride=2)), np.ones((1, 4, 4), np.float32))


def test_one_hot_in_a_format_without_zero_is_refused(backend):
    """float8_e8m0fnu has no 0 (its 0s would be NaN): refused, as eye is; other formats compute."""
    labels = al.to_backend(np.array([0, 2], np.int32), backend)
    with pytest.raises(al.UnsupportedDtypeError, match="has no zero"):
        al.nn.one_hot(labels, 3, dtype="float8_e8m0fnu")
    with pytest.raises(al.UnsupportedDtypeError, match="has no zero"):
        al.nn.multi_hot(labels, 3, dtype="float8_e8m0fnu")


def test_einsum_of_uint32_wraps_as_numpy_on_jax_without_x64(x64_off):
    """uint32 sums compute in int64 where a backend has it; without JAX's x64 in uint32 itself (the
    same result modulo 2**32), so the support row's "supported" holds there too."""
    import jax.numpy as jnp

    a = np.array([[4_000_000_000, 3], [2, 1]], np.uint32)
    got = al.einsum("ij,jk->ik", jnp.asarray(a), jnp.asarray(a))
    assert got.dtype == jnp.uint32
    np.testing.assert_array_equal(np.asarray(got), np.einsum("ij,jk->ik", a, a))


def test_scatter_in_a_format_without_zero_is_refused(backend):
    """scatter's positions no index reaches hold 0, which float8_e8m0fnu lacks: refused, as eye is."""
    indices = al.to_backend(np.array([[0], [2]], np.int32), backend)
    values = al.to_backend(np.array([1.0, 2.0], np.float32), backend)
    if al.lowp.STATUS[backend]["float8_e8m0fnu"] in ("computed", "stored"):  # (TensorFlow holds no e8m0 at all)
        with pytest.raises(al.UnsupportedDtypeError, match="has no zero"):
            al.scatter(indices, al.astype(values, "float8_e8m0fnu"), (4,))
    np.testing.assert_array_equal(to_numpy(backend, al.scatter(indices, values, (4,))), [1.0, 0.0, 2.0, 0.0])


def test_a_backend_named_by_anything_but_a_string_is_refused(backend):
    x = al.to_backend(np.ones(2, np.float32), backend)
    with pytest.raises(al.UnknownBackendError, match="named by a string"):
        al.to_backend(x, x)
    with pytest.raises(al.UnknownBackendError, match="named by a string"):
        al.get_backend(3)
