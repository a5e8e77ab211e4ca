"""Image operations, as keras.ops.image names them, with one dtype semantics on every backend:
resizing (``resize``: nearest and bilinear, half-pixel centres), colour (``rgb_to_grayscale``,
``rgb_to_hsv``, ``hsv_to_rgb``), geometry (``crop_images``, ``pad_images``, ``extract_patches``) and
sampling (``map_coordinates``, ``affine_transform``).

Images are one image of rank 3 or a batch of rank 4, ``data_format="channels_last"`` (height,
width, channels; the default) or ``"channels_first"``. Everything is composed of arraylayer's own
functions (slicing, ``take``, ``pad``, element-wise arithmetic), so dtypes, errors and gradients
are those of the rest of arraylayer, and dask builds the result lazily.

One job per module: ``common`` (the images check, data formats), ``color``, ``geometry``,
``resize``, ``sampling``. May import what ``arraylayer.models`` may, and ``models.nn.common``.
"""

from __future__ import annotations

from arraylayer.models.image.color import hsv_to_rgb, rgb_to_grayscale, rgb_to_hsv
from arraylayer.models.image.filters import gaussian_blur, sobel_edges, ssim
from arraylayer.models.image.geometry import crop_images, extract_patches, extract_patches_3d, pad_images
from arraylayer.models.image.resize import resize
from arraylayer.models.image.scaling import scale_and_translate
from arraylayer.models.image.sampling import affine_transform, map_coordinates
from arraylayer.models.image.warps import elastic_transform, perspective_transform

__all__ = [
    "resize", "rgb_to_grayscale", "rgb_to_hsv", "hsv_to_rgb", "crop_images", "pad_images", "extract_patches",
    "map_coordinates", "affine_transform", "gaussian_blur", "sobel_edges", "ssim", "extract_patches_3d", "scale_and_translate",
    "perspective_transform", "elastic_transform",
]
