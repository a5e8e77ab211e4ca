"""JAX's eager draws run for a size class (a power of two of counters) and are cut to the shape:
the same bits as a draw of the exact size, one compilation of threefry per class instead of one
per shape, and traced draws (inside jax.jit) keep their exact size. JAX only: the other
backends do not compile per shape (NumPy and PyTorch run tiles, TensorFlow relaxes its shapes)."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer.models.random import evaluation, threefry

jax = pytest.importorskip("jax")


def _samplers(k, shape):
    return [al.random.bits(k, shape), al.random.uniform(k, shape), al.random.uniform(k, shape, minval=-3.0, maxval=2.0),
            al.random.normal(k, shape), al.random.truncated_normal(k, -1.0, 0.5, shape),
            al.random.randint(k, shape, -7, 100), al.random.bernoulli(k, 0.3, shape)]


@pytest.mark.parametrize("shape", [(7,), (3, 5), (0,), (2, 0), (4096,), (4097,), (9000,)])
def test_size_classes_give_the_bits_of_the_exact_size(shape, monkeypatch):
    """Sizes below, at and above a class boundary, and past the largest class (lowered to 8192
    here: the draw of 9000 then runs at its own size)."""
    monkeypatch.setattr(evaluation, "_LARGEST_CLASS", 2**13)
    with al.use_backend("jax"):
        k = al.random.key(2**33 + 5)
        classed = [np.asarray(x) for x in _samplers(k, shape)]
        monkeypatch.setattr(evaluation, "_EVALUATORS", {})  # every draw at its exact size
        exact = [np.asarray(x) for x in _samplers(k, shape)]
    for a, b in zip(classed, exact, strict=True):
        assert a.shape == shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_a_new_shape_of_a_drawn_class_compiles_no_threefry():
    with al.use_backend("jax"):
        k = al.random.key(1)
        al.random.normal(k, (5, 7))
        compiled = threefry._COMPILED["jax"]
        before = compiled._cache_size()
        for shape in [(9, 11), (64, 63), (100,)]:
            al.random.normal(k, shape)
        assert compiled._cache_size() == before


def test_a_traced_draw_keeps_its_exact_size():
    with al.use_backend("jax"):
        k = al.random.key(3)
        program = str(jax.make_jaxpr(lambda key: al.random.uniform(key, (5,)))(k))
        jitted = np.asarray(jax.jit(lambda key: al.random.uniform(key, (5,)))(k))
        eager = np.asarray(al.random.uniform(k, (5,)))
    assert "4096" not in program and "u32[5]" in program
    np.testing.assert_array_equal(jitted, eager)
