"""Moving pixels between space and channels: ``depth_to_space`` / ``space_to_depth`` (Keras' and
TensorFlow's; torch's ``pixel_shuffle`` order for channels-first) and ``unfold`` / ``fold`` (torch's
im2col and col2im, channels-first as in torch and Keras).

All are reshapes, transposes, slices, ``pad`` and sums of arraylayer's own, so any dtype is kept,
dask builds the result lazily, and the gradients are those of slicing (``fold`` is ``unfold``'s
adjoint: overlapping blocks add up)."""

from __future__ import annotations

from typing import Any, Final

from arraylayer import arguments
from arraylayer.api.creation import zeros_like
from arraylayer.api.elementwise import add
from arraylayer.api.extensions import pad
from arraylayer.api.manipulation import expand_dims, permute_dims, reshape, squeeze, stack
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError
from arraylayer.models.nn.common import rounded_once

#: data_format -> channels last? (Keras' names and the NHWC/NCHW of arraylayer's layers)
_FORMATS: Final = {"channels_last": True, "NHWC": True, "channels_first": False, "NCHW": False}


def _array(x: Any, function: str, ranks: tuple[int, ...]) -> Any:
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise InvalidArgumentTypeError(f"nn.{function}: x is {type(x).__name__}, not an array; pass an array, e.g. "
                                       f"arraylayer.asarray(x).")
    if len(x.shape) not in ranks:
        raise InvalidArgumentError(f"nn.{function} takes arrays of rank {' or '.join(map(str, ranks))}; got shape "
                                   f"{tuple(x.shape)}.")
    return x


def _channels_last(data_format: str, function: str) -> bool:
    if data_format not in _FORMATS:
        raise InvalidArgumentError(f"nn.{function}(data_format={data_format!r}): choose 'channels_last' (or 'NHWC') or "
                                   f"'channels_first' (or 'NCHW').")
    return _FORMATS[data_format]


def _positive(value: Any, parameter: str, function: str, *, minimum: int = 1) -> tuple[int, int]:
    """An int or a pair of ints, each at least ``minimum``, as a pair."""
    return arguments.int_pair(value, parameter, f"nn.{function}", minimum=minimum)


def _block(block_size: Any, function: str) -> int:
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size < 2:
        raise InvalidArgumentError(f"nn.{function}(block_size={block_size!r}): give an int >= 2 (Keras' and "
                                   f"TensorFlow's bound; 1 would change nothing).")
    return block_size


