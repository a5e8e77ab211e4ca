"""keras.ops by name against arraylayer: the data of docs/keras_ops.rst and of tests/test_keras_map.py.

Keras 3 groups its ops in ``keras.src.ops.<group>`` (core, image, linalg, math, nn, numpy); the names of
the pinned version are frozen here (the test compares them with the installed keras). A keras name is
covered when arraylayer has a public function doing that operation: by default the same name in the
group's namespaces (:data:`SEARCH`), otherwise the name :data:`RENAMED` gives. Coverage is computed by
looking the names up in the installed arraylayer, never written by hand, so a name that does not
resolve shows as missing."""

from __future__ import annotations

from typing import Any, Final

KERAS_VERSION: Final = "3.15.1"

#: every public name of keras.ops, by keras' group (``swish``/``hard_swish`` are keras' nn aliases,
#: ``rearrange`` its einops op, counted with core)
KERAS_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "core": (
        'associative_scan', 'cast', 'cond', 'convert_to_numpy', 'convert_to_tensor', 'custom_gradient',
        'dtype', 'fori_loop', 'is_tensor', 'map', 'rearrange', 'saturate_cast', 'scan', 'scatter',
        'scatter_update', 'shape', 'slice', 'slice_update', 'stop_gradient', 'switch', 'unstack',
        'vectorized_map', 'while_loop',
    ),
    "image": (
        'affine_transform', 'crop_images', 'elastic_transform', 'extract_patches', 'extract_patches_3d',
        'gaussian_blur', 'hsv_to_rgb', 'map_coordinates', 'pad_images', 'perspective_transform',
        'resize', 'rgb_to_grayscale', 'rgb_to_hsv', 'scale_and_translate', 'sobel_edges', 'ssim',
    ),
    "linalg": (
        'cholesky', 'cholesky_inverse', 'det', 'eig', 'eigh', 'inv', 'jvp', 'lstsq', 'lu_factor',
        'matrix_rank', 'norm', 'pinv', 'qr', 'solve', 'solve_triangular', 'svd',
    ),
    "math": (
        'cdist', 'erf', 'erfc', 'erfinv', 'extract_sequences', 'fft', 'fft2', 'ifft2', 'in_top_k', 'irfft',
        'istft', 'logdet', 'logsumexp', 'rfft', 'rsqrt', 'segment_max', 'segment_min',
        'segment_prod', 'segment_sum', 'stft', 'top_k', 'view_as_complex', 'view_as_real',
    ),
    "nn": (
        'adaptive_average_pool', 'adaptive_max_pool', 'average_pool', 'batch_normalization',
        'binary_crossentropy', 'categorical_crossentropy', 'celu', 'conv', 'conv_transpose',
        'ctc_decode', 'ctc_loss', 'depth_to_space', 'depthwise_conv', 'dot_product_attention',
        'elu', 'fold', 'gelu', 'glu', 'hard_shrink', 'hard_sigmoid', 'hard_silu', 'hard_swish',
        'hard_tanh', 'layer_normalization', 'leaky_relu', 'log_sigmoid', 'log_softmax', 'max_pool',
        'moments', 'multi_hot', 'normalize', 'one_hot', 'polar', 'psnr', 'relu', 'relu6',
        'rms_normalization', 'selu', 'separable_conv', 'sigmoid', 'silu', 'soft_shrink', 'softmax',
        'softplus', 'softsign', 'space_to_depth', 'sparse_categorical_crossentropy', 'sparse_plus',
        'sparse_sigmoid', 'sparsemax', 'squareplus', 'swish', 'tanh_shrink', 'threshold', 'unfold',
    ),
    "numpy": (
        'abs', 'absolute', 'add', 'all', 'allclose', 'amax', 'amin', 'angle', 'any', 'append', 'arange',
        'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctan2', 'arctanh', 'argmax',
        'argmin', 'argpartition', 'argsort', 'array', 'array_split', 'average', 'bartlett',
        'bincount', 'bitwise_and', 'bitwise_invert', 'bitwise_left_shift', 'bitwise_not',
        'bitwise_or', 'bitwise_right_shift', 'bitwise_xor', 'blackman', 'broadcast_to', 'cbrt',
        'ceil', 'clip', 'concatenate', 'conj', 'conjugate', 'copy', 'corrcoef', 'correlate', 'cos',
        'cosh', 'count_nonzero', 'cross', 'cumprod', 'cumsum', 'deg2rad', 'diag', 'diagflat',
        'diagonal', 'diff', 'digitize', 'divide', 'divide_no_nan', 'dot', 'dsplit', 'dstack',
        'einsum', 'empty', 'empty_like', 'equal', 'exp', 'exp2', 'expand_dims', 'expm1', 'eye',
        'fabs', 'flip', 'fliplr', 'flipud', 'floor', 'floor_divide', 'fmax', 'fmin', 'fmod', 'full',
        'full_like', 'gcd', 'geomspace', 'get_item', 'greater', 'greater_equal', 'hamming',
        'hanning', 'heaviside', 'histogram', 'hsplit', 'hstack', 'hypot', 'i0', 'identity', 'imag',
        'inner', 'isclose', 'isfinite', 'isin', 'isinf', 'isnan', 'isneginf', 'isposinf', 'isreal',
        'kaiser', 'kron', 'lcm', 'ldexp', 'left_shift', 'less', 'less_equal', 'linspace', 'log',
        'log10', 'log1p', 'log2', 'logaddexp', 'logaddexp2', 'logical_and', 'logical_not',
        'logical_or', 'logical_xor', 'logspace', 'matmul', 'max', 'maximum', 'mean', 'median',
        'meshgrid', 'min', 'minimum', 'mod', 'moveaxis', 'multiply', 'nan_to_num', 'nanargmax',
        'nanargmin', 'nancumprod', 'nancumsum', 'nanmax', 'nanmean', 'nanmedian', 'nanmin',
        'nanpercentile', 'nanprod', 'nanquantile', 'nanstd', 'nansum', 'nanvar', 'ndim', 'negative',
        'nextafter', 'nonzero', 'not_equal', 'ones', 'ones_like', 'outer', 'pad', 'percentile',
        'power', 'prod', 'ptp', 'quantile', 'rad2deg', 'ravel', 'real', 'reciprocal', 'repeat',
        'reshape', 'right_shift', 'roll', 'rot90', 'round', 'searchsorted', 'select', 'sign',
        'signbit', 'sin', 'sinc', 'sinh', 'size', 'slogdet', 'sort', 'split', 'sqrt', 'square',
        'squeeze', 'stack', 'std', 'subtract', 'sum', 'swapaxes', 'take', 'take_along_axis', 'tan',
        'tanh', 'tensordot', 'tile', 'trace', 'transpose', 'trapezoid', 'tri', 'tril', 'triu',
        'true_divide', 'trunc', 'unique', 'unravel_index', 'vander', 'var', 'vdot', 'vectorize',
        'view', 'vsplit', 'vstack', 'where', 'zeros', 'zeros_like',
    ),
}

