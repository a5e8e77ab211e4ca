"""The queries: which input dtypes each public function supports on a backend.

The answer for an input dtype is "supported" when the backend holds the dtype, the function
is defined for its kind, and every kernel it uses supports the dtype the function's rule maps
it to. Answers are computed once per backend and kernel (and per function and context), then
served from a dict.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from arraylayer.dtypes import Dtype, all_dtypes
from arraylayer.dtypes.function_rules import KIND_LETTER, KIND_WORDS
from arraylayer.support.cells import Cell, resolve_backend
from arraylayer.support.declarations import UnverifiedVersionWarning
from arraylayer.support.kernels import declaration_status, kernel_unsupported_dtypes, stored_only_dtypes
from arraylayer.support.lowp import low_precision_support
from arraylayer.support.names import function_name
from arraylayer.support.table import function_table, kernel_dtype

if TYPE_CHECKING:
    from arraylayer.runtime.backend import Backend

__all__ = ["Cell", "resolve_backend", "dtype_support", "function_supported_dtypes", "function_unsupported_dtypes",
           "clear_caches"]


_SUPPORTED: Final = Cell("supported")


def dtype_support(
    fn: Any, backend: Any = None, kernel_unsupported: Callable[[Backend, str], frozenset[Dtype]] | None = None
) -> dict[Dtype, Cell]:
    """Every dtype's :class:`Cell` for public function ``fn`` on ``backend`` (a name, a Backend,
    or None for the active one). ``kernel_unsupported(backend, kernel)`` answers for the kernels
    (default: the declarations, :func:`kernel_unsupported_dtypes`; the probe passes what it
    observed)."""
    name = function_name(fn)
    uses = function_table()[name]
    resolved = resolve_backend(backend)
    declared = kernel_unsupported is None
    query = kernel_unsupported_dtypes if kernel_unsupported is None else kernel_unsupported
    valid = resolved.valid_dtypes()
    unverified = set()
    if declared:
        unverified = {k for k in uses.kernels if declaration_status(resolved, k)[0] == "unverified"}
    cells: dict[Dtype, Cell] = {}
    stored_only = stored_only_dtypes(resolved)
    for dtype in all_dtypes:
        if dtype not in valid:  # stored-only inputs too: the table answers for computable dtypes
            cells[dtype] = Cell("invalid", f"{resolved.name} cannot hold {dtype} as installed and configured")
            continue
        if uses.rule == "independent":
            cells[dtype] = _SUPPORTED
            continue
        if KIND_LETTER[dtype.category] not in uses.kinds:
            takes = " or ".join(KIND_WORDS[k] for k in uses.kinds)
            cells[dtype] = Cell("undefined", f"{name} is defined for {takes} input only")
            continue
        if dtype.name in uses.refused:
            cells[dtype] = Cell("undefined", f"{name} refuses {dtype} input on every backend (InvalidDtypeError "
                                             f"names the cast)")
            continue
        target = kernel_dtype(uses.rule, dtype)
        cell = _SUPPORTED
        via = "" if target is dtype else f" ({name} computes {dtype} input in {target})"
        for kernel in uses.kernels:
            if kernel not in resolved.kernels:
                cell = Cell("missing", f"the {resolved.name} backend has no {kernel!r} kernel")
                break
            if target not in valid and target not in stored_only:
                cell = Cell("unsupported", f"{name} computes {dtype} input in {target}, which the "
                                           f"{resolved.name} backend cannot hold as configured")
                break
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnverifiedVersionWarning)
                missing = target in query(resolved, kernel)
            if missing:
                cell = Cell("unsupported", f"the {resolved.name} {kernel!r} kernel has no {target} "
                                           f"implementation{via}")
                break
            if kernel in unverified:
                cell = Cell("unverified", f"{resolved.framework} {resolved.version} is outside the ranges "
                                          f"declared for the {kernel!r} kernel")
        cells[dtype] = cell
    return cells


# (qualified name, Backend, its valid dtypes now, default dtypes) -> (supported, unsupported)
_ANSWERS: dict[tuple[Any, ...], tuple[tuple[Dtype, ...], tuple[Dtype, ...]]] = {}


def _answer(fn: Any, backend: Any) -> tuple[tuple[Dtype, ...], tuple[Dtype, ...]]:
    from arraylayer.dtypes.defaults import default_float_dtype, default_int_dtype, default_uint_dtype

    name = fn if isinstance(fn, str) and fn in function_table() else function_name(fn)
    resolved = resolve_backend(backend)
    key = (name, resolved, resolved.valid_dtypes(), default_float_dtype(), default_int_dtype(), default_uint_dtype())
    found = _ANSWERS.get(key)
    if found is None:
        uses = function_table()[name]
        for kernel in uses.kernels:  # said once, where it applies: outside a declared version range
            if kernel in resolved.kernels:
                kernel_unsupported_dtypes(resolved, kernel)
        cells = dtype_support(name, resolved)
        found = (tuple(d for d, c in cells.items() if c.supported),
                 tuple(d for d, c in cells.items() if not c.supported))
        _ANSWERS[key] = found
    return found


def function_supported_dtypes(fn: Any, backend: Any = None, *, low_precision: bool = False) -> tuple[Dtype, ...]:
    """The input dtypes public function ``fn`` (the function, or its name: ``"add"``,
    ``"linalg.det"``) supports on ``backend`` (a name; None: the active backend), as
    installed and configured now, under the default dtypes in force.

    A dtype is supported when the backend holds it, the Array API defines ``fn`` for its
    kind, and every kernel ``fn`` uses supports the dtype it runs in (``sqrt(int8)`` runs in
    the default float dtype). For several inputs, the dtype is their promoted dtype. The same
    tuple object is returned on every call with the same backend and defaults.
    ``low_precision=True`` appends the low-precision dtypes ``fn`` computes with there (by the
    rule; a dtype the backend only stores is not supported: :func:`low_precision_support` says why)."""
    if low_precision:
        return _answer(fn, backend)[0] + _low_precision(fn, backend, True)
    return _answer(fn, backend)[0]


def function_unsupported_dtypes(fn: Any, backend: Any = None, *, low_precision: bool = False) -> tuple[Dtype, ...]:
    """The dtypes :func:`function_supported_dtypes` leaves out (invalid on the backend,
    undefined for the function, or without a kernel); together they are all fifteen (thirty
    with ``low_precision=True``: then stored-only and not held low-precision dtypes too)."""
    if low_precision:
        return _answer(fn, backend)[1] + _low_precision(fn, backend, False)
    return _answer(fn, backend)[1]


def _low_precision(fn: Any, backend: Any, supported: bool) -> tuple[Dtype, ...]:
    return tuple(d for d, c in low_precision_support(fn, backend).items() if c.supported is supported)


def clear_caches() -> None:
    """Forget every computed answer (after changing a backend's declarations at run time)."""
    from arraylayer.runtime.registry import backend_instances, registry_changed

    _ANSWERS.clear()
    for backend in backend_instances():
        backend.unsupported_cache.clear()
    registry_changed()  # the element-wise plans were made under the old declarations
