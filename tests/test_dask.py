"""The dask backend: lazy by construction, no extra work in the graph, NumPy's dtypes and values,
chunks, interchange with every backend.

The rest of the suite runs on dask too (the ``backend`` fixture); this file checks what is
particular to a lazy, chunked backend. Computations are counted with a dask callback.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import pytest

import arraylayer as al

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
from conftest import make_array  # noqa: E402
from test_bad_input import FUNCTIONS, computation_counter, valid_arguments  # noqa: E402


def _leaves(result: Any) -> list[Any]:
    if isinstance(result, dict):
        return list(result.values())
    return list(result) if isinstance(result, (tuple, list)) else [result]


# -- lazy by construction ---------------------------------------------------------------------------
# Every call below runs on dask arrays of several chunks per axis (chunks=1 on test_bad_input's 2x2
# inputs, 2 on the 4x4 ones here) while dask's computations are counted, and again on NumPy: the
# dask results must be dask arrays whose values and dtypes, once computed, are NumPy's.
H: Final = ("A", "float32", [[0.5, -1.0, 2.0, 3.5], [1.5, 0.25, -2.0, 1.0], [4.0, 2.5, 0.75, -0.5], [-3.0, 1.25, 0.5, 2.0]])
COMPLEX: Final = ("A", "complex64", [[1 + 1j, 2 - 1j, 0.5j, 3.0], [-1.0, 1j, 2 + 2j, 0.25], [0.5, -1j, 1.5, 2j],
                                     [1.0, 1.0, -1 - 1j, 0.0]])
ROWS3: Final = ("A", "float32", [[1.0, 2.0, 3.0], [4.0, -5.0, 6.0], [0.5, 0.0, -1.0], [2.0, 2.0, 2.0]])
ROWS3_B: Final = ("A", "float32", [[3.0, 2.0, 1.0], [-1.0, 0.5, 2.0], [1.0, 1.0, 1.0], [0.0, 4.0, -2.0]])
IDX_1D: Final = ("A", "int32", [0, 3, 1, 1, 4, 0])
ROW: Final = ("A", "float32", [1.0, -2.0, 0.5, 3.0, 2.0])
ROW_B: Final = ("A", "float32", [0.5, 1.0, -1.0])
IDX: Final = ("A", "int32", [[0, 3, 1, 1], [2, 2, 0, 3], [3, 0, 0, 1], [1, 2, 3, 0]])

#: Valid calls of the public functions whose generic arguments (test_bad_input's: axis=None,
#: copy=None, real inputs) are invalid for them: name -> (positional, keyword) arguments.
VALID_CALLS: Final[dict[str, tuple[list[Any], dict[str, Any]]]] = {
    "sort": ([H], {"axis": 0}),
    "argsort": ([H], {"axis": 1, "descending": True}),
    "astype": ([H, "float16"], {}),
    "cumulative_sum": ([H], {"axis": 1, "include_initial": True}),
    "cumulative_prod": ([H], {"axis": 0}),
    "diff": ([H], {"axis": 0, "n": 2}),
    "fft.fft": ([H], {"axis": 0}),
    "fft.ifft": ([COMPLEX], {"axis": 1}),
    "fft.rfft": ([H], {"axis": 0}),
    "fft.ihfft": ([H], {"axis": 1}),
    "fft.hfft": ([COMPLEX], {"axis": 0}),
    "fft.irfft": ([COMPLEX], {"axis": 0, "n": 6}),
    "fft.irfftn": ([COMPLEX], {}),
    "fft.irfft2": ([COMPLEX], {}),
    "linalg.cross": ([ROWS3, ROWS3_B], {"axis": -1}),
    "nancumsum": ([H], {"axis": 1, "include_initial": True}),
    "nancumprod": ([H], {"axis": 0}),
    "pad": ([H, ((1, 2), (3, 0))], {"mode": "reflect"}),
    "quantile": ([H, 0.3], {"axis": 0}),
    "nanquantile": ([H, [0.1, 0.5, 0.9]], {"axis": (0, 1), "keepdims": True}),
    "sliding_window_view": ([H, (2, 3)], {}),
    "linalg.matrix_norm": ([H], {"ord": 2}),
    "linalg.vector_norm": ([H], {"axis": 0, "ord": 3}),
    "stack": ([[H, H]], {"axis": 1}),
    "take_along_axis": ([H, IDX], {"axis": 1}),
    "to_device": ([H, "cpu"], {}),
    "vecdot": ([H, H], {"axis": 0}),
    "hstack": ([[H, H]], {}),
    "vstack": ([[H, H]], {}),
    "dstack": ([[H, H]], {}),
    "rot90": ([H], {"k": 3}),
    "swapaxes": ([H, 0, 1], {}),
    "tri": ([3], {"M": 4, "k": 1}),
    "identity": ([3], {}),
    "logspace": ([0.0, 2.0], {"num": 5}),
    "isclose": ([H, H], {"rtol": 1e-3}),
    "allclose": ([H, H], {"atol": 0.5}),
    "nan_to_num": ([H], {"nan": 1.0}),
    "percentile": ([H, [10.0, 75.0]], {"axis": 1}),
    "nanpercentile": ([H, 30.0], {"axis": 0}),
    "bincount": ([IDX_1D], {"length": 5}),
    "digitize": ([H, [0.5, 1.5, 3.0]], {}),
    "correlate": ([ROW, ROW_B], {"mode": "same"}),
    "histogram": ([H], {"bins": 3}),
    "dsplit": ([("A", "float32", np.arange(16.0).reshape(2, 2, 4).tolist()), 2], {}),
    "array_split": ([H, [1, 3]], {"axis": 1}),
    "select": ([[("A", "bool", [[True, False], [False, True]]), ("A", "bool", [[True, True], [False, False]])],
                [("A", "float32", [[1.0, 2.0], [3.0, 4.0]]), 2.5]], {"default": -1.0}),
    "kaiser": ([6, 4.0], {}),
    "unravel_index": ([IDX, (2, 8)], {}),
    "argpartition": ([H, 2], {"axis": 0}),
    "vander": ([("A", "int32", [1, -2, 3, 0]), 3], {"increasing": True}),
    "trapezoid": ([H, ("A", "float32", [0.0, 0.5, 2.0, 2.5])], {"axis": 0}),
}


def _chunked(value: Any) -> Any:
    """An abstract value as an array of the current backend; on dask, chunks of at most 2 along
    every axis (several per axis for every input of more than 2 elements, or of 2x2 with 1)."""
    if isinstance(value, list):
        return [_chunked(v) for v in value]
    if not (isinstance(value, tuple) and len(value) == 3 and value[0] == "A"):
        return value
    if al.current_backend() != "dask":
        return al.asarray(value[2], dtype=value[1])
    shape = np.shape(value[2])
    return al.asarray(value[2], dtype=value[1], chunks=1 if shape and max(shape) <= 2 else 2)


def _call(backend: str, name: str) -> Any:
    args, kwargs = VALID_CALLS.get(name) or valid_arguments(name, FUNCTIONS[name])
    with al.use_backend(backend):
        return FUNCTIONS[name](*_chunked(args), **{k: _chunked(v) for k, v in kwargs.items()})


def _outcome(make: Callable[[str], Any], backend: str) -> Any:
    """``make(backend)``'s result, or the arraylayer error it raises."""
    try:
        return make(backend)
    except al.ArrayLayerError as error:
        return error