#: where a keras name of each group is looked for in arraylayer, in order ("" is the main namespace)
SEARCH: Final = {
    "core": ("", "nn."), "image": ("image.",), "linalg": ("linalg.", ""), "math": ("", "fft.", "linalg.", "nn."),
    "nn": ("nn.", ""), "numpy": ("", "linalg.", "fft."),
}

#: "group.keras_name": (arraylayer's name, what differs, "" when nothing does)
RENAMED: Final[dict[str, tuple[str, str]]] = {
    "core.cast": ("astype", ""),
    "core.convert_to_numpy": ("to_backend", "``al.to_backend(x, 'numpy')``"),
    "core.convert_to_tensor": ("asarray", ""),
    "core.vectorized_map": ("vmap", "``vmap(f)(xs)``: keras' ``vectorized_map(f, xs)``"),
    "linalg.jvp": ("jvp", ""),
    "nn.average_pool": ("nn.avg_pool2d", "one function per rank: ``nn.avg_pool1d``/``avg_pool2d``/``avg_pool3d``"),
    "nn.max_pool": ("nn.max_pool2d", "one function per rank: ``nn.max_pool1d``/``max_pool2d``/``max_pool3d``"),
    "nn.conv": ("nn.conv2d", "one function per rank: ``nn.conv1d``/``conv2d``/``conv3d``"),
    "nn.adaptive_average_pool": ("nn.adaptive_avg_pool", ""),
    "nn.batch_normalization": ("nn.batch_norm", ""),
    "nn.binary_crossentropy": ("nn.binary_cross_entropy", ""),
    "nn.categorical_crossentropy": ("nn.categorical_cross_entropy", ""),
    "nn.sparse_categorical_crossentropy": ("nn.sparse_categorical_cross_entropy", ""),
    "nn.layer_normalization": ("nn.layer_norm", ""),
    "nn.swish": ("nn.silu", ""),
    "nn.hard_swish": ("nn.hard_silu", ""),
    "image.elastic_transform": ("image.elastic_transform", "an explicit random ``key`` first, in place of ``seed``"),
    "numpy.array": ("asarray", "``al.asarray(x, dtype=...)``: keras' ``array(x, dtype)``"),
    "numpy.absolute": ("abs", ""),
    "numpy.amax": ("max", ""),
    "numpy.amin": ("min", ""),
    "numpy.arccos": ("acos", ""),
    "numpy.arccosh": ("acosh", ""),
    "numpy.arcsin": ("asin", ""),
    "numpy.arcsinh": ("asinh", ""),
    "numpy.arctan": ("atan", ""),
    "numpy.arctan2": ("atan2", ""),
    "numpy.arctanh": ("atanh", ""),
    "numpy.bitwise_not": ("bitwise_invert", ""),
    "numpy.concatenate": ("concat", ""),
    "numpy.conjugate": ("conj", ""),
    "numpy.cumprod": ("cumulative_prod", ""),
    "numpy.cumsum": ("cumulative_sum", ""),
    "numpy.left_shift": ("bitwise_left_shift", ""),
    "numpy.right_shift": ("bitwise_right_shift", ""),
    "numpy.mod": ("remainder", ""),
    "numpy.power": ("pow", ""),
    "numpy.true_divide": ("divide", ""),
    "numpy.unique": ("unique_values", "the values only; ``unique_all``/``unique_counts``/``unique_inverse`` for the rest"),
    "numpy.dot": ("tensordot", "``tensordot(a, b, axes=1)``; ``matmul`` for stacks of matrices"),
    "numpy.copy": ("asarray", "``asarray(x, copy=True)``"),
}

