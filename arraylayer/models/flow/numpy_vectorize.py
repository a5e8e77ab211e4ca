"""``vectorize``: NumPy's ``np.vectorize`` interface (keras.ops' ``vectorize``) over :func:`vmap`.

``vectorize(f)(x, y)`` broadcasts x and y and applies ``f`` to each pair of elements (0-d arrays);
with ``signature="(m,n),(n)->(m)"`` ``f`` takes each argument's last axes as named there (its core
axes) and the leading axes are broadcast and looped over. The loop is :func:`vmap` over one flat
axis: ``jax.vmap``, ``torch.func.vmap`` or ``tf.vectorized_map``, a Python loop on NumPy and dask. So
``f`` must be traceable as for ``vmap`` (no Python ``if`` on the values on jax, torch and
tensorflow), and the result has the shape NumPy's vectorize gives, on every backend (arraylayer.Array
arguments: pyfunc sees Arrays and Arrays come back, as from ``vmap``). ``excluded``
names the positional indices and keywords passed to ``f`` as they are; the other keywords are
vectorized like the positional arguments, as NumPy does.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.dispatch import WRAPPERS
from arraylayer.api.manipulation import broadcast_to, reshape
from arraylayer.dtypes.inference import infer_dtype_unchecked
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.flow.loops import _callable
from arraylayer.models.flow.vectorize import vmap
from arraylayer.runtime.registry import backend_of

__all__ = ["vectorize"]

_CORE: Final = re.compile(r"\(\s*(?:\w+\s*(?:,\s*\w+\s*)*)?\)")
_SIGNATURE: Final = re.compile(rf"^\s*{_CORE.pattern}\s*(?:,\s*{_CORE.pattern}\s*)*->\s*{_CORE.pattern}\s*"
                               rf"(?:,\s*{_CORE.pattern}\s*)*$")

Core = tuple[str, ...]


def _parse_signature(signature: Any) -> tuple[list[Core], list[Core]] | None:
    """``"(m,n),(n)->(m)"`` as ([("m", "n"), ("n",)], [("m",)]); None for no signature."""
    if signature is None:
        return None
    if not isinstance(signature, str) or not _SIGNATURE.match(signature):
        raise InvalidArgumentError(f"vectorize: signature={signature!r} is not a generalized ufunc signature such as "
                                   f"'(m,n),(n)->(m)' or '(),()->()'.")
    inputs, outputs = signature.split("->")

    def cores(text: str) -> list[Core]:
        return [tuple(d.strip() for d in part.split(",") if d.strip()) for part in re.findall(r"\(([^)]*)\)", text)]

    return cores(inputs), cores(outputs)


def vectorize(pyfunc: Callable[..., Any], *, excluded: Iterable[int | str] | None = None,
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` vectorized as ``np.vectorize(pyfunc, excluded=..., signature=...)`` does, on the
    arguments' backend (the loop is :func:`arraylayer.vmap`)."""
    _callable("vectorize", pyfunc, "pyfunc")
    skipped = _excluded(excluded)
    parsed = _parse_signature(signature)

    @functools.wraps(pyfunc)
    def vectorized(*args: Any, **kwargs: Any) -> Any:
        mapped = [i for i in range(len(args)) if i not in skipped]
        names = [k for k in kwargs if k not in skipped]
        values = [args[i] for i in mapped] + [kwargs[k] for k in names]
        # arraylayer.Array arguments: the loop runs on their natives, pyfunc sees Arrays, Arrays come back
        pair = next((WRAPPERS[type(v)] for v in values if type(v) in WRAPPERS), None)
        unwrap, wrap = pair if pair is not None else (None, None)

        def native(x: Any) -> Any:
            return unwrap(x) if unwrap is not None and type(x) in WRAPPERS else x

        def call(*inner: Any) -> Any:
            inner = tuple(inner) if wrap is None else tuple(wrap(v) for v in inner)
            full = list(args)
            for i, value in zip(mapped, inner, strict=False):
                full[i] = value
            given = dict(kwargs)
            given.update(zip(names, inner[len(mapped):], strict=True))
            out = pyfunc(*full, **given)
            return tuple(native(o) for o in out) if isinstance(out, tuple) else native(out)

        result = _apply(call, [native(v) for v in values], parsed)
        if wrap is None:
            return result
        return tuple(wrap(r) for r in result) if isinstance(result, tuple) else wrap(result)

    return vectorized