def _assert_lazy_and_numpys(label: str, make: Callable[[str], Any]) -> None:
    """``make("dask")`` computes nothing and, once computed, equals ``make("numpy")``."""
    with computation_counter() as counted:
        lazy = _outcome(make, "dask")
    assert counted.count == 0, f"{label} computed {counted.count} graph(s)"
    expected = _outcome(make, "numpy")
    assert not isinstance(expected, al.ArrayLayerError), (
        f"{label} fails on NumPy ({expected}): give it a valid call (VALID_CALLS)")
    assert not isinstance(lazy, al.ArrayLayerError), (label, lazy)
    _assert_same(label, lazy, expected)


def _assert_same(label: str, lazy: Any, expected: Any) -> None:
    for got, want in zip(_leaves(lazy), _leaves(expected), strict=True):
        got, want = _unwrapped(got), _unwrapped(want)
        if not isinstance(want, np.ndarray):  # dtype utilities, namespace info: no arrays to compare
            assert type(got) is type(want), (label, got, want)
            continue
        assert isinstance(got, da.Array), (label, type(got))
        assert al.Dtype(got.dtype) is al.Dtype(want.dtype), (label, got.dtype, want.dtype)
        if "empty" not in label:  # uninitialised values
            # float sums run in dask's chunk order, not NumPy's pairwise order: a few ulps apart
            np.testing.assert_allclose(got.compute(), want, rtol=2e-3 if want.dtype == np.float16 else 1e-5,
                                       atol=1e-6, equal_nan=True, err_msg=label)


def _unwrapped(x: Any) -> Any:
    return x.native if isinstance(x, al.Array) else x


# to_backend moves a dask array to another backend, which computes it: tests/test_dask_cluster.py and
# test_every_public_function_is_counted cover it
@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) - {"to_backend"}))
def test_no_function_computes_and_results_are_numpys(name):
    """Every public function of the array API (test_bad_input.public_functions), on chunked dask
    arrays, computes nothing and matches NumPy; a new function whose generic call is invalid fails
    here until it is given a valid one in VALID_CALLS."""
    _assert_lazy_and_numpys(name, lambda backend: _call(backend, name))


def _array(values: Any = H[2], dtype: str = "float32") -> al.Array:
    return al.Array(_chunked(("A", dtype, values)))


def _set(key: Any, value: Any) -> Callable[[], al.Array]:
    def assign() -> al.Array:
        x = _array()
        x[key() if callable(key) else key] = value() if callable(value) else value
        return x
    return assign


_INTS = ("A", "int32", [2, 0, -1])
_FLIPPED = np.flip(np.asarray(H[2]), 1).tolist()
_SHIFTS = np.flip(np.asarray(IDX[2]), 0).tolist()
_KEYS = {"int": 1, "slice": slice(1, None, -1), "ellipsis": (Ellipsis, 0), "none": (None, 1), "tuple": (1, slice(1, 3))}
#: Operators, indexing and assignment of arraylayer.Array: name -> call (under the backend).
ARRAY_CALLS: Final[dict[str, Callable[[], Any]]] = {
    **{f"getitem {name}": (lambda key=key: _array()[key]) for name, key in _KEYS.items()},
    "getitem one int array": lambda: _array()[al.Array(_chunked(_INTS))],
    "getitem int array on axis 1": lambda: _array()[:, al.Array(_chunked(_INTS))],
    "getitem several int arrays": lambda: _array()[al.Array(_chunked(_INTS)), al.Array(_chunked(_INTS))],
    "getitem 2-d int array and int": lambda: _array()[_chunked(IDX[:2] + ([[0, 1], [3, 2]],)), 2],
    "getitem mask": lambda: _array()[_array() > 0.6],
    "setitem int, scalar": _set(1, 9.0),
    "setitem slice, array": _set((slice(None), 0), lambda: _array([1.0, 2.0, 3.0, 4.0])),
    "setitem int array, scalar": _set(lambda: al.Array(_chunked(_INTS)), 9.0),
    "setitem several int arrays, array": _set(lambda: (al.Array(_chunked(_INTS)),) * 2,
                                              lambda: _array([1.0, 2.0, 3.0])),
    "setitem mask, scalar": _set(lambda: _array() > 0.6, 9.0),
    "setitem mask, one-element array": _set(lambda: _array() > 0.6, lambda: _array([9.0])),
    "setitem row mask, row": _set(lambda: al.Array(_chunked(("A", "bool", [True, False, True, True]))),
                                  lambda: _array([1.0, 2.0, 3.0, 4.0])),
    **{f"operator {op}": (lambda op=op: getattr(_array(), op)(_array(_FLIPPED))) for op in (
        "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__",
        "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__")},
    **{f"operator {op} 2.5": (lambda op=op: getattr(_array(), op)(2.5)) for op in ("__radd__", "__rsub__", "__rmul__")},
    **{f"operator {op}": (lambda op=op: getattr(_array(IDX[2], "int32"), op)(_array(_SHIFTS, "int32"))) for op in (
        "__and__", "__or__", "__xor__", "__lshift__", "__rshift__")},
    **{f"operator {op}": (lambda op=op: getattr(_array(), op)()) for op in ("__neg__", "__pos__", "__abs__")},
    "operator __invert__": lambda: ~_array(IDX[2], "int32"),
    "operator .mT": lambda: _array().mT,
    "operator +=": lambda: _iadd(_array()),
}


