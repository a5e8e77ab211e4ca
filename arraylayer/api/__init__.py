"""The Array API functions, one module per category of the standard.

Each public function promotes and infers dtypes the same way on every backend, then calls
the backend's kernel (see ``arraylayer/kernels``). ``linalg`` and ``fft`` are the extension namespaces.

The folder ``arraylayer/api/`` owns the public functions, one module per category of the standard, the
extensions beyond it, the interchange functions (``to_backend``, ``to_device``, ``dev``) and
``dispatch.py``, what every function does between its arguments and a kernel.

May import: the base modules, ``dtypes``, ``runtime``, ``lowp``, ``support``.
"""

from __future__ import annotations

from arraylayer.api import (
    creation,
    data_types,
    elementwise,
    extensions,
    fft,
    indexing,
    info,
    linalg,
    linalg_more,
    linear_algebra,
    manipulation,
    numpy_extra,
    numpy_more,
    numpy_stats,
    numpy_style,
    numpy_windows,
    searching,
    sets,
    sorting,
    statistical,
    utility,
)
from arraylayer.api.dispatch import accepting_wrapped

#: The category modules whose ``__all__`` make up the main namespace; ``extensions`` (last: its
#: ``round`` takes ``decimals`` and replaces the standard's) holds what is beyond the standard.
CATEGORIES = (creation, data_types, elementwise, indexing, info, linear_algebra, manipulation, searching,
              sets, sorting, statistical, utility, numpy_more, numpy_style, numpy_stats, numpy_extra, numpy_windows,
              extensions)

# keras.ops' linalg names beyond the standard (compositions of the extension's functions) join its namespace
for _name in linalg_more.__all__:
    setattr(linalg, _name, getattr(linalg_more, _name))
linalg.__all__ = [*linalg.__all__, *linalg_more.__all__]
linalg.NOT_IN_ARRAY_NAMESPACES = linalg_more.NOT_IN_ARRAY_NAMESPACES

# arraylayer.Array in, Array out: every public function without a planned native fast path checks
# its arguments for wrappers (the elementwise functions check in their planning path instead).
# Functions that only read ``.dtype`` (an Array has one): no unwrapping, no per-call cost.
_READ_DTYPE_ONLY = frozenset({"result_type", "can_cast", "finfo", "iinfo", "isdtype"})
# A function exported by two modules (matmul in the main namespace and in linalg) gets one wrapper.
_wrapped: dict[int, object] = {}
for _module in (*CATEGORIES, linalg, fft):
    for _name in _module.__all__:
        _function = getattr(_module, _name)
        if callable(_function) and not isinstance(_function, type) and _name not in _READ_DTYPE_ONLY:
            if id(_function) not in _wrapped:
                _wrapped[id(_function)] = accepting_wrapped(_function)
            setattr(_module, _name, _wrapped[id(_function)])
del _module, _name, _function, _wrapped

__all__ = ["CATEGORIES", "fft", "linalg"]
