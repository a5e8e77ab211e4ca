"""Element-wise arithmetic over columns of leaves (the leaves at the same positions of several
parameter trees, ``tree.tree_columns``): what an optimizer does to every parameter each step.

Where the framework has multi-tensor kernels (PyTorch's ``torch._foreach_*``) and every leaf
suits them (one float32 or float64 dtype, plain tensors on one device, outside ``torch.func``
transforms; eager, or traced by ``torch.compile``, which traces these kernels as torch.optim's
own foreach path), one call covers a whole column; otherwise each leaf gets its own
arraylayer call. Both compute the same correctly rounded operations in the same dtype and order,
so they give the same bits; only the number of dispatches differs.

A second operand is a column, or a *scalar*: a function of the leaf's native dtype giving the
value in that dtype (a Python float, or a 0-d array of the leaf's backend). The forms ending in
``_`` may write their result into their first column, which must be a temporary of the caller's
(a column no one else holds): the multi-tensor kernels then allocate nothing (``torch._foreach_add_``);
per leaf they are the plain forms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from arraylayer.api.elementwise import add, divide, multiply, negative, sqrt, square
from arraylayer.context import replaying
from arraylayer.runtime.registry import backend_of

__all__ = ["Ops", "ops", "prepare"]

Column = list[Any]  # or a tuple (what torch._foreach_* returns)
_COLUMNS: Final = (list, tuple)
Scalar = Callable[[Any], Any]


class Ops(NamedTuple):
    """Column operations: ``add``/``multiply``/``divide(xs, column or scalar)``,
    ``sqrt``/``square``/``negative(xs)``; each returns a new column."""

    add: Callable[[Column, Column | Scalar], Column]
    multiply: Callable[[Column, Column | Scalar], Column]
    divide: Callable[[Column, Column | Scalar], Column]
    sqrt: Callable[[Column], Column]
    square: Callable[[Column], Column]
    negative: Callable[[Column], Column]
    add_: Callable[[Column, Column | Scalar], Column]
    multiply_: Callable[[Column, Column | Scalar], Column]
    divide_: Callable[[Column, Column | Scalar], Column]
    sqrt_: Callable[[Column], Column]


def _binary(f: Callable[[Any, Any], Any]) -> Callable[[Column, Column | Scalar], Column]:
    def run(xs: Column, y: Column | Scalar) -> Column:
        if isinstance(y, _COLUMNS):
            return [f(a, b) for a, b in zip(xs, y, strict=True)]
        return [f(a, y(a.dtype)) for a in xs]  # type: ignore[operator]

    return run


def _unary(f: Callable[[Any], Any]) -> Callable[[Column], Column]:
    return lambda xs: [f(a) for a in xs]


#: one arraylayer call per leaf (every backend, every dtype, traced code)
_PLAIN: Final = (_binary(add), _binary(multiply), _binary(divide), _unary(sqrt))
PER_LEAF: Final = Ops(*_PLAIN[:4], _unary(square), _unary(negative), *_PLAIN)


def _torch() -> Callable[[tuple[Column, ...]], Ops | None]:
    import torch

    floats = (torch.float32, torch.float64)  # half precision: arraylayer rounds scalars first, torch would not
    plain = torch.Tensor
    transforms_active = torch._C._are_functorch_transforms_active

    def bound(dtype: Any) -> Ops:
        def binary(kernel: Callable[[Column, Any], Column]) -> Callable[[Column, Column | Scalar], Column]:
            return lambda xs, y: kernel(xs, y if isinstance(y, _COLUMNS) else y(dtype))  # type: ignore[operator]

        def in_place(kernel: Callable[..., None]) -> Callable[..., Column]:
            def run(xs: Column, *y: Any) -> Column:
                kernel(xs, *(b if isinstance(b, _COLUMNS) else b(dtype) for b in y))
                return xs

            return run

        multiply = torch._foreach_mul  # (square's lambda holds the kernel, not the module: no guard on torch)
        return Ops(binary(torch._foreach_add), binary(multiply), binary(torch._foreach_div),
                   torch._foreach_sqrt, lambda xs: multiply(xs, xs), torch._foreach_neg,
                   in_place(torch._foreach_add_), in_place(torch._foreach_mul_), in_place(torch._foreach_div_),
                   in_place(torch._foreach_sqrt_))

    float32, float64 = floats
    for_float32, for_float64 = bound(float32), bound(float64)

    def choose(columns: tuple[Column, ...]) -> Ops | None:
        # identity tests, not a dict: under torch.compile (which traces the multi-tensor kernels too)
        # Dynamo would guard the dict's contents
        first = columns[0][0]
        dtype = first.dtype
        if first.__class__ is not plain or not (dtype is float32 or dtype is float64) or transforms_active():
            return None
        device = first.device
        for column in columns:
            for x in column:
                if x.__class__ is not plain or x.dtype is not dtype or x.device != device:
                    return None
        return for_float32 if dtype is float32 else for_float64

    return choose


_BUILDERS: Final[dict[str, Callable[[], Callable[[tuple[Column, ...]], Ops | None]]]] = {"torch": _torch}
_CHOOSERS: dict[str, Callable[[tuple[Column, ...]], Ops | None]] = {}


def prepare(name: str) -> None:
    """Build backend ``name``'s chooser now, outside any trace: the torch backend's first use
    under Dynamo does (``backends/first_use.py``), so that a traced update reads the chooser from
    this module instead of building it afresh. A chooser built inside the trace reads each of
    ``torch``'s multi-tensor functions there, and Dynamo then checks one guard per function before
    every call; reached through this module, they are arraylayer's state, which
    ``al.torch_guard_filter`` leaves unguarded."""
    build = _BUILDERS.get(name)
    if build is not None and name not in _CHOOSERS:
        _CHOOSERS[name] = build()


def ops(*columns: Column) -> Ops:
    """The operations for these columns (of equal length): the multi-tensor kernels where the
    backend has them and every leaf of every column suits them, else ``PER_LEAF``."""
    if not columns or not columns[0]:
        return PER_LEAF
    name = backend_of(columns[0][0]).name
    build = _BUILDERS.get(name)
    if build is None:
        return PER_LEAF
    choose = _CHOOSERS.get(name)
    if choose is None:
        if replaying():  # traced before any chooser was built: built afresh, not stored (a store
            return build()(columns) or PER_LEAF  # made while Dynamo traces is replayed on every call)
        choose = _CHOOSERS[name] = build()
    return choose(columns) or PER_LEAF