def _iadd(x: al.Array) -> al.Array:
    x += 1.5
    return x


def _key() -> Any:
    return al.random.key(7)


_LOGITS = ("A", "float32", [[2.0, -1.0, 0.5], [0.0, 1.5, -2.0]])
_LABELS = ("A", "int32", [2, 0])
#: images of 3 x 5 x 4 x 2 (chunks of 2 along every axis, so the image axes are rechunked whole)
_IMAGES = ("A", "float32", np.random.default_rng(3).standard_normal((3, 5, 4, 2)).round(2).tolist())
_RGB = ("A", "float32", np.random.default_rng(6).uniform(0, 1, (2, 3, 4, 3)).round(2).tolist())
_HWIO = ("A", "float32", np.random.default_rng(4).standard_normal((3, 2, 2, 3)).round(2).tolist())
_QKV = ("A", "float32", np.random.default_rng(5).standard_normal((2, 3, 2, 2)).round(2).tolist())
#: arraylayer.models.random, arraylayer.models.nn and the tree and interchange functions on dask inputs: name -> call.
MODULE_CALLS: Final[dict[str, Callable[[], Any]]] = {
    "random.key": _key,
    "random.split": lambda: al.random.split(_key(), 3),
    "random.fold_in": lambda: al.random.fold_in(_key(), 5),
    "random.bits": lambda: al.random.bits(_key(), (4, 3)),
    "random.uniform": lambda: al.random.uniform(_key(), (4, 3), minval=-1.0, maxval=2.0),
    "random.normal": lambda: al.random.normal(_key(), (4, 3)),
    "random.truncated_normal": lambda: al.random.truncated_normal(_key(), -1.0, 1.5, (5,)),
    "random.bernoulli": lambda: al.random.bernoulli(_key(), 0.3, (4, 3)),
    "random.randint": lambda: al.random.randint(_key(), (6,), 0, 10),
    "random.permutation": lambda: al.random.permutation(_key(), 6),
    "random.categorical": lambda: al.random.categorical(_key(), _chunked(_LOGITS)),
    **{f"nn.{name}": (lambda name=name: getattr(al.nn, name)(_chunked(H))) for name in (
        "relu", "sigmoid", "silu", "softplus", "softmax", "log_softmax", "logsumexp", "layer_norm")},
    "nn.gelu": lambda: al.nn.gelu(_chunked(H)),
    "nn.gelu approximate": lambda: al.nn.gelu(_chunked(H), approximate=True),
    "nn.conv2d": lambda: al.nn.conv2d(_chunked(_IMAGES), _chunked(_HWIO), padding="SAME"),
    "nn.max_pool2d": lambda: al.nn.max_pool2d(_chunked(_IMAGES), 2, padding="SAME"),
    "nn.avg_pool2d": lambda: al.nn.avg_pool2d(_chunked(_IMAGES), 3, stride=1, padding="SAME"),
    # convolution, pooling and normalisation in 1 to 3 spatial dimensions (NumPy's kernels per block of images)
    "nn.conv1d": lambda: al.nn.conv1d(_chunked(_IMAGES)[:, :, 0], _chunked(_HWIO)[0], padding="SAME"),
    "nn.conv3d": lambda: al.nn.conv3d(al.expand_dims(_chunked(_IMAGES), axis=-1),
                                      al.reshape(_chunked(_HWIO)[:2], (2, 2, 2, 1, 3))),
    "nn.conv_transpose": lambda: al.nn.conv_transpose(_chunked(_IMAGES), _chunked(_HWIO)[:, :, :2, :2], stride=2,
                                                      padding=1, output_padding=1),
    "nn.depthwise_conv": lambda: al.nn.depthwise_conv(_chunked(_IMAGES), _chunked(_HWIO)[:, :, :, :2], padding="SAME"),
    "nn.separable_conv": lambda: al.nn.separable_conv(_chunked(_IMAGES), _chunked(_HWIO)[:, :, :, :2],
                                                      al.reshape(_chunked(_HWIO)[:1, :1, :, :2], (1, 1, 4, 1))),
    "nn.max_pool1d": lambda: al.nn.max_pool1d(_chunked(_IMAGES)[:, :, 0], 2, padding="SAME"),
    "nn.avg_pool1d": lambda: al.nn.avg_pool1d(_chunked(_IMAGES)[:, :, 0], 3, stride=1, padding="SAME"),
    "nn.max_pool3d": lambda: al.nn.max_pool3d(al.expand_dims(_chunked(_IMAGES), axis=-1), 2),
    "nn.avg_pool3d": lambda: al.nn.avg_pool3d(al.expand_dims(_chunked(_IMAGES), axis=-1), 2, padding="SAME"),
    "nn.adaptive_avg_pool": lambda: al.nn.adaptive_avg_pool(_chunked(_IMAGES), (3, 3)),
    "nn.adaptive_max_pool": lambda: al.nn.adaptive_max_pool(_chunked(_IMAGES), (2, 3)),
    "nn.batch_norm": lambda: al.nn.batch_norm(_chunked(_IMAGES), _chunked(H)[0, :2], al.exp(_chunked(H)[1, :2])),
    "nn.group_norm": lambda: al.nn.group_norm(_chunked(_IMAGES), 2),
    "nn.instance_norm": lambda: al.nn.instance_norm(_chunked(_IMAGES)),
    "nn.mse": lambda: al.nn.mse(_chunked(H), _chunked(("A", "float32", _FLIPPED))),
    "nn.cross_entropy": lambda: al.nn.cross_entropy(_chunked(_LOGITS), _chunked(_LABELS)),
    "nn.cross_entropy ignore_index, smoothing": lambda: al.nn.cross_entropy(
        _chunked(_LOGITS), _chunked(_LABELS), ignore_index=0, label_smoothing=0.1),
    "nn.dot_product_attention": lambda: al.nn.dot_product_attention(_chunked(_QKV), _chunked(_QKV), _chunked(_QKV),
                                                                     causal=True),
    "nn.one_hot": lambda: al.nn.one_hot(_chunked(_LABELS), 3),
    "nn.embedding": lambda: al.nn.embedding(_chunked(H), _chunked(("A", "int32", [[3, 0], [1, 1]]))),
    "nn.dropout": lambda: al.nn.dropout(_key(), _chunked(H), 0.5),
    **{f"nn.{name}": (lambda name=name: getattr(al.nn, name)(_chunked(H))) for name in (
        "relu6", "leaky_relu", "elu", "selu", "celu", "softsign", "log_sigmoid", "hard_sigmoid", "hard_silu",
        "hard_tanh", "tanh_shrink", "soft_shrink", "hard_shrink", "sparse_plus", "sparse_sigmoid", "squareplus",
        "glu", "sparsemax", "normalize")},
    "nn.threshold": lambda: al.nn.threshold(_chunked(H), 0.3, -2.0),
    "nn.moments": lambda: al.nn.moments(_chunked(H), axes=0),
    "nn.binary_cross_entropy": lambda: al.nn.binary_cross_entropy(
        al.nn.sigmoid(_chunked(H)), _chunked(("A", "float32", [[1.0, 0.0, 1.0, 0.0]] * 4))),
    "nn.categorical_cross_entropy": lambda: al.nn.categorical_cross_entropy(
        _chunked(H), _chunked(("A", "float32", np.eye(4).tolist())), from_logits=True),
    "nn.sparse_categorical_cross_entropy": lambda: al.nn.sparse_categorical_cross_entropy(
        _chunked(_LOGITS), _chunked(_LABELS), from_logits=True),
    "nn.multi_hot": lambda: al.nn.multi_hot(_chunked(("A", "int32", [[0, 2], [1, 1]])), 3),
    "nn.ctc_loss": lambda: al.nn.ctc_loss(_chunked(("A", "int32", [[1, 2], [3, 0]])), _chunked(_IMAGES)[:2, :, :, 0],
                                          _chunked(("A", "int32", [2, 1])), _chunked(("A", "int32", [4, 3]))),
    "nn.space_to_depth": lambda: al.nn.space_to_depth(_chunked(_IMAGES)[:, :4], 2),
    "nn.depth_to_space": lambda: al.nn.depth_to_space(al.nn.space_to_depth(_chunked(_IMAGES)[:, :4], 2), 2),
    "nn.unfold": lambda: al.nn.unfold(_chunked(_IMAGES), 2, padding=1, stride=(1, 2)),
    "nn.fold": lambda: al.nn.fold(al.nn.unfold(_chunked(_IMAGES), 2), (4, 2), 2),
    "nn.rms_normalization": lambda: al.nn.rms_normalization(_chunked(H), _chunked(H)[0]),
    "nn.psnr": lambda: al.nn.psnr(_chunked(H), _chunked(("A", "float32", _FLIPPED)), 4.0),
    "nn.ctc_decode": lambda: al.nn.ctc_decode(_chunked(_IMAGES)[:, :, :, 0], _chunked(("A", "int32", [4, 2, 0]))),
    "nn.polar": lambda: al.nn.polar(al.abs(_chunked(H)), _chunked(("A", "float32", _FLIPPED))),
    # arraylayer.image: slicing, take, pad and element-wise arithmetic over lazy images
    "image.gaussian_blur": lambda: al.image.gaussian_blur(_chunked(_IMAGES), (3, 2), (1.0, 0.5)),
    "image.sobel_edges": lambda: al.image.sobel_edges(_chunked(_RGB)),
    "image.ssim": lambda: al.image.ssim(_chunked(_IMAGES), al.flip(_chunked(_IMAGES), axis=1), filter_size=3),
    "image.extract_patches_3d": lambda: al.image.extract_patches_3d(_chunked(_IMAGES), 2, 1, padding="same"),
    "image.scale_and_translate": lambda: al.image.scale_and_translate(
        _chunked(_IMAGES), (3, 7, 3, 2), [1.5, 0.7], [0.2, -0.1], (1, 2), "cubic"),
    "image.perspective_transform": lambda: al.image.perspective_transform(
        _chunked(_RGB), _chunked(("A", "float32", [[0, 0], [3, 0], [3, 2], [0, 2]])),
        _chunked(("A", "float32", [[0.2, 0.1], [3.1, -0.2], [2.8, 2.1], [0.1, 1.9]]))),
    "image.elastic_transform": lambda: al.image.elastic_transform(_key(), _chunked(_RGB), 2.0, 0.7),
    "image.resize": lambda: al.image.resize(_chunked(_IMAGES), (4, 7)),
    "image.resize nearest": lambda: al.image.resize(_chunked(_IMAGES), (7, 3), interpolation="nearest"),
    "image.rgb_to_grayscale": lambda: al.image.rgb_to_grayscale(_chunked(_RGB)),
    "image.rgb_to_hsv": lambda: al.image.rgb_to_hsv(_chunked(_RGB)),
    "image.hsv_to_rgb": lambda: al.image.hsv_to_rgb(_chunked(_RGB)),
    "image.crop_images": lambda: al.image.crop_images(_chunked(_IMAGES), 1, 1, target_height=3, target_width=2),
    "image.pad_images": lambda: al.image.pad_images(_chunked(_IMAGES), 1, 2, 0, 1),
    "image.extract_patches": lambda: al.image.extract_patches(_chunked(_IMAGES), 2, 1, padding="same"),
    "image.map_coordinates": lambda: al.image.map_coordinates(
        _chunked(H), _chunked(("A", "float32", [[0.5, 2.5, -1.0], [1.25, 3.5, 0.0]])), 1),
    "image.affine_transform": lambda: al.image.affine_transform(
        _chunked(_RGB), _chunked(("A", "float32", [1.1, 0.23, -0.47, 0.13, 0.91, 0.71, 0.0, 0.0]))),
    # control flow on dask: Python loops and branches over lazy arrays
    "scan": lambda: al.scan(lambda c, x: (al.add(c, x), al.multiply(c, x)), _chunked(H)[0], _chunked(H)),
    "map": lambda: al.map(al.sum, _chunked(H)),
    "fori_loop": lambda: al.fori_loop(0, 3, lambda i, v: al.multiply(v, 2.0), _chunked(H)),
    "cond": lambda: al.cond(True, al.exp, al.negative, _chunked(H)),
    "switch": lambda: al.switch(1, [al.exp, al.negative], _chunked(H)),
    "associative_scan": lambda: al.associative_scan(al.add, _chunked(H)),
    "vmap": lambda: al.vmap(al.sum)(_chunked(H)),
    "stop_gradient": lambda: al.stop_gradient(_chunked(H)),
    "custom_gradient": lambda: al.custom_gradient(lambda x: (al.exp(x), lambda g: g))(_chunked(H)),
    "tree_map": lambda: al.tree_map(al.exp, {"a": _chunked(H), "b": [_chunked(ROWS3)]}),
    "tree_leaves": lambda: al.tree_leaves({"a": _chunked(H), "b": (_chunked(ROWS3),)}),
    "tree_map_with_path": lambda: al.tree_map_with_path(lambda path, x: al.exp(x), {"a": _chunked(H)}),
    "to_device": lambda: al.to_device(_chunked(H), "cpu"),
    # keras.ops' math group (arraylayer/models/mathops/): compositions, lazy on dask
    "top_k": lambda: al.top_k(_chunked(H), 2),
    "in_top_k": lambda: al.in_top_k(_chunked(("A", "int32", [0, 1, 2, 3])), _chunked(H), 2),
    **{name: (lambda name=name: getattr(al, name)(_chunked(H), _chunked(("A", "int32", [0, 2, 0, 1])),
                                                  num_segments=3))
       for name in ("segment_sum", "segment_prod", "segment_max", "segment_min")},
    **{name: (lambda name=name: getattr(al, name)(al.multiply(_chunked(H), 0.2)))
       for name in ("rsqrt", "erf", "erfc", "erfinv")},
    "logdet": lambda: al.logdet(_chunked(H)),
    "stft": lambda: al.stft(_chunked(("A", "float32", np.linspace(-1, 1, 24).tolist())), 8, 4, 8),
    "istft": lambda: al.istft(al.stft(_chunked(("A", "float32", np.linspace(-1, 1, 24).tolist())), 8, 4, 8), 8, 4, 8),
    "scatter": lambda: al.scatter(_chunked(("A", "int32", [[0, 1], [0, 1], [2, 3]])),
                                  _chunked(("A", "float32", [1.0, 2.0, 3.0])), (3, 4)),
    "scatter_update": lambda: al.scatter_update(_chunked(H), _chunked(("A", "int32", [[1], [3]])), _chunked(H)[:2]),
    "slice_update": lambda: al.slice_update(_chunked(H), (1, 2), _chunked(H)[:2, :2]),
    # keras' core saturate_cast/slice, einsum (dask's own, blockwise) and math cdist/extract_sequences/view_as_*
    "saturate_cast": lambda: al.saturate_cast(al.multiply(_chunked(H), 1e9), "int32"),
    "slice": lambda: al.slice(_chunked(H), (1, -1), (2, 3)),
    "einsum": lambda: al.einsum("ij,jk->ik", _chunked(H), _chunked(ROWS3)),
    "einsum bool": lambda: al.einsum("ij,kj", al.greater(_chunked(H), 0), al.less(_chunked(H), 1)),
    "cdist": lambda: al.cdist(_chunked(ROWS3), _chunked(ROWS3_B), p=1.0),
    "extract_sequences": lambda: al.extract_sequences(_chunked(H), 3, 1),
    "view_as_complex": lambda: al.view_as_complex(_chunked(H)[:, :2]),
    "view_as_real": lambda: al.view_as_real(_chunked(COMPLEX)),
    # keras' numpy view (dask's own view, the last axis in one chunk where it grows) and vectorize, core rearrange
    "view": lambda: al.view(_chunked(H), "uint8"),
    "view wider": lambda: al.view(al.view(_chunked(H), "uint8"), "float32"),
    "rearrange": lambda: al.rearrange(_chunked(H), "a (b c) -> c a b", c=2),
    "vectorize": lambda: al.vectorize(al.sum, signature="(n)->()")(_chunked(H)),
}

