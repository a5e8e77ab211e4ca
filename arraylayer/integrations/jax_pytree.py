"""``arraylayer.Array`` as a JAX pytree node whose one child is the native array inside, so that
Arrays pass through ``jax.jit``, ``jax.grad`` and ``jax.tree_util`` (registered by arraylayer
right after JAX is imported; arraylayer never imports JAX itself)."""

from __future__ import annotations

from typing import Any

from jax import tree_util

from arraylayer.array import Array

__all__: list[str] = []


def _flatten(array: Array) -> tuple[tuple[Any], None]:
    return (array._native,), None


def _unflatten(_: None, children: Any) -> Array:
    array = object.__new__(Array)
    array._native = children[0]
    return array


tree_util.register_pytree_node(Array, _flatten, _unflatten)
