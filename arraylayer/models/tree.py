"""Parameter trees: nested dicts, lists and tuples (named tuples too) whose leaves are arrays.

One flattening serves ``tree_map``/``tree_leaves`` here and ``arraylayer.grad`` (autodiff.py):
``arraylayer.Array`` leaves are unwrapped to their native arrays and wrapped back on the way
out, ``None`` is structure (it holds no leaf and stays None), and dict entries are visited in
sorted key order, as JAX visits them (rebuilt dicts come out in that order).

A leaf's *path* is the tuple of keys that reach it from the root: dict keys, list and tuple
indices (ints), a named tuple's field names (``("layers", 0, "w")``); ``tree_paths`` and
``tree_map_with_path`` address leaves by it (what weight-decay masks and checkpoints need).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from arraylayer.api.dispatch import WRAPPERS
from arraylayer.errors import InvalidArgumentError

__all__ = ["tree_map", "tree_columns", "tree_leaves", "tree_flatten", "tree_paths", "tree_map_with_path", "path_name"]

Path = tuple[Any, ...]

Rebuild = Callable[[Iterator[Any]], Any]


def tree_flatten(tree: Any) -> tuple[list[Any], Callable[[Sequence[Any]], Any]]:
    """The leaves of ``tree`` (natives for Array wrappers) and a function rebuilding the same
    structure from new leaves (wrapping those that were Arrays). None holds no leaf."""
    leaves: list[Any] = []
    build = _flatten_into(tree, leaves)
    return leaves, lambda new: build(iter(new))


def _flatten_into(tree: Any, leaves: list[Any]) -> Rebuild:
    # type(tree), not tree.__class__: torch 2.11's Dynamo cannot hash a dict's __class__ (one of the
    # graph-break reasons it gave for a compiled training step, seen on a GPU)
    pair = WRAPPERS.get(type(tree))
    if pair is not None:
        unwrap, wrap = pair
        leaves.append(unwrap(tree))
        return lambda it: wrap(next(it))
    if isinstance(tree, dict):
        keys = _keys(tree)
        cls = type(tree) if type(tree) in (dict, OrderedDict) else dict
        values = [tree[key] for key in keys]
        if _plain_leaves(values):  # a flat dict of arrays (a model's parameters): one step
            leaves.extend(values)
            return lambda it: cls(zip(keys, it, strict=False))  # keys asked first: len(keys) leaves taken
        items = [(key, _flatten_into(value, leaves)) for key, value in zip(keys, values, strict=True)]
        return lambda it: cls((key, build(it)) for key, build in items)
    if isinstance(tree, (list, tuple)):
        builds = [_flatten_into(item, leaves) for item in tree]
        if hasattr(tree, "_fields"):  # a named tuple
            return lambda it: type(tree)(*(build(it) for build in builds))
        cls = type(tree) if type(tree) in (list, tuple) else (list if isinstance(tree, list) else tuple)
        return lambda it: cls(build(it) for build in builds)
    if tree is None:
        return lambda it: None
    leaves.append(tree)
    return next


def _plain_leaves(values: list[Any]) -> bool:
    """Whether every value is a leaf as it is: no container, no None, no Array wrapper."""
    return all(type(v) not in WRAPPERS and v is not None and not isinstance(v, _CONTAINERS) for v in values)


_CONTAINERS = (dict, list, tuple)


def _keys(tree: dict[Any, Any]) -> list[Any]:
    """A dict's keys in sorted order (as JAX orders them, so that trees built in another order
    match), or in insertion order when they do not sort."""
    try:
        return sorted(tree)
    except TypeError:
        return list(tree)


def _structure(tree: Any) -> Any:
    """A comparable description of ``tree``'s structure (leaves are all alike)."""
    if type(tree) in WRAPPERS:
        return "leaf"
    if isinstance(tree, dict):
        keys = _keys(tree)
        values = [tree[key] for key in keys]
        if _plain_leaves(values):
            return ("dict", tuple((key, "leaf") for key in keys))
        return ("dict", tuple((key, _structure(value)) for key, value in zip(keys, values, strict=True)))
    if isinstance(tree, (list, tuple)):
        return (type(tree).__name__, tuple(_structure(item) for item in tree))
    return None if tree is None else "leaf"


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree``, depth first: dicts in sorted key order (as JAX orders them; insertion
    order when the keys do not sort), lists and tuples in order. None holds no leaf."""
    return tree_flatten(tree)[0]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """``tree`` with each leaf replaced by ``f(leaf, *corresponding leaves of rest)``; every tree of
    ``rest`` must have ``tree``'s structure (InvalidArgumentError naming the difference otherwise)."""
    columns, rebuild = tree_columns(tree, *rest)
    return rebuild([f(*row) for row in zip(*columns, strict=True)])


def tree_columns(tree: Any, *rest: Any) -> tuple[list[list[Any]], Callable[[Sequence[Any]], Any]]:
    """The leaves of ``tree`` and of each tree of ``rest`` (one list per tree, in the same order),
    and the rebuild of ``tree``'s structure: what ``tree_map`` does leaf by leaf, for code that
    works on whole columns of leaves at once. Structures are checked as ``tree_map`` checks them."""
    leaves, rebuild = tree_flatten(tree)
    shape = _structure(tree) if rest else None
    columns = [leaves]
    for position, other in enumerate(rest, start=1):
        if _structure(other) != shape:
            raise InvalidArgumentError(
                f"tree_map: tree {position} of rest has another structure than the first tree "
                f"({_describe(other)} against {_describe(tree)}); pass trees of the same dicts, lists and tuples."
            )
        columns.append(tree_flatten(other)[0])
    return columns, rebuild


def _describe(tree: Any) -> str:
    if isinstance(tree, dict):
        return f"a dict with keys {sorted(map(str, tree))}"
    if isinstance(tree, (list, tuple)):
        return f"a {type(tree).__name__} of {len(tree)}"
    return "a leaf" if tree is not None else "None"


def tree_paths(tree: Any) -> list[Path]:
    """The path of each leaf of ``tree``, in the order of :func:`tree_leaves`."""
    paths: list[Path] = []
    _paths_into(tree, (), paths)
    return paths


def _paths_into(tree: Any, prefix: Path, paths: list[Path]) -> None:
    if type(tree) in WRAPPERS:
        paths.append(prefix)
    elif isinstance(tree, dict):
        for key in _keys(tree):
            _paths_into(tree[key], (*prefix, key), paths)
    elif isinstance(tree, (list, tuple)):
        keys = tree._fields if hasattr(tree, "_fields") else range(len(tree))
        for key, item in zip(keys, tree, strict=True):
            _paths_into(item, (*prefix, key), paths)
    elif tree is not None:
        paths.append(prefix)


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """``tree`` with each leaf replaced by ``f(path, leaf, *corresponding leaves of rest)``."""
    paths = iter(tree_paths(tree))
    return tree_map(lambda *leaves: f(next(paths), *leaves), tree, *rest)


def path_name(path: Path, sep: str = "/") -> str:
    """A path as one string, its keys joined by ``sep``: ``("layers", 0, "w")`` -> ``"layers/0/w"``."""
    return sep.join(map(str, path))