#: What dask has no kernel for: gradients (a dask array has no autodiff).
UNSUPPORTED_ON_DASK: Final[dict[str, Callable[[], Any]]] = {
    "grad": lambda: al.grad(al.sum)(_chunked(H)),
    "value_and_grad": lambda: al.value_and_grad(al.sum)(_chunked(H)),
    "jvp": lambda: al.jvp(al.exp, (_chunked(H),), (_chunked(H),)),
}

#: What computes by its nature: a while_loop's predicate decides each step (bool() of a dask array).
COMPUTES: Final[dict[str, str]] = {"while_loop": "its predicate is computed once per step, as bool() of it would be"}


@pytest.mark.parametrize("name", sorted({**ARRAY_CALLS, **MODULE_CALLS}))
def test_array_operators_indexing_random_nn_and_tree_compute_nothing(name):
    """The Array operators and keys, arraylayer.models.random, arraylayer.models.nn and the tree and interchange
    functions on dask inputs: nothing computed, NumPy's dtypes and values."""
    call = ARRAY_CALLS.get(name) or MODULE_CALLS[name]

    def make(backend: str) -> Any:
        with al.use_backend(backend):
            return call()
    _assert_lazy_and_numpys(name, make)


@pytest.mark.parametrize("name", sorted(UNSUPPORTED_ON_DASK))
def test_what_dask_cannot_do_is_refused_without_computing(name):
    with computation_counter() as counted, al.use_backend("dask"), pytest.raises(al.UnsupportedOperationError):
        UNSUPPORTED_ON_DASK[name]()
    assert counted.count == 0


