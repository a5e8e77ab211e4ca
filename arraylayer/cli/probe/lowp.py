"""The probe of the low-precision cells: calls public functions on small arrays of each low-precision
dtype on a backend and compares what happens with :func:`arraylayer.support.low_precision_support`.

A "supported" cell must return an array (of the dtype, for the functions that keep it); "unsupported"
and "undefined" cells must raise UnsupportedDtypeError; an "invalid" dtype must be refused by
``astype`` with UnsupportedDtypeError. :data:`CALLS` says how each probed function is called; the
cells of other functions are declared, not probed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final, NamedTuple

from arraylayer.dtypes import Dtype, all_low_precision_dtypes
from arraylayer.dtypes.function_rules import BINARY, UNARY

__all__ = ["CALLS", "LowPrecisionDifference", "probe_low_precision"]

Call = Callable[[Any, Any, Dtype], Any]  # (the arraylayer module, a 1-d array of the dtype, the dtype)


def _one(dtype: Dtype) -> int:
    """A non-zero value every format holds: 1, or -1 in int1 (which holds -1 and 0)."""
    return -1 if dtype == "int1" else 1


def _unary(name: str) -> Call:
    return lambda al, x, d: getattr(al, name)(x)


def _binary(name: str) -> Call:
    return lambda al, x, d: getattr(al, name)(x, x)


def _created(name: str) -> Call:
    return lambda al, x, d: getattr(al, name)(3, dtype=d)


_STATISTICAL: Final = ("sum", "prod", "mean", "std", "var", "max", "min", "cumulative_sum", "cumulative_prod",
                       "sort", "argsort", "argmax", "argmin", "unique_values", "unique_counts", "unique_all",
                       "unique_inverse", "nonzero", "count_nonzero", "flip", "any", "all", "nansum", "nanprod",
                       "nancumsum", "nancumprod", "nanmean", "nanvar", "nanstd", "nanmax", "nanmin", "unstack", "diff")


def _matrix(name: str) -> Call:
    """``name`` of the 2 x 3 matrix stacked from the probe's array."""
    return lambda al, x, d: getattr(al, name)(al.stack([x, x]))
#: Function -> how the probe calls it.
CALLS: Final[dict[str, Call]] = {
    **{n: _unary(n) for n in UNARY}, **{n: _binary(n) for n in BINARY}, **{n: _unary(n) for n in _STATISTICAL},
    "clip": lambda al, x, d: al.clip(x, x, x),
    "where": lambda al, x, d: al.where(al.asarray([True, False, True]), x, x),
    "searchsorted": _binary("searchsorted"),
    "isin": _binary("isin"),
    "matmul": _binary("matmul"),
    "vecdot": _binary("vecdot"),
    "tensordot": lambda al, x, d: al.tensordot(x, x, axes=1),
    "reshape": lambda al, x, d: al.reshape(x, (3, 1)),
    "concat": lambda al, x, d: al.concat([x, x]),
    "stack": lambda al, x, d: al.stack([x, x]),
    "take": lambda al, x, d: al.take(x, al.asarray([0, 2])),
    "roll": lambda al, x, d: al.roll(x, 1),
    **{n: _matrix(n) for n in ("matrix_transpose", "tril", "triu")},
    "linalg.diagonal": lambda al, x, d: al.linalg.diagonal(al.stack([x, x])),
    "squeeze": lambda al, x, d: al.squeeze(al.expand_dims(x, axis=0), axis=0),
    "moveaxis": lambda al, x, d: al.moveaxis(al.stack([x, x]), 0, 1),
    "permute_dims": lambda al, x, d: al.permute_dims(al.stack([x, x]), (1, 0)),
    "broadcast_to": lambda al, x, d: al.broadcast_to(x, (2, 3)),
    "broadcast_arrays": lambda al, x, d: al.broadcast_arrays(x, al.stack([x, x])),
    "tile": lambda al, x, d: al.tile(x, (2,)),
    "repeat": lambda al, x, d: al.repeat(x, 2),
    "take_along_axis": lambda al, x, d: al.take_along_axis(x, al.asarray([2, 0]), axis=0),
    "meshgrid": _binary("meshgrid"),
    "pad": lambda al, x, d: al.pad(x, 1),
    "fft.fftshift": lambda al, x, d: al.fft.fftshift(x),
    "quantile": lambda al, x, d: al.quantile(x, 0.5),
    "nanquantile": lambda al, x, d: al.nanquantile(x, 0.5),
    "asarray": lambda al, x, d: al.asarray([_one(d), 0, _one(d)], dtype=d),
    "astype": lambda al, x, d: al.astype(al.asarray([1.0, 0.0, 1.0]), d),
    **{n: _created(n) for n in ("zeros", "ones", "empty")},
    "full": lambda al, x, d: al.full(3, _one(d), dtype=d),
    **{n: _unary(n) for n in ("zeros_like", "ones_like", "empty_like")},
    "full_like": lambda al, x, d: al.full_like(x, _one(d)),
    "arange": lambda al, x, d: al.arange(0, _one(d), _one(d), dtype=d),  # [0]: in every format
    "eye": lambda al, x, d: al.eye(2, dtype=d),
}


class LowPrecisionDifference(NamedTuple):
    """One cell whose call does not do what :func:`low_precision_support` declares."""

    function: str
    dtype: Dtype
    declared: str
    observed: str


def _observe(al: Any, call: Call, x: Any, dtype: Dtype) -> str:
    try:
        call(al, x, dtype)
    except (al.UnsupportedDtypeError, al.ScalarOverflowError) as error:  # the latter: ones in int1 (no 1)
        return f"refused: {str(error)[:120]}"
    except Exception as error:  # a raw exception is a bug in either case: say it
        return f"raised {type(error).__name__}: {str(error)[:120]}"
    return "computed"


def probe_low_precision(backend: Any, functions: Iterable[str] | None = None,
                        dtypes: Iterable[Any] | None = None) -> tuple[int, list[LowPrecisionDifference]]:
    """Call every function of ``functions`` (default: all of :data:`CALLS`) on each of ``dtypes``
    (default: every low-precision dtype) on ``backend`` (a name); return the number of cells called and
    the differences from the declarations."""
    import arraylayer as al

    from arraylayer.support import low_precision_support
    from arraylayer.support.queries import resolve_backend

    resolved = resolve_backend(backend)
    names = list(CALLS if functions is None else functions)
    chosen = [Dtype(d) for d in (all_low_precision_dtypes if dtypes is None else dtypes)]
    differences: list[LowPrecisionDifference] = []
    count = 0
    with al.use_backend(resolved.name):
        declared = {name: low_precision_support(name, resolved) for name in names}
        for dtype in chosen:
            wide = "float32" if dtype.category == "float" else "int32"
            try:
                x = al.astype(al.asarray([1, 0, 1], dtype=wide), dtype)
            except al.UnsupportedDtypeError:
                x = None
            for name in names:
                status = declared[name][dtype].status
                count += 1
                if x is None or status == "invalid":
                    if (x is None) != (status == "invalid"):
                        differences.append(LowPrecisionDifference(name, dtype, status, "held" if x is not None
                                                                  else "not held (astype refuses it)"))
                    continue
                observed = _observe(al, CALLS[name], x, dtype)
                if (observed == "computed") != (status in ("supported", "unverified")) or observed.startswith("raised"):
                    differences.append(LowPrecisionDifference(name, dtype, status, observed))
    return count, differences
