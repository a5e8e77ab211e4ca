"""arraylayer.nn: the functions models need beyond the Array API standard, one semantics on every backend.

Everything except ``gelu``'s erf and the convolution/pooling is composed of arraylayer's own
functions, so promotion, errors, devices and gradients are arraylayer's. The per-framework
code (erf, conv2d, pools) lives in ``arraylayer/kernels/<backend>/nn.py``.

Dtypes: a floating input keeps its dtype (float16/bfloat16 included). The functions whose
result is floating by nature (everything but ``relu``, ``one_hot`` and ``embedding``) follow
the standard's rule for ``exp``/``mean``: an integer or bool input is computed in the default
float dtype. Complex inputs are refused. All of them are numerically stable: no overflow or
NaN at logits of +-100, in half precision too.
"""

from __future__ import annotations

import contextlib
import importlib
import math
from typing import Any

import arraylayer as al

from .api import arguments
from .errors import (
    InvalidArgumentError,
    InvalidDtypeError,
    OutOfBoundsIndexError,
    UnsupportedOperationError,
)

__all__ = ["relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "logsumexp", "one_hot",
           "cross_entropy", "mse", "layer_norm", "dropout", "conv2d", "max_pool2d", "avg_pool2d", "embedding"]

_REDUCTIONS = ("mean", "sum", "none")
_SQRT_HALF = math.sqrt(0.5)
_TANH_GELU = math.sqrt(2.0 / math.pi)
# Beyond |x| = 10 tanh-gelu's tanh is +-1 to float64 precision; clipping its argument there keeps
# x**3 from overflowing float16 (and its gradient from becoming 0 * inf).
_TANH_GELU_CLIP = 10.0
_KERNEL_BACKENDS = ("numpy", "jax", "torch", "tensorflow")


# -- dtypes -----------------------------------------------------------------------------------------
def _floating(x: Any, function: str) -> Any:
    """``x`` as an array of a real floating dtype: integers and bools go to the default float dtype."""
    x = x if hasattr(x, "dtype") else al.asarray(x)
    if al.isdtype(x.dtype, "real floating"):
        return x
    if al.isdtype(x.dtype, "complex floating"):
        raise InvalidDtypeError(f"{function} takes real inputs, got {x.dtype}; pass al.real(x) or al.abs(x).")
    return al.astype(x, al.default_float_dtype())


def _integer_labels(labels: Any, parameter: str, function: str) -> Any:
    labels = labels if hasattr(labels, "dtype") else al.asarray(labels)
    if not al.isdtype(labels.dtype, "integral"):
        raise InvalidDtypeError(
            f"{function}: {parameter} must hold integer class indices, got dtype {labels.dtype}; "
            f"pass al.astype({parameter}, al.int32) (or al.argmax of one-hot labels).")
    return labels


def _labels_in_range(labels: Any, num_classes: int, parameter: str) -> None:
    """Labels must lie in [0, num_classes); traced labels (jit, tf.function, torch.compile) have no
    values to check."""
    if 0 in tuple(labels.shape):
        return
    backend = al.backend_of(labels)
    if arguments.compiling(backend):
        return
    try:
        values = backend.to_numpy(labels)
    except Exception:  # noqa: BLE001 - a tracer has no values
        return
    low, high = int(values.min()), int(values.max())
    if low < 0 or high >= num_classes:
        raise OutOfBoundsIndexError(
            f"{parameter} holds {low if low < 0 else high}, not a class index for {num_classes} classes; "
            f"labels must lie in [0, {num_classes}).")


def _on_backend_of(x: Any) -> Any:
    """A scope in which ``x``'s backend is the active one (``arange`` and arraylayer.random create
    their arrays there); no scope when it already is (torch.compile cannot trace entering one)."""
    name = al.backend_of(x).name
    return contextlib.nullcontext() if al.current_backend() == name else al.use_backend(name)


def _reduce(losses: Any, reduction: str, function: str) -> Any:
    if reduction == "mean":
        return al.mean(losses)
    if reduction == "sum":
        return al.sum(losses)
    if reduction == "none":
        return losses
    raise InvalidArgumentError(f"{function}: reduction={reduction!r} must be one of {_REDUCTIONS}.")


