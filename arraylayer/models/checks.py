"""The toolkit's checks of trees handed back to it: gradients shaped like their parameters, a
state made by the optimizer it is given to, a layer's parameters holding what its apply reads.

Each check costs one comparison per leaf (or per key) when it passes, with no array op: the
shapes it compares are static under ``jax.jit``, ``tf.function`` and ``torch.compile``, so it
traces to nothing. Only a failing check walks the trees again, for the paths its error names.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.tree import path_name, tree_columns, tree_paths

__all__ = ["columns", "same_shapes", "arrays", "own_state", "entry"]


def _where(path: tuple[Any, ...]) -> str:
    return f"'{path_name(path)}'" if path else "the root"


def columns(who: str, names: Sequence[str], reference: Any, *trees: Any) -> tuple[list[list[Any]], Any]:
    """``tree_columns(reference, *trees)``; an InvalidArgumentError naming the first path that
    ``reference`` and another tree do not share otherwise (``names``: what each tree is)."""
    try:
        return tree_columns(reference, *trees)
    except InvalidArgumentError:
        known = set(tree_paths(reference))
        for name, tree in zip(names[1:], trees):
            other = set(tree_paths(tree))
            missing, extra = sorted(known - other, key=str), sorted(other - known, key=str)
            if missing or extra:
                detail = (f"the {name} have no leaf at {_where(missing[0])}" if missing else
                          f"the {name} have a leaf at {_where(extra[0])} that the {names[0]} lack")
                break
        else:
            detail = f"the {' and '.join(names)} nest their dicts, lists and tuples differently"
        raise InvalidArgumentError(f"{who}: {detail}; pass gradients with the parameters' keys and nesting "
                                   f"(al.grad(loss)(params) gives them) and the state init(params) made for those "
                                   f"parameters.") from None


def same_shapes(who: str, names: tuple[str, str], reference: Any, expected: Sequence[Any], given: Sequence[Any]
                ) -> None:
    """Each leaf of ``given`` must have the shape of the leaf of ``expected`` beside it (the leaves
    of ``reference``, whose paths the error names; ``names``: what the two columns are): no silent
    broadcasting of a (1,) gradient over a (3, 4) parameter."""
    try:
        for a, b in zip(expected, given):
            if a.shape != b.shape:
                _shape_error(who, names, reference, expected, given)
    except AttributeError:  # a leaf that is no array (a Python float)
        arrays(who, reference, expected, names[0])
        arrays(who, reference, given, names[1])
        raise


def arrays(who: str, reference: Any, leaves: Sequence[Any], what: str) -> None:
    """Every leaf must be an array (have a shape and a dtype): the error names the first that is not."""
    for path, leaf in zip(tree_paths(reference), leaves):
        if not (hasattr(leaf, "shape") and hasattr(leaf, "dtype")):
            raise InvalidArgumentTypeError(f"{who}: the {what} at {_where(path)} is {type(leaf).__name__}, not an "
                                           f"array; pass arrays (al.grad(loss)(params) gives them).")


def _unequal(a: Any, b: Any) -> bool:
    """Whether two lengths differ (dask's unknown lengths, nan, equal anything)."""
    return a == a and b == b and a != b


def _shape_error(who: str, names: tuple[str, str], reference: Any, expected: Sequence[Any], given: Sequence[Any]
                 ) -> None:
    for path, a, b in zip(tree_paths(reference), expected, given):
        shape, other = tuple(a.shape), tuple(b.shape)
        if len(shape) != len(other) or any(_unequal(m, n) for m, n in zip(shape, other)):
            raise InvalidArgumentError(f"{who}: at {_where(path)} the {names[1]} has shape {other} but the "
                                       f"{names[0]} {shape}; pass gradients of their parameters' shapes (nothing "
                                       f"broadcasts here) and the state init(params) made for those parameters.")


def own_state(who: str, state: Any, keys: Iterable[str]) -> None:
    """``state`` must be a dict holding ``keys``: the state ``init`` of the same optimizer or
    transformation made (another's raised a bare KeyError)."""
    if not isinstance(state, dict):
        raise InvalidArgumentTypeError(f"{who}: the state is {type(state).__name__}, not the dict this "
                                       f"transformation's init(params) makes; pass that state.")
    for key in keys:
        if key not in state:
            raise InvalidArgumentError(f"{who}: the state has no {key!r} (it holds {sorted(map(str, state))}): it "
                                       f"was made by another optimizer or transformation. Pass the state this "
                                       f"one's init(params) made.")


def entry(layer: str, params: Any, name: str, at: str = "params") -> Any:
    """``params[name]`` (``at``: where ``params`` sits in the layer's tree): a layer's parameter, or
    an error naming the layer, the parameter and the fix."""
    if not isinstance(params, dict):
        raise InvalidArgumentTypeError(f"{layer}.apply: {at} is {type(params).__name__}, not the dict "
                                       f"{layer}.init(key, ...) makes; pass that dict.")
    found = params.get(name)
    if found is None:
        raise InvalidArgumentError(f"{layer}.apply: {at} has no {name!r} (it holds {sorted(map(str, params))}); "
                                   f"pass the parameters {layer}.init(key, ...) made for this layer.")
    return found
