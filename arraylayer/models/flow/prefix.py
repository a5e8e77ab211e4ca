"""``associative_scan``: every prefix of an associative operation, in O(log n) parallel steps.

On jax this is ``jax.lax.associative_scan``. Elsewhere the same odd/even recursion runs on the
backend's own slicing and concatenation, so the operation is applied to the same pairs in the
same order and float results equal JAX's bit for bit (a sequential loop would associate them
differently). It is written with array slices only, so it compiles under ``tf.function`` and
``torch.compile`` as it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arraylayer.api.manipulation import concat, flip, reshape, stack
from arraylayer.errors import AxisError, InvalidArgumentError
from arraylayer.models.flow.carry import Flat, backend_of_trees, flatten
from arraylayer.models.flow.loops import _callable, _flag
from arraylayer.runtime.backend import Backend

__all__ = ["associative_scan"]

Leaves = list[Any]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False, axis: int = 0) -> Any:
    """The inclusive prefixes ``fn(... fn(fn(e0, e1), e2) ..., ek)`` of ``elems`` along ``axis``
    (``reverse=True``: the same scan over the flipped elements, so ``out[i] = fn(out[i + 1], elems[i])``),
    as ``jax.lax.associative_scan``.

    ``fn`` must be associative and work on whole slices: ``fn(a, b)`` takes two trees of ``elems``'
    structure whose leaves are slices along ``axis`` and returns one of the same structure and shapes.
    """
    _callable("associative_scan", fn, "fn")
    _flag("associative_scan", "reverse", reverse)
    backend = backend_of_trees(elems)
    flat = flatten(backend, elems, "associative_scan's elems")
    if not flat.leaves:
        raise InvalidArgumentError("associative_scan: elems holds no array; pass an array or a tree of arrays.")
    axis = _axis(flat.leaves, axis)
    combine = _Combine(backend, fn, flat)
    if backend.name == "jax":
        import jax

        out = jax.lax.associative_scan(combine, list(flat.leaves), reverse=reverse, axis=axis)
    elif reverse:
        out = [flip(x, axis=axis) for x in _prefixes(combine, [flip(x, axis=axis) for x in flat.leaves], axis)]
    else:
        out = _prefixes(combine, list(flat.leaves), axis)
    return flat.rebuild(list(out))


class _Combine:
    """``fn`` on leaf lists: rebuild both trees, call, check the structure, flatten."""

    def __init__(self, backend: Backend, fn: Callable[[Any, Any], Any], elems: Flat) -> None:
        self.backend, self.fn, self.elems = backend, fn, elems

    def __call__(self, a: Leaves, b: Leaves) -> Leaves:
        out = flatten(self.backend, self.fn(self.elems.rebuild(list(a)), self.elems.rebuild(list(b))),
                      "the output of fn")
        if out.structure != self.elems.structure:
            raise InvalidArgumentError("associative_scan: fn(a, b) must return a tree of elems' structure (the same "
                                       "dicts, lists and tuples).")
        return list(out.leaves)


def _axis(leaves: Leaves, axis: Any) -> int:
    if isinstance(axis, bool) or not isinstance(axis, int):
        raise InvalidArgumentError(f"associative_scan: axis is an int; got {type(axis).__name__} {axis!r:.40}.")
    ndims = {len(x.shape) for x in leaves}
    ndim = min(ndims)
    if not -ndim <= axis < ndim:
        raise AxisError(f"associative_scan: axis {axis} is out of range for elems of {ndim} dimension(s).")
    lengths = {x.shape[axis % len(x.shape)] for x in leaves}
    if len(lengths) > 1:
        raise InvalidArgumentError(f"associative_scan: the leaves of elems have different lengths along axis "
                                   f"{axis} ({sorted(map(str, lengths))}); give them one.")
    return axis % ndim


def _take(x: Any, axis: int, start: int | None, stop: int | None = None, step: int = 1) -> Any:
    return x[(slice(None),) * axis + (slice(start, stop, step),)]


def _prefixes(combine: Callable[[Leaves, Leaves], Leaves], leaves: Leaves, axis: int) -> Leaves:
    """The recursion: combine neighbouring pairs, scan those (the odd prefixes), then combine each
    odd prefix with the next element (the even ones), and interleave."""
    n = leaves[0].shape[axis]
    if n < 2:
        return leaves
    pairs = combine([_take(x, axis, 0, -1, 2) for x in leaves], [_take(x, axis, 1, None, 2) for x in leaves])
    odd = _prefixes(combine, pairs, axis)
    evens_after = [_take(x, axis, 2, None, 2) for x in leaves]
    even = combine([_take(o, axis, 0, -1) for o in odd] if n % 2 == 0 else odd, evens_after)
    even = [concat([_take(x, axis, 0, 1), e], axis=axis) for x, e in zip(leaves, even, strict=True)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd, strict=True)]


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """``even[0], odd[0], even[1], odd[1], ...`` along ``axis`` (``even`` may be one longer)."""
    n_odd = odd.shape[axis]
    head = _take(even, axis, 0, n_odd)
    shape = list(odd.shape)
    shape[axis] = 2 * n_odd
    woven = reshape(stack([head, odd], axis=axis + 1), tuple(shape))
    if even.shape[axis] == n_odd:
        return woven
    return concat([woven, _take(even, axis, n_odd, None)], axis=axis)