# -- activations ------------------------------------------------------------------------------------
def relu(x: Any) -> Any:
    """max(x, 0); integers stay integers (like ``maximum``). Its gradient at 0 is 0.5 (the tie rule
    of ``maximum``, see docs/autodiff.rst)."""
    return al.maximum(x, 0)


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x)), as exp(-softplus(-x)): no overflow, full relative precision in both tails."""
    x = _floating(x, "sigmoid")
    return al.exp(al.negative(al.logaddexp(al.negative(x), 0.0)))


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), as logaddexp(x, 0): x for large x instead of an overflow."""
    return al.logaddexp(_floating(x, "softplus"), 0.0)


def silu(x: Any) -> Any:
    """x * sigmoid(x) (also called swish)."""
    x = _floating(x, "silu")
    return al.multiply(x, sigmoid(x))


def gelu(x: Any, approximate: bool = False) -> Any:
    """x * Phi(x), Phi the standard normal CDF (exact, through each framework's erf); with
    ``approximate=True`` the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""
    if isinstance(x, al.Array):
        return al.Array(gelu(x.native, approximate))
    x = _floating(x, "gelu")
    if arguments.flag(approximate, "approximate"):
        c = al.clip(x, -_TANH_GELU_CLIP, _TANH_GELU_CLIP)
        inner = al.multiply(al.multiply(c, _TANH_GELU), al.add(al.multiply(al.square(c), 0.044715), 1.0))
        return al.multiply(al.multiply(x, 0.5), al.add(al.tanh(inner), 1.0))
    erf = _kernels(x, "gelu").erf(al.multiply(x, _SQRT_HALF))
    return al.multiply(al.multiply(x, 0.5), al.add(erf, 1.0))


# -- softmax family ---------------------------------------------------------------------------------
def _shifted(x: Any, axis: Any, function: str) -> tuple[Any, Any]:
    """``x`` and ``x - max(x)`` along ``axis`` (a finite max: an all -inf slice is shifted by 0)."""
    x = _floating(x, function)
    axis = arguments.axes(axis, x.ndim)
    top = al.max(x, axis=axis, keepdims=True)
    top = al.where(al.isfinite(top), top, al.zeros_like(top))
    return al.subtract(x, top), top


def softmax(x: Any, axis: Any = -1) -> Any:
    """exp(x) / sum(exp(x)) along ``axis`` (int or tuple), computed from x - max(x)."""
    shifted, _ = _shifted(x, axis, "softmax")
    e = al.exp(shifted)
    return al.divide(e, al.sum(e, axis=axis, keepdims=True))


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """x - logsumexp(x) along ``axis``, computed from x - max(x)."""
    shifted, _ = _shifted(x, axis, "log_softmax")
    return al.subtract(shifted, al.log(al.sum(al.exp(shifted), axis=axis, keepdims=True)))


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """log(sum(exp(x))) along ``axis`` (None: all), computed from x - max(x)."""
    arguments.flag(keepdims, "keepdims")
    shifted, top = _shifted(x, axis, "logsumexp")
    result = al.add(al.log(al.sum(al.exp(shifted), axis=axis, keepdims=True)), top)
    if keepdims:
        return result
    return al.reshape(result, ()) if axis is None else al.squeeze(result, axis=axis)


# -- encodings and losses ---------------------------------------------------------------------------
def one_hot(labels: Any, num_classes: int, dtype: Any = None) -> Any:
    """A new last axis of length ``num_classes``, 1 at each label and 0 elsewhere (``dtype`` None:
    the default float dtype). Labels outside [0, num_classes) raise (traced ones give a row of 0)."""
    labels = _integer_labels(labels, "labels", "one_hot")
    num_classes = arguments.count(num_classes, "num_classes")
    if num_classes == 0:
        raise InvalidArgumentError("one_hot: num_classes=0 must be a positive number of classes.")
    _labels_in_range(labels, num_classes, "labels")
    with _on_backend_of(labels):
        classes = al.arange(num_classes, dtype=labels.dtype, device=al.dev(labels))
    hits = al.equal(al.expand_dims(labels, axis=-1), classes)
    return al.astype(hits, al.default_float_dtype() if dtype is None else dtype)


def cross_entropy(logits: Any, labels: Any, axis: int = -1, reduction: str = "mean") -> Any:
    """-log_softmax(logits)[label] per example, from logits and integer class ``labels`` (the shape of
    ``logits`` without ``axis``); ``reduction`` "mean" | "sum" | "none"."""
    logits = _floating(logits, "cross_entropy")
    axis = arguments.axis(axis, logits.ndim)
    labels = _integer_labels(labels, "labels", "cross_entropy")
    expected = tuple(logits.shape[:axis]) + tuple(logits.shape[axis + 1:])
    if tuple(labels.shape) != expected:
        raise InvalidArgumentError(
            f"cross_entropy: labels of shape {tuple(labels.shape)} do not match logits of shape "
            f"{tuple(logits.shape)} with classes along axis {axis}; labels need the shape {expected}.")
    _labels_in_range(labels, int(logits.shape[axis]), "labels")
    log_p = log_softmax(logits, axis=axis)
    picked = al.take_along_axis(log_p, al.expand_dims(labels, axis=axis), axis=axis)
    return _reduce(al.negative(al.squeeze(picked, axis=axis)), reduction, "cross_entropy")


def mse(predictions: Any, targets: Any, reduction: str = "mean") -> Any:
    """(predictions - targets)**2 (broadcast), reduced by ``reduction`` "mean" | "sum" | "none"."""
    difference = al.subtract(_floating(predictions, "mse"), _floating(targets, "mse"))
    return _reduce(al.square(difference), reduction, "mse")


# -- normalisation, dropout, embedding ----------------------------------------------------------------
def layer_norm(x: Any, scale: Any = None, offset: Any = None, axis: Any = -1, eps: float = 1e-5) -> Any:
    """(x - mean) / sqrt(var + eps) over ``axis`` (int or tuple), times ``scale`` plus ``offset``
    (each broadcast against x; None: 1 and 0)."""
    x = _floating(x, "layer_norm")
    axis = arguments.axes(axis, x.ndim)
    eps = arguments.real_scalar(eps, "eps")
    if eps < 0:
        raise InvalidArgumentError(f"layer_norm: eps={eps} must be >= 0.")
    centred = al.subtract(x, al.mean(x, axis=axis, keepdims=True))
    variance = al.mean(al.square(centred), axis=axis, keepdims=True)
    y = al.multiply(centred, al.sqrt(al.reciprocal(al.add(variance, eps))))
    y = y if scale is None else al.multiply(y, scale)
    return y if offset is None else al.add(y, offset)


def dropout(key: Any, x: Any, rate: float, training: bool = True) -> Any:
    """Inverted dropout: each element zeroed with probability ``rate`` (drawn from ``key`` of
    arraylayer.random, so the same key drops the same elements on every backend), the others
    scaled by 1 / (1 - rate). ``training=False`` or ``rate=0`` return ``x`` as it is."""
    x = _floating(x, "dropout")
    rate = arguments.real_scalar(rate, "rate")
    if not 0.0 <= rate < 1.0:
        raise InvalidArgumentError(f"dropout: rate={rate} must lie in [0, 1) (the fraction of elements dropped).")
    if not arguments.flag(training, "training") or rate == 0:
        return x
    with _on_backend_of(x):
        keep = al.random.bernoulli(key, 1.0 - rate, shape=tuple(x.shape))
    return al.where(keep, al.divide(x, 1.0 - rate), al.zeros_like(x))


def embedding(table: Any, ids: Any) -> Any:
    """The rows of ``table`` (vocab, dim) at the integer ``ids`` (any shape): shape ids.shape + (dim,)."""
    table = table if hasattr(table, "dtype") else al.asarray(table)
    if table.ndim != 2:
        raise InvalidArgumentError(f"embedding: table of shape {tuple(table.shape)} must be 2-d (vocab, dim).")
    ids = _integer_labels(ids, "ids", "embedding")
    _labels_in_range(ids, int(table.shape[0]), "ids")
    rows = al.take(table, al.reshape(ids, (-1,)), axis=0)
    return al.reshape(rows, (*tuple(ids.shape), int(table.shape[1])))


# -- convolution and pooling ---------------------------------------------------------------------------
_KERNELS: dict[str, Any] = {}


def _kernels(x: Any, function: str) -> Any:
    """The ``kernels/<backend>/nn.py`` module of ``x``'s backend."""
    name = al.backend_of(x).name
    module = _KERNELS.get(name)
    if module is None:
        if name not in _KERNEL_BACKENDS:
            raise UnsupportedOperationError(
                f"{function} has no kernel on the {name!r} backend; convert with al.to_backend(x, 'numpy') "
                f"(or jax/torch/tensorflow) and call it there.")
        module = _KERNELS[name] = importlib.import_module(f"arraylayer.kernels.{name}.nn")
    return module