def _excluded(excluded: Any) -> frozenset[int | str]:
    """``excluded`` as a set of positional indices and keyword names (NumPy's), checked."""
    if excluded is None:
        return frozenset()
    items = list(excluded) if isinstance(excluded, (set, frozenset, list, tuple)) else None
    if items is None or any(not isinstance(e, (int, str)) or isinstance(e, bool) for e in items):
        raise InvalidArgumentTypeError(f"vectorize: excluded is a set of positional indices (int) and keyword names "
                                       f"(str), such as {{1, 'axis'}}; got {excluded!r}.")
    return frozenset(items)


def _apply(call: Callable[..., Any], values: list[Any], parsed: tuple[list[Core], list[Core]] | None) -> Any:
    if not values:
        raise InvalidArgumentError("vectorize: the function was called with no argument to vectorize (every "
                                   "argument is excluded); call pyfunc itself.")
    backend = backend_of(*values)
    arrays = [v if isinstance(v, backend.array_types) else backend.asarray(v, infer_dtype_unchecked(None, v))
              for v in values]
    in_cores, out_cores = parsed if parsed is not None else ([()] * len(arrays), None)
    if len(in_cores) != len(arrays):
        raise InvalidArgumentError(f"vectorize: the signature names {len(in_cores)} input(s); the function was "
                                   f"called with {len(arrays)} vectorized argument(s).")
    sizes: dict[str, int] = {}
    loops = []
    for position, (x, core) in enumerate(zip(arrays, in_cores, strict=True)):
        shape = tuple(int(s) for s in x.shape)
        if len(shape) < len(core):
            raise InvalidArgumentError(f"vectorize: argument {position} has {len(shape)} dimension(s); its core "
                                       f"({','.join(core)}) needs at least {len(core)}.")
        for name, size in zip(core, shape[len(shape) - len(core):], strict=True):
            if sizes.setdefault(name, size) != size:
                raise InvalidArgumentError(f"vectorize: the core dimension {name} has length {sizes[name]} and "
                                           f"{size} in different arguments; give it one length.")
        loops.append(shape[:len(shape) - len(core)])
    loop = arguments.broadcast_shapes(*loops)
    count = math.prod(loop)
    if count == 0:
        raise InvalidArgumentError(f"vectorize: the broadcast loop shape {loop} is empty: there is no element to "
                                   f"call pyfunc on (and so no result dtype); skip the call for empty inputs.")
    flat = [reshape(broadcast_to(x, loop + shape[len(shape) - len(core):]), (count, *shape[len(shape) - len(core):]))
            for x, core, shape in ((x, c, tuple(int(s) for s in x.shape)) for x, c in zip(arrays, in_cores, strict=True))]
    out = vmap(call)(*flat)
    single = not isinstance(out, tuple)
    results = (out,) if single else out
    out_cores = [()] * len(results) if out_cores is None else out_cores  # no signature: elements in, elements out
    if len(results) != len(out_cores):
        raise InvalidArgumentError(f"vectorize: pyfunc returned {len(results)} output(s); the signature names "
                                   f"{len(out_cores)}.")
    shaped = []
    for result, core in zip(results, out_cores, strict=True):
        if not isinstance(result, backend.array_types) or len(result.shape) != 1 + len(core):
            per_element = len(result.shape) - 1 if hasattr(result, "shape") else "no"
            raise InvalidArgumentError(f"vectorize: pyfunc's output has {per_element} dimension(s) per element; the "
                                       f"signature's core ({','.join(core)}) has {len(core)}.")
        for name, size in zip(core, (int(s) for s in result.shape[1:]), strict=True):
            if sizes.setdefault(name, size) != size:
                raise InvalidArgumentError(f"vectorize: the output's core dimension {name} has length {size}; the "
                                           f"inputs gave it {sizes[name]}.")
        shaped.append(reshape(result, loop + tuple(int(s) for s in result.shape[1:])))
    return shaped[0] if single else tuple(shaped)
