"""Cropping, padding and patches of images, as keras.ops.image defines them: each side's width is
given, or inferred from a target size; patches are flattened in (row, column, channel) order, as
Keras' and TensorFlow's ``extract_patches`` flatten them. Slicing and ``pad`` only, so every
backend (dask included, lazily) gives the same values and the gradients are those of slicing."""

from __future__ import annotations

from typing import Any

from arraylayer.api.extensions import pad
from arraylayer.api.manipulation import expand_dims, permute_dims, reshape, squeeze, stack
from arraylayer.errors import InvalidArgumentError
from arraylayer.models.image.common import channels_last, dtype_of, sizes


def _sides(first: int | None, second: int | None, target: int | None, length: int, names: tuple[str, str, str],
           function: str) -> tuple[int, int]:
    """(first, second) widths: exactly two of the three are given, the third inferred from
    ``first + length' + second`` = the image's length (crop) or the target (pad); none negative."""
    given = [v is not None for v in (first, second, target)]
    if sum(given) != 2:
        raise InvalidArgumentError(f"image.{function}: give exactly two of {', '.join(names)}; got "
                                   f"{dict(zip(names, (first, second, target)))}.")
    for value, name in zip((first, second, target), names):
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
            raise InvalidArgumentError(f"image.{function}({name}={value!r}): give a non-negative int.")
    if first is None:
        first = abs(target - length) - second
    if second is None:
        second = abs(target - length) - first
    if first < 0 or second < 0:
        raise InvalidArgumentError(f"image.{function}: {names[2]}={target} leaves a negative {names[0]} or "
                                   f"{names[1]} for length {length}.")
    return first, second


def crop_images(images: Any, top_cropping: int | None = None, left_cropping: int | None = None,
                bottom_cropping: int | None = None, right_cropping: int | None = None,
                target_height: int | None = None, target_width: int | None = None,
                data_format: str | None = None) -> Any:
    """images without ``top_cropping`` rows above, ``bottom_cropping`` below (or whatever leaves
    ``target_height``), and the same for columns."""
    batch, restore = channels_last(images, data_format, "crop_images", floating=False)
    height, width = batch.shape[1], batch.shape[2]
    if target_height is not None and target_height > height or target_width is not None and target_width > width:
        raise InvalidArgumentError(f"image.crop_images: the target {target_height} x {target_width} is larger than "
                                   f"the images' {height} x {width}.")
    top, bottom = _sides(top_cropping, bottom_cropping, target_height, height,
                         ("top_cropping", "bottom_cropping", "target_height"), "crop_images")
    left, right = _sides(left_cropping, right_cropping, target_width, width,
                         ("left_cropping", "right_cropping", "target_width"), "crop_images")
    if top + bottom >= height or left + right >= width:
        raise InvalidArgumentError(f"image.crop_images: cropping {top}+{bottom} rows and {left}+{right} columns "
                                   f"of {height} x {width} images leaves nothing.")
    return restore(batch[:, top:height - bottom, left:width - right, :])


def pad_images(images: Any, top_padding: int | None = None, left_padding: int | None = None,
               bottom_padding: int | None = None, right_padding: int | None = None,
               target_height: int | None = None, target_width: int | None = None,
               data_format: str | None = None) -> Any:
    """images with zero rows above and below and zero columns left and right: the widths given,
    or whatever makes ``target_height`` x ``target_width``."""
    batch, restore = channels_last(images, data_format, "pad_images", floating=False)
    height, width = batch.shape[1], batch.shape[2]
    if target_height is not None and target_height < height or target_width is not None and target_width < width:
        raise InvalidArgumentError(f"image.pad_images: the target {target_height} x {target_width} is smaller than "
                                   f"the images' {height} x {width}.")
    top, bottom = _sides(top_padding, bottom_padding, target_height, height,
                         ("top_padding", "bottom_padding", "target_height"), "pad_images")
    left, right = _sides(left_padding, right_padding, target_width, width,
                         ("left_padding", "right_padding", "target_width"), "pad_images")
    return restore(pad(batch, ((0, 0), (top, bottom), (left, right), (0, 0))))


