"""The built-in backend adapters, one module each: numpy, jax, torch, tensorflow.

Importing an adapter module never imports its framework; :meth:`Backend.load` does.

The folder ``arraylayer/backends/`` owns the adapters (one per framework, implementing
``runtime/backend.py``'s contract) and ``first_use.py``, what arraylayer prepares when a framework is
imported.

May import: the base modules, ``dtypes``, ``runtime``, ``models`` (first_use warms the toolkit's fused
kernels).
"""
