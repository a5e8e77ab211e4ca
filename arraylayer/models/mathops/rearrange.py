"""``rearrange``: einops' pattern language for reshaping and transposing, written once (keras.ops'
core ``rearrange``), on every backend and on arraylayer's Arrays.

``rearrange(x, "b (h w) c -> b c h w", h=4)`` reads the left side as x's axes, splits the grouped
ones (a length given by keyword, or inferred when one length of a group is missing), puts the
elementary axes in the right side's order and merges the right side's groups. ``...`` stands for
any number of axes (on both sides, or on neither); ``1`` and ``()`` are axes of length one, which
the left side drops and the right side adds. The work is one ``reshape``, one ``permute_dims`` and
one ``reshape``, each left out when it would do nothing, so the result is x's dtype and, where the
framework can, a view. Every mistake in the pattern or the lengths is an
:class:`~arraylayer.errors.InvalidArgumentError` that says which part is wrong, before the
framework is called.
"""

from __future__ import annotations

import math
import re
from typing import Any, Final, NamedTuple

from arraylayer.api import manipulation
from arraylayer.api.dispatch import array_input
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError

Array = Any

__all__ = ["rearrange"]

_ELLIPSIS: Final = "..."
_TOKEN: Final = re.compile(r"\.\.\.|\(|\)|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")
_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Side(NamedTuple):
    """One side of a pattern: its top-level axes, each a tuple of elementary names (``()`` for a
    length-one axis), and which of them were written as a group: ``...`` alone is ``("...",)``, the
    ellipsis's axes themselves; ``(...)`` is the same tuple, grouped: their product."""

    axes: tuple[tuple[str, ...], ...]
    grouped: tuple[bool, ...]

    def names(self) -> list[str]:
        return [name for axis in self.axes for name in axis]


def _fail(pattern: str, why: str) -> InvalidArgumentError:
    return InvalidArgumentError(f"rearrange: pattern {pattern!r}: {why}")


def _side(pattern: str, text: str, left: bool) -> _Side:
    """A side of ``pattern`` parsed: names, ``(...)`` groups, ``1``/``()`` and one ``...``."""
    axes: list[tuple[str, ...]] = []
    grouped: list[bool] = []
    group: list[str] | None = None
    for token in _TOKEN.findall(text):
        if token == "(":
            if group is not None:
                raise _fail(pattern, "groups do not nest: close the group before opening another.")
            group = []
        elif token == ")":
            if group is None:
                raise _fail(pattern, "a ')' closes no group.")
            axes.append(tuple(group))
            grouped.append(True)
            group = None
        elif token == _ELLIPSIS or _NAME.match(token) or token == "1":
            if token == _ELLIPSIS and left and group is not None:
                raise _fail(pattern, "'...' inside a group on the left side: write it outside the parentheses.")
            name = () if token == "1" else (token,)
            if group is None:
                axes.append(name)
                grouped.append(False)
            else:
                group.extend(name)
        elif token.isdigit():
            raise _fail(pattern, f"the length {token} as an axis: only 1 may be written as a number; name the axis "
                                 f"and pass its length as a keyword (n={token}).")
        else:
            raise _fail(pattern, f"{token!r} is not an axis name, '(', ')', '1' or '...'.")
    if group is not None:
        raise _fail(pattern, "a '(' is never closed.")
    side = _Side(tuple(axes), tuple(grouped))
    names = side.names()
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise _fail(pattern, f"{', '.join(repeated)} appear(s) more than once on one side.")
    return side


def _parse(pattern: Any) -> tuple[_Side, _Side]:
    if not isinstance(pattern, str):
        raise InvalidArgumentTypeError(f"rearrange: the pattern must be a str such as 'b h w -> b (h w)', "
                                       f"got {type(pattern).__name__}.")
    if pattern.count("->") != 1:
        raise _fail(pattern, "write one '->' between the input's axes and the output's.")
    text_in, text_out = pattern.split("->")
    left, right = _side(pattern, text_in, True), _side(pattern, text_out, False)
    only_left, only_right = set(left.names()) - set(right.names()), set(right.names()) - set(left.names())
    if only_left or only_right:
        which = [f"{', '.join(sorted(s))} only on the {side}" for s, side in ((only_left, "left"),
                                                                             (only_right, "right")) if s]
        raise _fail(pattern, f"both sides name the same axes (rearrange neither reduces nor repeats): "
                             f"{'; '.join(which)}.")
    return left, right


