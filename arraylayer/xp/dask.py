"""The Array API namespace of arraylayer on the dask backend (see arraylayer/xp/__init__.py)."""

from arraylayer.xp import populate

populate(globals(), "dask")
