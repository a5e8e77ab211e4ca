"""arraylayer.models.nn against SciPy and float64 formulas (complementing tests/test_nn.py): every
activation and the softmax family at random and at extreme logits (+-100) in float16, bfloat16,
float32 and float64; conv2d and the pools with asymmetric padding, dilation and unequal strides
against naive loops; the gradient of every nn function against finite differences on jax, torch and
tensorflow, and a small model's gradient inside jax.jit / tf.function / torch.compile.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import scipy.special as sp
from conftest import arr, make_array, to_np
from conftest import parametrize_ad_backend as pytest_generate_tests  # noqa: F401 - pytest's hook: ad_backend
from test_gradients_agree import assert_gradients, backend_gradient, compiled, finite_difference, host, native

import arraylayer as al

nn = al.nn
RNG = np.random.default_rng(14)
X = RNG.uniform(-3, 3, (3, 5))
EXTREMES = np.array([[-100.0, -1.0, 0.0, 1.0, 100.0], [100.0, 100.0, -100.0, 0.0, 3.0]])


# -- references (float64 NumPy/SciPy) ----------------------------------------------------------------
def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


UNARY = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "sigmoid": (nn.sigmoid, sp.expit),
    "softplus": (nn.softplus, lambda x: np.logaddexp(x, 0)),
    "silu": (nn.silu, lambda x: x * sp.expit(x)),
    "gelu": (nn.gelu, lambda x: 0.5 * x * (1 + sp.erf(x / math.sqrt(2)))),
    "gelu_tanh": (lambda x: nn.gelu(x, approximate=True), _gelu_tanh),
    "softmax": (nn.softmax, lambda x: sp.softmax(x, axis=-1)),
    "softmax_axis0": (lambda x: nn.softmax(x, axis=0), lambda x: sp.softmax(x, axis=0)),
    "log_softmax": (nn.log_softmax, lambda x: sp.log_softmax(x, axis=-1)),
    "logsumexp": (nn.logsumexp, sp.logsumexp),
    "logsumexp_axis": (lambda x: nn.logsumexp(x, axis=1, keepdims=True), lambda x: sp.logsumexp(x, axis=1, keepdims=True)),
    "layer_norm": (nn.layer_norm, lambda x: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("values", [X, EXTREMES], ids=["random", "extreme"])
def test_values_against_references(backend, name, values):
    ours, reference = UNARY[name]
    x32 = values.astype(np.float32).astype(np.float64)
    with np.errstate(over="ignore"):
        expected = reference(x32)
    got = ours(arr(backend, x32))
    assert al.as_arraylayer_dtype(got.dtype) == "float32"
    np.testing.assert_allclose(to_np(got), expected, rtol=2e-6, atol=1e-6 if name != "layer_norm" else 1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_other_float_dtypes_are_kept_and_stable(backend, name, dtype, x64_on):
    ours, reference = UNARY[name]
    x = arr(backend, EXTREMES, dtype)
    got = ours(x)
    assert al.as_arraylayer_dtype(got.dtype) == dtype
    values = to_np(got)
    assert np.all(np.isfinite(values)), values
    tolerance = {"float16": 2e-3, "bfloat16": 2e-2, "float64": 1e-12}[dtype]
    np.testing.assert_allclose(values, reference(EXTREMES), rtol=tolerance, atol=tolerance * 2)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_integers_and_complex_are_refused(backend, name):
    ours, _ = UNARY[name]
    for dtype in ("int32", "complex64"):
        with pytest.raises(al.InvalidDtypeError, match="real floating"):
            ours(arr(backend, [[1, 2, 3]], dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_keeps_its_relative_precision_in_the_tails(backend, dtype, x64_on):
    """sigmoid(-20) is 2.06e-9 and sigmoid(-80) 1.8e-35: relative error of a few ulps, not a 0."""
    x = np.array([-80.0, -40.0, -20.0, -5.0, 5.0, 20.0])
    got = to_np(nn.sigmoid(arr(backend, x, dtype)))
    expected = sp.expit(x.astype(dtype).astype(np.float64))
    expected = np.where(expected < np.finfo(dtype).tiny, 0.0, expected)  # below float32's normal range
    np.testing.assert_allclose(got, expected, rtol=8 * np.finfo(dtype).eps, atol=0)


def test_arraylayer_arrays_in_and_out(backend):
    x = al.Array(arr(backend, X))
    for f in (nn.softmax, nn.gelu, nn.relu):
        assert isinstance(f(x), al.Array)
    np.testing.assert_allclose(to_np(nn.gelu(x).native), UNARY["gelu"][1](X.astype(np.float32)), rtol=1e-5, atol=1e-6)


# -- one_hot, losses, layer_norm, dropout, embedding --------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(backend, reduction):
    logits, labels = EXTREMES, np.array([4, 2])
    per_example = -sp.log_softmax(logits, axis=-1)[np.arange(2), labels]
    expected = {"mean": per_example.mean(), "sum": per_example.sum(), "none": per_example}[reduction]
    got = nn.cross_entropy(arr(backend, logits), arr(backend, labels, "int64" if backend != "jax" else "int32"),
                           reduction=reduction)
    assert al.as_arraylayer_dtype(got.dtype) == "float32"
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-6)
    # classes along axis 0
    got0 = nn.cross_entropy(arr(backend, logits.T), arr(backend, labels, "int32"), axis=0, reduction=reduction)
    np.testing.assert_allclose(to_np(got0), expected, rtol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse(backend, reduction):
    p, t = X, X[::-1] + 0.5
    squares = (p.astype(np.float32).astype(np.float64) - t.astype(np.float32)) ** 2
    expected = {"mean": squares.mean(), "sum": squares.sum(), "none": squares}[reduction]
    got = nn.mse(arr(backend, p), arr(backend, t), reduction=reduction)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5)


def test_layer_norm_with_scale_offset_and_axes(backend):
    x = RNG.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    scale, offset = RNG.uniform(0.5, 1.5, (3, 4)).astype(np.float32), RNG.uniform(-1, 1, (4,)).astype(np.float32)
    x64 = x.astype(np.float64)
    mean, var = x64.mean((1, 2), keepdims=True), x64.var((1, 2), keepdims=True)
    expected = (x64 - mean) / np.sqrt(var + 1e-3) * scale + offset
    got = nn.layer_norm(arr(backend, x), arr(backend, scale), arr(backend, offset), axis=(1, 2), eps=1e-3)
    np.testing.assert_allclose(to_np(got), expected, rtol=1e-5, atol=1e-5)
    with pytest.raises(al.AxisError):
        nn.layer_norm(arr(backend, x), axis=3)


def test_dropout(backend):
    with al.use_backend(backend):
        k = al.random.key(3)
        x = arr(backend, np.ones((50, 40)))
        dropped = to_np(nn.dropout(k, x, 0.25))
        keep = to_np(al.astype(al.random.bernoulli(k, 0.75, shape=(50, 40)), "float32"))
    np.testing.assert_allclose(dropped, keep / 0.75, rtol=1e-7)  # the same key: the same elements kept
    assert 0.2 < 1 - keep.mean() < 0.3
    assert to_np(nn.dropout(k, x, 0.25, training=False)).min() == 1.0


def test_embedding(backend):
    table = RNG.uniform(-1, 1, (5, 3)).astype(np.float32)
    ids = np.array([[0, 4, 4], [2, 1, 0]])
    got = nn.embedding(arr(backend, table), arr(backend, ids, "int32"))
    np.testing.assert_array_equal(to_np(got), table[ids].astype(np.float64))


# -- conv2d and pools against naive loops ---------------------------------------------------------------
def _explicit(padding: Any, size: tuple[int, int], span: tuple[int, int], stride: tuple[int, int]) -> Any:
    if padding == "VALID":
        return ((0, 0), (0, 0))
    if padding == "SAME":  # TensorFlow's definition, written out
        out = [math.ceil(n / s) for n, s in zip(size, stride, strict=True)]
        total = [max((o - 1) * s + k - n, 0) for o, s, k, n in zip(out, stride, span, size, strict=True)]
        return tuple((t // 2, t - t // 2) for t in total)
    if isinstance(padding, int):
        return ((padding, padding), (padding, padding))
    return padding


def naive_conv(x: np.ndarray, w: np.ndarray, stride: Any, padding: Any, dilation: Any) -> np.ndarray:
    """NHWC x, HWIO w: loops over every output position."""
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    span = ((kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1)
    (top, bottom), (left, right) = _explicit(padding, (h, wd), span, stride)
    xp = np.zeros((n, h + top + bottom, wd + left + right, c))
    xp[:, top:top + h, left:left + wd] = x
    oh, ow = (xp.shape[1] - span[0]) // stride[0] + 1, (xp.shape[2] - span[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    pixel = xp[:, i * stride[0] + a * dilation[0], j * stride[1] + b * dilation[1], :]
                    out[:, i, j, :] += pixel @ w[a, b]
    return out


def naive_pool(x: np.ndarray, window: Any, stride: Any, padding: Any, kind: str) -> np.ndarray:
    n, h, wd, c = x.shape
    (top, bottom), (left, right) = _explicit(padding, (h, wd), window, stride)
    oh = (h + top + bottom - window[0]) // stride[0] + 1
    ow = (wd + left + right - window[1]) // stride[1] + 1
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride[0] - top, j * stride[1] - left
            patch = x[:, max(r0, 0):max(r0 + window[0], 0), max(c0, 0):max(c0 + window[1], 0), :]
            out[:, i, j, :] = patch.max(axis=(1, 2)) if kind == "max" else patch.mean(axis=(1, 2))
    return out


CONVS = [
    dict(stride=(1, 1), padding="VALID", dilation=(1, 1)),
    dict(stride=(2, 2), padding="SAME", dilation=(1, 1)),
    dict(stride=(1, 2), padding="SAME", dilation=(2, 1)),
    dict(stride=(2, 1), padding=1, dilation=(1, 1)),
    dict(stride=(1, 1), padding=((0, 2), (1, 0)), dilation=(1, 2)),
]


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv2d_against_loops(backend, case, data_format):
    options = CONVS[case]
    x = RNG.uniform(-1, 1, (2, 7, 6, 3)).astype(np.float32)
    w = RNG.uniform(-1, 1, (3, 2, 3, 4)).astype(np.float32)
    expected = naive_conv(x.astype(np.float64), w.astype(np.float64), **options)
    if data_format == "NHWC":
        got = to_np(nn.conv2d(arr(backend, x), arr(backend, w), data_format="NHWC", **options))
    else:
        got = to_np(nn.conv2d(arr(backend, x.transpose(0, 3, 1, 2)), arr(backend, w.transpose(3, 2, 0, 1)),
                              data_format="NCHW", **options)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


POOLS = [
    dict(window=(2, 2), stride=None, padding="VALID"),
    dict(window=(3, 3), stride=(2, 2), padding="SAME"),
    dict(window=(2, 3), stride=(1, 2), padding="SAME"),
    dict(window=(3, 2), stride=(2, 1), padding=((1, 2), (0, 1))),
]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("case", range(len(POOLS)))
def test_pools_against_loops(backend, case, data_format, kind):
    options = dict(POOLS[case])
    x = RNG.uniform(-1, 1, (2, 7, 6, 3)).astype(np.float32)
    window = options["window"]
    stride = window if options["stride"] is None else options["stride"]
    expected = naive_pool(x.astype(np.float64), window, stride, options["padding"], kind)
    pool = nn.max_pool2d if kind == "max" else nn.avg_pool2d
    if data_format == "NHWC":
        got = to_np(pool(arr(backend, x), **options))
    else:
        got = to_np(pool(arr(backend, x.transpose(0, 3, 1, 2)), data_format="NCHW", **options)).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_conv2d_in_bfloat16(backend):
    x, w = RNG.uniform(-1, 1, (1, 4, 4, 2)), RNG.uniform(-1, 1, (2, 2, 2, 3))
    got = nn.conv2d(arr(backend, x, "bfloat16"), arr(backend, w, "bfloat16"), padding="SAME")
    assert al.as_arraylayer_dtype(got.dtype) == "bfloat16"
    import ml_dtypes
    xq, wq = x.astype(ml_dtypes.bfloat16).astype(np.float64), w.astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(to_np(got), naive_conv(xq, wq, (1, 1), "SAME", (1, 1)), rtol=3e-2, atol=3e-2)


# -- gradients ----------------------------------------------------------------------------------------
_LABELS = np.array([2, 0, 4])
_TABLE_IDS = np.array([[1, 2], [2, 0]])
_XIMG = RNG.uniform(-1, 1, (2, 6, 5, 2))
_WIMG = RNG.uniform(-1, 1, (3, 2, 2, 3))


def _constant(backend: str, values: np.ndarray) -> Any:
    return make_array(backend, "int32" if backend == "jax" else "int64", values.tolist())


GRADIENT_CASES = {
    **{name: (f, ref, (X,)) for name, (f, ref) in UNARY.items() if name != "relu"},
    "relu": (nn.relu, lambda x: np.maximum(x, 0), (X,)),  # random points: no exact zeros
    "cross_entropy": (lambda b: lambda x: nn.cross_entropy(x, _constant(b, _LABELS)),
                      lambda x: -sp.log_softmax(x, -1)[np.arange(3), _LABELS].mean(), (X,)),
    "mse": (nn.mse, lambda p, t: ((p - t) ** 2).mean(), (X, X[::-1].copy())),
    "layer_norm_affine": (lambda x, s, o: nn.layer_norm(x, s, o),
                          lambda x, s, o: (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
                          * s + o, (X, X[0] + 0.5, X[1])),
    "embedding": (lambda b: lambda t: nn.embedding(t, _constant(b, _TABLE_IDS)), lambda t: t[_TABLE_IDS], (X,)),
    "conv2d_same": (lambda x, w: nn.conv2d(x, w, stride=2, padding="SAME"),
                    lambda x, w: naive_conv(x, w, (2, 2), "SAME", (1, 1)), (_XIMG, _WIMG)),
    "conv2d_nchw_dilated": (lambda x, w: nn.conv2d(x, w, padding=1, dilation=2, data_format="NCHW"),
                            lambda x, w: naive_conv(x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), (1, 1),
                                                    1, (2, 2)).transpose(0, 3, 1, 2),
                            (_XIMG.transpose(0, 3, 1, 2).copy(), _WIMG.transpose(3, 2, 0, 1).copy())),
    "max_pool2d": (lambda x: nn.max_pool2d(x, 2, padding="SAME"),
                   lambda x: naive_pool(x, (2, 2), (2, 2), "SAME", "max"), (_XIMG,)),
    "avg_pool2d": (lambda x: nn.avg_pool2d(x, 3, stride=2, padding="SAME"),
                   lambda x: naive_pool(x, (3, 3), (2, 2), "SAME", "avg"), (_XIMG,)),
}
_NEEDS_BACKEND = {"cross_entropy", "embedding"}


# -- the rest of keras.ops.nn (arraylayer/models/nn/activations_more.py, probabilistic_losses.py, ctc.py):
# their NumPy references are tests/test_nn_activations_more.py's, checked there against torch's functions
import test_nn_activations_more as more  # noqa: E402

_XA = RNG.uniform(-4, 4, (4, 6))  # random: no input on a kink (0, +-0.5, +-1, +-3, 6) but by chance
GRADIENT_CASES.update({name: (f, reference, (_XA,)) for name, (f, reference, _) in more.REFERENCES.items()})
_P, _T, _Z = RNG.uniform(0.05, 0.95, (5, 3)), RNG.uniform(0, 1, (5, 3)), RNG.standard_normal((5, 3)) * 2
_ONE_HOT = np.eye(3)[[0, 2, 1, 1, 0]]
_CTC_LABELS, _CTC_LENGTHS, _CTC_FRAMES = np.array([[1, 2, 2], [3, 1, 0]]), np.array([3, 2]), np.array([7, 5])


def _floats(backend: str, values: np.ndarray) -> Any:
    return make_array(backend, "float64", values.tolist())


def _ints32(backend: str, values: np.ndarray) -> Any:
    return make_array(backend, "int32", values.tolist())


def _bce(p: np.ndarray, t: np.ndarray) -> np.ndarray:
    return -np.mean(t * np.log(p) + (1 - t) * np.log(1 - p))


GRADIENT_CASES.update({
    "binary_cross_entropy": (lambda b: lambda p: nn.binary_cross_entropy(p, _floats(b, _T)),
                             lambda p: _bce(p, _T), (_P,)),
    "binary_cross_entropy_from_logits": (
        lambda b: lambda z: nn.binary_cross_entropy(z, _floats(b, _T), from_logits=True),
        lambda z: _bce(1 / (1 + np.exp(-z)), _T), (_Z,)),
    "categorical_cross_entropy_from_logits": (
        lambda b: lambda z: nn.categorical_cross_entropy(z, _floats(b, _ONE_HOT), from_logits=True),
        lambda z: -np.mean(np.sum(_ONE_HOT * more.ref_log_softmax(z), axis=-1)), (_Z,)),
    "categorical_cross_entropy_of_probabilities": (
        lambda b: lambda p: nn.categorical_cross_entropy(p, _floats(b, _ONE_HOT)),
        lambda p: -np.mean(np.sum(_ONE_HOT * np.log(p / p.sum(-1, keepdims=True)), axis=-1)), (_P,)),
    "sparse_categorical_cross_entropy": (
        lambda b: lambda z: nn.sparse_categorical_cross_entropy(z, _constant(b, np.array([0, 2, 1, 1, 0])),
                                                                from_logits=True),
        lambda z: -np.mean(more.ref_log_softmax(z)[np.arange(5), [0, 2, 1, 1, 0]]), (_Z,)),
    "ctc_loss": (lambda b: lambda z: nn.ctc_loss(_ints32(b, _CTC_LABELS), z, _ints32(b, _CTC_LENGTHS),
                                                 _ints32(b, _CTC_FRAMES)),
                 lambda z: more.ref_ctc(z, _CTC_LABELS, _CTC_LENGTHS, _CTC_FRAMES), (RNG.standard_normal((2, 7, 5)),)),
    "moments": (lambda x: al.add(*nn.moments(x, axes=0)), lambda x: x.mean(0) + x.var(0), (X,)),
    "normalize": (lambda x: nn.normalize(x, axis=-1),
                  lambda x: x / np.linalg.norm(x, axis=-1, keepdims=True), (X,)),
})
_NEEDS_BACKEND |= {"binary_cross_entropy", "binary_cross_entropy_from_logits", "categorical_cross_entropy_from_logits",
                   "categorical_cross_entropy_of_probabilities", "sparse_categorical_cross_entropy", "ctc_loss"}


# -- convolution, pooling and normalisation in 1 to 3 spatial dimensions (tests/test_conv_pool_norm.py):
# torch.nn.functional in float64 is the reference, channels-first inputs
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def _torch(function: Any) -> Any:
    return lambda *args: function(*(torch.tensor(a) for a in args)).numpy()


def _u(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape)


GRADIENT_CASES.update({
    "conv1d": (lambda x, w: nn.conv1d(x, w, 2, 1, data_format="NCW", groups=2),
               _torch(lambda x, w: F.conv1d(x, w, stride=2, padding=1, groups=2)), (_u(1, 2, 5), _u(4, 1, 3))),
    "conv3d": (lambda x, w: nn.conv3d(x, w, data_format="NCDHW"), _torch(F.conv3d), (_u(1, 1, 3, 3, 3), _u(2, 1, 2, 2, 2))),
    "conv_transpose": (lambda x, w: nn.conv_transpose(x, w, 2, 1, 1, data_format="NCHW"),
                       _torch(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)),
                       (_u(1, 2, 3, 3), _u(2, 2, 2, 2))),
    "depthwise_conv": (lambda x, w: nn.depthwise_conv(x, w, data_format="NCHW"),
                       _torch(lambda x, w: F.conv2d(x, w, groups=2)), (_u(1, 2, 4, 4), _u(4, 1, 2, 2))),
    "separable_conv": (lambda x, d, p: nn.separable_conv(x, d, p, data_format="NCHW"),
                       _torch(lambda x, d, p: F.conv2d(F.conv2d(x, d, groups=2), p)),
                       (_u(1, 2, 4, 4), _u(2, 1, 2, 2), _u(3, 2, 1, 1))),
    "max_pool1d": (lambda x: nn.max_pool1d(x, 2, data_format="NCW"), _torch(lambda x: F.max_pool1d(x, 2)), (_u(1, 2, 6),)),
    "avg_pool1d": (lambda x: nn.avg_pool1d(x, 3, 2, 1, data_format="NCW"),
                   _torch(lambda x: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False)), (_u(1, 2, 6),)),
    "max_pool3d": (lambda x: nn.max_pool3d(x, 2, data_format="NCDHW"), _torch(lambda x: F.max_pool3d(x, 2)),
                   (_u(1, 1, 4, 4, 4),)),
    "avg_pool3d": (lambda x: nn.avg_pool3d(x, 2, data_format="NCDHW"), _torch(lambda x: F.avg_pool3d(x, 2)),
                   (_u(1, 1, 4, 4, 4),)),
    "adaptive_avg_pool": (lambda x: nn.adaptive_avg_pool(x, (2, 3), data_format="NCHW"),
                          _torch(lambda x: F.adaptive_avg_pool2d(x, (2, 3))), (_u(1, 2, 5, 7),)),
    "adaptive_max_pool": (lambda x: nn.adaptive_max_pool(x, (2, 3), data_format="NCHW"),
                          _torch(lambda x: F.adaptive_max_pool2d(x, (2, 3))), (_u(1, 2, 5, 7),)),
    "batch_norm": (lambda x, m, v, s, o: nn.batch_norm(x, m, v, s, o, axis=1),
                   _torch(lambda x, m, v, s, o: F.batch_norm(x, m, v, s, o)),
                   (_u(2, 3, 2, 2), _u(3), RNG.uniform(0.5, 2, 3), _u(3), _u(3))),
    "group_norm": (lambda x, s, o: nn.group_norm(x, 2, s, o, axis=1), _torch(lambda x, s, o: F.group_norm(x, 2, s, o)),
                   (_u(2, 4, 2, 2), _u(4), _u(4))),
    "instance_norm": (lambda x: nn.instance_norm(x, axis=1), _torch(F.instance_norm), (_u(2, 2, 3, 2),)),
})

NO_GRADIENT_CASE = {"dropout": "its own test below (the gradient is the mask / (1 - rate))",
                    "one_hot": "integer labels in, a constant out",
                    "multi_hot": "integer labels in, a constant out",
                    "dot_product_attention": "tests/test_gradients_agree.py (the nn.dot_product_attention cases)",
                    **dict.fromkeys(("depth_to_space", "space_to_depth", "unfold", "fold", "rms_normalization", "psnr",
                                     "polar"), "tests/test_nn_more.py (its GRADIENT_CASES)"),
                    "ctc_decode": "integer labels out; its scores are sums of maxima (test_nn_more checks the values)"}


def test_every_nn_function_has_a_gradient_case():
    uncovered = [name for name in nn.__all__
                 if name not in NO_GRADIENT_CASE and not any(case.startswith(name) for case in GRADIENT_CASES)]
    assert not uncovered, f"add a gradient case for {uncovered}"


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_gradient_against_finite_differences(ad_backend, name, x64_on):
    f, reference, args = GRADIENT_CASES[name]
    f = f(ad_backend) if name in _NEEDS_BACKEND else f
    cotangent = RNG.uniform(0.5, 1.5, np.shape(reference(*args)))
    expected = finite_difference(reference, list(args), cotangent)
    assert_gradients(backend_gradient(ad_backend, f, list(args), cotangent), expected, name)


def test_dropout_gradient(ad_backend, x64_on):
    with al.use_backend(ad_backend):
        k = al.random.key(5)
        mask = to_np(al.astype(al.random.bernoulli(k, 0.6, shape=(3, 5)), "float64"))
    got = backend_gradient(ad_backend, lambda x: nn.dropout(k, x, 0.4), [X], np.ones((3, 5)))
    np.testing.assert_allclose(got[0], mask / 0.6, rtol=1e-12)


@pytest.mark.parametrize("name", ["softmax", "gelu", "sigmoid"])
def test_gradients_at_extreme_logits_are_finite(ad_backend, name, x64_on):
    f, reference = UNARY[name]
    got = backend_gradient(ad_backend, f, [EXTREMES], np.ones((2, 5)))
    assert np.all(np.isfinite(got[0]))
    expected = finite_difference(reference, [EXTREMES], np.ones((2, 5)))
    assert_gradients(got, expected, name)


def _model(x: Any, w: Any, labels: Any) -> Any:
    h = nn.gelu(nn.conv2d(x, w, padding="SAME", dilation=(1, 2)))
    h = nn.avg_pool2d(nn.max_pool2d(h, 2, stride=1, padding="SAME"), 2, padding="SAME")
    logits = nn.layer_norm(al.reshape(h, (h.shape[0], -1)))
    return al.add(nn.cross_entropy(logits, labels), nn.logsumexp(nn.softmax(logits)))


def test_gradients_inside_the_compilers(ad_backend, x64_on):
    """The whole chain under jax.jit / tf.function / torch.compile(fullgraph=True): the same gradient as eager."""
    x, w = native(ad_backend, _XIMG), native(ad_backend, _WIMG)
    labels = _constant(ad_backend, np.array([1, 7]))
    g = al.grad(_model, argnums=(0, 1))
    eager = [host(ad_backend, t) for t in g(x, w, labels)]
    fast = [host(ad_backend, t) for t in compiled(ad_backend, g)(x, w, labels)]
    assert_gradients(fast, eager, "model under the compiler")
    expected = finite_difference(lambda a, b: _model_np(a, b), [_XIMG, _WIMG], np.array(1.0))
    assert_gradients(eager, expected, "model against finite differences")


def _model_np(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    h = naive_conv(x, w, (1, 1), "SAME", (1, 2))
    h = 0.5 * h * (1 + sp.erf(h / math.sqrt(2)))
    h = naive_pool(naive_pool(h, (2, 2), (1, 1), "SAME", "max"), (2, 2), (2, 2), "SAME", "avg")
    logits = h.reshape(h.shape[0], -1)
    logits = (logits - logits.mean(-1, keepdims=True)) / np.sqrt(logits.var(-1, keepdims=True) + 1e-5)
    ce = -sp.log_softmax(logits, -1)[np.arange(2), [1, 7]].mean()
    return ce + sp.logsumexp(sp.softmax(logits, -1))


def test_dropout_and_one_hot_inside_the_compilers(ad_backend):
    """Keyed dropout and one_hot under jax.jit / tf.function / torch.compile(fullgraph=True): the
    same values as eager (the key picks the same elements)."""
    with al.use_backend(ad_backend):
        k = al.random.key(9)
    x, labels = arr(ad_backend, np.ones((4, 6))), arr(ad_backend, [0, 3, 5, 1], "int32")

    def f(key: Any, x: Any, labels: Any) -> Any:
        return al.add(nn.dropout(key, x, 0.5), nn.one_hot(labels, 6, dtype="float32"))

    with al.use_backend(ad_backend):  # arraylayer.models.random draws on the active backend
        fast = compiled(ad_backend, f)(k, x, labels)
    np.testing.assert_array_equal(to_np(fast), to_np(f(k, x, labels)))


def test_one_hot_inside_the_compilers(ad_backend):
    labels = arr(ad_backend, [0, 3, 5, 1], "int32")
    with al.use_backend(ad_backend):
        fast = compiled(ad_backend, lambda y: nn.one_hot(y, 6))(labels)
    np.testing.assert_array_equal(to_np(fast), np.eye(6)[[0, 3, 5, 1]])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_max_pool_gradient_at_ties_goes_to_the_first_maximum(ad_backend, data_format, x64_on):
    """Ties are common in max pooling (a window of zeros after relu). Every framework's own pooling
    gradient gives the whole cotangent to the first maximum of the window in row-major order, and so
    does arraylayer on all three (unlike al.max, which shares it among equal maxima)."""
    x = np.array([[1.0, 1.0, 0.0, 2.0], [1.0, 0.0, 2.0, 2.0], [0.0, 0.0, 5.0, 1.0], [0.0, 0.0, 1.0, 5.0]])
    expected = np.array([[1.0, 0, 0, 1], [0, 0, 0, 0], [1, 0, 1, 0], [0, 0, 0, 0]])
    shape = (1, 4, 4, 1) if data_format == "NHWC" else (1, 1, 4, 4)
    got = backend_gradient(ad_backend, lambda v: nn.max_pool2d(v, 2, data_format=data_format),
                           [x.reshape(shape)], np.ones((1, 2, 2, 1) if data_format == "NHWC" else (1, 1, 2, 2)))
    np.testing.assert_array_equal(got[0].reshape(4, 4), expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_cross_entropy_at_extreme_logits_in_every_float_dtype(backend, dtype):
    logits, labels = EXTREMES, np.array([4, 0])  # the second row: log 2 to pay, with logits of 100
    got = nn.cross_entropy(arr(backend, logits, dtype), arr(backend, labels, "int32"), reduction="none")
    assert al.as_arraylayer_dtype(got.dtype) == dtype
    expected = -sp.log_softmax(logits, axis=-1)[np.arange(2), labels]
    tolerance = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 1e-6}[dtype]
    np.testing.assert_allclose(to_np(got), expected, rtol=tolerance, atol=tolerance)


def test_embedding_inside_the_compilers(ad_backend):
    table = RNG.uniform(-1, 1, (5, 3)).astype(np.float32)
    ids = np.array([[0, 4], [2, 2]])
    with al.use_backend(ad_backend):
        fast = compiled(ad_backend, nn.embedding)(arr(ad_backend, table), arr(ad_backend, ids, "int32"))
    np.testing.assert_array_equal(to_np(fast), table[ids].astype(np.float64))