#: (function, arguments after the images, keyword arguments): strides, dilation and every padding form
IMAGE_CALLS: Final[dict[str, tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]] = {
    "conv2d VALID": (al.nn.conv2d, ("kernel",), {}),
    "conv2d SAME stride 2": (al.nn.conv2d, ("kernel",), {"stride": 2, "padding": "SAME"}),
    "conv2d dilated, unequal strides": (al.nn.conv2d, ("kernel",), {"stride": (1, 2), "dilation": (2, 1),
                                                                     "padding": "SAME"}),
    "conv2d explicit pairs": (al.nn.conv2d, ("kernel",), {"padding": ((0, 2), (1, 0)), "dilation": (1, 2)}),
    "max_pool2d": (al.nn.max_pool2d, (2,), {}),
    "max_pool2d SAME": (al.nn.max_pool2d, ((3, 2),), {"stride": (2, 1), "padding": "SAME"}),
    "avg_pool2d SAME": (al.nn.avg_pool2d, (3,), {"stride": 2, "padding": "SAME"}),
    "avg_pool2d pairs": (al.nn.avg_pool2d, ((3, 2),), {"stride": (2, 1), "padding": ((1, 2), (0, 1))}),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", sorted(IMAGE_CALLS))
def test_convolution_and_pooling_run_numpys_kernels_per_block_of_images(case, data_format, dtype):
    """Chunked batches (and chunked image axes, rechunked whole lazily): nothing computed, the batch
    chunks kept, each image axis one chunk, and NumPy's dtype and values."""
    function, rest, options = IMAGE_CALLS[case]
    rng = np.random.default_rng(11)
    images, kernel = rng.standard_normal((5, 7, 6, 3)), rng.standard_normal((3, 2, 3, 4))
    if data_format == "NCHW":
        images, kernel = images.transpose(0, 3, 1, 2), kernel.transpose(3, 2, 0, 1)

    def call(backend: str, chunks: Any = None) -> Any:
        x = al.asarray(images.tolist(), dtype=dtype, **({} if chunks is None else {"chunks": chunks}))
        k = al.asarray(kernel.tolist(), dtype=dtype, **({} if chunks is None else {"chunks": 2}))
        with al.use_backend(backend):
            return function(x, *(k if a == "kernel" else a for a in rest), data_format=data_format, **options)

    with al.use_backend("numpy"):
        expected = call("numpy")
    with computation_counter() as counted, al.use_backend("dask"):
        lazy = call("dask", chunks=(2, 4, 4, 2))
    assert counted.count == 0
    assert isinstance(lazy, da.Array) and al.Dtype(lazy.dtype) is al.Dtype(expected.dtype) is al.Dtype(dtype)
    assert lazy.chunks == ((2, 2, 1), *((n,) for n in expected.shape[1:]))
    # the same NumPy kernel on fewer images: pools are exact; einsum may order a convolution's sums
    # differently for another batch size (seen in float64 NCHW), a few ulps
    ulps = 8 * float(al.finfo(dtype).eps) if function is al.nn.conv2d else 0.0
    np.testing.assert_allclose(lazy.compute().astype(np.float64), expected.astype(np.float64), rtol=ulps, atol=ulps)


def test_a_numpy_kernel_with_dask_images_is_gathered_into_every_task():
    images = da.from_array(np.arange(2 * 4 * 4 * 1, dtype=np.float32).reshape(2, 4, 4, 1), chunks=1)
    kernel = np.ones((2, 2, 1, 1), np.float32)
    with computation_counter() as counted:
        lazy = al.nn.conv2d(images, kernel)
    assert counted.count == 0 and lazy.chunks == ((1, 1), (3,), (3,), (1,))
    np.testing.assert_array_equal(lazy.compute(), al.nn.conv2d(images.compute(), kernel))


@pytest.mark.parametrize("case", ["label 5", "label -1", "id 4", "id -1"])
def test_labels_and_ids_out_of_range_raise_nns_error_when_computed(case):
    """nn.cross_entropy's labels and nn.embedding's ids are checked per chunk when the graph runs,
    with the error the other backends raise at the call."""
    what, bad = case.split()
    values = da.from_array(np.array([0, 1, int(bad), 2]), chunks=2)
    logits = da.from_array(np.zeros((4, 3), np.float32), chunks=2)
    table = da.from_array(np.eye(4, 3, dtype=np.float32), chunks=2)
    with computation_counter() as counted:
        lazy = al.nn.cross_entropy(logits, values) if what == "label" else al.nn.embedding(table, values)
    assert counted.count == 0
    with pytest.raises(al.InvalidArgumentError, match=f"{what} {bad} is not a"):
        lazy.compute()


def test_to_backend_onto_dask_computes_nothing():
    lazy = da.from_array(np.arange(6, dtype=np.int16).reshape(2, 3), chunks=1)
    with computation_counter() as counted:
        moved = al.to_backend(lazy, "dask", chunks=(2, 1))
        converted = al.to_backend(np.arange(4.0), "dask", chunks=2)
    assert counted.count == 0
    assert moved.chunks == ((2,), (1, 1, 1)) and converted.chunks == ((2, 2),)
    np.testing.assert_array_equal(moved.compute(), lazy.compute())


#: Public callables that take no arrays (dtype utilities, configuration, backend registry) or that
#: compute by definition (from_dlpack of a dask array is the array itself, to_backend to another
#: backend returns its values): the rest of arraylayer's public callables must be counted above.
NOT_COUNTED: Final = frozenset({
    "tree_paths", "is_tensor", "as_dtype", "register_dtype_alias", "is_bool_dtype", "is_int_dtype", "is_uint_dtype", "is_float_dtype",
    "is_complex_dtype", "is_numeric_dtype", "dtype_bits", "finfo", "iinfo", "promote_types", "result_type",
    "lattice_result_type", "can_cast", "promote_types_of_inputs", "set_dtype_promotion", "get_dtype_promotion",
    "dtype_promotion", "promotion_policies", "default_int_dtype", "default_uint_dtype", "default_float_dtype",
    "default_complex_dtype", "set_default_int_dtype", "set_default_uint_dtype", "set_default_float_dtype",
    "set_default_complex_dtype", "use_default_int_dtype", "use_default_uint_dtype", "use_default_float_dtype",
    "use_default_complex_dtype", "use_default_dtypes", "default_dtype", "infer_dtype", "available_backends",
    "installed_backends", "register_backend", "get_backend", "set_backend", "use_backend", "current_backend",
    "backend_of", "as_native_dtype", "as_arraylayer_dtype", "default_device", "set_default_device", "use_device",
    "narrow_64bit", "set_narrow_64bit", "use_narrow_64bit", "checked_scalars", "set_checked_scalars",
    "use_checked_scalars", "function_supported_dtypes",
    "function_unsupported_dtypes", "from_dlpack", "dev", "torch_guard_filter",
})


def _public_callables() -> set[str]:
    """Every public function of arraylayer, arraylayer.models.random and arraylayer.models.nn (linalg and fft
    are in FUNCTIONS), by name."""
    names = {n for n in al.__all__ if callable(getattr(al, n)) and not isinstance(getattr(al, n), type)}
    for module in ("random", "nn", "image"):
        names |= {f"{module}.{n}" for n, f in vars(getattr(al, module)).items() if not n.startswith("_")
                  and callable(f) and not isinstance(f, type) and f.__module__.startswith(f"arraylayer.models.{module}")}
    return names


def test_every_public_function_is_counted():
    counted = set(FUNCTIONS) | set(MODULE_CALLS) | set(UNSUPPORTED_ON_DASK) | {"to_backend"} | NOT_COUNTED | set(COMPUTES)
    missing = sorted(_public_callables() - counted)
    assert not missing, f"count these on dask (MODULE_CALLS) or say why not (NOT_COUNTED): {missing}"


def test_a_chain_of_calls_builds_one_graph_and_computes_nothing():
    x = da.random.default_rng(0).random((1000, 100), chunks=(250, 100)).astype(np.float32)
    y = da.arange(100, dtype=np.int8, chunks=50)
    with computation_counter() as counted:
        result = al.mean(al.add(al.multiply(x, 2), y), axis=0)
        checked = al.add(y, 100)  # a Python int is checked from its value: 100 fits int8
        with pytest.raises(al.ScalarOverflowError):
            al.add(y, 1000)  # does not fit int8: refused from the Python value, nothing computed
    assert counted.count == 0
    assert isinstance(result, da.Array) and result.dtype == np.float32 and checked.dtype == np.int8
    # float32 sums in dask's chunk order, not NumPy's pairwise order: a few ulps apart
    np.testing.assert_allclose(result.compute(), np.mean(x.compute() * 2 + y.compute(), axis=0), rtol=1e-5)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_take_along_axis_with_fewer_indices_than_values_on_several_chunks(axis):
    """indices shorter than x along ``axis`` (SciPy's quantile takes a few positions of a sorted
    axis), both chunked differently on the other axis: NumPy's values, nothing computed."""
    host = np.arange(60.0, dtype=np.float32).reshape(6, 10)[::-1, ::-1] * 0.5
    positions = np.random.default_rng(1).integers(0, host.shape[axis], (6, 10))
    positions = positions[:3] if axis == 0 else positions[:, :3]
    x = da.from_array(host, chunks=(2, 3))
    indices = da.from_array(positions, chunks=(4, 2))
    with computation_counter() as counted:
        result = al.take_along_axis(x, indices, axis=axis)
    assert counted.count == 0 and isinstance(result, da.Array) and result.shape == positions.shape
    np.testing.assert_array_equal(result.compute(), np.take_along_axis(host, positions, axis=axis))


def test_values_that_decide_a_shape_follow_dasks_unknown_lengths():
    host = np.array([[3.0, np.nan, 1.0], [0.0, 3.0, np.nan]], np.float32)
    x = da.from_array(host, chunks=1)
    with computation_counter() as counted:
        values = al.unique_values(x)
        rows, cols = al.nonzero(x)
        masked = al.Array(x)[al.Array(x) > 0.5].native
    assert counted.count == 0
    for lazy in (values, rows, masked):
        assert math.isnan(lazy.shape[0])  # known once computed, dask's convention
    np.testing.assert_array_equal(values.compute(), np.sort(np.unique_values(host)))  # NaNs stay distinct
    np.testing.assert_array_equal(rows.compute(), np.nonzero(host)[0])
    np.testing.assert_array_equal(cols.compute(), np.nonzero(host)[1])
    np.testing.assert_array_equal(masked.compute(), host[host > 0.5])


def test_nonzero_of_an_empty_array_in_several_chunks():
    x = da.from_array(np.zeros((4, 0), np.int8), chunks=(2, 1))  # dask's own nonzero raised TypeError here
    rows, cols = al.nonzero(x)
    assert rows.compute().tolist() == [] and cols.compute().tolist() == []


def test_out_of_bounds_indices_raise_arraylayers_error_when_computed():
    x = da.arange(5, chunks=2)
    with computation_counter() as counted:
        taken = al.take(x, da.from_array(np.array([0, 7]), chunks=1))
    assert counted.count == 0
    with pytest.raises(al.OutOfBoundsIndexError, match="holds 7"):
        taken.compute()


@pytest.mark.parametrize("key", [(7,), (7, 0), (0, -5)], ids=["one array", "two arrays", "second array"])
def test_out_of_bounds_array_keys_raise_arraylayers_error_when_computed(key):
    x = al.Array(da.arange(12, chunks=5).reshape(3, 4))
    with computation_counter() as counted:
        parts = tuple(al.Array(da.from_array(np.array([0, k]), chunks=1)) for k in key)
        selected = x[parts]
        x[parts] = 1
    assert counted.count == 0
    for lazy in (selected, x):
        with pytest.raises(al.OutOfBoundsIndexError, match="out of bounds"):
            lazy.native.compute()


def test_assigning_more_values_than_a_mask_selects_fails_as_numpy_when_computed():
    x = al.Array(da.from_array(np.arange(6.0).reshape(3, 2), chunks=1))
    with computation_counter() as counted:
        x[x[:, 0] > 1] = al.Array(da.ones((3, 2), chunks=1))  # the mask selects 2 rows
    assert counted.count == 0
    with pytest.raises(ValueError, match="cannot assign 3 input values to the 2 output values"):
        x.native.compute()


def test_negative_array_repeats_raise_numpys_error_when_computed():
    with pytest.raises(al.InvalidArgumentError, match="non-negative"):
        al.repeat(np.arange(3.0), np.array([1, -1, 2]))
    with computation_counter() as counted:
        repeated = al.repeat(da.arange(3.0, chunks=2), da.from_array(np.array([1, -1, 2]), chunks=2))
    assert counted.count == 0
    with pytest.raises(al.InvalidArgumentError, match="non-negative"):
        repeated.compute()


# -- no extra work in the graph ------------------------------------------------------------------------
def _tasks(x: Any) -> int:
    return len(dict(x.__dask_graph__()))


X = da.ones((400, 300), dtype=np.float32, chunks=(100, 100))
Y = da.ones((400, 300), dtype=np.float32, chunks=(100, 100))
I8 = da.ones((400, 300), dtype=np.int8, chunks=(100, 100))
M = da.ones((300, 50), dtype=np.float32, chunks=(100, 50))

#: (arraylayer call, the same computation written with dask.array)
SAME_GRAPH = {
    "add": (lambda: al.add(X, Y), lambda: X + Y),
    "multiply by a weak scalar": (lambda: al.multiply(X, 2.5), lambda: da.multiply(X, np.float32(2.5))),
    "exp": (lambda: al.exp(X), lambda: da.exp(X)),
    "sum": (lambda: al.sum(X, axis=0), lambda: da.sum(X, axis=0)),
    "mean": (lambda: al.mean(X), lambda: da.mean(X)),
    "max": (lambda: al.max(X, axis=1), lambda: da.max(X, axis=1)),
    "matmul": (lambda: al.matmul(X, M), lambda: X @ M),
    "where": (lambda: al.where(X > 0.5, X, Y), lambda: da.where(X > 0.5, X, Y)),
    "concat": (lambda: al.concat([X, Y], axis=0), lambda: da.concatenate([X, Y], axis=0)),
    "reshape": (lambda: al.reshape(X, (4, 100, 300)), lambda: X.reshape((4, 100, 300))),
    "promotion int8 + float32": (lambda: al.add(I8, X), lambda: I8.astype(np.float32) + X),
    "cumulative_sum": (lambda: al.cumulative_sum(X, axis=0), lambda: da.cumsum(X, axis=0)),
    "astype to the same dtype": (lambda: al.astype(X, "float32"), lambda: X.astype(np.float32)),
    "asarray with copy=True": (lambda: al.asarray(X, copy=True), lambda: da.asarray(X)),
    "where with a weak scalar": (lambda: al.where(X > 0.5, X, 0.0), lambda: da.where(X > 0.5, X, np.float32(0.0))),
}


@pytest.mark.parametrize("case", sorted(SAME_GRAPH))
def test_arraylayer_adds_no_tasks_to_dasks_own_graph(case):
    """Where dtypes agree arraylayer adds no task, nor a task of another kind (the graph's layers
    are named by what their tasks do); a cast appears only where promotion needs one."""
    ours, theirs = SAME_GRAPH[case]
    assert _tasks(ours()) == _tasks(theirs()), case
    assert _layer_kinds(ours()) == _layer_kinds(theirs()), case


def _layer_kinds(x: Any) -> list[str]:
    """The graph's layers by kind: their names without the token (``sum-aggregate-<token>``)."""
    return sorted(name.rsplit("-", 1)[0] for name in x.__dask_graph__().layers)


# -- chunks ----------------------------------------------------------------------------------------------
def test_creation_takes_chunks_and_chooses_them_without():
    with al.use_backend("dask"):
        assert al.zeros((4, 6), chunks=2).chunks == ((2, 2), (2, 2, 2))
        assert al.full((5,), 1.5, chunks=(2,)).chunks == ((2, 2, 1),)
        assert al.arange(10, chunks=4).chunks == ((4, 4, 2),)
        assert al.eye(3, 4, chunks=2).chunks == ((2, 1), (2, 2))
        assert al.linspace(0, 1, 5, chunks=2).chunks == ((2, 2, 1),)
        assert al.asarray([[1, 2], [3, 4]], chunks=1).chunks == ((1, 1), (1, 1))
        default = al.ones((10**4, 10**4))  # dask's "auto": chunks of about 128 MiB
        assert default.dtype == np.float32 and len(default.chunks[0]) > 1
        np.testing.assert_array_equal(al.eye(3, 4, k=1, chunks=2).compute(), np.eye(3, 4, k=1, dtype=np.float32))
    x = da.ones((6, 4), chunks=(3, 2))
    assert al.zeros_like(x).chunks == x.chunks  # x's own chunks
    assert al.ones_like(x, chunks=-1).chunks == ((6,), (4,))


@pytest.mark.parametrize("bad", ["abc", -3, 1.5, (2, 2, 2), ((1, 1),)])
def test_bad_chunks_name_the_fix(bad):
    with al.use_backend("dask"), pytest.raises(al.InvalidArgumentError, match="Pass an int"):
        al.zeros((4, 5), chunks=bad)


def test_chunks_on_an_unchunked_backend_is_an_error(backend):
    if backend == "dask":
        pytest.skip("dask takes chunks")
    with al.use_backend(backend), pytest.raises(al.InvalidArgumentError, match="not chunked"):
        al.zeros(3, chunks=2)


# -- interchange ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "int8", "uint16", "bfloat16", "complex64", "bool"])
def test_to_dask_and_back_keeps_dtype_and_values(backend, dtype):
    if backend == "dask":
        pytest.skip("the round trip is from another backend")
    source = make_array(backend, dtype, [1, 0, 1, 1, 0])
    lazy = al.to_backend(source, "dask", chunks=2)
    assert isinstance(lazy, da.Array) and lazy.chunks == ((2, 2, 1),)
    assert al.Dtype(lazy.dtype) == dtype
    if dtype not in al.valid_dtypes(backend):  # torch's uint16: stored, not computed with
        with pytest.raises(al.UnsupportedDtypeError, match=dtype):
            al.to_backend(lazy, backend)
        return
    back = al.to_backend(lazy, backend)  # computed on the way out
    assert al.backend_of(back).name == backend and al.Dtype(back.dtype) == dtype
    np.testing.assert_array_equal(al.to_backend(back, "numpy"), make_array("numpy", dtype, [1, 0, 1, 1, 0]))


def test_dask_is_an_installed_backend_with_every_dtype():
    assert "dask" in al.installed_backends()
    assert al.valid_dtypes("dask") == al.valid_dtypes("numpy")
    assert al.backend_of(da.ones(2)).name == "dask"


def test_a_dask_array_in_use_backend_of_another_backend_is_moved_by_asarray():
    if "torch" not in al.installed_backends():
        pytest.skip("torch not installed")
    x = da.arange(4, dtype=np.int16, chunks=2)
    with al.use_backend("torch"):
        moved = al.asarray(x)
    assert al.backend_of(moved).name == "torch" and al.Dtype(moved.dtype) == "int16"


def test_the_computation_counter_counts():
    """The counting method is sound: computing a result is one graph."""
    with computation_counter() as counted:
        dask.compute(da.ones(3) + 1)
    assert counted.count == 1

