"""The Array API's ``fft`` extension, as ``arraylayer.fft``.

Dtypes, the same on every backend: the complex transforms (``fft``, ``ifft``, ``fftn``, ``ifftn``)
take real or complex floating input; real input is transformed as the complex dtype of the same
precision (float32 -> complex64, float64 -> complex128). ``rfft``/``rfftn``/``ihfft`` take real
floating input and return its complex dtype; ``irfft``/``irfftn``/``hfft`` take complex input and
return its real dtype. float16 and bfloat16 have no complex counterpart: they are refused with
UnsupportedDtypeError rather than widened silently. Integer and bool input is not defined.

``norm`` is ``"backward"`` (no scaling forward, 1/n backward), ``"ortho"`` (1/sqrt(n) both ways)
or ``"forward"`` (1/n forward). Axes may be negative; ``axes=None`` means all axes, or the last
``len(s)`` when ``s`` is given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final, Literal

from arraylayer.dtypes.defaults import default_float_dtype
from arraylayer.dtypes import Dtype, DtypeLike, as_dtype
from arraylayer.errors import AxisError, InvalidArgumentError, InvalidArgumentTypeError
from arraylayer import arguments
from arraylayer.api.creation import asarray
from arraylayer.api.dispatch import array_input, kernel, not_defined
from arraylayer.api.manipulation import roll

Array = Any
Norm = Literal["backward", "ortho", "forward"]

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2",
]

_NORMS: Final = ("backward", "ortho", "forward")
_COMPLEX_OF: Final = {"float32": Dtype("complex64"), "float64": Dtype("complex128")}


def _norm(name: str, norm: Any) -> str:
    if norm.__class__ is not str:
        raise InvalidArgumentTypeError(
            f"fft.{name}: norm={norm!r} must be one of {', '.join(map(repr, _NORMS))} (a string).")
    if norm not in _NORMS:
        raise InvalidArgumentError(f"fft.{name}: norm must be one of {', '.join(map(repr, _NORMS))}, got {norm!r}.")
    return norm


def _axis(name: str, axis: Any, ndim: int) -> int:
    """``axis`` as a non-negative int: AxisError (an IndexError) when out of range."""
    return arguments.axis(axis, ndim, f"fft.{name}: axis")


def _axes(name: str, axes: Any, ndim: int) -> tuple[int, ...]:
    """A sequence of distinct axes as non-negative ints."""
    if not isinstance(axes, (list, tuple, range)):
        raise InvalidArgumentTypeError(
            f"fft.{name}: axes={axes!r} must be a sequence of ints, e.g. (0, 1); pass ({axes!r},) for one axis.")
    normalised = tuple(_axis(name, a, ndim) for a in axes)
    if len(set(normalised)) != len(normalised):
        raise AxisError(f"fft.{name}: axes must be distinct; axes={tuple(axes)} names an axis twice.")
    return normalised


def _length(name: str, what: str, n: Any) -> int:
    """A transform length: a positive int no backend refuses for its size alone."""
    n = arguments.count(n, f"fft.{name}: {what}")
    if n < 1:
        raise InvalidArgumentError(f"fft.{name}: {what} must be a positive length, got {n}.")
    return n


def _input(name: str, x: Array, kinds: tuple[str, ...]) -> tuple[Any, Array, Dtype]:
    """x, checked to be of a kind the transform takes; real input of a complex transform cast
    to the complex dtype of its precision (half precision: the float dtype, refused by the kernel)."""
    backend, x, dtype = array_input(x)
    if dtype.category not in kinds:
        takes = "complex floating-point arrays" if kinds == ("complex",) else (
            "real floating-point arrays" if kinds == ("float",) else "floating-point arrays")
        raise not_defined(f"fft.{name}", (dtype,), takes)
    if len(x.shape) == 0:
        raise InvalidArgumentError(f"fft.{name} needs an array of at least one dimension, got a 0-d array.")
    if "complex" in kinds and dtype.category == "float" and str(dtype) in _COMPLEX_OF:
        dtype = _COMPLEX_OF[str(dtype)]
        x = backend.astype(x, dtype)
    return backend, x, dtype


def _output_length(name: str, given: int | None, length: int, halved: bool) -> int:
    """The length a transform computes along one axis: ``given`` (the n or s entry) or the input's
    own; an inverse of a halved transform (irfft, hfft) makes 2 * (m - 1) by default. Zero is
    refused on every backend (NumPy and PyTorch raise, JAX and TensorFlow return empty arrays)."""
    n = given if given is not None else 2 * (length - 1) if halved else length
    if n < 1:
        raise InvalidArgumentError(
            f"fft.{name}: the transform along an axis of length {length} would have length {n}; pass "
            f"{'s' if name.endswith('n') else 'n'} with a positive length (zero-padding), or a longer array.")
    return n


# the inverse transforms whose default output length along their (last) axis is 2 * (m - 1)
_HALVED: Final = frozenset({"irfft", "hfft", "irfftn"})


def _one_axis(name: str, kinds: tuple[str, ...], x: Array, n: int | None, axis: int, norm: str) -> Array:
    backend, x, dtype = _input(name, x, kinds)
    axis = _axis(name, axis, len(x.shape))
    n = None if n is None else _length(name, "n", n)
    length = _output_length(name, n, int(x.shape[axis]), name in _HALVED)
    arguments.shape(tuple(length if i == axis else int(d) for i, d in enumerate(x.shape)), f"the result of fft.{name}")
    return kernel(backend, name, dtype)(x, n=n, axis=axis, norm=_norm(name, norm))


def _many_axes(name: str, kinds: tuple[str, ...], x: Array, s: Sequence[int] | None,
               axes: Sequence[int] | None, norm: str) -> Array:
    backend, x, dtype = _input(name, x, kinds)
    ndim = len(x.shape)
    norm = _norm(name, norm)
    if s is not None and not isinstance(s, (list, tuple)):
        raise InvalidArgumentTypeError(f"fft.{name}: s={s!r} must be a sequence of lengths, e.g. (4, 4).")
    if axes is None:
        if s is not None and len(s) > ndim:
            raise InvalidArgumentError(f"fft.{name}: s has {len(s)} entries, more than the {ndim} axes of x.")
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = _axes(name, axes, ndim)
    if not axes and name in ("rfftn", "irfftn"):
        raise InvalidArgumentError(f"fft.{name} needs at least one axis (its last axis is the halved one).")
    if s is not None:
        if len(s) != len(axes):
            raise InvalidArgumentError(
                f"fft.{name}: s and axes must have the same length, got {len(s)} and {len(axes)}.")
        s = tuple(int(x.shape[a]) if arguments.integer(n, f"fft.{name}: s") == -1 else _length(name, "each entry of s", n)
                  for n, a in zip(s, axes, strict=True))
    shape = [int(d) for d in x.shape]
    for i, a in enumerate(axes):
        shape[a] = _output_length(name, None if s is None else s[i], shape[a], name in _HALVED and i == len(axes) - 1)
    arguments.shape(tuple(shape), f"the result of fft.{name}")
    return kernel(backend, name, dtype)(x, s=s, axes=axes, norm=norm)


def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """The one-dimensional discrete Fourier transform along ``axis`` (x cropped or zero-padded to ``n``)."""
    return _one_axis("fft", ("float", "complex"), x, n, axis, norm)


def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """The one-dimensional inverse discrete Fourier transform along ``axis``."""
    return _one_axis("ifft", ("float", "complex"), x, n, axis, norm)


def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: Norm = "backward") -> Array:
    """The n-dimensional discrete Fourier transform over ``axes`` (lengths ``s``)."""
    return _many_axes("fftn", ("float", "complex"), x, s, axes, norm)


def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Array:
    """The n-dimensional inverse discrete Fourier transform over ``axes``."""
    return _many_axes("ifftn", ("float", "complex"), x, s, axes, norm)


def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """The transform of real input along ``axis``: the n//2 + 1 non-negative frequency terms."""
    return _one_axis("rfft", ("float",), x, n, axis, norm)


