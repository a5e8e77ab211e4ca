"""The Array API namespace of arraylayer on the jax backend (see arraylayer/xp/__init__.py)."""

from arraylayer.xp import populate

populate(globals(), "jax")
