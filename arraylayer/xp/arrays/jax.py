"""The Array namespace of arraylayer.Array on the jax backend (see arraylayer/xp/arrays/__init__.py)."""

from arraylayer.xp.arrays import populate

populate(globals(), "jax")
