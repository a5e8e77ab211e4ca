"""Functions models need beyond the Array API: activations, softmax and losses, normalisation,
dropout, convolution, pooling and embeddings, with one dtype semantics on every backend.

Everything but convolution, pooling and ``erf`` is composed of arraylayer's own functions, so
promotion, weak Python scalars, errors and gradients are those of the rest of arraylayer
(``al.grad`` differentiates them on JAX, PyTorch and TensorFlow). Convolution and pooling call
each framework's own operation (``arraylayer/kernels/<backend>/nn.py``; dask runs NumPy's lazily,
per block of whole images), after arraylayer has checked the arguments and resolved the padding
to explicit pairs (TensorFlow's ``"SAME"`` arithmetic on every backend).

Inputs are native arrays of any backend or ``arraylayer.Array``; results are of the same kind.
Floating functions take floating inputs: an integer array raises ``InvalidDtypeError`` (no
silent conversion to a float of the caller's choosing).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Final

from . import dropout_masks, fused, random
from .api import arguments, statistical
from .api.creation import arange, ones_like
from .api.data_types import astype
from .api.dispatch import WRAPPERS
from .api.elementwise import (
    add,
    divide,
    equal,
    exp,
    isfinite,
    log,
    logaddexp,
    logical_and,
    maximum,
    multiply,
    negative,
    not_equal,
    sqrt,
    square,
    subtract,
    tanh,
)
from .api.indexing import take
from .api.manipulation import expand_dims, moveaxis, reshape, squeeze
from .api.searching import where
from .defaults import default_float_dtype
from .dtypes import Dtype, as_dtype
from .errors import InvalidArgumentError, InvalidDtypeError, UnsupportedOperationError
from .interchange import dev
from .promotion import result_type
from .registry import backend_of, current_backend, use_backend

__all__ = [
    "relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "logsumexp", "one_hot",
    "cross_entropy", "mse", "layer_norm", "dropout", "conv2d", "max_pool2d", "avg_pool2d", "embedding",
    "dot_product_attention",
]

_REDUCTIONS: Final = ("mean", "sum", "none")
_LAYOUTS: Final = {"NHWC": True, "NCHW": False}  # data format -> channels last
_SQRT_2_OVER_PI: Final = math.sqrt(2.0 / math.pi)
#: the dtypes the frameworks' fused cross-entropies compute in their own dtype (half precision is
#: composed, with arraylayer's promotion, on every backend alike)
_FUSED_DTYPES: Final = (Dtype("float32"), Dtype("float64"))


# -- helpers ---------------------------------------------------------------------------------------------
def _floating(x: Any, function: str) -> Dtype:
    """x's dtype, which must be real floating."""
    dtype = as_dtype(x.dtype)
    if dtype.category != "float":
        raise InvalidDtypeError(f"nn.{function} takes real floating arrays; got {dtype}. Cast first, e.g. "
                                f"arraylayer.astype(x, 'float32').")
    return dtype


def _native(x: Any) -> tuple[Any, Any]:
    """(native array, rewrap): an arraylayer.Array is unwrapped, and its result wrapped back."""
    pair = WRAPPERS.get(type(x))
    if pair is None:
        return x, lambda y: y
    return pair[0](x), pair[1]


def _kernels(x: Any) -> Any:
    """The backend's nn kernel module (``arraylayer/kernels/<backend>/nn.py``)."""
    backend = backend_of(x)
    if backend.nn_kernels is None:
        raise UnsupportedOperationError(
            f"arraylayer.nn has no convolution, pooling or erf for the {backend.name} backend; move the arrays "
            f"to numpy, jax, torch or tensorflow first (arraylayer.to_backend(x, 'numpy'))."
        )
    return backend.nn_kernels


def _fused(native: Any, dtype: Dtype, name: str) -> Any:
    """The backend's fused kernel ``name`` (arraylayer/fused.py) for a float32/float64 native
    array, or None: half precision and backends without one keep the composed form."""
    if dtype not in _FUSED_DTYPES or 0 in tuple(native.shape):
        return None
    return fused.table(backend_of(native).name).get(name)


