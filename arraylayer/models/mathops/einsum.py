"""``einsum``: the framework's own einsum on operands promoted first by arraylayer's rule.

The result dtype is the operands' promoted dtype on every backend. What a framework has no kernel
for computes in a wider dtype and rounds (or wraps) back, so values agree too: bool as int32 sums
of products read back as "any product is True" (NumPy's bool einsum), integers narrower than 32 bits
in int32 and uint32/uint64 in int64 (integer arithmetic wraps modulo 2**bits, so the narrow result is
NumPy's), float16, bfloat16 and the low-precision floats in float32, rounded once. The subscripts
are checked here (one term per operand, one letter per axis, one size per letter), so a mistake is
an :class:`~arraylayer.errors.InvalidArgumentError` on every backend.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.api import data_types, elementwise
from arraylayer.api.dispatch import array_input, kernel
from arraylayer.dtypes import Dtype
from arraylayer.dtypes.promotion import result_type
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, UnsupportedOperationError
from arraylayer.runtime.registry import backend_of

Array = Any

__all__ = ["einsum"]

#: dtype -> the dtype its einsum computes in (missing: itself)
_COMPUTE: Final = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int32", "uint16": "int32",
                   "uint32": "int64", "uint64": "int64", "float16": "float32", "bfloat16": "float32"}
_LETTERS: Final = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _compute_dtype(dtype: Dtype) -> Dtype:
    if dtype.is_low_precision:
        return Dtype("float32" if dtype.category == "float" else "int32")
    return Dtype(_COMPUTE.get(dtype.name, dtype.name))


def _explicit(subscripts: str, shapes: list[tuple[int, ...]]) -> str:
    """``subscripts`` checked against the operands' shapes, with the output written out (implicit
    mode: the letters used once, alphabetically, after the broadcast axes)."""
    if not isinstance(subscripts, str):
        raise InvalidArgumentTypeError(f"einsum: subscripts must be a string such as 'ij,jk->ik'; got "
                                       f"{type(subscripts).__name__}.")
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise InvalidArgumentError(f"einsum: {subscripts!r} names {len(terms)} operand(s), got {len(shapes)}.")
    sizes: dict[str, int] = {}
    counts: dict[str, int] = {}
    for term, shape in zip(terms, shapes, strict=True):
        letters = term.replace("...", "")
        if not set(letters) <= _LETTERS or term.count("...") > 1 or "." in letters:
            raise InvalidArgumentError(f"einsum: {term!r} in {subscripts!r}: use letters and at most one '...'.")
        if len(letters) > len(shape) or ("..." not in term and len(letters) != len(shape)):
            raise InvalidArgumentError(f"einsum: {term!r} names {len(letters)} axes for an operand of shape {shape}.")
        labelled = shape[:term.index("...")] + shape[len(shape) - (len(term) - term.index("...") - 3):] \
            if "..." in term else shape
        for letter, size in zip(letters, labelled, strict=True):
            if sizes.setdefault(letter, size) != size:
                raise InvalidArgumentError(f"einsum: {letter!r} is an axis of size {sizes[letter]} and of size "
                                           f"{size} in {subscripts!r}.")
            counts[letter] = counts.get(letter, 0) + 1
    if not arrow:
        output = ("..." if "..." in inputs else "") + "".join(sorted(k for k, c in counts.items() if c == 1))
    letters = output.replace("...", "")
    if not set(letters) <= set(sizes) or len(set(letters)) != len(letters) or output.count("...") > 1 or \
            ("..." in output and "..." not in inputs):
        raise InvalidArgumentError(f"einsum: the output {output!r} of {subscripts!r} must name each input letter at "
                                   f"most once (and '...' only if the inputs have it).")
    return f"{inputs}->{output}"


def einsum(subscripts: str, /, *operands: Array) -> Array:
    """Einstein summation over ``operands`` as ``subscripts`` says ('ij,jk->ik', 'ii', '...ij->...ji'),
    in the operands' promoted dtype (NumPy's einsum with arraylayer's promotion)."""
    if not operands:
        raise InvalidArgumentError("einsum needs at least one operand.")
    backend = backend_of(*operands)
    arrays = [array_input(x)[1] if not isinstance(x, backend.array_types) else x for x in operands]
    spec = _explicit(subscripts, [tuple(a.shape) for a in arrays])
    dtype = result_type(*operands)
    compute = _compute_dtype(dtype)
    if dtype.category in ("int", "uint") and compute != dtype and compute not in backend.valid_dtypes():
        compute = dtype  # (jax without x64 holds no int64: integer sums wrap alike in the dtype itself)
    kernel(backend, "tensordot", compute)  # the dtype check: UnsupportedDtypeError where it cannot compute
    kernels = backend.nn_kernels
    if kernels is None or not hasattr(kernels, "einsum"):
        raise UnsupportedOperationError(f"einsum has no kernel for the {backend.name} backend; move the arrays to "
                                        f"numpy, jax, torch, tensorflow or dask first (arraylayer.to_backend).")
    result = kernels.einsum(spec, *(data_types.astype(a, compute, copy=False) for a in arrays))
    if dtype.category == "bool":
        return elementwise.not_equal(result, 0)
    # (dask sums its blocks' int32 products in int64: the cast back wraps as NumPy's einsum does)
    return result if backend.dtype_of(result) == dtype else data_types.astype(result, dtype)
