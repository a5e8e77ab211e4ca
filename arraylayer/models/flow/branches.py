"""Branches written once: ``cond`` and ``switch``, with JAX's signatures.

* jax: ``jax.lax.cond`` / ``jax.lax.switch`` (both branches traced, one run);
* tensorflow: ``tf.cond`` / ``tf.switch_case`` (under ``tf.function`` both branches are traced);
* numpy, torch and dask: Python ``if``: only the branch taken runs (under ``torch.compile`` a tensor
  predicate breaks the graph there).

Where both branches are traced (jax, and tensorflow under ``tf.function``) their outputs must agree
in structure, shapes and dtypes (:class:`~arraylayer.ControlFlowError` otherwise); where only one
runs, only its output is known, so write branches that agree. ``switch`` clamps its index into
``[0, len(branches) - 1]``, as JAX does, on every backend.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Final

from arraylayer.errors import ControlFlowError, InvalidArgumentTypeError
from arraylayer.models.flow.carry import Flat, Spec, backend_of_trees, check_like, flatten, specs
from arraylayer.models.flow.loops import _callable, _kind, boolean_scalar
from arraylayer.runtime.backend import Backend

__all__ = ["cond", "switch"]


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, as ``jax.lax.cond``.
    ``pred`` is a boolean scalar (a Python bool or a 0-d bool array)."""
    _callable("cond", true_fun, "true_fun")
    _callable("cond", false_fun, "false_fun")
    backend = backend_of_trees(pred, operands)
    branches = _Branches(backend, "cond", (false_fun, true_fun), ("false_fun", "true_fun"), operands)
    run = _CONDS.get(backend.name)
    if run is None and isinstance(pred, bool):  # a Python bool where only one branch runs: nothing to compute
        return branches.rebuild(branches.call(int(pred)))
    pred = boolean_scalar(backend, "cond", "pred", pred)
    return branches.rebuild((run or _cond_python)(backend, pred, branches))


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """``branches[index](*operands)``, the index clamped into range, as ``jax.lax.switch``.
    ``index`` is an int or an integer 0-d array."""
    if isinstance(branches, (str, bytes)) or not isinstance(branches, Sequence) or not branches:
        raise InvalidArgumentTypeError(f"switch: branches is a non-empty sequence of functions; got "
                                       f"{_kind(branches)}.")
    for k, branch in enumerate(branches):
        _callable("switch", branch, f"branches[{k}]")
    backend = backend_of_trees(index, operands)
    index = _index(backend, index)
    table = _Branches(backend, "switch", tuple(branches), tuple(f"branches[{k}]" for k in range(len(branches))),
                      operands)
    return table.rebuild(_SWITCHES.get(backend.name, _switch_python)(backend, index, table))


class _Branches:
    """The branch functions on native operand leaves, their outputs checked to agree."""

    def __init__(self, backend: Backend, function: str, functions: tuple[Callable[..., Any], ...],
                 names: tuple[str, ...], operands: tuple[Any, ...]) -> None:
        self.backend, self.function, self.functions, self.names = backend, function, functions, names
        self.operands = flatten(backend, operands, f"{function}'s operands")
        self.out: Flat | None = None
        self.out_specs: list[Spec] = []
        self.first = ""

    def __len__(self) -> int:
        return len(self.functions)

    def branch(self, k: int) -> Callable[..., list[Any]]:
        """Branch ``k`` as a function of the operand leaves, returning its output's leaves."""
        def run(*leaves: Any) -> list[Any]:
            name = self.names[k]
            out = flatten(self.backend, self.functions[k](*self.operands.rebuild(list(leaves))),
                          f"the output of {name}")
            out_specs = specs(self.backend, out.leaves)
            if self.out is None:
                self.out, self.out_specs, self.first = out, out_specs, name
            else:
                check_like(self.function, f"the output of {name}", self.out, self.out_specs, out, out_specs,
                           f"make it agree with the output of {self.first} (both branches are traced here).")
            return list(out.leaves)
        return run

    def call(self, k: int) -> list[Any]:
        return self.branch(k)(*self.operands.leaves)

    def rebuild(self, leaves: Sequence[Any]) -> Any:
        assert self.out is not None
        return self.out.rebuild(list(leaves))


def _index(backend: Backend, index: Any) -> Any:
    if isinstance(index, bool):
        raise InvalidArgumentTypeError("switch: index is an int or an integer 0-d array; got a bool.")
    if isinstance(index, backend.array_types):
        dtype, shape = backend.dtype_of(index), tuple(index.shape)
        if not dtype.is_integer or shape != ():
            raise ControlFlowError(f"switch: index is an integer scalar; got a {dtype} array of shape {shape}.")
        return index
    try:
        return operator.index(index)
    except TypeError:
        raise InvalidArgumentTypeError(f"switch: index is an int or an integer 0-d array; got {_kind(index)}.") from None


# -- each backend ------------------------------------------------------------------------------------

def _cond_python(backend: Backend, pred: Any, branches: _Branches) -> list[Any]:
    return branches.call(1 if bool(pred) else 0)


def _cond_jax(backend: Backend, pred: Any, branches: _Branches) -> Any:
    import jax

    return jax.lax.cond(pred, branches.branch(1), branches.branch(0), *branches.operands.leaves)


def _cond_tensorflow(backend: Backend, pred: Any, branches: _Branches) -> Any:
    leaves = branches.operands.leaves
    return _listed(backend.module.cond(pred, lambda: branches.branch(1)(*leaves),
                                       lambda: branches.branch(0)(*leaves)))


def _switch_python(backend: Backend, index: Any, branches: _Branches) -> list[Any]:
    return branches.call(min(max(int(index), 0), len(branches) - 1))


def _switch_jax(backend: Backend, index: Any, branches: _Branches) -> Any:
    import jax

    return jax.lax.switch(index, [branches.branch(k) for k in range(len(branches))], *branches.operands.leaves)


def _switch_tensorflow(backend: Backend, index: Any, branches: _Branches) -> Any:
    tf = backend.module
    leaves = branches.operands.leaves
    if isinstance(index, int):
        return branches.call(min(max(index, 0), len(branches) - 1))
    clamped = tf.clip_by_value(tf.cast(index, tf.int32), 0, len(branches) - 1)
    return _listed(tf.switch_case(clamped, [lambda k=k: branches.branch(k)(*leaves) for k in range(len(branches))]))


def _listed(out: Any) -> list[Any]:
    """tf.cond's output as a list of leaves (it unpacks a one-element list)."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


_CONDS: Final[dict[str, Callable[..., Any]]] = {"jax": _cond_jax, "tensorflow": _cond_tensorflow}
_SWITCHES: Final[dict[str, Callable[..., Any]]] = {"jax": _switch_jax, "tensorflow": _switch_tensorflow}