def _lengths(pattern: str, left: _Side, shape: tuple[int, ...], given: dict[str, int]) -> dict[str, Any]:
    """The length of every elementary name of the left side (the ellipsis: the tuple of its
    lengths), from x's shape and the keywords."""
    has_ellipsis = any(_ELLIPSIS in axis for axis in left.axes)
    fixed = len(left.axes) - has_ellipsis
    if len(shape) < fixed or (not has_ellipsis and len(shape) != fixed):
        raise _fail(pattern, f"the left side names {fixed}{' or more' if has_ellipsis else ''} axes; x has "
                             f"{len(shape)} (shape {shape}).")
    lengths: dict[str, Any] = {}
    position = 0
    for axis in left.axes:
        if axis == (_ELLIPSIS,):
            count = len(shape) - fixed
            lengths[_ELLIPSIS] = shape[position:position + count]
            position += count
            continue
        size = shape[position]
        position += 1
        unknown = [n for n in axis if n not in given]
        known = math.prod(given[n] for n in axis if n in given)
        if len(unknown) > 1:
            raise _fail(pattern, f"the group ({' '.join(axis)}) of length {size} leaves {', '.join(unknown)} "
                                 f"unknown: pass all of them but one as keywords.")
        if unknown and (known == 0 or size % known):
            raise _fail(pattern, f"the group ({' '.join(axis)}) has length {size}, which {known} (the lengths "
                                 f"given) does not divide.")
        if not unknown and known != size:
            raise _fail(pattern, f"the axis {' '.join(axis) or '1'} has length {size}, not "
                                 f"{known} ({', '.join(f'{n}={given[n]}' for n in axis) or 'a length-one axis'}).")
        lengths.update({n: given[n] for n in axis if n in given})
        if unknown:
            lengths[unknown[0]] = size // known
    return lengths


def _sizes(names: list[str], lengths: dict[str, Any]) -> list[int]:
    return [size for n in names for size in (lengths[n] if n == _ELLIPSIS else (lengths[n],))]


def rearrange(x: Array, pattern: str, **axes_lengths: int) -> Array:
    """``x`` reshaped and transposed as einops' ``pattern`` says (``"b (h w) c -> b c h w"``), the
    lengths of split axes given as keywords (``h=4``); x's dtype, on x's backend."""
    _, x, _ = array_input(x)
    left, right = _parse(pattern)
    names = set(left.names())
    for name, value in axes_lengths.items():
        if name not in names:
            raise _fail(pattern, f"the keyword {name}={value!r} names no axis of the pattern.")
        if value.__class__ is not int or value < 1:
            raise InvalidArgumentTypeError(f"rearrange: {name}={value!r} must be a positive int.")
    shape = tuple(int(s) for s in x.shape)
    lengths = _lengths(pattern, left, shape, axes_lengths)
    elementary_in, elementary_out = left.names(), right.names()
    split = _sizes(elementary_in, lengths)
    if tuple(split) != shape:
        x = manipulation.reshape(x, tuple(split))
    # each name's axes in the elementary input, in the output's order (the ellipsis: several axes)
    starts, at = {}, 0
    for n in elementary_in:
        width = len(lengths[n]) if n == _ELLIPSIS else 1
        starts[n], at = range(at, at + width), at + width
    order = tuple(i for n in elementary_out for i in starts[n])
    if order != tuple(range(len(order))):
        x = manipulation.permute_dims(x, order)
    merged = tuple(size for axis, grouped in zip(right.axes, right.grouped, strict=True)
                   for size in (lengths[_ELLIPSIS] if axis == (_ELLIPSIS,) and not grouped
                                else (math.prod(_sizes(list(axis), lengths)),)))
    if merged != tuple(int(s) for s in x.shape):
        x = manipulation.reshape(x, merged)
    return x