def _fused_along(x: Any, dtype: Dtype, name: str, axis: Any) -> Any:
    """softmax/log_softmax of x along one int ``axis`` by the fused kernel; None where there is none."""
    native, rewrap = _native(x)
    kernel = _fused(native, dtype, name)
    if kernel is None or type(axis) is not int:  # tuples of axes (and bools) keep the composed form
        return None
    return rewrap(kernel(native, arguments.axis(axis, native.ndim)))


def _creating_on(x: Any) -> Any:
    """A scope in which arraylayer creates arrays on x's backend: none when that backend is the
    active one already (no scope to enter and leave, which under torch.compile is a trace-time
    call; see ``context.Setting.scope``)."""
    name = backend_of(x).name
    return contextlib.nullcontext() if current_backend() == name else use_backend(name)


def _device(x: Any) -> Any:
    """x's device, for arrays made beside it (a CUDA label tensor needs CUDA classes); None (the
    default device) where a tracer cannot tell (jax.jit)."""
    try:
        return dev(x)
    except Exception:  # noqa: BLE001 - a tracer without a device
        return None


def _reduce(losses: Any, reduction: str, function: str) -> Any:
    if reduction not in _REDUCTIONS:
        raise InvalidArgumentError(f"nn.{function}(reduction={reduction!r}): choose one of {', '.join(_REDUCTIONS)}.")
    if reduction == "mean":
        return statistical.mean(losses)
    return statistical.sum(losses) if reduction == "sum" else losses


# -- activations -------------------------------------------------------------------------------------------
def relu(x: Any) -> Any:
    """max(x, 0), through the framework's own relu (fused by its compiler). Its gradient at 0 is 0,
    as every framework defines relu's (``arraylayer.maximum(x, 0.0)`` has 0.5 there: the convention
    of ``maximum`` at ties, docs/autodiff.rst)."""
    _floating(x, "relu")
    native, rewrap = _native(x)
    kernels = backend_of(native).nn_kernels
    return rewrap(maximum(native, 0.0) if kernels is None else kernels.relu(native))


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)) through the framework's own sigmoid (JAX's, torch's and TensorFlow's are
    stable and keep the lower tail's relative precision; NumPy's is written from exp(-|x|)): no
    overflow or NaN at any x, nor in its gradient, and sigmoid(-20) = 2e-9 rather than the 0 that
    (1 + tanh(x / 2)) / 2 rounds it to in float32. Composed as exp(-softplus(-x)) on other backends."""
    _floating(x, "sigmoid")
    native, rewrap = _native(x)
    kernels = backend_of(native).nn_kernels
    if kernels is None:
        return rewrap(exp(negative(logaddexp(negative(native), 0.0))))
    return rewrap(kernels.sigmoid(native))


def silu(x: Any) -> Any:
    """x * sigmoid(x) (also called swish)."""
    return multiply(x, sigmoid(x))


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), as logaddexp(x, 0): exact for large |x|."""
    _floating(x, "softplus")
    return logaddexp(x, 0.0)


def gelu(x: Any, approximate: bool = False) -> Any:
    """x * Phi(x): exact with erf, or with ``approximate=True`` the tanh form
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    dtype = _floating(x, "gelu")
    approximate = arguments.flag(approximate, "approximate")
    native, rewrap = _native(x)
    kernel = _fused(native, dtype, "gelu")
    if kernel is not None:
        return rewrap(kernel(native, approximate))
    if approximate:
        inner = multiply(add(x, multiply(multiply(square(x), x), 0.044715)), _SQRT_2_OVER_PI)
        return multiply(multiply(x, 0.5), add(tanh(inner), 1.0))
    erf = _kernels(native).erf(multiply(native, 1.0 / math.sqrt(2.0)))
    return rewrap(multiply(multiply(native, 0.5), add(erf, 1.0)))


# -- softmax and its family ---------------------------------------------------------------------------------
def logsumexp(x: Any, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) over ``axis``, shifted by the maximum: finite for logits of any size
    (an all -inf slice gives -inf, a +inf gives +inf)."""
    _floating(x, "logsumexp")
    peak = statistical.max(x, axis=axis, keepdims=True)
    shift = where(isfinite(peak), peak, 0.0)
    total = log(statistical.sum(exp(subtract(x, shift)), axis=axis, keepdims=True))
    result = add(total, shift)
    return result if keepdims else squeeze(result, axis=_axes(axis, result.ndim))


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    return (axis,) if isinstance(axis, int) else tuple(axis)


