"""``vmap``: a function of one example applied to a batch, on each framework's own vectorizer.

* jax: ``jax.vmap``; torch: ``torch.func.vmap``; tensorflow: ``tf.vectorized_map`` (its mapped
  arguments moved to axis 0 first, the others closed over);
* numpy and dask: a Python loop over the batch, the results stacked.

``vmap(grad(f))`` gives per-example gradients on jax, torch and tensorflow (``grad`` detects the
transform and uses the functional form on torch).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from arraylayer.api.manipulation import expand_dims, moveaxis, stack
from arraylayer.errors import AxisError, InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.flow.carry import Flat, backend_of_trees, check_like, flatten, specs
from arraylayer.models.flow.loops import _callable, _kind, _zeros
from arraylayer.models.tree import tree_flatten
from arraylayer.runtime.backend import Backend

__all__ = ["vmap"]

Axes = int | None | Sequence[int | None]


def vmap(f: Callable[..., Any], in_axes: Axes = 0, out_axes: int | Sequence[int] = 0) -> Callable[..., Any]:
    """``f`` mapped over a batch axis, as ``jax.vmap``: ``in_axes`` is one axis (int, or None for an
    argument that is not batched) for all positional arguments, or a sequence with one per argument;
    ``out_axes`` is where the batch axis goes in the outputs (one int, or one per element of a tuple
    output). Keyword arguments are passed unbatched."""
    _callable("vmap", f, "f")
    _check_axes("in_axes", in_axes, allow_none=True)
    _check_axes("out_axes", out_axes, allow_none=False)

    @functools.wraps(f)
    def vmapped(*args: Any, **kwargs: Any) -> Any:
        axes = _per_argument(in_axes, len(args))
        backend = backend_of_trees(args)
        inputs = flatten(backend, args, "vmap's arguments")
        leaf_axes = _leaf_axes(args, axes, inputs)
        size = _batch_size(inputs.leaves, leaf_axes)
        body = _Body(backend, f, kwargs, inputs)
        out = _VMAPS.get(backend.name, _vmap_python)(backend, body, list(inputs.leaves), leaf_axes, size)
        assert body.out is not None
        return body.out.rebuild(_place(body.out, list(out), out_axes))

    return vmapped


class _Body:
    """``f`` on the leaves of one example, its output's structure recorded (and checked to stay)."""

    def __init__(self, backend: Backend, f: Callable[..., Any], kwargs: dict[str, Any], inputs: Flat) -> None:
        self.backend, self.f, self.kwargs, self.inputs = backend, f, kwargs, inputs
        self.out: Flat | None = None

    def __call__(self, leaves: Sequence[Any]) -> list[Any]:
        out = flatten(self.backend, self.f(*self.inputs.rebuild(list(leaves)), **self.kwargs), "the output of f")
        if self.out is None:
            self.out = out
        else:
            check_like("vmap", "the output of f", self.out, specs(self.backend, self.out.leaves), out,
                       specs(self.backend, out.leaves), "return one structure, shape and dtype for every example.")
        return list(out.leaves)


def _vmap_jax(backend: Backend, body: _Body, leaves: list[Any], axes: list[int | None], size: int) -> Any:
    import jax

    return jax.vmap(body, in_axes=(axes,))(leaves)


def _vmap_torch(backend: Backend, body: _Body, leaves: list[Any], axes: list[int | None], size: int) -> Any:
    import torch.func

    return torch.func.vmap(body, in_dims=(axes,))(leaves)


def _vmap_tensorflow(backend: Backend, body: _Body, leaves: list[Any], axes: list[int | None], size: int) -> Any:
    mapped = [i for i, a in enumerate(axes) if a is not None]

    def one(batch: list[Any]) -> list[Any]:
        example = list(leaves)
        for i, leaf in zip(mapped, batch, strict=True):
            example[i] = leaf
        return body(example)

    batch = [moveaxis(leaves[i], axes[i], 0) for i in mapped]  # type: ignore[arg-type]
    return backend.module.vectorized_map(one, batch)


