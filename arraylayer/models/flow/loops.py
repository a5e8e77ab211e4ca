"""Loops written once: ``scan``, ``map``, ``fori_loop`` and ``while_loop``, with JAX's signatures.

Each backend runs them with its own machinery (see docs/control_flow.rst):

* jax: ``jax.lax.scan`` / ``fori_loop`` / ``while_loop``: one traced body, never unrolled under
  ``jax.jit`` (the jaxpr holds a ``scan`` or ``while``);
* tensorflow: ``tf.while_loop`` (a While op under ``tf.function``), ``scan``'s outputs gathered in
  ``tf.TensorArray`` objects. To learn the shapes and dtypes of ``ys`` before the loop, ``scan`` runs its
  first step ahead of the loop (the graph holds the body twice; the values are the same);
* numpy, torch and dask: a Python loop. Under ``torch.compile`` a loop of static length is unrolled
  into the graph; ``while_loop`` breaks the graph at its predicate.

The carry keeps its tree structure, shapes and dtypes on every backend (:mod:`.carry`), and the
loop index of ``fori_loop`` is an int32 0-d array everywhere (a strong int32 on JAX too), so the
same body gives the same dtypes everywhere. Gradients flow through ``scan`` and through a
``fori_loop`` with Python-int bounds on jax, torch and tensorflow; through ``while_loop`` only
forward-mode on JAX (``jax.lax.while_loop`` has no reverse-mode derivative), reverse-mode on torch and
tensorflow.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any, Final

from arraylayer.api.manipulation import expand_dims, stack, unstack
from arraylayer.dtypes import Dtype
from arraylayer.errors import ControlFlowError, InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.flow.carry import Flat, Spec, backend_of_trees, check_like, flatten, specs
from arraylayer.models.tree import path_name, tree_paths
from arraylayer.runtime.backend import Backend

__all__ = ["scan", "map", "fori_loop", "while_loop"]

_INT32: Final = Dtype("int32")


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1) -> tuple[Any, Any]:
    """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; return the last carry and
    every step's ``y`` stacked along a new leading axis, as ``jax.lax.scan``.

    ``init``, ``xs`` and each ``y`` are pytrees (dicts, lists, tuples, None) of arrays; ``xs=None``
    with ``length=n`` runs ``n`` steps with ``x=None``. ``reverse=True`` scans from the end (``ys``
    keep the order of ``xs``). ``unroll`` is passed to JAX and ignored elsewhere. ``f`` must return
    a carry of ``init``'s structure, shapes and dtypes, and a ``y`` alike at every step
    (:class:`~arraylayer.ControlFlowError` otherwise).
    """
    _callable("scan", f, "f")
    _flag("scan", "reverse", reverse)
    _unroll(unroll)
    backend = backend_of_trees(init, xs)
    carry = flatten(backend, init, "scan's init")
    sequence = flatten(backend, xs, "scan's xs")
    n = _length(backend, sequence, length)
    step = _ScanStep(backend, f, carry, sequence)
    run = _SCANS.get(backend.name, _scan_python)
    last, ys = run(backend, step, list(carry.leaves), list(sequence.leaves), n, reverse, unroll)
    return carry.rebuild(list(last)), step.rebuild_ys(backend, list(ys), carry, sequence)


def map(f: Callable[[Any], Any], xs: Any) -> Any:  # noqa: A001 - jax.lax.map's name
    """``f`` applied to each slice of ``xs`` along its leading axis, the results stacked: ``jax.lax.map``
    (a ``scan`` without a carry, so it compiles as one on jax and tensorflow)."""
    _callable("map", f, "f")
    if not flatten(backend_of_trees(xs), xs, "map's xs").leaves:
        raise InvalidArgumentError("map: xs holds no array to map over; pass an array or a tree of arrays.")
    return scan(lambda carry, x: (carry, f(x)), None, xs)[1]


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any) -> Any:
    """``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper - 1``; the last ``val``, as
    ``jax.lax.fori_loop``. ``i`` is an int32 0-d array on every backend. With Python-int bounds the
    loop is differentiable on jax, torch and tensorflow; traced bounds make it a ``while_loop``."""
    _callable("fori_loop", body_fun, "body_fun")
    backend = backend_of_trees(init_val, lower, upper)
    bounds = [_bound(backend, b, name) for b, name in ((lower, "lower"), (upper, "upper"))]
    carry = flatten(backend, init_val, "fori_loop's init_val")
    step = _CarryStep(backend, "fori_loop", "body_fun", lambda i, value: body_fun(i, value), carry)
    run = _FORI_LOOPS.get(backend.name, _fori_python)
    return carry.rebuild(list(run(backend, bounds[0], bounds[1], step, list(carry.leaves))))


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any) -> Any:
    """``val = body_fun(val)`` while ``cond_fun(val)`` is true; the last ``val``, as
    ``jax.lax.while_loop``. ``cond_fun`` returns a boolean scalar (a Python bool or a 0-d bool array).
    Reverse-mode gradients exist on torch and tensorflow, not on JAX (its limit; use ``scan`` or a
    ``fori_loop`` with Python-int bounds there)."""
    _callable("while_loop", cond_fun, "cond_fun")
    _callable("while_loop", body_fun, "body_fun")
    backend = backend_of_trees(init_val)
    carry = flatten(backend, init_val, "while_loop's init_val")
    step = _CarryStep(backend, "while_loop", "body_fun", lambda _, value: body_fun(value), carry)
    predicate = _Predicate(backend, "while_loop", cond_fun, carry)
    run = _WHILE_LOOPS.get(backend.name, _while_python)
    return carry.rebuild(list(run(backend, predicate, step, list(carry.leaves))))


# -- the bodies: user functions on native leaves, their outputs checked -------------------------------

class _ScanStep:
    """``f`` of ``scan`` on native leaves: ``(carry leaves, x leaves) -> (carry leaves, y leaves)``."""

    def __init__(self, backend: Backend, f: Callable[..., Any], carry: Flat, xs: Flat) -> None:
        self.backend, self.f, self.carry, self.xs = backend, f, carry, xs
        self.carry_specs = specs(backend, carry.leaves)
        self.ys: Flat | None = None
        self.ys_specs: list[Spec] = []
        # A carry that is one array (a recurrent layer's h) is checked without taking trees apart.
        self.one_leaf = len(carry.leaves) == 1 and carry.tree is carry.leaves[0]
        self.one_x = len(xs.leaves) == 1 and xs.tree is xs.leaves[0]

    def __call__(self, carry: Sequence[Any], x: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        out = self.f(carry[0] if self.one_leaf else self.carry.rebuild(list(carry)),
                     x[0] if self.one_x else self.xs.rebuild(list(x)))
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise ControlFlowError(f"scan: f(carry, x) returns a pair (carry, y); it returned {_kind(out)}.")
        if self.one_leaf and self.ys is not None and len(self.ys.leaves) == 1 and self.ys.tree is self.ys.leaves[0] \
                and _leaf_like(self.backend, out[0], self.carry_specs[0]) \
                and _leaf_like(self.backend, out[1], self.ys_specs[0]):
            return [out[0]], [out[1]]
        return self._checked(out)

    def _checked(self, out: Any) -> tuple[list[Any], list[Any]]:
        dtypes = [s.dtype for s in self.carry_specs]
        new = flatten(self.backend, out[0], "the carry f returned", dtypes)
        check_like("scan", "the carry f returned", self.carry, self.carry_specs, new,
                   specs(self.backend, new.leaves), "return a carry with init's structure, shapes and dtypes.")
        y = flatten(self.backend, out[1], "the y f returned")
        y_specs = specs(self.backend, y.leaves)
        if self.ys is None:
            self.ys, self.ys_specs = y, y_specs
        else:
            check_like("scan", "the y f returned", self.ys, self.ys_specs, y, y_specs,
                       "return ys of one structure, shape and dtype at every step.")
        return list(new.leaves), list(y.leaves)

    def rebuild_ys(self, backend: Backend, ys: list[Any], carry: Flat, xs: Flat) -> Any:
        if self.ys is None:  # no step ran (length 0 on a Python loop): learn the ys from one trial step
            self(carry.leaves, [_zeros(backend, s.shape[1:], s.dtype, leaf)
                                for s, leaf in zip(specs(backend, xs.leaves), xs.leaves, strict=True)])
        assert self.ys is not None
        return self.ys.rebuild(ys)


def _leaf_like(backend: Backend, value: Any, spec: Spec) -> bool:
    """Whether ``value`` is a native array of exactly ``spec``'s dtype and shape (the fast check of a
    one-array carry; anything else takes the full check and its error)."""
    return isinstance(value, backend.array_types) and backend.dtype_of(value) == spec.dtype \
        and tuple(value.shape) == spec.shape


class _CarryStep:
    """The body of ``fori_loop`` / ``while_loop`` on native leaves: ``(i, leaves) -> leaves``."""

    def __init__(self, backend: Backend, function: str, name: str, body: Callable[[Any, Any], Any],
                 carry: Flat) -> None:
        self.backend, self.function, self.name, self.body, self.carry = backend, function, name, body, carry
        self.carry_specs = specs(backend, carry.leaves)

    def __call__(self, i: Any, leaves: Sequence[Any]) -> list[Any]:
        out = self.body(i, self.carry.rebuild(list(leaves)))
        what = f"the value {self.name} returned"
        new = flatten(self.backend, out, what, [s.dtype for s in self.carry_specs])
        check_like(self.function, what, self.carry, self.carry_specs, new, specs(self.backend, new.leaves),
                   "return a value with init_val's structure, shapes and dtypes.")
        return list(new.leaves)


class _Predicate:
    """``cond_fun`` of ``while_loop`` on native leaves, its result checked to be a boolean scalar."""

    def __init__(self, backend: Backend, function: str, cond_fun: Callable[[Any], Any], carry: Flat) -> None:
        self.backend, self.function, self.cond_fun, self.carry = backend, function, cond_fun, carry

    def __call__(self, leaves: Sequence[Any]) -> Any:
        return boolean_scalar(self.backend, self.function, "cond_fun's result",
                              self.cond_fun(self.carry.rebuild(list(leaves))))


def boolean_scalar(backend: Backend, function: str, what: str, value: Any) -> Any:
    """``value`` as a native 0-d bool array; ControlFlowError unless it is one or a Python bool."""
    if isinstance(value, bool):
        return backend.asarray(value, Dtype("bool"))
    if isinstance(value, backend.array_types):
        dtype, shape = backend.dtype_of(value), tuple(value.shape)
        if dtype == "bool" and shape == ():
            return value
        raise ControlFlowError(f"{function}: {what} is a {dtype} array of shape {shape}; it must be a boolean "
                               f"scalar (reduce with arraylayer.all / any, or compare: x > 0).")
    raise ControlFlowError(f"{function}: {what} is {_kind(value)}; it must be a boolean scalar (a Python bool or "
                           f"a 0-d bool array of the {backend.name} backend).")


# -- scan on each backend ---------------------------------------------------------------------------

Runner = Callable[..., tuple[Sequence[Any], Sequence[Any]]]


def _scan_python(backend: Backend, step: _ScanStep, carry: list[Any], xs: list[Any], n: int, reverse: bool,
                 unroll: int | bool) -> tuple[list[Any], list[Any]]:
    if n == 0:
        return carry, _empty_ys(backend, step, carry, xs)
    ys: list[Any] = [None] * n
    slices = [unstack(x) for x in xs]  # one call per x (torch: one unbind, one node in the backward)
    for i in range(n - 1, -1, -1) if reverse else range(n):
        carry, ys[i] = step(carry, [x[i] for x in slices])
    return carry, [stack(list(column)) for column in zip(*ys, strict=True)]


def _scan_jax(backend: Backend, step: _ScanStep, carry: list[Any], xs: list[Any], n: int, reverse: bool,
              unroll: int | bool) -> tuple[Any, Any]:
    import jax

    return jax.lax.scan(step, carry, xs, length=n, reverse=reverse, unroll=unroll)


def _scan_tensorflow(backend: Backend, step: _ScanStep, carry: list[Any], xs: list[Any], n: int, reverse: bool,
                     unroll: int | bool) -> tuple[list[Any], list[Any]]:
    tf = backend.module
    if n == 0:
        return carry, _empty_ys(backend, step, carry, xs)
    first = n - 1 if reverse else 0
    carry, y0 = step(carry, [x[first] for x in xs])  # ahead of the loop: the ys' dtypes and shapes
    arrays = [tf.TensorArray(y.dtype, size=n, element_shape=y.shape).write(first, y) for y in y0]
    if n == 1:
        return carry, [a.stack() for a in arrays]

    def body(i: Any, carry: list[Any], arrays: list[Any]) -> tuple[Any, list[Any], list[Any]]:
        j = n - 1 - i if reverse else i
        carry, ys = step(carry, [tf.gather(x, j) for x in xs])
        return i + 1, carry, [a.write(j, y) for a, y in zip(arrays, ys, strict=True)]

    _, carry, arrays = tf.while_loop(lambda i, *_: i < n, body, (tf.constant(1), carry, arrays),
                                     maximum_iterations=n - 1)
    return list(carry), [a.stack() for a in arrays]


def _empty_ys(backend: Backend, step: _ScanStep, carry: list[Any], xs: list[Any]) -> list[Any]:
    """The ys of a scan of length 0: empty arrays of the shapes and dtypes one trial step gives."""
    x_specs = specs(backend, xs)
    _, y = step(carry, [_zeros(backend, s.shape[1:], s.dtype, x) for s, x in zip(x_specs, xs, strict=True)])
    return [expand_dims(leaf, axis=0)[0:0] for leaf in y]


def _zeros(backend: Backend, shape: tuple[int | None, ...], dtype: Dtype, like: Any) -> Any:
    from arraylayer.api.creation import zeros
    from arraylayer.api.interchange import dev
    from arraylayer.runtime.registry import use_backend

    with use_backend(backend.name):
        return zeros(tuple(d or 0 for d in shape), dtype=dtype, device=dev(like))


_SCANS: Final[dict[str, Runner]] = {"jax": _scan_jax, "tensorflow": _scan_tensorflow}


# -- fori_loop and while_loop on each backend ------------------------------------------------------

def _fori_python(backend: Backend, lower: Any, upper: Any, step: _CarryStep, carry: list[Any]) -> list[Any]:
    for i in range(int(lower), int(upper)):
        carry = step(backend.asarray(i, _INT32), carry)
    return carry


def _fori_jax(backend: Backend, lower: Any, upper: Any, step: _CarryStep, carry: list[Any]) -> Any:
    import jax
    import jax.numpy as jnp

    # convert_element_type makes the index a strong int32, as it is on the other backends
    return jax.lax.fori_loop(lower, upper, lambda i, c: step(jax.lax.convert_element_type(i, jnp.int32), c), carry)


def _fori_tensorflow(backend: Backend, lower: Any, upper: Any, step: _CarryStep, carry: list[Any]) -> Any:
    tf = backend.module
    static = isinstance(lower, int) and isinstance(upper, int)
    start = tf.constant(lower, tf.int32) if isinstance(lower, int) else tf.cast(lower, tf.int32)
    _, carry = tf.while_loop(lambda i, _: i < upper, lambda i, c: (i + 1, step(i, c)), (start, carry),
                             maximum_iterations=max(upper - lower, 0) if static else None)
    return carry


def _while_python(backend: Backend, predicate: _Predicate, step: _CarryStep, carry: list[Any]) -> list[Any]:
    while bool(predicate(carry)):
        carry = step(None, carry)
    return carry


def _while_jax(backend: Backend, predicate: _Predicate, step: _CarryStep, carry: list[Any]) -> Any:
    import jax

    return jax.lax.while_loop(predicate, lambda c: step(None, c), carry)


def _while_tensorflow(backend: Backend, predicate: _Predicate, step: _CarryStep, carry: list[Any]) -> Any:
    (carry,) = backend.module.while_loop(predicate, lambda c: (step(None, c),), (carry,))
    return carry


_FORI_LOOPS: Final[dict[str, Callable[..., Any]]] = {"jax": _fori_jax, "tensorflow": _fori_tensorflow}
_WHILE_LOOPS: Final[dict[str, Callable[..., Any]]] = {"jax": _while_jax, "tensorflow": _while_tensorflow}


# -- arguments -------------------------------------------------------------------------------------

def _callable(function: str, f: Any, name: str) -> None:
    if not callable(f):
        raise InvalidArgumentTypeError(f"{function}: {name} must be a function; got {_kind(f)}.")


def _flag(function: str, name: str, value: Any) -> None:
    if not isinstance(value, bool):
        raise InvalidArgumentTypeError(f"{function}: {name} is True or False; got {_kind(value)}.")


def _unroll(unroll: Any) -> None:
    if isinstance(unroll, bool):
        return
    if not isinstance(unroll, int) or unroll < 1:
        raise InvalidArgumentError(f"scan: unroll is a positive int or a bool (JAX's meaning); got {unroll!r:.60}.")


def _count(function: str, name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise InvalidArgumentTypeError(f"{function}: {name} is an int; got a bool.")
    try:
        count = operator.index(value)
    except TypeError:
        raise InvalidArgumentTypeError(f"{function}: {name} is an int; got {_kind(value)}.") from None
    return count


def _length(backend: Backend, xs: Flat, length: Any) -> int:
    """The number of steps: the common leading length of ``xs``' leaves, or ``length``."""
    given = None if length is None else _count("scan", "length", length)
    if given is not None and given < 0:
        raise InvalidArgumentError(f"scan: length is a count of steps, at least 0; got {given}.")
    lengths = {}
    for path, leaf in zip(tree_paths(xs.tree), xs.leaves, strict=True):
        name = repr(path_name(path)) if path else "xs"
        if len(leaf.shape) == 0:
            raise InvalidArgumentError(f"scan: xs leaf {name} is a 0-d array; xs are scanned along their leading "
                                       f"axis, so each leaf needs one.")
        lead = leaf.shape[0]
        if not isinstance(lead, int):
            raise InvalidArgumentError(f"scan: the leading length of xs leaf {name} is not known here (traced with "
                                       f"an unknown length); scan needs it: trace with a fixed length.")
        lengths[name] = lead
    if len(set(lengths.values())) > 1:
        raise InvalidArgumentError(f"scan: the leaves of xs have different leading lengths ({lengths}); they are "
                                   f"scanned together, so give them one.")
    found = next(iter(lengths.values()), None)
    if found is None and given is None:
        raise InvalidArgumentError("scan: with no xs, give length= (the number of steps).")
    if found is not None and given is not None and found != given:
        raise InvalidArgumentError(f"scan: length={given} but the leading length of xs is {found}.")
    return found if found is not None else given  # type: ignore[return-value]


def _bound(backend: Backend, bound: Any, name: str) -> Any:
    """A fori_loop bound: a Python int (also from a concrete integer array), or, on jax and
    tensorflow, a traced integer scalar."""
    if isinstance(bound, bool):
        raise InvalidArgumentTypeError(f"fori_loop: {name} is an int; got a bool.")
    if isinstance(bound, int):
        return bound
    if isinstance(bound, backend.array_types) and tuple(bound.shape) == () and backend.dtype_of(bound).is_integer:
        try:
            return operator.index(bound)
        except Exception:  # noqa: BLE001 - a traced bound (jax tracer, symbolic tf tensor)
            if backend.name in _FORI_LOOPS:
                return bound
            raise
    return _count("fori_loop", name, bound)


def _kind(value: Any) -> str:
    return f"{type(value).__name__} {value!r:.60}"