def log_softmax(x: Any, axis: int = -1) -> Any:
    """(x - max) - log(sum(exp(x - max))) along ``axis``: log-probabilities, stable for logits of any
    size. Not x - logsumexp(x): logsumexp rounded in the input's dtype loses the small log-sum when
    the logits are large (bfloat16 rounds 100 + log 2 to 100.5, which would make log(1/2) -0.5)."""
    dtype = _floating(x, "log_softmax")
    result = _fused_along(x, dtype, "log_softmax", axis)
    if result is not None:
        return result
    peak = statistical.max(x, axis=axis, keepdims=True)
    shifted = subtract(x, where(isfinite(peak), peak, 0.0))
    return subtract(shifted, log(statistical.sum(exp(shifted), axis=axis, keepdims=True)))


def softmax(x: Any, axis: int = -1) -> Any:
    """exp(x) / sum(exp(x)) along ``axis``, shifted by the maximum (no overflow at logits of 100)."""
    dtype = _floating(x, "softmax")
    result = _fused_along(x, dtype, "softmax", axis)
    if result is not None:
        return result
    shifted = exp(subtract(x, statistical.max(x, axis=axis, keepdims=True)))
    return divide(shifted, statistical.sum(shifted, axis=axis, keepdims=True))


def one_hot(labels: Any, num_classes: int, dtype: Any = None) -> Any:
    """A trailing axis of ``num_classes`` with 1 at each label (integer labels; others get all 0).
    ``dtype``: None is the default float dtype."""
    kind = as_dtype(labels.dtype)
    if kind.category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.one_hot takes integer labels; got {kind}.")
    count = arguments.count(num_classes, "num_classes")
    if count == 0:
        raise InvalidArgumentError("nn.one_hot(num_classes=0): there must be at least one class.")
    native, rewrap = _native(labels)
    with _creating_on(native):
        classes = arange(count, dtype=kind, device=_device(native))
    hits = equal(expand_dims(native, axis=-1), classes)
    return rewrap(astype(hits, default_float_dtype() if dtype is None else dtype))


