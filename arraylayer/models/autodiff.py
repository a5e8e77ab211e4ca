"""Automatic differentiation with one call on every backend that has it.

``arraylayer.grad(f, argnums=0)`` and ``arraylayer.value_and_grad(f, argnums=0)`` follow
``jax.grad`` / ``jax.value_and_grad``: ``f`` returns a real floating-point scalar (a 0-d array),
and the gradient with respect to each argument named by ``argnums`` has that argument's
structure (an array, or a dict / list / tuple of them: a pytree of parameters). The backend is
the one of the arrays in the arguments, and the work is its own:

* jax: ``jax.value_and_grad`` (also under ``jax.jit``);
* torch: ``torch.func.grad_and_value``, torch's functional autograd (under ``torch.compile``, under
  ``torch.func`` transforms, and for a gradient of a gradient); in plain eager code, where no input
  is already part of a graph, ``torch.autograd.grad`` on detached copies of the inputs, which gives
  the same values at ~3/4 of the cost;
* tensorflow: ``tf.GradientTape`` watching the arguments (also inside ``tf.function``).

NumPy has no automatic differentiation: ``grad`` on NumPy arrays raises
:class:`~arraylayer.UnsupportedOperationError` naming the backends that have it. Inputs to
differentiate must be real floating-point arrays (or Python floats, which become arrays of the
default float dtype); anything else raises :class:`~arraylayer.GradientError` on every backend,
as does an output that is not a real floating-point scalar. :class:`arraylayer.Array` wrappers
go in and come out wrapped.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Final

from arraylayer.api.dispatch import WRAPPERS
from arraylayer.runtime.backend import Backend
from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.errors import GradientError, UnsupportedOperationError
from arraylayer.runtime.registry import backend_of, installed_backends
from arraylayer.models.tree import tree_flatten

__all__ = ["grad", "value_and_grad"]

_AUTODIFF_BACKENDS: Final = ("jax", "torch", "tensorflow")

Argnums = int | Sequence[int]


def value_and_grad(f: Callable[..., Any], argnums: Argnums = 0, *, has_aux: bool = False) -> Callable[..., Any]:
    """A function returning ``(f(*args), gradient)``; with ``has_aux``, ``f`` returns
    ``(value, aux)`` and the result is ``((value, aux), gradient)``.

    ``argnums`` (an int, or a sequence of ints for a tuple of gradients) names the positional
    arguments to differentiate; keyword arguments are passed to ``f`` and never differentiated.
    """
    if not callable(f):
        raise TypeError(f"value_and_grad takes a function, got {type(f).__name__}.")
    single = isinstance(argnums, int)
    _argnums_shape(argnums)

    @functools.wraps(f)
    def value_and_grad_f(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        positions = _positions(argnums, len(args))
        backend = _backend_of_call(args, positions)
        engine = _ENGINES.get(backend.name)
        if engine is None:
            raise _no_autodiff(backend)
        call = _Call(f, args, kwargs, positions, has_aux, backend)
        value, aux, grads = engine(call)
        gradient = grads[0] if single else tuple(grads)
        return ((value, aux) if has_aux else value), gradient

    return value_and_grad_f


def grad(f: Callable[..., Any], argnums: Argnums = 0, *, has_aux: bool = False) -> Callable[..., Any]:
    """A function returning the gradient of ``f`` (a real floating-point scalar) with respect
    to the arguments named by ``argnums``; with ``has_aux``, ``f`` returns ``(value, aux)`` and
    the result is ``(gradient, aux)``. See :func:`value_and_grad`."""
    if not callable(f):
        raise TypeError(f"grad takes a function, got {type(f).__name__}.")
    differentiate = value_and_grad(f, argnums, has_aux=has_aux)

    @functools.wraps(f)
    def grad_f(*args: Any, **kwargs: Any) -> Any:
        result, gradient = differentiate(*args, **kwargs)
        return (gradient, result[1]) if has_aux else gradient

    return grad_f


# -- argnums and the backend of a call --------------------------------------------------------------

def _argnums_shape(argnums: Any) -> None:
    if isinstance(argnums, bool) or not (
        isinstance(argnums, int)
        or (isinstance(argnums, Sequence) and argnums and all(isinstance(a, int) and not isinstance(a, bool)
                                                             for a in argnums))
    ):
        raise GradientError(f"argnums is an int or a non-empty sequence of ints, got {argnums!r}.")


def _positions(argnums: Argnums, count: int) -> list[int]:
    requested = [argnums] if isinstance(argnums, int) else list(argnums)
    positions = []
    for a in requested:
        if not -count <= a < count:
            raise GradientError(
                f"argnums={argnums!r} names positional argument {a}, but the function was called with {count} "
                f"positional argument{'s' if count != 1 else ''} (keyword arguments are never differentiated)."
            )
        positions.append(a % count)
    if len(set(positions)) != len(positions):
        raise GradientError(f"argnums={argnums!r} names an argument twice.")
    return positions


def _backend_of_call(args: tuple[Any, ...], positions: list[int]) -> Backend:
    """The backend of the arrays among the differentiated arguments, else among all arguments,
    else the active backend."""
    differentiated = [leaf for p in positions for leaf in tree_flatten(args[p])[0]]
    if any(_is_array(leaf) for leaf in differentiated):
        return backend_of(*differentiated)
    return backend_of(*(leaf for x in args for leaf in tree_flatten(x)[0]))


def _is_array(x: Any) -> bool:
    return x is not None and not isinstance(x, (bool, int, float, complex, str)) and hasattr(x, "shape")


_WHY_NOT: Final = {
    "numpy": "NumPy has no automatic differentiation",
    "dask": "dask has no automatic differentiation (a dask array is a lazy graph of NumPy chunks); for data "
            "larger than memory, compute the gradient batch by batch on one of those backends and combine, or "
            "shard over devices with JAX",
}


def _no_autodiff(backend: Backend) -> UnsupportedOperationError:
    here = [name for name in _AUTODIFF_BACKENDS if name in installed_backends()]
    installed = f" (installed here: {', '.join(here)})" if here else " (none of them is installed here)"
    what = _WHY_NOT.get(backend.name, f"arraylayer has no automatic differentiation for the {backend.name} backend")
    return UnsupportedOperationError(
        f"arraylayer.grad / value_and_grad: {what}. The jax, torch and tensorflow backends have it{installed}: "
        f"move the arrays there first, e.g. arraylayer.to_backend(x, 'jax'), or create them under "
        f"arraylayer.use_backend('torch')."
    )


# -- pytrees: dicts, lists, tuples (named ones too) and arraylayer.Array --------------------------------

def _differentiable(backend: Backend, leaf: Any, position: int) -> Any:
    """A leaf to differentiate: a real floating-point array of ``backend`` (a Python float
    becomes one of the default float dtype); GradientError for anything else."""
    if isinstance(leaf, float):
        return backend.asarray(leaf, default_float_dtype())
    if isinstance(leaf, backend.array_types):
        dtype = backend.dtype_of(leaf)
        if dtype.category == "float":
            return leaf
        raise GradientError(
            f"grad differentiates real floating-point inputs only; argument {position} holds {_a(dtype)} array. "
            f"Cast it (arraylayer.astype(x, 'float32')) or leave it out of argnums."
        )
    raise GradientError(
        f"grad differentiates real floating-point arrays (or Python floats); argument {position} holds "
        f"{type(leaf).__name__} {leaf!r:.60}. Leave it out of argnums, or pass it as a keyword argument."
    )


def _a(word: object) -> str:
    word = str(word)
    return f"{'an' if word[0] in 'aeiou' else 'a'} {word}"


# -- the output --------------------------------------------------------------------------------------

class _Call:
    """One differentiated call: ``f``, its arguments, and what its output was wrapped in."""

    def __init__(self, f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], positions: list[int],
                 has_aux: bool, backend: Backend) -> None:
        self.f, self.args, self.kwargs, self.positions = f, args, kwargs, positions
        self.has_aux, self.backend = has_aux, backend
        self.wrap: Callable[[Any], Any] | None = None

    def run(self, args: Sequence[Any]) -> tuple[Any, Any]:
        """``f(*args)`` as (native scalar value, aux), the output checked."""
        out = self.f(*args, **self.kwargs)
        if self.has_aux:
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                raise GradientError(
                    f"has_aux=True needs the function to return a pair (value, aux); it returned "
                    f"{type(out).__name__}."
                )
            value, aux = out
        else:
            value, aux = out, None
        pair = WRAPPERS.get(type(value))
        if pair is not None:
            self.wrap = pair[1]
            value = pair[0](value)
        self.check_output(value)
        return value, aux

    def check_output(self, value: Any) -> None:
        backend = self.backend
        if not isinstance(value, backend.array_types):
            raise GradientError(
                f"grad needs the function to return a real floating-point scalar array of the {backend.name} "
                f"backend; it returned {type(value).__name__}."
            )
        dtype = backend.dtype_of(value)
        if dtype.category != "float":
            raise GradientError(
                f"grad needs the function to return a real floating-point scalar; it returned {_a(dtype)} array. "
                f"Return a float value (e.g. arraylayer.astype(loss, 'float32'))."
            )
        shape = tuple(value.shape)
        if shape != ():
            raise GradientError(
                f"grad needs the function to return a scalar (a 0-d array); it returned an array of shape {shape}. "
                f"Reduce it first (arraylayer.sum or arraylayer.mean)."
            )

    def value(self, native: Any) -> Any:
        return native if self.wrap is None else self.wrap(native)

    def flattened(self) -> list[tuple[list[Any], Callable[[Sequence[Any]], Any]]]:
        """For each differentiated argument: its leaves, made differentiable, and its rebuild."""
        result = []
        for p in self.positions:
            leaves, rebuild = tree_flatten(self.args[p])
            result.append(([_differentiable(self.backend, leaf, p) for leaf in leaves], rebuild))
        return result

    def with_leaves(self, flat: list[tuple[list[Any], Callable[[Sequence[Any]], Any]]],
                    leaf_lists: Sequence[Sequence[Any]]) -> list[Any]:
        """The positional arguments with the differentiated ones rebuilt from ``leaf_lists``."""
        args = list(self.args)
        for p, (_, rebuild), leaves in zip(self.positions, flat, leaf_lists, strict=True):
            args[p] = rebuild(list(leaves))
        return args


Engine = Callable[[_Call], tuple[Any, Any, list[Any]]]


def _jax(call: _Call) -> tuple[Any, Any, list[Any]]:
    import jax

    for p in call.positions:  # the same checks as elsewhere, on JAX's own view of the pytree
        for leaf in jax.tree_util.tree_leaves(call.args[p]):
            _differentiable(call.backend, leaf, p)

    def scalar_f(*args: Any) -> tuple[Any, Any]:
        return call.run(args)

    (value, aux), grads = jax.value_and_grad(scalar_f, argnums=tuple(call.positions), has_aux=True)(*call.args)
    return call.value(value), aux, list(grads)


def _torch(call: _Call) -> tuple[Any, Any, list[Any]]:
    import torch
    import torch.func

    flat = call.flattened()
    if _plain_eager(torch, flat):
        return _torch_autograd(torch, call, flat)
    aux_parts: list[tuple[list[Any], Callable[[Sequence[Any]], Any], list[int]]] = []

    def scalar_f(*leaf_lists: Any) -> tuple[Any, list[Any]]:
        value, aux = call.run(call.with_leaves(flat, leaf_lists))
        # torch.func hands back the tensors of aux (unwrapped from its transform); other leaves
        # (strings, numbers ...) stay here and are put back around them.
        aux_leaves, rebuild = tree_flatten(aux)
        tensors = [i for i, leaf in enumerate(aux_leaves) if isinstance(leaf, torch.Tensor)]
        aux_parts.append((aux_leaves, rebuild, tensors))
        return value, [aux_leaves[i] for i in tensors]

    grads, (value, aux_tensors) = torch.func.grad_and_value(
        scalar_f, argnums=tuple(range(len(flat))), has_aux=True
    )(*(leaves for leaves, _ in flat))
    aux_leaves, rebuild_aux, tensors = aux_parts[-1]
    for i, tensor in zip(tensors, aux_tensors, strict=True):
        aux_leaves[i] = tensor
    return call.value(value), rebuild_aux(aux_leaves), [rebuild(g) for (_, rebuild), g in zip(flat, grads, strict=True)]


def _plain_eager(torch: Any, flat: list[tuple[list[Any], Any]]) -> bool:
    """Whether ``torch.autograd.grad`` on detached leaves gives what ``grad_and_value`` gives: not
    traced by Dynamo, under no ``torch.func`` transform, and no leaf already on a graph (as the
    inputs of a gradient of a gradient are)."""
    return (not torch.compiler.is_compiling() and torch._C._functorch.peek_interpreter_stack() is None
            and not any(leaf.requires_grad for leaves, _ in flat for leaf in leaves))


def _torch_autograd(torch: Any, call: _Call, flat: list[tuple[list[Any], Callable[[Sequence[Any]], Any]]]
                    ) -> tuple[Any, Any, list[Any]]:
    """The eager path of :func:`_torch`: one forward on fresh leaves, one ``torch.autograd.grad``
    (unused leaves get zeros, as from ``grad_and_value``). Where ``f`` also used other tensors that
    require grad (a gradient penalty's weights), the gradient, value and aux stay on their graph,
    as ``grad_and_value`` leaves them; otherwise the value and aux come back detached."""
    leaf_lists = [[leaf.detach().requires_grad_() for leaf in leaves] for leaves, _ in flat]
    sources = [leaf for leaves in leaf_lists for leaf in leaves]
    with torch.enable_grad():  # grad_and_value differentiates under an outer no_grad too
        value, aux = call.run(call.with_leaves(flat, leaf_lists))
        outer = value.requires_grad and _reaches_other_leaves(value, sources)
        grads = (torch.autograd.grad(value, sources, allow_unused=True, create_graph=outer) if value.requires_grad
                 else [None] * len(sources))
    dense = iter([torch.zeros_like(s) if g is None else g for s, g in zip(sources, grads, strict=True)])
    if not outer:
        aux_leaves, rebuild_aux = tree_flatten(aux)
        aux = rebuild_aux([a.detach() if isinstance(a, torch.Tensor) else a for a in aux_leaves])
        value = value.detach()
    return (call.value(value), aux,
            [rebuild([next(dense) for _ in leaves]) for leaves, (_, rebuild) in zip(leaf_lists, flat, strict=True)])


def _reaches_other_leaves(value: Any, sources: list[Any]) -> bool:
    """Whether ``value``'s graph reaches a tensor requiring grad other than ``sources`` (a walk
    over its nodes: ~150 for a two-block transformer)."""
    import torch

    accumulate = torch._C._functions.AccumulateGrad  # the node of a leaf requiring grad
    ours = {id(s) for s in sources}
    seen: set[Any] = set()
    stack = [value.grad_fn]
    while stack:
        for node, _ in stack.pop().next_functions:
            if node is None or node in seen:
                continue
            seen.add(node)
            if node.__class__ is not accumulate:
                stack.append(node)
            elif id(node.variable) not in ours:
                return True
    return False


def _tensorflow(call: _Call) -> tuple[Any, Any, list[Any]]:
    tf = call.backend.module
    flat = call.flattened()
    sources = [leaf for leaves, _ in flat for leaf in leaves]
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(sources)
        value, aux = call.run(call.with_leaves(flat, [leaves for leaves, _ in flat]))
    from arraylayer.kernels.tensorflow._gradients import real_part_casts_quiet

    with real_part_casts_quiet():
        grads = tape.gradient(value, sources, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    dense = iter([tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads])
    return call.value(value), aux, [rebuild([next(dense) for _ in leaves]) for leaves, rebuild in flat]


_ENGINES: Final[dict[str, Engine]] = {"jax": _jax, "torch": _torch, "tensorflow": _tensorflow}
