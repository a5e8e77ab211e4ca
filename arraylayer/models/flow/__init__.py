"""Control flow and function transforms written once: loops (``scan``, ``map``, ``fori_loop``,
``while_loop``), branches (``cond``, ``switch``), ``associative_scan``, ``vmap`` (and NumPy's ``vectorize`` over it), and the rest of
differentiation (``stop_gradient``, ``custom_gradient``, ``jvp``), with JAX's signatures, each run
by the backend's own machinery: lax on jax, ``tf.while_loop`` / ``tf.cond`` / ``tf.vectorized_map``
on tensorflow, ``torch.func`` on torch, Python loops where there is nothing else (docs/control_flow.rst).

``carry.py`` holds the one contract they share: a loop's carry and a branch's output keep their tree
structure, shapes and dtypes on every backend.

May import what ``arraylayer/models/`` may import, and ``models.tree``.
"""

from arraylayer.models.flow.branches import cond, switch
from arraylayer.models.flow.derivatives import custom_gradient, jvp, stop_gradient
from arraylayer.models.flow.loops import fori_loop, map, scan, while_loop
from arraylayer.models.flow.prefix import associative_scan
from arraylayer.models.flow.numpy_vectorize import vectorize
from arraylayer.models.flow.vectorize import vmap

__all__ = ["scan", "map", "fori_loop", "while_loop", "cond", "switch", "associative_scan", "vmap", "vectorize",
           "stop_gradient", "custom_gradient", "jvp"]
