"""The rest of differentiation: ``stop_gradient``, ``custom_gradient`` and ``jvp``, on each
framework's own machinery (``grad`` and ``value_and_grad`` are in :mod:`arraylayer.models.autodiff`).

* ``stop_gradient(tree)``: ``jax.lax.stop_gradient``, ``Tensor.detach``, ``tf.stop_gradient``; the
  identity on NumPy and dask, which have no gradients;
* ``custom_gradient(f)``: ``f(*args)`` returns ``(output, backward)``, and ``backward(upstream)``
  returns the gradient of each positional argument (TensorFlow's form): ``jax.custom_gradient``,
  a ``torch.autograd.Function`` (also under ``torch.func``), ``tf.custom_gradient``;
* ``jvp(f, primals, tangents)``: forward mode, ``jax.jvp``, ``torch.func.jvp`` and
  ``tf.autodiff.ForwardAccumulator``.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from typing import Any, Final

from arraylayer.errors import ControlFlowError, GradientError, UnsupportedOperationError
from arraylayer.models.flow.carry import backend_of_trees, flatten, specs
from arraylayer.models.flow.loops import _callable
from arraylayer.models.tree import tree_flatten
from arraylayer.runtime.backend import Backend

__all__ = ["stop_gradient", "custom_gradient", "jvp"]


def stop_gradient(tree: Any) -> Any:
    """``tree`` with no gradient flowing back through any of its leaves (the values unchanged)."""
    leaves, rebuild = tree_flatten(tree)
    backend = backend_of_trees(tree)
    stop = _STOPS.get(backend.name)
    # leaves that are not arrays (numbers, strings) carry no gradient: returned as they are, on every backend
    return tree if stop is None else rebuild([stop(backend, leaf) if hasattr(leaf, "shape") else leaf
                                              for leaf in leaves])


_STOPS: Final[dict[str, Callable[[Backend, Any], Any]]] = {
    "jax": lambda backend, x: __import__("jax").lax.stop_gradient(x),
    "torch": lambda backend, x: x.detach(),
    "tensorflow": lambda backend, x: backend.module.stop_gradient(x),
}


def custom_gradient(f: Callable[..., tuple[Any, Callable[[Any], Any]]]) -> Callable[..., Any]:
    """``f`` with the gradient it defines: ``f(*args)`` returns ``(output, backward)`` where
    ``output`` is one array and ``backward(upstream)`` returns the gradients of ``args`` (one array,
    or a tuple with one per positional argument). On NumPy and dask, where nothing is
    differentiated, the decorated function returns ``output``."""
    _callable("custom_gradient", f, "f")
    per_backend: dict[str, Callable[..., Any]] = {}

    @functools.wraps(f)
    def with_gradient(*args: Any) -> Any:
        backend = backend_of_trees(args)
        # arrays of one backend or Python numbers (made arrays), on every backend alike: anything
        # else is a ControlFlowError here, not the framework's error inside its custom gradient
        for i, arg in enumerate(args):  # each positional argument gets one gradient: one array (or number) each
            if not hasattr(arg, "shape") and not isinstance(arg, (int, float)):
                raise ControlFlowError(f"custom_gradient: positional argument {i} is {type(arg).__name__}, not an "
                                       f"array; each positional argument gets one gradient: pass arrays (put other "
                                       f"values in f's closure).")
        flat = flatten(backend, args, "custom_gradient's arguments")
        args = flat.rebuild(flat.leaves)
        make = _CUSTOM.get(backend.name)
        if make is None:
            return f(*args)[0]
        if backend.name not in per_backend:
            per_backend[backend.name] = make(backend, f)
        return per_backend[backend.name](*args)

    return with_gradient


def _grads_tuple(grads: Any, count: int) -> tuple[Any, ...]:
    grads = grads if isinstance(grads, (tuple, list)) else (grads,)
    if len(grads) != count:
        raise GradientError(f"custom_gradient: backward returned {len(grads)} gradient(s) for {count} positional "
                            f"argument(s); return one per argument.")
    return tuple(grads)


def _custom_jax(backend: Backend, f: Callable[..., Any]) -> Callable[..., Any]:
    import jax

    def forward(*args: Any) -> tuple[Any, Callable[[Any], Any]]:
        out, backward = f(*args)
        return out, lambda g: _grads_tuple(backward(g), len(args))

    return jax.custom_gradient(forward)


def _custom_tensorflow(backend: Backend, f: Callable[..., Any]) -> Callable[..., Any]:
    tf = backend.module

    @tf.custom_gradient
    def forward(*args: Any) -> tuple[Any, Callable[..., Any]]:
        out, backward = f(*args)

        def grad_fn(upstream: Any, variables: Any = None) -> Any:
            return list(_grads_tuple(backward(upstream), len(args)))

        return out, grad_fn

    return forward


def _custom_torch(backend: Backend, f: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    pending: list[Callable[[Any], Any]] = []

    class Custom(torch.autograd.Function):
        @staticmethod
        def forward(*args: Any) -> Any:
            out, backward = f(*args)
            pending.append(backward)
            return out

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.backward_fn = pending.pop()
            ctx.count = len(inputs)

        @staticmethod
        def backward(ctx: Any, upstream: Any) -> Any:
            return _grads_tuple(ctx.backward_fn(upstream), ctx.count)

    return Custom.apply


_CUSTOM: Final[dict[str, Callable[[Backend, Callable[..., Any]], Callable[..., Any]]]] = {
    "jax": _custom_jax, "torch": _custom_torch, "tensorflow": _custom_tensorflow,
}


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """``(f(*primals), J @ tangents)``: the output and its directional derivative along
    ``tangents``, as ``jax.jvp``. ``primals`` and ``tangents`` are tuples with one entry per positional
    argument, each a tree of real floating-point arrays; a tangent has its primal's structure, shapes
    and dtypes."""
    _callable("jvp", f, "f")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise GradientError("jvp: primals and tangents are tuples, one entry per positional argument of f.")
    backend = backend_of_trees(primals, tangents)
    engine = _JVPS.get(backend.name)
    if engine is None:
        raise UnsupportedOperationError(
            f"jvp: the {backend.name} backend has no automatic differentiation; move the arrays to jax, torch or "
            f"tensorflow first (arraylayer.to_backend(x, 'jax'))."
        )
    p, t = flatten(backend, tuple(primals), "jvp's primals"), flatten(backend, tuple(tangents), "jvp's tangents")
    if p.structure != t.structure or specs(backend, p.leaves) != specs(backend, t.leaves):
        raise GradientError("jvp: tangents must have the structure, shapes and dtypes of primals.")
    for spec in specs(backend, p.leaves):
        if spec.dtype.category != "float":
            raise GradientError(f"jvp differentiates real floating-point inputs only; a primal is {spec.dtype}.")
    return engine(backend, f, p, t)


def _jvp_jax(backend: Backend, f: Callable[..., Any], p: Any, t: Any) -> tuple[Any, Any]:
    import jax

    return jax.jvp(lambda *leaves: f(*p.rebuild(list(leaves))), tuple(p.leaves), tuple(t.leaves))


def _jvp_torch(backend: Backend, f: Callable[..., Any], p: Any, t: Any) -> tuple[Any, Any]:
    import torch.func

    with warnings.catch_warnings():  # torch 2.13's forward mode scripts its decompositions on first use
        warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)
        return torch.func.jvp(lambda *leaves: f(*p.rebuild(list(leaves))), tuple(p.leaves), tuple(t.leaves))


def _jvp_tensorflow(backend: Backend, f: Callable[..., Any], p: Any, t: Any) -> tuple[Any, Any]:
    tf = backend.module
    with tf.autodiff.ForwardAccumulator(list(p.leaves), list(t.leaves)) as accumulator:
        out = f(*p.rebuild(list(p.leaves)))
    leaves, rebuild = tree_flatten(out)
    tangent = [accumulator.jvp(leaf, unconnected_gradients=tf.UnconnectedGradients.ZERO) for leaf in leaves]
    return out, rebuild(tangent)


_JVPS: Final[dict[str, Callable[..., tuple[Any, Any]]]] = {
    "jax": _jvp_jax, "torch": _jvp_torch, "tensorflow": _jvp_tensorflow,
}