#: the standard's Array attributes keras has functions for: an attribute, not a function, in arraylayer
ATTRIBUTES: Final = {"core.shape": "x.shape", "core.dtype": "x.dtype", "numpy.ndim": "x.ndim",
                     "numpy.size": "x.size", "numpy.get_item": "x[key]"}


def _public(path: str) -> Any:
    """The public arraylayer function at dotted ``path`` (``"nn.relu"``), or None."""
    import arraylayer

    namespace: Any = arraylayer
    *packages, name = path.split(".")
    for package in packages:
        namespace = getattr(namespace, package, None)
        if namespace is None:
            return None
    if name not in getattr(namespace, "__all__", ()):
        return None
    obj = getattr(namespace, name, None)
    return obj if callable(obj) else None


def rows() -> list[tuple[str, str, str | None, str]]:
    """(group, keras name, arraylayer's name or None, note) for every keras.ops name."""
    found = []
    for group, names in KERAS_NAMES.items():
        for keras_name in names:
            key = f"{group}.{keras_name}"
            if key in ATTRIBUTES:
                found.append((group, keras_name, ATTRIBUTES[key], "an Array attribute"))
                continue
            target, note = RENAMED.get(key, (None, ""))
            candidates = (target,) if target else tuple(prefix + keras_name for prefix in SEARCH[group])
            name = next((path for path in candidates if _public(path) is not None), None)
            found.append((group, keras_name, name, note))
    return found


def coverage() -> dict[str, tuple[int, int]]:
    """(covered, total) per group and for "all"."""
    counts: dict[str, tuple[int, int]] = {}
    for group, _, name, _ in rows():
        covered, total = counts.get(group, (0, 0))
        counts[group] = (covered + (name is not None), total + 1)
    counts["all"] = (sum(c for c, _ in counts.values()), sum(t for _, t in counts.values()))
    return counts


def keras_ops_page() -> str:
    """The generated part of docs/keras_ops.rst: the coverage per group, then one table per group."""
    counts = coverage()
    lines = [".. list-table:: keras.ops covered, by group", "   :header-rows: 1", "",
             "   * - group", "     - covered", "     - share"]
    for group, (covered, total) in counts.items():
        lines += [f"   * - {group}", f"     - {covered} of {total}", f"     - {100 * covered / total:.0f}%"]
    by_group: dict[str, list[tuple[str, str | None, str]]] = {}
    for group, keras_name, name, note in rows():
        by_group.setdefault(group, []).append((keras_name, name, note))
    for group, entries in by_group.items():
        title = f"keras.ops ({group})"
        lines += ["", title, "-" * len(title), "", ".. list-table::", "   :header-rows: 1", "   :widths: 30 30 40", "",
                  "   * - keras", "     - arraylayer", "     - note"]
        for keras_name, name, note in entries:
            if name is None:
                shown = "missing"
            else:
                shown = f"``{name}``" if f"{group}.{keras_name}" in ATTRIBUTES else f"``al.{name}``"
            lines += [f"   * - ``{keras_name}``", f"     - {shown}", f"     - {note}"]
    return "\n".join(lines) + "\n"
