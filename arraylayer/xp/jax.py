"""The Array API namespace of arraylayer on the jax backend (see arraylayer/xp/__init__.py)."""

from . import populate

populate(globals(), "jax")
