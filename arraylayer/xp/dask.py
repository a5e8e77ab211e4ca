"""The Array API namespace of arraylayer on the dask backend (see arraylayer/xp/__init__.py)."""

from . import populate

populate(globals(), "dask")
