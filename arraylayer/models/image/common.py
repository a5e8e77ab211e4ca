"""What the image functions share: the images check (rank 3 or 4, real floating where asked), the
data formats (``channels_last`` / ``channels_first``, Keras' names) and constants made beside x."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.creation import asarray
from arraylayer.api.manipulation import expand_dims, permute_dims, squeeze
from arraylayer.dtypes import Dtype, as_dtype
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.models.nn.common import _creating_on, _device

DATA_FORMATS: Final = ("channels_last", "channels_first")


def dtype_of(x: Any, function: str, *, floating: bool = True) -> Dtype:
    """x's dtype: real floating where ``floating``, any real dtype otherwise (x must be an array)."""
    if not hasattr(x, "dtype") or not hasattr(x, "shape"):
        raise InvalidArgumentTypeError(f"image.{function}: got {type(x).__name__}, not an array; pass an array, "
                                       f"e.g. arraylayer.asarray(images, dtype='float32').")
    dtype = as_dtype(x.dtype)
    wanted = ("float",) if floating else ("float", "int", "uint", "bool")
    if dtype.category not in wanted:
        kind = "real floating" if floating else "real"
        raise InvalidDtypeError(f"image.{function} takes {kind} arrays; got {dtype}. Cast first, e.g. "
                                f"arraylayer.astype(images, 'float32').")
    return dtype


def channels_last(images: Any, data_format: str | None, function: str, *, floating: bool = True
                  ) -> tuple[Any, Callable[[Any], Any]]:
    """(a batch of channels-last images, restore): a single image gains a batch axis and a
    channels-first one is permuted; ``restore`` undoes both on a result of the same layout."""
    dtype_of(images, function, floating=floating)
    if data_format is None:
        data_format = "channels_last"
    if data_format not in DATA_FORMATS:
        raise InvalidArgumentError(f"image.{function}(data_format={data_format!r}): choose 'channels_last' or "
                                   f"'channels_first'.")
    rank = len(images.shape)
    if rank not in (3, 4):
        raise InvalidArgumentError(f"image.{function} takes one image (rank 3) or a batch (rank 4); got shape "
                                   f"{tuple(images.shape)}.")
    batch = images if rank == 4 else expand_dims(images, axis=0)
    first = data_format == "channels_first"
    if first:
        batch = permute_dims(batch, (0, 2, 3, 1))

    def restore(result: Any) -> Any:
        if first:
            result = permute_dims(result, (0, 3, 1, 2))
        return result if rank == 4 else squeeze(result, axis=0)
    return batch, restore


def constant(like: Any, values: Any, dtype: Any) -> Any:
    """``values`` (NumPy or Python) as an array of ``dtype`` on like's backend and device (NumPy
    values as Python numbers: a float64 or int64 source would be refused on JAX without x64)."""
    values = values.tolist() if hasattr(values, "tolist") else values
    with _creating_on(like):
        return asarray(values, dtype=dtype, device=_device(like))


def sizes(value: Any, parameter: str, function: str, *, minimum: int = 1) -> tuple[int, int]:
    """An int or a pair of ints, each at least ``minimum``, as a pair."""
    return arguments.int_pair(value, parameter, f"image.{function}", minimum=minimum)
