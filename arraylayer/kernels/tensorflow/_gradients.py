"""Gradients at kinks and ties, as arraylayer defines them (docs/autodiff.rst), for the
TensorFlow kernels whose registered gradient differs (``maximum`` at ties gives all to x1,
the ``logaddexp``/``hypot`` kernels built from ``maximum`` inherit that ...).

:func:`with_gradient` keeps the forward computation as it is and attaches the rule through
``tf.custom_gradient``, but only where a gradient can be taken: while building a graph
(``tf.function``: the cost is paid once, at tracing) or while a ``GradientTape`` records.
Eager calls with no tape run the plain kernel (``tf.custom_gradient`` costs ~30 us per
eager call).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import tensorflow as tf

from arraylayer.kernels.tensorflow._high_rank import select

try:  # TF's own "is any tape recording" test; without it, every call takes the custom path
    from tensorflow.python.eager.record import could_possibly_record as _tape_may_record
except ImportError:  # pragma: no cover - a TF without the private module
    def _tape_may_record() -> bool:
        return True

_LOG = logging.getLogger("tensorflow")
Rule = Callable[..., tuple[Any, ...]]  # (upstream gradient, result, *inputs) -> one gradient per input


def with_gradient(forward: Callable[..., Any], rule: Rule) -> Callable[..., Any]:
    """``forward(*tensors)``, differentiated by ``rule`` (gradients are summed back to each
    input's shape, as broadcasting requires)."""

    @tf.custom_gradient
    def differentiable(*xs: Any) -> Any:
        result = forward(*xs)

        def gradient(g: Any) -> tuple[Any, ...]:
            return tuple(unbroadcast(d, x) for d, x in zip(rule(g, result, *xs), xs, strict=True))

        return result, gradient

    def kernel(*xs: Any) -> Any:
        return differentiable(*xs) if may_differentiate() else forward(*xs)

    kernel.__name__ = kernel.__qualname__ = getattr(forward, "__name__", "kernel")
    return kernel


def may_differentiate() -> bool:
    """Whether a gradient of what is computed now may be asked for (a graph is being built, or
    a tape records)."""
    return not tf.executing_eagerly() or _tape_may_record()


def unbroadcast(g: Any, x: Any) -> Any:
    """``g`` summed over the axes along which ``x`` was broadcast, in ``x``'s shape."""
    if g.shape == x.shape and g.shape.is_fully_defined():
        return g
    _, axes = tf.raw_ops.BroadcastGradientArgs(s0=tf.shape(g), s1=tf.shape(x))
    return tf.reshape(tf.math.reduce_sum(g, axes), tf.shape(x))


def _cast(condition: Any, like: Any) -> Any:
    return tf.cast(condition, like.dtype)


def _safe_ratio(numerator: Any, denominator: Any, zero_where: Any) -> Any:
    """``numerator / denominator``, 0 where ``zero_where`` (no NaN reaches the gradient)."""
    safe = select(zero_where, tf.ones_like(denominator), denominator)
    return select(zero_where, tf.zeros_like(numerator), tf.math.truediv(numerator, safe))


# -- the rules -------------------------------------------------------------------------------
def maximum_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """All to the larger input; at a tie, half to each."""
    tie = 0.5 * _cast(tf.math.equal(x1, x2), g)
    return g * (_cast(tf.math.greater(x1, x2), g) + tie), g * (_cast(tf.math.greater(x2, x1), g) + tie)


def minimum_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """All to the smaller input; at a tie, half to each."""
    tie = 0.5 * _cast(tf.math.equal(x1, x2), g)
    return g * (_cast(tf.math.less(x1, x2), g) + tie), g * (_cast(tf.math.less(x2, x1), g) + tie)


def logaddexp_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``exp(x_i - result)``: the softmax weights, half each at a tie."""
    return g * tf.math.exp(x1 - result), g * tf.math.exp(x2 - result)


def hypot_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x_i / result``; 0 at the origin (the smallest subgradient of the cone)."""
    origin = tf.math.equal(result, 0)
    return g * _safe_ratio(x1, result, origin), g * _safe_ratio(x2, result, origin)


def atan2_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``(x2, -x1) / (x1**2 + x2**2)``; 0 at the origin, as for ``hypot``."""
    origin = tf.math.logical_and(tf.math.equal(x1, 0), tf.math.equal(x2, 0))
    squared = x1 * x1 + x2 * x2
    return g * _safe_ratio(x2, squared, origin), g * _safe_ratio(-x1, squared, origin)


def pow_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x2 * x1**(x2 - 1)``, 0 where ``x2 == 0`` (``x1**0`` is constant); ``result * log(x1)``,
    0 where ``x1 == 0`` and NaN for a negative base (no real power nearby)."""
    by_base = select(tf.math.equal(x2, 0), tf.zeros_like(x1), x2 * tf.math.pow(x1, x2 - 1))
    by_exponent = select(tf.math.equal(x1, 0), tf.zeros_like(x1), result * tf.math.log(x1))
    return g * by_base, g * by_exponent


def remainder_rule(g: Any, result: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """``(1, -floor(x1 / x2))`` everywhere, zero results included (where the signed-zero fix of
    the values would otherwise cut the gradient off)."""
    return g, -g * tf.math.floor(tf.math.truediv(x1, x2))


def norm_sqrt_rule(g: Any, result: Any, x: Any) -> tuple[Any]:
    """The square root that ends a 2-norm or a standard deviation: ``1 / (2 sqrt(x))``, and 0
    at 0, so that the norm of zeros (a cone's tip) has gradient 0 rather than ``inf * 0``."""
    return (g * _safe_ratio(tf.constant(0.5, result.dtype), result, tf.math.equal(result, 0)),)


def cumprod_gradient(x: Any, axis: int, g: Any) -> Any:
    """The gradient of ``cumprod(x, axis)`` for the upstream ``g``, right where ``x`` has zeros
    (TF's registered one divides by x): the product scan by doubling strides, differentiated
    by TF (products only). An axis of unknown length keeps TF's own gradient."""
    n = x.shape[axis]
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x if n is not None else tf.math.cumprod(x, axis)
        shift = 1
        while n is not None and shift < n:
            head = tf.ones_like(tf.gather(y, tf.range(shift), axis=axis))
            y = y * tf.concat([head, tf.gather(y, tf.range(n - shift), axis=axis)], axis)
            shift *= 2
    return tape.gradient(y, x, output_gradients=g)


# -- quiet gradients through complex values ---------------------------------------------------
class _RealPartCasts(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("You are casting an input of type complex")


@contextmanager
def real_part_casts_quiet() -> Iterator[None]:
    """TF's own gradients of a real-to-complex ``tf.cast`` (and of ``tf.linalg.eig`` of a real
    matrix) cast the complex gradient back with ``tf.cast``, which logs that the imaginary part
    is discarded, once per call. Keeping the real part is the gradient of a real input, so
    while arraylayer computes gradients that line is not shown (a filter of its own per call:
    threads and nested calls remove only theirs)."""
    quiet = _RealPartCasts()
    _LOG.addFilter(quiet)
    try:
        yield
    finally:
        _LOG.removeFilter(quiet)