# -- losses -----------------------------------------------------------------------------------------------------
def cross_entropy(logits: Any, labels: Any, axis: int = -1, reduction: str = "mean", *,
                  ignore_index: int | None = None, mask: Any = None, label_smoothing: float = 0.0) -> Any:
    """Softmax cross-entropy from ``logits`` and integer class ``labels`` (the logits' shape without
    ``axis``): -log_softmax(logits)[label], then reduced (``reduction``: "mean", "sum", "none").

    ``label_smoothing`` e in [0, 1] takes the target (1 - e) one_hot + e / classes (torch's and
    optax's definition). Entries whose label is ``ignore_index``, or where the boolean ``mask`` (the
    labels' shape) is False, count for nothing: their loss is 0 and "mean" is over the counted
    entries only (0 when none is counted; torch gives NaN there)."""
    dtype = _floating(logits, "cross_entropy")
    axis = arguments.axis(axis, logits.ndim)
    classes = int(logits.shape[axis])
    if tuple(labels.shape) != tuple(logits.shape[:axis]) + tuple(logits.shape[axis + 1:]):
        raise InvalidArgumentError(f"nn.cross_entropy: labels of shape {tuple(labels.shape)} do not match logits of "
                                   f"shape {tuple(logits.shape)} without axis {axis}.")
    if reduction not in _REDUCTIONS:
        raise InvalidArgumentError(f"nn.cross_entropy(reduction={reduction!r}): choose one of {', '.join(_REDUCTIONS)}.")
    smoothing = float(arguments.real_scalar(label_smoothing, "label_smoothing"))
    if not 0.0 <= smoothing <= 1.0:
        raise InvalidArgumentError(f"nn.cross_entropy(label_smoothing={label_smoothing}): it must lie in [0, 1].")
    labels, counted = _counted(labels, ignore_index, mask)
    labels = _labels_in_range(labels, classes)
    moved = moveaxis(logits, axis, -1) if axis != logits.ndim - 1 else logits
    fused = getattr(backend_of(logits).nn_kernels, "softmax_cross_entropy", None)
    if fused is not None and moved.ndim == 2 and dtype in _FUSED_DTYPES and smoothing == 0.0:  # one op
        native, rewrap = _native(moved)
        losses = rewrap(fused(native, _native(labels)[0]))
    else:
        log_p = log_softmax(moved, axis=-1)
        losses = negative(statistical.sum(multiply(log_p, one_hot(labels, classes, dtype)), axis=-1))
        if smoothing:  # (1 - e) * nll + e * the mean over classes of -log p
            uniform = negative(statistical.mean(log_p, axis=-1))
            losses = add(multiply(losses, 1.0 - smoothing), multiply(uniform, smoothing))
    if counted is None:
        return _reduce(losses, reduction, "cross_entropy")
    losses = where(counted, losses, 0.0)
    if reduction != "mean":
        return _reduce(losses, reduction, "cross_entropy")
    count = maximum(statistical.sum(astype(counted, dtype)), 1.0)
    return statistical.sum(divide(losses, count))  # a 0-d array (NumPy's divide of two 0-d arrays gives a scalar)


def _counted(labels: Any, ignore_index: Any, mask: Any) -> tuple[Any, Any]:
    """(labels with ignored entries replaced by class 0, the boolean array of counted entries or
    None when every entry counts)."""
    counted = None
    if ignore_index is not None:
        if isinstance(ignore_index, bool) or not isinstance(ignore_index, int):
            raise InvalidArgumentError(f"nn.cross_entropy(ignore_index={ignore_index!r}): pass an int label "
                                       f"(e.g. -100) or None.")
        if as_dtype(labels.dtype).category not in ("int", "uint"):
            raise InvalidDtypeError(f"nn.cross_entropy takes integer class labels; got {as_dtype(labels.dtype)}.")
        counted = not_equal(labels, ignore_index)
        labels = where(counted, labels, 0)
    if mask is not None:
        if not hasattr(mask, "dtype") or as_dtype(mask.dtype).category != "bool" or tuple(mask.shape) != tuple(labels.shape):
            raise InvalidArgumentError(f"nn.cross_entropy(mask=...): the mask must be a boolean array of the labels' "
                                       f"shape {tuple(labels.shape)}; got {getattr(mask, 'dtype', type(mask))} of shape "
                                       f"{tuple(getattr(mask, 'shape', ()))}.")
        counted = mask if counted is None else logical_and(counted, mask)
    return labels, counted


def _labels_in_range(labels: Any, classes: int) -> Any:
    """``labels``, checked: InvalidDtypeError for non-integer labels; InvalidArgumentError for a
    label outside [0, classes), now where the values are known, when computed on dask (the
    returned labels raise it then), not inside a compiler's trace (a silent loss of 0 or a
    framework's own error there)."""
    kind = as_dtype(labels.dtype)
    if kind.category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.cross_entropy takes integer class labels; got {kind}.")
    return _in_range(labels, classes, _label_error)


def _label_error(bad: int, classes: int) -> InvalidArgumentError:
    return InvalidArgumentError(f"nn.cross_entropy: label {bad} is not a class of the {classes} logits "
                                f"per row; labels must lie in [0, {classes}).")


def _id_error(bad: int, rows: int) -> InvalidArgumentError:
    return InvalidArgumentError(f"nn.embedding: id {bad} is not a row of the table of {rows} rows; "
                                f"ids must lie in [0, {rows}).")