def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """The inverse of :func:`rfft`: real output of length ``n`` (default 2 * (m - 1)) along ``axis``."""
    return _one_axis("irfft", ("complex",), x, n, axis, norm)


def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Array:
    """The n-dimensional transform of real input (the last axis halved, as :func:`rfft`)."""
    return _many_axes("rfftn", ("float",), x, s, axes, norm)


def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: Norm = "backward") -> Array:
    """The inverse of :func:`rfftn`: real output of shape ``s`` over ``axes``."""
    return _many_axes("irfftn", ("complex",), x, s, axes, norm)


def fft2(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: Norm = "backward") -> Array:
    """The 2-d transform over ``axes`` (the last two by default): :func:`fftn` over two axes."""
    return _many_axes("fftn", ("float", "complex"), x, s, axes, norm)


def ifft2(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: Norm = "backward") -> Array:
    """The inverse of :func:`fft2`: :func:`ifftn` over two axes."""
    return _many_axes("ifftn", ("float", "complex"), x, s, axes, norm)


def rfft2(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: Norm = "backward") -> Array:
    """The 2-d transform of real input: :func:`rfftn` over two axes (the last one halved)."""
    return _many_axes("rfftn", ("float",), x, s, axes, norm)


def irfft2(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: Norm = "backward") -> Array:
    """The inverse of :func:`rfft2`: :func:`irfftn` over two axes."""
    return _many_axes("irfftn", ("complex",), x, s, axes, norm)