def _same(length: int, window: int, stride: int) -> tuple[int, int]:
    """TensorFlow's "same" padding of one axis: the output is ceil(length / stride) long, the extra
    row (if odd) at the end."""
    out = -(-length // stride)
    total = max((out - 1) * stride + window - length, 0)
    return total // 2, total - total // 2


def extract_patches(images: Any, size: int | tuple[int, int], strides: int | tuple[int, int] | None = None,
                    dilation_rate: int | tuple[int, int] = 1, padding: str = "valid",
                    data_format: str | None = None) -> Any:
    """Every ``size`` patch of the images, ``strides`` apart (default: ``size``, no overlap), as
    one vector of ``size[0] * size[1] * channels`` values per output pixel; ``padding`` is
    ``"valid"`` or ``"same"`` (zeros, TensorFlow's arithmetic)."""
    batch, restore = channels_last(images, data_format, "extract_patches", floating=False)
    window = sizes(size, "size", "extract_patches")
    steps = window if strides is None else sizes(strides, "strides", "extract_patches")
    dilation = sizes(dilation_rate, "dilation_rate", "extract_patches")
    if padding not in ("valid", "same"):
        raise InvalidArgumentError(f"image.extract_patches(padding={padding!r}): choose 'valid' or 'same'.")
    spans = [(w - 1) * d + 1 for w, d in zip(window, dilation)]
    if padding == "same":
        batch = pad(batch, ((0, 0), _same(batch.shape[1], spans[0], steps[0]), _same(batch.shape[2], spans[1], steps[1]),
                            (0, 0)))
    height, width, channels = batch.shape[1], batch.shape[2], batch.shape[3]
    out_h, out_w = (height - spans[0]) // steps[0] + 1, (width - spans[1]) // steps[1] + 1
    if out_h <= 0 or out_w <= 0:
        raise InvalidArgumentError(f"image.extract_patches: a {spans[0]} x {spans[1]} window does not fit in "
                                   f"{height} x {width} images.")
    pieces = [batch[:, i * dilation[0]:i * dilation[0] + (out_h - 1) * steps[0] + 1:steps[0],
                    j * dilation[1]:j * dilation[1] + (out_w - 1) * steps[1] + 1:steps[1], :]
              for i in range(window[0]) for j in range(window[1])]
    patches = reshape(stack(pieces, axis=3), (batch.shape[0], out_h, out_w, window[0] * window[1] * channels))
    return restore(patches)


def _triple(value: Any, parameter: str) -> tuple[int, int, int]:
    triple = (value,) * 3 if isinstance(value, int) and not isinstance(value, bool) else value
    try:
        triple = tuple(triple)
    except TypeError:
        triple = ()
    if len(triple) != 3 or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in triple):
        raise InvalidArgumentError(f"image.extract_patches_3d({parameter}={value!r}): give an int or three ints, "
                                   f"each at least 1.")
    return triple  # type: ignore[return-value]


def extract_patches_3d(volumes: Any, size: int | tuple[int, int, int], strides: int | tuple[int, int, int] | None = None,
                       dilation_rate: int | tuple[int, int, int] = 1, padding: str = "valid",
                       data_format: str | None = None) -> Any:
    """``extract_patches`` of volumes (rank 4, or a batch of rank 5; channels last by default):
    every ``size`` patch as one vector of ``d * h * w * channels`` values in (depth, row, column,
    channel) order, ``strides`` apart (default: ``size``)."""
    dtype_of(volumes, "extract_patches_3d", floating=False)
    if data_format not in (None, "channels_last", "channels_first"):
        raise InvalidArgumentError(f"image.extract_patches_3d(data_format={data_format!r}): choose 'channels_last' "
                                   f"or 'channels_first'.")
    rank = len(volumes.shape)
    if rank not in (4, 5):
        raise InvalidArgumentError(f"image.extract_patches_3d takes one volume (rank 4) or a batch (rank 5); got "
                                   f"shape {tuple(volumes.shape)}.")
    window = _triple(size, "size")
    steps = window if strides is None else _triple(strides, "strides")
    dilation = _triple(dilation_rate, "dilation_rate")
    if padding not in ("valid", "same"):
        raise InvalidArgumentError(f"image.extract_patches_3d(padding={padding!r}): choose 'valid' or 'same'.")
    batch = volumes if rank == 5 else expand_dims(volumes, axis=0)
    first = data_format == "channels_first"
    if first:
        batch = permute_dims(batch, (0, 2, 3, 4, 1))
    spans = [(w - 1) * d + 1 for w, d in zip(window, dilation, strict=True)]
    if padding == "same":
        batch = pad(batch, ((0, 0), *(_same(batch.shape[1 + k], spans[k], steps[k]) for k in range(3)), (0, 0)))
    lengths = batch.shape[1:4]
    outs = [(n - span) // step + 1 for n, span, step in zip(lengths, spans, steps, strict=True)]
    if min(outs) <= 0:
        raise InvalidArgumentError(f"image.extract_patches_3d: a {' x '.join(map(str, spans))} window does not fit in "
                                   f"{' x '.join(map(str, lengths))} volumes.")

    def axis(k: int, i: int) -> slice:
        return slice(i * dilation[k], i * dilation[k] + (outs[k] - 1) * steps[k] + 1, steps[k])

    pieces = [batch[:, axis(0, i), axis(1, j), axis(2, m), :]
              for i in range(window[0]) for j in range(window[1]) for m in range(window[2])]
    patches = reshape(stack(pieces, axis=4), (batch.shape[0], *outs, -1))
    if first:
        patches = permute_dims(patches, (0, 4, 1, 2, 3))
    return patches if rank == 5 else squeeze(patches, axis=0)