def _pair(value: Any, parameter: str) -> tuple[int, int]:
    values = (value, value) if not isinstance(value, (tuple, list)) else tuple(value)
    if len(values) != 2:
        raise InvalidArgumentError(f"{parameter}={value!r} must be an int or a pair of ints.")
    pair = tuple(arguments.integer(v, parameter) for v in values)
    if min(pair) < 1:
        raise InvalidArgumentError(f"{parameter}={value!r} must be positive.")
    return pair  # type: ignore[return-value]


def _padding(padding: Any, size: tuple[int, int], span: tuple[int, int], stride: tuple[int, int]
             ) -> tuple[tuple[int, int], tuple[int, int]]:
    """Explicit ((top, bottom), (left, right)) padding. SAME is TensorFlow's: an output of
    ceil(size / stride), the odd pixel of padding at the bottom/right."""
    if padding == "VALID":
        return ((0, 0), (0, 0))
    if padding == "SAME":
        pads = []
        for n, k, s in zip(size, span, stride, strict=True):
            total = max((-(-n // s) - 1) * s + k - n, 0)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)  # type: ignore[return-value]
    if isinstance(padding, int) and not isinstance(padding, bool):
        padding = ((padding, padding), (padding, padding))
    try:
        (top, bottom), (left, right) = padding
        pads = ((arguments.integer(top, "padding"), arguments.integer(bottom, "padding")),
                (arguments.integer(left, "padding"), arguments.integer(right, "padding")))
    except (TypeError, ValueError):
        raise InvalidArgumentError(
            f"padding={padding!r} must be 'VALID', 'SAME', an int or ((top, bottom), (left, right)).") from None
    if min(pads[0] + pads[1]) < 0:
        raise InvalidArgumentError(f"padding={padding!r} must not be negative.")
    return pads


def _layout(x: Any, data_format: str, function: str) -> bool:
    if data_format not in ("NHWC", "NCHW"):
        raise InvalidArgumentError(f"{function}: data_format={data_format!r} must be 'NHWC' or 'NCHW'.")
    if x.ndim != 4:
        raise InvalidArgumentError(
            f"{function}: x of shape {tuple(x.shape)} must be 4-d ({data_format}); add a batch axis with "
            f"al.expand_dims(x, axis=0).")
    return data_format == "NHWC"


def _geometry(x: Any, channels_last: bool, window: tuple[int, int], stride: tuple[int, int],
              dilation: tuple[int, int], padding: Any, function: str) -> Any:
    size = tuple(int(n) for n in (x.shape[1:3] if channels_last else x.shape[2:4]))
    span = tuple((k - 1) * d + 1 for k, d in zip(window, dilation, strict=True))
    pads = _padding(padding, size, span, stride)  # type: ignore[arg-type]
    for n, k, (low, high) in zip(size, span, pads, strict=True):
        if n + low + high < k:
            raise InvalidArgumentError(
                f"{function}: a window of {k} does not fit an input of {n} padded by {(low, high)}; use "
                f"padding='SAME' or a smaller window.")
    return pads


def conv2d(x: Any, kernel: Any, stride: Any = 1, padding: Any = "VALID", dilation: Any = 1,
           data_format: str = "NHWC") -> Any:
    """2-d convolution (cross-correlation, as in every framework) through the framework's own op.
    Kernel layout HWIO for NHWC, OIHW for NCHW; ``padding`` "VALID", "SAME" (TensorFlow's), an int
    or ((top, bottom), (left, right)); ``stride``/``dilation`` an int or a pair."""
    if isinstance(x, al.Array) or isinstance(kernel, al.Array):
        return al.Array(conv2d(_native(x), _native(kernel), stride, padding, dilation, data_format))
    x, kernel = _floating(x, "conv2d"), _floating(kernel, "conv2d")
    dtype = al.result_type(x, kernel)
    x, kernel = al.astype(x, dtype), al.astype(kernel, dtype)
    channels_last = _layout(x, data_format, "conv2d")
    if kernel.ndim != 4:
        raise InvalidArgumentError(f"conv2d: kernel of shape {tuple(kernel.shape)} must be 4-d "
                                   f"({'HWIO' if channels_last else 'OIHW'}).")
    window = tuple(int(n) for n in (kernel.shape[:2] if channels_last else kernel.shape[2:]))
    in_channels = int(x.shape[-1] if channels_last else x.shape[1])
    kernel_in = int(kernel.shape[2] if channels_last else kernel.shape[1])
    if in_channels != kernel_in:
        raise InvalidArgumentError(
            f"conv2d: x has {in_channels} input channels but the kernel of shape {tuple(kernel.shape)} expects "
            f"{kernel_in}.")
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    pads = _geometry(x, channels_last, window, stride, dilation, padding, "conv2d")  # type: ignore[arg-type]
    return _kernels(x, "conv2d").conv2d(x, kernel, stride, pads, dilation, channels_last)


def _pool_arguments(x: Any, window: Any, stride: Any, padding: Any, data_format: str, function: str) -> Any:
    x = _floating(x, function)
    channels_last = _layout(x, data_format, function)
    window = _pair(window, "window")
    stride = window if stride is None else _pair(stride, "stride")
    pads = _geometry(x, channels_last, window, stride, (1, 1), padding, function)
    if max(pads[0][0], pads[0][1]) >= window[0] or max(pads[1][0], pads[1][1]) >= window[1]:
        raise InvalidArgumentError(f"{function}: padding={padding!r} must be smaller than window={window}.")
    return x, window, stride, pads, channels_last


def max_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The maximum over each window (``stride`` None: the window); padding never wins."""
    if isinstance(x, al.Array):
        return al.Array(max_pool2d(_native(x), window, stride, padding, data_format))
    x, window, stride, pads, channels_last = _pool_arguments(x, window, stride, padding, data_format, "max_pool2d")
    return _kernels(x, "max_pool2d").max_pool2d(x, window, stride, pads, channels_last)


def avg_pool2d(x: Any, window: Any, stride: Any = None, padding: Any = "VALID", data_format: str = "NHWC") -> Any:
    """The mean over each window of the elements inside the input: padding is not counted (the
    convention of TensorFlow's and JAX's SAME pooling; torch's count_include_pad=False)."""
    if isinstance(x, al.Array):
        return al.Array(avg_pool2d(_native(x), window, stride, padding, data_format))
    x, window, stride, pads, channels_last = _pool_arguments(x, window, stride, padding, data_format, "avg_pool2d")
    kernels = _kernels(x, "avg_pool2d")
    sums = kernels.sum_pool2d(x, window, stride, pads, channels_last)
    if pads == ((0, 0), (0, 0)):
        return al.divide(sums, float(window[0] * window[1]))
    counts = kernels.sum_pool2d(al.ones_like(x), window, stride, pads, channels_last)
    return al.divide(sums, counts)


def _native(x: Any) -> Any:
    return x.native if isinstance(x, al.Array) else x
