"""Functional, splittable random numbers: the same key gives the same numbers on every backend.

The generator is threefry-2x32 (20 rounds, the counter-based generator JAX uses), written once
with arraylayer's own integer operations. A key is a native array of shape ``(2,)`` of the
backend it was made on: ``uint32`` on NumPy, JAX and TensorFlow; ``int64`` holding values in
``[0, 2**32)`` on PyTorch (whose uint32 tensors lack arithmetic). ``key``, ``split``,
``fold_in``, ``bits`` and ``uniform`` (float32) are bit-identical to ``jax.random`` with its
default partitionable threefry; ``normal`` and the others use their own (documented) transforms.

Every sampler is an element-wise function of the generator's words for the counters
``0 .. n-1``; how that one function is evaluated depends on the backend (``evaluation._EVALUATORS``):
compiled whole on JAX and TensorFlow, in cache-sized tiles on NumPy and eager PyTorch, and per
chunk (the NumPy tiles inside each task) on dask. Every way gives the same bits.

One job per module: ``threefry`` (the words and the rounds), ``word_transforms`` (words to
values), ``evaluation`` (how a draw is evaluated; key and shape checks), ``keys``, ``samplers``.
"""

from __future__ import annotations

from arraylayer.models.random.keys import fold_in, key, split
from arraylayer.models.random.samplers import bernoulli, bits, categorical, normal, permutation, randint, truncated_normal, uniform

__all__ = ["key", "split", "fold_in", "bits", "uniform", "normal", "randint", "bernoulli",
           "categorical", "permutation", "truncated_normal"]
