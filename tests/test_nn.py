"""arraylayer.models.nn against NumPy references written here (float64 formulas, naive loops for
convolution and pooling), on every backend: values, dtypes, stability, bad input, dropout keys,
and the compilers. Gradients are in tests/test_gradients_agree.py (the ``nn.`` cases)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import arraylayer as al

RNG = np.random.default_rng(5)
X = RNG.standard_normal((3, 5))
ERF = np.vectorize(math.erf)


# -- references (float64, independent of arraylayer) --------------------------------------------------------
def ref_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def ref_logsumexp(x: np.ndarray, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    peak = np.max(x, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x - peak), axis=axis, keepdims=True)) + peak
    return out if keepdims else np.squeeze(out, axis=axis)


def ref_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def ref_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    logp = logits - ref_logsumexp(logits, axis=-1, keepdims=True)
    return float(-np.mean(logp[np.arange(len(labels)), labels]))


def ref_layer_norm(x: np.ndarray, scale: Any = None, offset: Any = None, eps: float = 1e-5) -> np.ndarray:
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    return y * (1 if scale is None else scale) + (0 if offset is None else offset)


def same_padding(size: int, extent: int, stride: int) -> tuple[int, int]:
    total = max((math.ceil(size / stride) - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def ref_conv2d(x: np.ndarray, k: np.ndarray, stride: int, padding: Any, dilation: int) -> np.ndarray:
    """NHWC x, HWIO k: a loop over output positions and kernel taps."""
    n, h, w, c = x.shape
    kh, kw, _, o = k.shape
    eh, ew = (kh - 1) * dilation + 1, (kw - 1) * dilation + 1
    if padding == "SAME":
        pads = (same_padding(h, eh, stride), same_padding(w, ew, stride))
    elif padding == "VALID":
        pads = ((0, 0), (0, 0))
    else:
        pads = ((padding, padding), (padding, padding))
    xp = np.pad(x, ((0, 0), *pads, (0, 0)))
    oh, ow = (xp.shape[1] - eh) // stride + 1, (xp.shape[2] - ew) // stride + 1
    out = np.zeros((n, oh, ow, o))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    out[:, i, j, :] += xp[:, i * stride + a * dilation, j * stride + b * dilation, :] @ k[a, b]
    return out


def ref_pool(x: np.ndarray, window: int, stride: int, padding: str, kind: str) -> np.ndarray:
    """NHWC max or mean over windows; SAME windows count only the elements inside the input."""
    n, h, w, c = x.shape
    pads = (same_padding(h, window, stride), same_padding(w, window, stride)) if padding == "SAME" else ((0, 0), (0, 0))
    oh = (h + sum(pads[0]) - window) // stride + 1
    ow = (w + sum(pads[1]) - window) // stride + 1
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            top, left = i * stride - pads[0][0], j * stride - pads[1][0]
            block = x[:, max(top, 0):top + window, max(left, 0):left + window, :]
            out[:, i, j, :] = block.max(axis=(1, 2)) if kind == "max" else block.mean(axis=(1, 2))
    return out


def on(backend: str, value: np.ndarray, dtype: str = "float32") -> Any:
    with al.use_backend(backend):
        return al.asarray(value.tolist(), dtype=dtype)


def host(x: Any) -> np.ndarray:
    return np.asarray(al.to_backend(x, "numpy"), dtype=np.float64)


# -- values and dtypes --------------------------------------------------------------------------------------
ELEMENTWISE = {
    "relu": (lambda x: al.nn.relu(x), lambda x: np.maximum(x, 0)),
    "sigmoid": (lambda x: al.nn.sigmoid(x), ref_sigmoid),
    "silu": (lambda x: al.nn.silu(x), lambda x: x * ref_sigmoid(x)),
    "softplus": (lambda x: al.nn.softplus(x), lambda x: np.log1p(np.exp(x))),
    "gelu tanh": (lambda x: al.nn.gelu(x, approximate=True),
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    "softmax": (lambda x: al.nn.softmax(x, axis=1), lambda x: ref_softmax(x, 1)),
    "log_softmax": (lambda x: al.nn.log_softmax(x, axis=0), lambda x: np.log(ref_softmax(x, 0))),
    "logsumexp": (lambda x: al.nn.logsumexp(x, axis=1), lambda x: ref_logsumexp(x, 1)),
    "logsumexp all": (lambda x: al.nn.logsumexp(x), lambda x: ref_logsumexp(x)),
    "logsumexp keepdims": (lambda x: al.nn.logsumexp(x, axis=0, keepdims=True), lambda x: ref_logsumexp(x, 0, True)),
    "layer_norm": (lambda x: al.nn.layer_norm(x), ref_layer_norm),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_dtypes_match_the_references(backend, name, dtype):
    if dtype not in al.valid_dtypes(backend):
        pytest.skip(f"{dtype} is not valid on {backend} as configured")
    ours, reference = ELEMENTWISE[name]
    result = ours(on(backend, X, dtype))
    assert str(al.Dtype(result.dtype)) == dtype
    np.testing.assert_allclose(host(result), reference(X), rtol=2e-6 if dtype == "float32" else 1e-12, atol=1e-7)


def test_exact_gelu(backend):
    result = al.nn.gelu(on(backend, X))
    np.testing.assert_allclose(host(result), 0.5 * X * (1 + ERF(X / math.sqrt(2))), rtol=2e-6, atol=1e-7)


def test_one_hot_and_embedding(backend):
    labels = on(backend, np.array([2, 0, 1, 2]), "int32")
    hot = al.nn.one_hot(labels, 3)
    assert str(al.Dtype(hot.dtype)) == str(al.default_float_dtype())
    np.testing.assert_array_equal(host(hot), np.eye(3)[[2, 0, 1, 2]])
    assert str(al.Dtype(al.nn.one_hot(labels, 4, dtype="int8").dtype)) == "int8"
    table = RNG.standard_normal((5, 3))
    ids = np.array([[4, 0], [1, 1]])
    rows = al.nn.embedding(on(backend, table), on(backend, ids, "int64" if "int64" in al.valid_dtypes(backend) else "int32"))
    assert tuple(rows.shape) == (2, 2, 3)
    np.testing.assert_allclose(host(rows), table[ids], rtol=1e-6)


def test_losses(backend):
    logits = RNG.standard_normal((6, 4)) * 3
    labels = np.array([0, 3, 1, 1, 2, 0])
    loss = al.nn.cross_entropy(on(backend, logits), on(backend, labels, "int32"))
    assert tuple(loss.shape) == () and str(al.Dtype(loss.dtype)) == "float32"
    np.testing.assert_allclose(float(host(loss)), ref_cross_entropy(logits, labels), rtol=1e-5)
    each = al.nn.cross_entropy(on(backend, logits), on(backend, labels, "int32"), reduction="none")
    assert tuple(each.shape) == (6,)
    # classes on axis 0: the same losses
    by_column = al.nn.cross_entropy(on(backend, logits.T), on(backend, labels, "int32"), axis=0, reduction="sum")
    np.testing.assert_allclose(float(host(by_column)), 6 * ref_cross_entropy(logits, labels), rtol=1e-5)
    p, t = RNG.standard_normal(7), RNG.standard_normal(7)
    np.testing.assert_allclose(float(host(al.nn.mse(on(backend, p), on(backend, t)))), np.mean((p - t) ** 2), rtol=1e-6)


def test_layer_norm_with_scale_and_offset(backend):
    scale, offset = RNG.standard_normal(5), RNG.standard_normal(5)
    result = al.nn.layer_norm(on(backend, X), on(backend, scale), on(backend, offset), eps=1e-3)
    np.testing.assert_allclose(host(result), ref_layer_norm(X, scale, offset, 1e-3), rtol=1e-5, atol=1e-6)


# -- stability ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_no_overflow_at_extreme_logits(backend, dtype):
    logits = np.array([[100.0, -100.0, 0.0], [-100.0, -100.0, -100.0], [60.0, 60.0, 59.0]])
    labels = np.array([0, 1, 2])
    x = on(backend, logits, dtype)
    probabilities = host(al.nn.softmax(x))
    assert np.all(np.isfinite(probabilities))
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-2)
    assert np.all(np.isfinite(host(al.nn.log_softmax(x))))
    loss = host(al.nn.cross_entropy(x, on(backend, labels, "int32"), reduction="none"))
    expected = [0.0, math.log(3), math.log(1 + 2 * math.e)]  # exact in float64
    # logits near 100 are held to the dtype's spacing there: 2**-17 * 100, 0.0625, 0.5
    np.testing.assert_allclose(loss, expected, atol={"float32": 1e-4, "float16": 0.07, "bfloat16": 0.5}[dtype])
    assert np.all(np.isfinite(host(al.nn.sigmoid(on(backend, np.array([-100.0, 100.0]), dtype)))))
    np.testing.assert_allclose(host(al.nn.softplus(on(backend, np.array([100.0, -100.0]), dtype))), [100.0, 0.0],
                               atol=1e-30, rtol=1e-2)
    assert float(host(al.nn.logsumexp(on(backend, np.array([-np.inf, -np.inf]), dtype)))) == -np.inf


# -- convolution and pooling ----------------------------------------------------------------------------
CONVS = [(1, "VALID", 1), (2, "SAME", 1), (1, "SAME", 2), (2, 1, 1), (3, "SAME", 1)]


@pytest.mark.parametrize("stride,padding,dilation", CONVS)
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_conv2d_against_loops(backend, stride, padding, dilation, data_format):
    x = RNG.standard_normal((2, 7, 6, 3))
    k = RNG.standard_normal((3, 2, 3, 4))
    expected = ref_conv2d(x, k, stride, padding, dilation)
    if data_format == "NHWC":
        got = host(al.nn.conv2d(on(backend, x), on(backend, k), stride, padding, dilation))
    else:
        nchw = al.nn.conv2d(on(backend, x.transpose(0, 3, 1, 2)), on(backend, k.transpose(3, 2, 0, 1)), stride,
                            padding, dilation, data_format="NCHW")
        got = host(nchw).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("window,stride,padding", [(2, 2, "VALID"), (3, 2, "SAME"), (3, 1, "SAME"), (2, 1, "VALID")])
@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_pooling_against_loops(backend, kind, window, stride, padding, data_format):
    x = RNG.standard_normal((2, 7, 5, 3))
    pool = getattr(al.nn, f"{kind}_pool2d")
    expected = ref_pool(x, window, stride, padding, kind)
    if data_format == "NHWC":
        got = host(pool(on(backend, x), window, stride, padding))
    else:
        got = host(pool(on(backend, x.transpose(0, 3, 1, 2)), window, stride, padding, data_format="NCHW"))
        got = got.transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)


def test_conv2d_promotes_and_keeps_the_dtype(backend):
    x = on(backend, RNG.standard_normal((1, 4, 4, 2)), "float16" if "float16" in al.valid_dtypes(backend) else "float32")
    k = on(backend, RNG.standard_normal((2, 2, 2, 3)), "float32")
    assert str(al.Dtype(al.nn.conv2d(x, k).dtype)) == "float32"


# -- dropout ----------------------------------------------------------------------------------------------
def test_dropout_is_the_same_on_every_backend(backend):
    x = np.ones((40, 25))
    with al.use_backend(backend):
        key = al.random.key(3)
    dropped = host(al.nn.dropout(key, on(backend, x), 0.25))
    with al.use_backend("numpy"):
        reference = np.asarray(al.nn.dropout(al.random.key(3), x.astype(np.float32), 0.25))
    np.testing.assert_array_equal(dropped, reference)  # the same mask: the keys' streams are identical
    kept = dropped != 0
    assert 0.68 < kept.mean() < 0.82  # 1000 draws of p = 0.75: 5 standard deviations
    np.testing.assert_allclose(dropped[kept], 1 / 0.75, rtol=1e-6)
    assert al.nn.dropout(key, x, 0.25, training=False) is x


def test_dropout_gradient(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no autodiff")
    with al.use_backend(backend):
        key = al.random.key(8)
    x = on(backend, np.ones((6, 7)))
    grad = host(al.grad(lambda a: al.sum(al.nn.dropout(key, a, 0.5)))(x))
    mask = host(al.nn.dropout(key, x, 0.5)) != 0
    np.testing.assert_array_equal(grad, np.where(mask, 2.0, 0.0))


# -- errors -------------------------------------------------------------------------------------------------
BAD = [
    (lambda b: al.nn.relu(on(b, np.array([1, 2]), "int32")), al.InvalidDtypeError, "floating"),
    (lambda b: al.nn.dropout(None, on(b, X), 1.0), al.InvalidArgumentError, r"\[0, 1\)"),
    (lambda b: al.nn.one_hot(on(b, X), 3), al.InvalidDtypeError, "integer labels"),
    (lambda b: al.nn.one_hot(on(b, np.array([1]), "int32"), 0), al.InvalidArgumentError, "at least one class"),
    (lambda b: al.nn.cross_entropy(on(b, X), on(b, np.array([1, 2]), "int32")), al.InvalidArgumentError, "do not match"),
    (lambda b: al.nn.mse(on(b, X), on(b, X), reduction="avg"), al.InvalidArgumentError, "choose one of"),
    (lambda b: al.nn.cross_entropy(on(b, X[:2]), on(b, np.array([1, 5]), "int32")), al.InvalidArgumentError,
     r"label 5 is not a class"),
    (lambda b: al.nn.cross_entropy(on(b, X[:2]), on(b, np.array([-1, 0]), "int32")), al.InvalidArgumentError,
     r"label -1"),
    (lambda b: al.nn.max_pool2d(on(b, np.ones((1, 4, 4, 1))), 2, padding="FULL"), al.InvalidArgumentError, "'VALID'"),
    (lambda b: al.nn.avg_pool2d(on(b, np.ones((1, 4, 4, 1))), 0), al.InvalidArgumentError, "positive int"),
    (lambda b: al.nn.conv2d(on(b, np.ones((1, 4, 4, 2))), on(b, np.ones((2, 2, 3, 1)))), al.InvalidArgumentError,
     "2 channels but the kernel takes 3"),
    (lambda b: al.nn.conv2d(on(b, np.ones((4, 4, 2))), on(b, np.ones((2, 2, 2, 1)))), al.InvalidArgumentError, "4-d"),
    (lambda b: al.nn.conv2d(on(b, np.ones((1, 4, 4, 2))), on(b, np.ones((2, 2, 2, 1))), data_format="NWHC"),
     al.InvalidArgumentError, "NHWC"),
    (lambda b: al.nn.max_pool2d(on(b, np.ones((1, 2, 2, 1))), 3), al.InvalidArgumentError, "larger than"),
    # a window of padding only would be -inf (max) or 0/0 (avg)
    (lambda b: al.nn.max_pool2d(on(b, np.ones((1, 5, 5, 1))), 2, padding=2), al.InvalidArgumentError, "pad less"),
    (lambda b: al.nn.avg_pool2d(on(b, np.ones((1, 5, 5, 1))), 2, padding=((0, 0), (2, 0))), al.InvalidArgumentError,
     "pad less"),
    (lambda b: al.nn.avg_pool2d(on(b, np.ones((1, 4, 4, 1))), 2.5), al.InvalidArgumentError, "positive int"),
    (lambda b: al.nn.embedding(on(b, X), on(b, np.array([0, -1]), "int32")), al.InvalidArgumentError, "id -1 is not"),
    (lambda b: al.nn.embedding(on(b, X), on(b, np.array([[3]]), "int32")), al.InvalidArgumentError, "id 3 is not"),
]
BAD_ON_DASK_TOO = [
    (lambda b: al.nn.layer_norm(on(b, X), eps=-1e-3), al.InvalidArgumentError, "eps must be >= 0"),  # sqrt(< 0): NaN
    (lambda b: al.nn.layer_norm(on(b, X), eps=float("nan")), al.InvalidArgumentError, "eps must be >= 0"),
]


@pytest.mark.parametrize("index", range(len(BAD_ON_DASK_TOO)))
def test_bad_arguments_everywhere(backend, index):
    call, error, message = BAD_ON_DASK_TOO[index]
    with pytest.raises(error, match=message):
        call(backend)


@pytest.mark.parametrize("index", range(len(BAD)))
def test_bad_input_gets_arraylayers_errors(backend, index):
    call, error, message = BAD[index]
    with pytest.raises(error, match=message):
        host(call(backend))  # dask checks label and id values when computed (tests/test_dask.py: lazily)


# -- Arrays and compilers -----------------------------------------------------------------------------------
def test_arrays_in_arrays_out(backend):
    a = al.Array(on(backend, RNG.standard_normal((1, 4, 4, 2))))
    for result in (al.nn.relu(a), al.nn.softmax(a), al.nn.max_pool2d(a, 2), al.nn.gelu(a),
                   al.nn.conv2d(a, al.Array(on(backend, np.ones((2, 2, 2, 1)))))):
        assert isinstance(result, al.Array)


def test_under_the_compilers(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler")
    from test_compile_and_grad import compiler

    def model(x, k):
        hidden = al.nn.relu(al.nn.conv2d(x, k, padding="SAME"))
        return al.nn.logsumexp(al.nn.max_pool2d(hidden, 2), axis=-1)

    x, k = RNG.standard_normal((2, 6, 6, 2)), RNG.standard_normal((3, 3, 2, 4))
    eager = host(model(on(backend, x), on(backend, k)))
    compiled = host(compiler(backend)(model)(on(backend, x), on(backend, k)))
    np.testing.assert_allclose(compiled, eager, rtol=1e-5, atol=1e-6)