def _in_range(indices: Any, length: int, error: Callable[[int, int], Exception]) -> Any:
    """``indices``, whose values must lie in [0, length): ``error(bad, length)`` is raised now where
    the values are known; lazy indices (dask) come back checked per chunk when the graph runs
    (the kernels' ``checked``); traced ones are returned unchecked."""
    native, rewrap = _native(indices)
    kernels = backend_of(native).nn_kernels
    check = functools.partial(_check_range, length=length, error=error)
    values = None if kernels is None else kernels.concrete(native)
    if values is not None:
        check(values)
        return indices
    lazy = getattr(kernels, "checked", None)
    return indices if lazy is None or 0 in tuple(native.shape) else rewrap(lazy(native, check))


def _check_range(values: Any, *, length: int, error: Callable[[int, int], Exception]) -> Any:
    """``values`` (a NumPy array); ``error(bad, length)`` for one outside [0, length)."""
    if values.size:
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= length:
            raise error(low if low < 0 else high, length)
    return values


def mse(predictions: Any, targets: Any, reduction: str = "mean") -> Any:
    """Mean squared error (``reduction``: "mean", "sum" or "none" for the element-wise squares)."""
    _floating(predictions, "mse")
    return _reduce(square(subtract(predictions, targets)), reduction, "mse")


# -- normalisation, dropout, embedding ---------------------------------------------------------------------
def layer_norm(x: Any, scale: Any = None, offset: Any = None, axis: int | tuple[int, ...] = -1,
               eps: float = 1e-5) -> Any:
    """(x - mean) / sqrt(var + eps) over ``axis``, then ``* scale + offset`` when given."""
    dtype = _floating(x, "layer_norm")
    if not arguments.real_scalar(eps, "eps") >= 0:
        raise InvalidArgumentError(f"nn.layer_norm(eps={eps}): eps must be >= 0 (it keeps the division away from 0).")
    native, rewrap = _native(x)
    kernel = _fused(native, dtype, "layer_norm")
    trailing = None if kernel is None else _trailing(axis, native.ndim)
    if trailing is not None:
        shape = tuple(native.shape[native.ndim - trailing:])
        backend = backend_of(native)
        if _fits(scale, backend, dtype, shape) and _fits(offset, backend, dtype, shape):
            return rewrap(kernel(native, trailing, float(eps), _native(scale)[0], _native(offset)[0]))
        y = rewrap(kernel(native, trailing, float(eps), None, None))
        y = y if scale is None else multiply(y, scale)
        return y if offset is None else add(y, offset)
    mean = statistical.mean(x, axis=axis, keepdims=True)
    centred = subtract(x, mean)
    variance = statistical.mean(square(centred), axis=axis, keepdims=True)
    y = divide(centred, sqrt(add(variance, eps)))
    if scale is not None:
        y = multiply(y, scale)
    return y if offset is None else add(y, offset)


def _trailing(axis: Any, ndim: int) -> int | None:
    """k when ``axis`` names the last k axes (in any order), else None."""
    axes = arguments.axes(axis, ndim)
    axes = (axes,) if type(axes) is int else axes
    return len(axes) if axes and sorted(axes) == list(range(ndim - len(axes), ndim)) else None


def _fits(p: Any, backend: Any, dtype: Dtype, shape: tuple[int, ...]) -> bool:
    """Whether layer_norm's ``scale``/``offset`` p can go into the fused kernel: None, or an array of
    x's backend and dtype of exactly the normalised axes' shape (anything else is broadcast and
    promoted by arraylayer after the kernel)."""
    if p is None:
        return True
    native = _native(p)[0]
    return (hasattr(native, "dtype") and tuple(getattr(native, "shape", ())) == shape
            and backend_of(native) is backend and as_dtype(native.dtype) == dtype)


