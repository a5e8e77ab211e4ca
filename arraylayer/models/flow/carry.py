"""What a loop's carry and a branch's output must keep: one tree structure, and per leaf one shape
and one dtype.

JAX and TensorFlow check part of this in their own words (``lax.scan``'s "carry type mismatch",
``tf.while_loop``'s shape invariants); NumPy and torch run the Python loop and check nothing. These
checks run on every backend, before the framework sees the loop, so a body that turns a float32
carry into float64 fails with the same :class:`~arraylayer.ControlFlowError` everywhere.

Python numbers in a tree become arrays: in ``init`` (and a branch's operands) of the default dtype
of their kind (``True`` -> bool, ``1`` -> the default int, ``1.0`` -> the default float); in a
body's returned carry of the dtype the carry's leaf has there, as a JAX weak scalar would.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from arraylayer.dtypes.defaults import default_complex_dtype, default_float_dtype, default_int_dtype
from arraylayer.dtypes import Dtype
from arraylayer.errors import ControlFlowError
from arraylayer.models.tree import _describe, _structure, path_name, tree_flatten, tree_paths
from arraylayer.runtime.backend import Backend
from arraylayer.runtime.registry import backend_of

__all__ = ["Flat", "Spec", "flatten", "specs", "check_like", "backend_of_trees"]

Shape = tuple[int | None, ...]


class Spec(NamedTuple):
    """One leaf's shape (None where a compiler does not know a length) and dtype."""

    shape: Shape
    dtype: Dtype

    def __str__(self) -> str:
        return f"{self.dtype} {self.shape}"


class Flat(NamedTuple):
    """A tree taken apart: its native leaves, the rebuild of its structure, and that structure."""

    leaves: list[Any]
    rebuild: Callable[[Sequence[Any]], Any]
    structure: Any
    tree: Any


def backend_of_trees(*trees: Any) -> Backend:
    """The backend of the arrays among the leaves of ``trees`` (the active one when there are none)."""
    return backend_of(*(leaf for tree in trees for leaf in tree_flatten(tree)[0]))


def flatten(backend: Backend, tree: Any, where: str, dtypes: Sequence[Dtype] | None = None) -> Flat:
    """``tree`` taken apart, its Python numbers made arrays of ``backend`` (of ``dtypes``' dtype at
    their position when given, else of their kind's default dtype). ``where`` names the tree in errors."""
    leaves, rebuild = tree_flatten(tree)
    arrays = [leaf if _is_native(backend, leaf) else _number(backend, leaf, where, i, tree,
                                                               None if dtypes is None or i >= len(dtypes)
                                                               else dtypes[i])
              for i, leaf in enumerate(leaves)]
    return Flat(arrays, rebuild, _structure(tree), tree)


def specs(backend: Backend, leaves: Sequence[Any]) -> list[Spec]:
    """The :class:`Spec` of each native leaf."""
    return [Spec(_shape(leaf), backend.dtype_of(leaf)) for leaf in leaves]


def check_like(function: str, what: str, expected: Flat, expected_specs: Sequence[Spec], got: Flat,
               got_specs: Sequence[Spec], fix: str) -> None:
    """ControlFlowError unless ``got`` has ``expected``'s structure and, leaf by leaf, its shape and
    dtype; ``what`` says what ``got`` is ("the carry f returned"), ``fix`` what to do."""
    if got.structure != expected.structure:
        raise ControlFlowError(
            f"{function}: {what} is {_describe(got.tree)} where it should have the structure of "
            f"{_describe(expected.tree)} (the same dicts, lists and tuples); {fix}"
        )
    for path, want, have in zip(tree_paths(expected.tree), expected_specs, got_specs, strict=True):
        if want.dtype != have.dtype or not _same_shape(want.shape, have.shape):
            leaf = f"leaf {path_name(path)!r}" if path else "its leaf"
            raise ControlFlowError(f"{function}: {what} has {leaf} of {have} where it should be {want}; {fix}")


# -- leaves ------------------------------------------------------------------------------------------

def _is_native(backend: Backend, leaf: Any) -> bool:
    return isinstance(leaf, backend.array_types)


_KIND_DEFAULTS: tuple[tuple[type, Callable[[], Dtype]], ...] = (
    (bool, lambda: Dtype("bool")), (int, default_int_dtype), (float, default_float_dtype),
    (complex, default_complex_dtype),
)


def _number(backend: Backend, leaf: Any, where: str, index: int, tree: Any, dtype: Dtype | None) -> Any:
    for kind, default in _KIND_DEFAULTS:
        if isinstance(leaf, kind):
            return backend.asarray(leaf, dtype if dtype is not None else default())
    paths = tree_paths(tree)
    at = f" at {path_name(paths[index])!r}" if index < len(paths) and paths[index] else ""
    raise ControlFlowError(
        f"{where} holds {type(leaf).__name__} {leaf!r:.60}{at}; the leaves of a loop's or branch's trees are "
        f"arrays of the {backend.name} backend or Python numbers (put other values in the functions' closures)."
    )


def _shape(leaf: Any) -> Shape:
    return tuple(d if isinstance(d, int) else None for d in leaf.shape)


def _same_shape(a: Shape, b: Shape) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))
