"""The Array API functions, one module per category of the standard.

Each public function promotes and infers dtypes the same way on every backend, then calls
the backend's kernel (see ``arraylayer/kernels``). ``linalg`` is the extension namespace.
"""

from __future__ import annotations

from . import (
    creation,
    data_types,
    elementwise,
    indexing,
    info,
    linalg,
    linear_algebra,
    manipulation,
    searching,
    sets,
    sorting,
    statistical,
    utility,
)

#: The category modules whose ``__all__`` make up the main namespace.
CATEGORIES = (creation, data_types, elementwise, indexing, info, linear_algebra, manipulation, searching,
              sets, sorting, statistical, utility)

__all__ = ["CATEGORIES", "linalg"]