def depth_to_space(x: Any, block_size: int, data_format: str = "channels_last") -> Any:
    """Each pixel's channels spread over a ``block_size`` x ``block_size`` block: ``(n, h, w, c)`` to
    ``(n, h * b, w * b, c / b**2)`` (channels-first: ``(n, c, h, w)`` to ``(n, c / b**2, h * b, w * b)``,
    torch's ``pixel_shuffle``)."""
    _array(x, "depth_to_space", (4,))
    b = _block(block_size, "depth_to_space")
    last = _channels_last(data_format, "depth_to_space")
    n, h, w, c = x.shape if last else (x.shape[0], x.shape[2], x.shape[3], x.shape[1])
    if c % (b * b):
        raise InvalidArgumentError(f"nn.depth_to_space: {c} channels do not divide into blocks of {b} x {b}; give a "
                                   f"multiple of {b * b} channels.")
    if last:
        y = permute_dims(reshape(x, (n, h, w, b, b, c // (b * b))), (0, 1, 3, 2, 4, 5))
        return reshape(y, (n, h * b, w * b, c // (b * b)))
    y = permute_dims(reshape(x, (n, c // (b * b), b, b, h, w)), (0, 1, 4, 2, 5, 3))
    return reshape(y, (n, c // (b * b), h * b, w * b))


def space_to_depth(x: Any, block_size: int, data_format: str = "channels_last") -> Any:
    """``depth_to_space``'s inverse: each ``block_size`` x ``block_size`` block of pixels becomes one
    pixel of ``b**2`` times the channels."""
    _array(x, "space_to_depth", (4,))
    b = _block(block_size, "space_to_depth")
    last = _channels_last(data_format, "space_to_depth")
    n, h, w, c = x.shape if last else (x.shape[0], x.shape[2], x.shape[3], x.shape[1])
    if h % b or w % b:
        raise InvalidArgumentError(f"nn.space_to_depth: a {h} x {w} image does not divide into blocks of {b} x {b}; "
                                   f"crop or pad it to multiples of {b}.")
    if last:
        y = permute_dims(reshape(x, (n, h // b, b, w // b, b, c)), (0, 1, 3, 2, 4, 5))
        return reshape(y, (n, h // b, w // b, c * b * b))
    y = permute_dims(reshape(x, (n, c, h // b, b, w // b, b)), (0, 1, 3, 5, 2, 4))
    return reshape(y, (n, c * b * b, h // b, w // b))


def _windows(function: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any
             ) -> tuple[tuple[int, int], ...]:
    return (_positive(kernel_size, "kernel_size", function), _positive(dilation, "dilation", function),
            _positive(padding, "padding", function, minimum=0), _positive(stride, "stride", function))


def _counts(size: tuple[int, int], kernel: tuple[int, int], dilation: tuple[int, int], padding: tuple[int, int],
            stride: tuple[int, int]) -> tuple[int, int]:
    """Blocks per axis of a ``size`` image: torch's ``(size + 2 p - d (k - 1) - 1) // s + 1``."""
    return tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                 for n, k, d, p, s in zip(size, kernel, dilation, padding, stride, strict=True))  # type: ignore[return-value]


def unfold(x: Any, kernel_size: int | tuple[int, int], dilation: int | tuple[int, int] = 1,
           padding: int | tuple[int, int] = 0, stride: int | tuple[int, int] = 1) -> Any:
    """The sliding blocks of channels-first images, torch's ``unfold``: ``(n, c, h, w)`` to
    ``(n, c * kh * kw, blocks)``, each column one block in (channel, row, column) order, the blocks
    in row-major order (a single image ``(c, h, w)`` gives ``(c * kh * kw, blocks)``)."""
    _array(x, "unfold", (3, 4))
    kernel, dilation_, padding_, stride_ = _windows("unfold", kernel_size, dilation, padding, stride)
    batch = x if len(x.shape) == 4 else expand_dims(x, axis=0)
    n, c, h, w = batch.shape
    out_h, out_w = _counts((h, w), kernel, dilation_, padding_, stride_)
    if out_h <= 0 or out_w <= 0:
        raise InvalidArgumentError(f"nn.unfold: a kernel of {kernel} dilated by {dilation_} does not fit in "
                                   f"{h} x {w} images padded by {padding_}.")
    padded = pad(batch, ((0, 0), (0, 0), (padding_[0],) * 2, (padding_[1],) * 2))
    pieces = [padded[:, :, i * dilation_[0]:i * dilation_[0] + (out_h - 1) * stride_[0] + 1:stride_[0],
                     j * dilation_[1]:j * dilation_[1] + (out_w - 1) * stride_[1] + 1:stride_[1]]
              for i in range(kernel[0]) for j in range(kernel[1])]
    columns = reshape(stack(pieces, axis=2), (n, c * kernel[0] * kernel[1], out_h * out_w))
    return columns if len(x.shape) == 4 else squeeze(columns, axis=0)


def _spread(block: Any, axis: int, step: int) -> Any:
    """block with ``step - 1`` zeros after each element along ``axis`` (the last element's dropped):
    a block of every ``step``-th position of the output axis."""
    if step == 1:
        return block
    spaced = stack([block] + [zeros_like(block)] * (step - 1), axis=axis + 1)
    shape = list(block.shape)
    length = shape[axis]
    shape[axis] = length * step
    spaced = reshape(spaced, tuple(shape))
    index = [slice(None)] * len(shape)
    index[axis] = slice(0, (length - 1) * step + 1)
    return spaced[tuple(index)]


@rounded_once
def fold(x: Any, output_size: int | tuple[int, int], kernel_size: int | tuple[int, int],
         dilation: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0,
         stride: int | tuple[int, int] = 1) -> Any:
    """Sliding blocks summed back into images, torch's ``fold`` (``unfold``'s adjoint):
    ``(n, c * kh * kw, blocks)`` to ``(n, c, *output_size)``; where blocks overlap their values add
    (a single ``(c * kh * kw, blocks)`` gives ``(c, *output_size)``)."""
    _array(x, "fold", (2, 3))
    size = _positive(output_size, "output_size", "fold")
    kernel, dilation_, padding_, stride_ = _windows("fold", kernel_size, dilation, padding, stride)
    batch = x if len(x.shape) == 3 else expand_dims(x, axis=0)
    n, ckk, count = batch.shape
    out_h, out_w = _counts(size, kernel, dilation_, padding_, stride_)
    if ckk % (kernel[0] * kernel[1]) or out_h <= 0 or out_w <= 0 or out_h * out_w != count:
        raise InvalidArgumentError(
            f"nn.fold: x of shape {tuple(x.shape)} is not the blocks of {kernel} of a {size} image (padding "
            f"{padding_}, dilation {dilation_}, stride {stride_}): that needs a multiple of {kernel[0] * kernel[1]} "
            f"rows and {max(out_h, 0) * max(out_w, 0)} blocks.")
    c = ckk // (kernel[0] * kernel[1])
    blocks = reshape(batch, (n, c, kernel[0], kernel[1], out_h, out_w))
    full_h, full_w = size[0] + 2 * padding_[0], size[1] + 2 * padding_[1]
    total = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            part = _spread(_spread(blocks[:, :, i, j], 2, stride_[0]), 3, stride_[1])
            top, left = i * dilation_[0], j * dilation_[1]
            placed = pad(part, ((0, 0), (0, 0), (top, full_h - top - part.shape[2]),
                                (left, full_w - left - part.shape[3])))
            total = placed if total is None else add(total, placed)
    images = total[:, :, padding_[0]:padding_[0] + size[0], padding_[1]:padding_[1] + size[1]]
    return images if len(x.shape) == 3 else squeeze(images, axis=0)