def dropout(key: Any, x: Any, rate: float, training: bool = True) -> Any:
    """Inverted dropout: each element zeroed with probability ``rate`` (drawn from ``key``, so the same
    key drops the same elements on every backend), the others scaled by 1 / (1 - rate). Identity when
    ``training`` is False or ``rate`` is 0."""
    _floating(x, "dropout")
    rate = arguments.real_scalar(rate, "rate")
    if not 0.0 <= rate < 1.0:
        raise InvalidArgumentError(f"nn.dropout(rate={rate}): the rate must lie in [0, 1).")
    if not arguments.flag(training, "training") or rate == 0.0:
        return x
    native, rewrap = _native(x)
    keep = dropout_masks.keep(backend_of(native).name, _native(key)[0], native, 1.0 - rate)
    if keep is None:
        with _creating_on(native):
            keep = random.bernoulli(key, 1.0 - rate, tuple(native.shape))
    return rewrap(where(keep, divide(native, 1.0 - rate), 0.0))


def embedding(table: Any, ids: Any) -> Any:
    """Rows of ``table`` (vocabulary, features) at integer ``ids`` of any shape: ids.shape + (features,).
    Ids outside [0, vocabulary) raise InvalidArgumentError (a negative id is no row): now where their
    values are known, when computed on dask."""
    kind = as_dtype(ids.dtype)
    if kind.category not in ("int", "uint"):
        raise InvalidDtypeError(f"nn.embedding takes integer ids; got {kind}.")
    if table.ndim != 2:
        raise InvalidArgumentError(f"nn.embedding takes a 2-d table (vocabulary, features); got shape {tuple(table.shape)}.")
    ids = _in_range(ids, int(table.shape[0]), _id_error)  # al.take would read a negative id from the end
    rows = take(table, reshape(ids, (-1,)), axis=0)
    return reshape(rows, (*tuple(ids.shape), int(table.shape[1])))


# -- convolution and pooling ---------------------------------------------------------------------------------
def _pair(value: Any, parameter: str) -> tuple[int, int]:
    values = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(values) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values):
        raise InvalidArgumentError(f"{parameter}={value!r}: pass a positive int or a pair of them.")
    return values  # type: ignore[return-value]


def _layout(data_format: str) -> bool:
    try:
        return _LAYOUTS[data_format]
    except (KeyError, TypeError):
        raise InvalidArgumentError(f"data_format={data_format!r}: choose 'NHWC' or 'NCHW'.") from None


