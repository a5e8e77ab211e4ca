"""The fft kernels of backends whose ``fft`` module has NumPy's signatures (NumPy, ``jax.numpy``):
the module's own functions, which keep single precision (complex64 in, complex64 out; float32
rfft input gives complex64). The api layer passes non-negative axes, lengths or None, and a valid
norm; float16/bfloat16 are declared unsupported and refused here too (the framework would widen
them silently)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["fft_kernels"]

_ONE_AXIS = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_MANY_AXES = ("fftn", "ifftn", "rfftn", "irfftn")


def fft_kernels(module: Any, is_half: Callable[[Any], bool], framework: str) -> dict[str, Callable[..., Any]]:
    """The ten transform kernels over ``module`` (``np.fft`` or ``jnp.fft``), by name."""

    def no_half(x: Any) -> Any:
        if is_half(x.dtype):
            raise TypeError(f"{framework} would widen {x.dtype}; no complex dtype of half precision holds the result.")
        return x

    def one(transform: Any) -> Callable[..., Any]:
        def kernel(x: Any, /, *, n: int | None, axis: int, norm: str) -> Any:
            return transform(no_half(x), n=n, axis=axis, norm=norm)

        kernel.__name__ = transform.__name__
        return kernel

    def many(transform: Any) -> Callable[..., Any]:
        def kernel(x: Any, /, *, s: tuple[int, ...] | None, axes: tuple[int, ...], norm: str) -> Any:
            return transform(no_half(x), s=s, axes=axes, norm=norm)

        kernel.__name__ = transform.__name__
        return kernel

    return {**{name: one(getattr(module, name)) for name in _ONE_AXIS},
            **{name: many(getattr(module, name)) for name in _MANY_AXES}}
