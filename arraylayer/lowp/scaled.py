"""Scaled low precision, the way float8 is used: quantize with an amax-based scale, dequantize,
and a matmul of two quantized arrays that accumulates in float32.

The scale: ``scale = amax * (1 / format.max)`` (the reciprocal rounded to float32) where ``amax`` is the largest ``|x|`` (of the whole array,
or, with ``axis``, of each slice along ``axis``: one scale per index of that axis, the other axes
reduced and kept with size 1), and 1 where ``amax`` is 0. ``x / scale`` then spans the format's
range, and the cast saturates (``saturate=True``): a value that rounds beyond the largest finite
value keeps the largest one. Dequantizing multiplies the decoded values by the scale.

``scaled_matmul(a, a_scale, b, b_scale)`` decodes both operands to float32 (exact), multiplies them
with the framework's float32 matmul and scales the result: ``(a @ b) * a_scale * b_scale``. The
scales may be per tensor, per row of ``a`` (shape ``(M, 1)``) and per column of ``b`` (``(1, N)``):
scales along the contracted axis do not factor out of the sum and are refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from arraylayer.errors import InvalidArgumentError
from arraylayer.lowp._ops import ops_of
from arraylayer.lowp.casts import _unwrap, _wrap, cast, decode
from arraylayer.lowp.formats import Format, get_format

__all__ = ["amax_scale", "quantize", "dequantize", "scaled_matmul"]


def amax_scale(x: Any, format: str | Format, axis: int | None = None) -> Any:
    """``amax * (1 / format.max)`` (1 where amax is 0), per tensor or per index of ``axis`` (kept dims)."""
    f = get_format(format)
    x, wrapped = _unwrap(x)
    ops = ops_of(x)
    ndim = len(x.shape)
    if axis is not None and not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"axis={axis} is out of range for an array of {ndim} dimensions.")
    reduced = None if axis is None else tuple(i for i in range(ndim) if i != axis % ndim)
    amax = ops.amax(x, reduced, axis is not None)
    # times the reciprocal (rounded once to float32), not a division: XLA rewrites a division by a
    # constant into that product, so this is the form every backend computes with the same bits
    reciprocal = float(np.float32(1 / f.max))
    return _wrap(ops.where(amax > 0, amax * reciprocal, amax * 0 + 1), wrapped)


def quantize(x: Any, format: str | Format, *, axis: int | None = None, scale: Any = None,
             saturate: bool = True) -> tuple[Any, Any]:
    """``(q, scale)``: ``x / scale`` cast to ``format`` (the framework's own dtype where it stores the
    format, else uint8 codes), with ``scale`` from :func:`amax_scale` unless given."""
    f = get_format(format)
    if scale is None:
        scale = amax_scale(x, f, axis)
    x, wrapped = _unwrap(x)
    scale_native, _ = _unwrap(scale)
    return _wrap(cast(x / scale_native, f, saturate=saturate), wrapped), scale


def dequantize(q: Any, scale: Any, format: str | Format | None = None, dtype: str = "float32") -> Any:
    """``decode(q, format) * scale`` in ``dtype``."""
    q, wrapped = _unwrap(q)
    scale, _ = _unwrap(scale)
    return _wrap(decode(q, format, dtype) * scale, wrapped)


def scaled_matmul(a: Any, a_scale: Any, b: Any, b_scale: Any, format_a: str | Format | None = None,
                  format_b: str | Format | None = None) -> Any:
    """``(decode(a) @ decode(b)) * a_scale * b_scale``, accumulated in float32 (2-D operands)."""
    a, wrapped = _unwrap(a)
    b, _ = _unwrap(b)
    a_scale, _ = _unwrap(a_scale)
    b_scale, _ = _unwrap(b_scale)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise InvalidArgumentError(f"scaled_matmul takes 2-D operands, not shapes {tuple(a.shape)} and {tuple(b.shape)}.")
    _check_scale(a_scale, (a.shape[0], 1), "a_scale", "per row of a")
    _check_scale(b_scale, (1, b.shape[1]), "b_scale", "per column of b")
    left, right = decode(a, format_a), decode(b, format_b)
    return _wrap(ops_of(left).matmul(left, right) * a_scale * b_scale, wrapped)


def _check_scale(scale: Any, allowed: tuple[int, int], name: str, what: str) -> None:
    shape = tuple(getattr(scale, "shape", ()))
    if shape not in ((), (1,), (1, 1), allowed):
        raise InvalidArgumentError(
            f"{name} has shape {shape}: a scale is per tensor (shape () or (1, 1)) or {what} "
            f"(shape {allowed}); a scale along the contracted axis does not factor out of the sum."
        )