def _padding(padding: Any, size: Sequence[int], extent: Sequence[int], strides: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Explicit (before, after) pairs for the two spatial axes. "SAME" is TensorFlow's: the output
    has ceil(size / stride) positions and the odd pixel of padding goes after."""
    if padding == "VALID":
        return ((0, 0), (0, 0))
    if padding == "SAME":
        pairs = []
        for n, k, s in zip(size, extent, strides, strict=True):
            total = max((math.ceil(n / s) - 1) * s + k - n, 0)
            pairs.append((total // 2, total - total // 2))
        return tuple(pairs)
    if isinstance(padding, int) and not isinstance(padding, bool) and padding >= 0:
        return ((padding, padding), (padding, padding))
    try:
        pairs = tuple((int(a), int(b)) for a, b in padding)
        if len(pairs) == 2 and all(a >= 0 and b >= 0 for a, b in pairs):
            return pairs
    except (TypeError, ValueError):
        pass
    raise InvalidArgumentError(f"padding={padding!r}: pass 'VALID', 'SAME', a non-negative int or "
                               f"((top, bottom), (left, right)).")


def _spatial(x: Any, channels_last: bool, function: str) -> tuple[int, int]:
    if x.ndim != 4:
        raise InvalidArgumentError(f"nn.{function} takes 4-d inputs (batch, height, width, channels or batch, "
                                   f"channels, height, width); got shape {tuple(x.shape)}.")
    shape = tuple(int(n) for n in x.shape)
    return shape[1:3] if channels_last else shape[2:4]  # type: ignore[return-value]


def conv2d(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
           data_format: str = "NHWC") -> Any:
    """2-d convolution (cross-correlation, as every framework computes it) through the framework's own
    operation. ``kernel``: HWIO for NHWC input, OIHW for NCHW. x and kernel are promoted to one
    floating dtype first."""
    channels_last = _layout(data_format)
    strides, dilations = _pair(stride, "stride"), _pair(dilation, "dilation")
    dtype = result_type(x, kernel)
    if dtype.category != "float":
        raise InvalidDtypeError(f"nn.conv2d takes real floating arrays; got {as_dtype(x.dtype)} and "
                                f"{as_dtype(kernel.dtype)}.")
    native, rewrap = _native(x)
    weights, _ = _native(kernel)
    size = _spatial(native, channels_last, "conv2d")
    if weights.ndim != 4:
        raise InvalidArgumentError(f"nn.conv2d takes a 4-d kernel; got shape {tuple(weights.shape)}.")
    spatial = tuple(int(n) for n in (weights.shape[:2] if channels_last else weights.shape[2:]))
    channels = int(native.shape[-1] if channels_last else native.shape[1])
    kernel_in = int(weights.shape[2] if channels_last else weights.shape[1])
    if channels != kernel_in:
        raise InvalidArgumentError(f"nn.conv2d: x has {channels} channels but the kernel takes {kernel_in} "
                                   f"({'HWIO' if channels_last else 'OIHW'} layout for {data_format}).")
    extent = tuple((k - 1) * d + 1 for k, d in zip(spatial, dilations, strict=True))
    pads = _padding(padding, size, extent, strides)
    if any(n + a + b < e for n, (a, b), e in zip(size, pads, extent, strict=True)):
        raise InvalidArgumentError(f"nn.conv2d: the kernel (extent {extent}) is larger than the padded input {size}.")
    native, weights = astype(native, dtype, copy=False), astype(weights, dtype, copy=False)
    return rewrap(_kernels(native).conv2d(native, weights, strides, pads, dilations, channels_last))


def _pool_arguments(x: Any, window: Any, stride: Any, padding: Any, data_format: str,
                    function: str) -> tuple[Any, Any, Any, Any, Any, bool]:
    channels_last = _layout(data_format)
    windows = _pair(window, "window")
    strides = windows if stride is None else _pair(stride, "stride")
    _floating(x, function)
    native, rewrap = _native(x)
    size = _spatial(native, channels_last, function)
    pads = _padding(padding, size, windows, strides)
    if any(n + a + b < w for n, (a, b), w in zip(size, pads, windows, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: the window {windows} is larger than the padded input {size}.")
    if any(max(a, b) >= w for (a, b), w in zip(pads, windows, strict=True)):
        raise InvalidArgumentError(f"nn.{function}: padding={padding!r} is as wide as the window {windows}, so some "
                                   f"windows would hold padding only; pad less than the window.")
    return native, rewrap, windows, strides, pads, channels_last


def max_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The maximum of each window (``stride`` None: the window, non-overlapping); padding never wins."""
    native, rewrap, windows, strides, pads, last = _pool_arguments(x, window, stride, padding, data_format, "max_pool2d")
    return rewrap(_kernels(native).max_pool(native, windows, strides, pads, last))


def avg_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The mean of each window over its elements inside the input (padding is not counted: TensorFlow's
    and Keras's convention), the same on every backend."""
    native, rewrap, windows, strides, pads, last = _pool_arguments(x, window, stride, padding, data_format, "avg_pool2d")
    kernels = _kernels(native)
    sums = kernels.sum_pool(native, windows, strides, pads, last)
    if not any(a or b for a, b in pads):
        return rewrap(divide(sums, float(windows[0] * windows[1])))
    ones = ones_like(native[:1, :1] if not last else native[:1, ..., :1])
    counts = kernels.sum_pool(ones, windows, strides, pads, last)  # how many elements each window holds
    return rewrap(divide(sums, counts))


# -- attention (arraylayer/attention.py, composed of the functions above) ---------------------------------
from .attention import dot_product_attention  # noqa: E402