def _vmap_python(backend: Backend, body: _Body, leaves: list[Any], axes: list[int | None], size: int) -> list[Any]:
    if size == 0:  # no example: the outputs' shapes and dtypes from one trial on zeros, kept with 0 rows
        example = [leaf if a is None else _zeros(backend, tuple(leaf.shape[:a]) + tuple(leaf.shape[a + 1:]),
                                                backend.dtype_of(leaf), leaf)
                   for leaf, a in zip(leaves, axes, strict=True)]
        return [expand_dims(y, axis=0)[0:0] for y in body(example)]
    outs = []
    for b in range(size):
        outs.append(body([leaf if a is None else leaf[(slice(None),) * a + (b,)]
                          for leaf, a in zip(leaves, axes, strict=True)]))
    return [stack(list(column)) for column in zip(*outs, strict=True)]


_VMAPS: Final[dict[str, Callable[..., Any]]] = {"jax": _vmap_jax, "torch": _vmap_torch,
                                                "tensorflow": _vmap_tensorflow}


# -- axes ---------------------------------------------------------------------------------------------

def _check_axes(name: str, axes: Any, allow_none: bool) -> None:
    items = list(axes) if isinstance(axes, (list, tuple)) else [axes]
    for a in items:
        if (a is None and allow_none) or (isinstance(a, int) and not isinstance(a, bool)):
            continue
        allowed = "an int or None" if allow_none else "an int"
        raise InvalidArgumentTypeError(f"vmap: {name} is {allowed}, or a sequence of them; got {_kind(axes)}.")


def _per_argument(in_axes: Axes, count: int) -> list[int | None]:
    if not isinstance(in_axes, (list, tuple)):
        return [in_axes] * count  # type: ignore[list-item]
    if len(in_axes) != count:
        raise InvalidArgumentError(f"vmap: in_axes has {len(in_axes)} entries but the function was called with "
                                   f"{count} positional argument(s); give one per argument.")
    return list(in_axes)


def _leaf_axes(args: tuple[Any, ...], axes: list[int | None], inputs: Flat) -> list[int | None]:
    """Each leaf's batch axis (non-negative), from its argument's."""
    per_leaf: list[int | None] = []
    for arg, axis in zip(args, axes, strict=True):
        per_leaf += [axis] * len(_leaves(arg))
    result: list[int | None] = []
    for leaf, axis in zip(inputs.leaves, per_leaf, strict=True):
        if axis is None:
            result.append(None)
            continue
        ndim = len(leaf.shape)
        if not -ndim <= axis < ndim:
            raise AxisError(f"vmap: in_axes={axis} is out of range for an argument of {ndim} dimension(s).")
        result.append(axis % ndim)
    return result


def _leaves(tree: Any) -> list[Any]:
    return tree_flatten(tree)[0]


def _batch_size(leaves: list[Any], axes: list[int | None]) -> int:
    sizes = {leaf.shape[a] for leaf, a in zip(leaves, axes, strict=True) if a is not None}
    if not sizes:
        raise InvalidArgumentError("vmap: no argument is batched (every in_axes is None, or no argument holds an "
                                   "array); batch at least one.")
    if len(sizes) > 1:
        raise InvalidArgumentError(f"vmap: the batched arguments have different sizes along their batch axes "
                                   f"({sorted(map(str, sizes))}); give them one.")
    return sizes.pop()


def _place(out: Flat, leaves: list[Any], out_axes: int | Sequence[int]) -> list[Any]:
    """The outputs with their batch axis (0 here) moved to ``out_axes``."""
    if isinstance(out_axes, int):
        per_leaf = [out_axes] * len(leaves)
    else:
        tree = out.tree
        if not isinstance(tree, (list, tuple)) or len(tree) != len(out_axes):
            raise InvalidArgumentError(f"vmap: out_axes has {len(out_axes)} entries; the output is "
                                       f"{type(tree).__name__}, so give one int (or one per element of a tuple).")
        per_leaf = [axis for part, axis in zip(tree, out_axes, strict=True) for _ in _leaves(part)]
    placed = []
    for leaf, axis in zip(leaves, per_leaf, strict=True):
        ndim = len(leaf.shape)
        if not -ndim <= axis < ndim:
            raise AxisError(f"vmap: out_axes={axis} is out of range for an output of {ndim} dimension(s).")
        placed.append(leaf if axis % ndim == 0 else moveaxis(leaf, 0, axis % ndim))
    return placed