def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """The transform of a signal with Hermitian symmetry (given by its first half): real output."""
    return _one_axis("hfft", ("complex",), x, n, axis, norm)


def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """The inverse of :func:`hfft`: the n//2 + 1 first terms of a Hermitian signal, from real input."""
    return _one_axis("ihfft", ("float",), x, n, axis, norm)


def _frequencies(name: str, n: int, d: float, dtype: DtypeLike | None, device: Any, ints: list[int]) -> Array:
    resolved = default_float_dtype() if dtype is None else as_dtype(dtype)
    if resolved.category != "float":
        raise not_defined(f"fft.{name}", (resolved,), "a real floating-point dtype")
    d = arguments.real_scalar(d, f"fft.{name}: d")
    if not math.isfinite(d) or d == 0:
        raise InvalidArgumentError(f"fft.{name}: d={d!r} must be a finite, non-zero sample spacing.")
    step = 1.0 / (n * d)
    return asarray([i * step for i in ints], dtype=resolved, device=device)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: DtypeLike | None = None, device: Any = None) -> Array:
    """The sample frequencies of :func:`fft` for ``n`` samples ``d`` apart: [0, 1, ..., -1] / (d * n)."""
    n = _length("fftfreq", "n", n)
    return _frequencies("fftfreq", n, d, dtype, device, [*range((n - 1) // 2 + 1), *range(-(n // 2), 0)])


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: DtypeLike | None = None, device: Any = None) -> Array:
    """The sample frequencies of :func:`rfft`: [0, 1, ..., n // 2] / (d * n)."""
    n = _length("rfftfreq", "n", n)
    return _frequencies("rfftfreq", n, d, dtype, device, list(range(n // 2 + 1)))


def _shift(name: str, x: Array, axes: int | Sequence[int] | None, sign: int) -> Array:
    backend, x, _ = array_input(x)
    ndim = len(x.shape)
    if axes is None:
        axes = tuple(range(ndim))
    elif isinstance(axes, (list, tuple)):
        axes = _axes(name, axes, ndim)
    else:
        axes = (_axis(name, axes, ndim),)
    if not axes:
        return x
    return roll(x, tuple(sign * (x.shape[a] // 2) for a in axes), axis=axes)


def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """x with the zero-frequency term moved to the centre of ``axes`` (all axes when None)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """The inverse of :func:`fftshift`."""
    return _shift("ifftshift", x, axes, -1)
