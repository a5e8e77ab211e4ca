"""Kernels for the dtypes a backend stores but computes in a wider one: torch 2.13's uint16 and
uint32, which it holds and casts but has almost no kernels for, compute in int64.

Every value of the narrow dtype is exactly a value of the wide one, so the route is exact: the
kernel's array arguments of such dtypes (in lists too) are cast to the wide dtype, a ``dtype=`` of
one of them asks for the wide one, the backend's own kernel computes, and its results in the wide
dtype are cast back to the kernel's dtype. Integer arithmetic in int64 wraps modulo 2**64 and the
cast back keeps the low bits, so sums, products, negation, inversion and left shifts wrap modulo
2**bits exactly as NumPy's uint16/uint32 do; comparisons, order, division and right shifts of
non-negative int64 values are those of the unsigned values. Index-valued results (``argmax``,
``nonzero``, the indices and counts of ``unique_*`` ...) are left as they are (the api layer
casts them to the index dtype). The backend's kernel package declares the route
(``COMPUTES_AS``, read into ``Backend.computes_as``); :func:`arraylayer.api.dispatch.kernel`
gives these kernels for those dtypes, so every public function takes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["widened_kernel", "NATIVE_ON_STORED"]

#: Kernels whose results are indices or counts, never values of the input's dtype.
_INDEX_VALUED: Final = frozenset({"argsort", "argmax", "argmin", "searchsorted", "nonzero", "count_nonzero"})
#: Kernels whose result is a tuple of the values (cast back) and index arrays (kept).
_VALUES_FIRST: Final = frozenset({"unique_counts", "unique_inverse", "unique_all"})
#: Kernels that take every stored dtype as it is: ``astype`` is the way in and out.
NATIVE_ON_STORED: Final = frozenset({"astype"})

_KERNELS: dict[tuple[str, str, Any], Callable[..., Any]] = {}


def _each(a: Any, is_leaf: Callable[[Any], bool], fn: Callable[[Any], Any]) -> Any:
    if is_leaf(a):
        return fn(a)
    return type(a)(_each(b, is_leaf, fn) for b in a) if type(a) in (list, tuple) else a


def widened_kernel(backend: Any, name: str, dtype: Any) -> Callable[..., Any]:
    """``backend``'s kernel ``name`` for ``dtype`` (a key of ``backend.computes_as``), computed in
    the wide dtype and cast back (see the module docs); cached per backend, name and dtype."""
    key = (backend.name, name, dtype)
    found = _KERNELS.get(key)
    if found is not None:
        return found
    run = backend.kernels[name]
    if name in NATIVE_ON_STORED:
        _KERNELS[key] = run
        return run
    wide_dtype = backend.computes_as[dtype]
    wide = backend.native_dtypes[wide_dtype]
    narrows = frozenset(backend.native_dtypes[d] for d in backend.computes_as)
    to_wide, to_narrow = backend.caster(wide_dtype), backend.caster(dtype)
    keeps_wide = name in _INDEX_VALUED

    def is_narrow(a: Any) -> bool:
        return getattr(a, "dtype", None) in narrows

    def is_wide(a: Any) -> bool:
        return getattr(a, "dtype", None) == wide

    def kernel(*args: Any, **kwargs: Any) -> Any:
        args = tuple(_each(a, is_narrow, to_wide) for a in args)
        if kwargs.get("dtype") in narrows:
            kwargs = {**kwargs, "dtype": wide}
        result = run(*args, **kwargs)
        if keeps_wide:
            return result
        if name in _VALUES_FIRST:
            return (to_narrow(result[0]), *result[1:])
        return _each(result, is_wide, to_narrow)

    _KERNELS[key] = kernel
    return kernel
