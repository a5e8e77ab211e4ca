"""arraylayer.models.layers: the same initial weights on every backend, apply against float64 NumPy
formulas written here, policies, bad input, the compilers and gradients across backends."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pytest
from test_nn import host, ref_layer_norm
from test_nn_attention import ref_attention

import arraylayer as al
from arraylayer.models import layers
from arraylayer.models import mixed_precision as mp

F, HEADS, HIDDEN = 8, 2, 12
X = np.random.default_rng(3).standard_normal((2, 5, F))
INITS = {
    "dense": lambda k: layers.dense.init(k, F, 3),
    "embedding": lambda k: layers.embedding.init(k, 11, F, stddev=0.5),
    "conv2d": lambda k: layers.conv2d.init(k, 3, 4, (3, 2)),
    "layer_norm": lambda k: layers.layer_norm.init(k, F),
    "rms_norm": lambda k: layers.rms_norm.init(k, F),
    "mlp": lambda k: layers.mlp.init(k, F, HIDDEN),
    "attention": lambda k: layers.attention.init(k, F, HEADS),
    "transformer_block": lambda k: layers.transformer_block.init(k, F, HEADS, HIDDEN),
}


@functools.cache  # the parameters are never changed in place; jax compiles each draw's shape once
def init_on(backend: str, name: str, seed: int = 0) -> Any:
    with al.use_backend(backend):
        return INITS[name](al.random.key(seed))


def to_numpy(tree: Any) -> Any:
    return al.tree_map(lambda a: np.asarray(al.to_backend(a, "numpy"), np.float64), tree)


@pytest.mark.parametrize("name", sorted(INITS))
def test_initial_weights_are_the_same_on_every_backend(backend, name):
    expected, got = to_numpy(init_on("numpy", name)), to_numpy(init_on(backend, name))
    leaves_expected, leaves_got = al.tree_leaves(expected), al.tree_leaves(got)
    assert len(leaves_got) == len(leaves_expected) and len(leaves_got) >= 1
    for e, g in zip(leaves_expected, leaves_got, strict=True):
        assert e.shape == g.shape
        # uniforms are bit-identical; normals (embedding, conv2d) within float32 ulps of the quantile
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)
    if name == "dense":
        np.testing.assert_array_equal(got["w"], expected["w"])


def test_shapes_and_default_initialisers():
    p = to_numpy(init_on("numpy", "transformer_block"))
    assert p["attention"]["q"]["w"].shape == (F, F) and p["mlp"]["up"]["w"].shape == (F, HIDDEN)
    assert (p["norm1"]["scale"] == 1).all() and (p["norm1"]["offset"] == 0).all() and (p["mlp"]["up"]["b"] == 0).all()
    limit = math.sqrt(6 / (F + HIDDEN))
    assert np.abs(p["mlp"]["up"]["w"]).max() <= limit
    assert init_on("numpy", "conv2d")["w"].shape == (3, 2, 3, 4)
    assert not (p["attention"]["q"]["w"] == p["attention"]["k"]["w"]).any()  # split keys


# -- apply against NumPy formulas ---------------------------------------------------------------------------
def np_dense(p, x):
    return x @ p["w"] + p.get("b", 0)


def np_gelu(x):
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def np_attention(p, x, causal=False):
    b, t, f = x.shape
    q, k, v = (np_dense(p[n], x).reshape(b, t, HEADS, f // HEADS) for n in "qkv")
    return np_dense(p["out"], ref_attention(q, k, v, causal=causal).reshape(b, t, f))


def np_block(p, x):
    x = x + np_attention(p["attention"], ref_layer_norm(x, p["norm1"]["scale"], p["norm1"]["offset"]), causal=True)
    h = ref_layer_norm(x, p["norm2"]["scale"], p["norm2"]["offset"])
    return x + np_dense(p["mlp"]["down"], np_gelu(np_dense(p["mlp"]["up"], h)))


APPLIES = {
    "dense": (lambda p, x: layers.dense.apply(p, x), np_dense),
    "layer_norm": (lambda p, x: layers.layer_norm.apply(p, x), lambda p, x: ref_layer_norm(x, p["scale"], p["offset"])),
    "rms_norm": (lambda p, x: layers.rms_norm.apply(p, x),
                 lambda p, x: x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6) * p["scale"]),
    "mlp": (lambda p, x: layers.mlp.apply(p, x), lambda p, x: np_dense(p["down"], np_gelu(np_dense(p["up"], x)))),
    "attention": (lambda p, x: layers.attention.apply(p, x, heads=HEADS, causal=True),
                  lambda p, x: np_attention(p, x, causal=True)),
    "transformer_block": (lambda p, x: layers.transformer_block.apply(p, x, heads=HEADS), np_block),
}


@pytest.mark.parametrize("name", sorted(APPLIES))
def test_apply_matches_the_formula(backend, name):
    params = init_on(backend, name, seed=5)
    run, oracle = APPLIES[name]
    with al.use_backend(backend):
        y = run(params, al.asarray(X.tolist(), dtype="float32"))
    assert str(al.Dtype(y.dtype)) == "float32"
    np.testing.assert_allclose(host(y), oracle(to_numpy(params), X.astype(np.float32).astype(np.float64)),
                               rtol=2e-5, atol=2e-5)


def test_embedding_and_conv2d_apply(backend):
    table = init_on(backend, "embedding")
    with al.use_backend(backend):
        rows = layers.embedding.apply(table, al.asarray([[3, 0], [10, 3]], dtype="int32"))
    np.testing.assert_array_equal(host(rows), to_numpy(table)["table"][[[3, 0], [10, 3]]])
    conv = init_on(backend, "conv2d")
    images = np.random.default_rng(1).standard_normal((2, 5, 4, 3))
    with al.use_backend(backend):
        y = layers.conv2d.apply(conv, al.asarray(images.tolist(), dtype="float32"), padding="VALID")
    p = to_numpy(conv)
    windows = np.lib.stride_tricks.sliding_window_view(images, (3, 2), axis=(1, 2))  # n, 3, 3, c, kh, kw
    expected = np.einsum("nijcab,abco->nijo", windows, p["w"]) + p["b"]
    np.testing.assert_allclose(host(y), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("compute", ["bfloat16", "float16"])
def test_policy_casts_compute_and_output(backend, compute):
    policy = mp.policy(f"params=float32,compute={compute},output=float32")
    params = init_on(backend, "transformer_block", seed=5)
    with al.use_backend(backend):
        x = al.asarray(X.tolist(), dtype="float32")
        y = layers.transformer_block.apply(params, x, heads=HEADS, policy=policy)
        inner = layers.mlp.apply(params["mlp"], x, policy=mp.Policy("float32", compute, compute))
    assert str(al.Dtype(y.dtype)) == "float32" and str(al.Dtype(inner.dtype)) == compute
    assert {str(al.Dtype(p.dtype)) for p in al.tree_leaves(params)} == {"float32"}  # the params stay as they are
    np.testing.assert_allclose(host(y), np_block(to_numpy(params), X), atol=0.15)


BAD = [
    (lambda: layers.attention.init(al.random.key(0), 10, 3), "must divide"),
    (lambda: layers.dense.init(al.random.key(0), 0, 3), "in_features=0"),
    (lambda: layers.conv2d.init(al.random.key(0), 3, 4, (3, -1)), "kernel_size=-1"),
    (lambda: layers.rms_norm.apply({"scale": np.ones(3, np.float32)}, np.ones(3, np.float32), eps=-1.0), "eps"),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_bad_arguments(index):
    call, match = BAD[index]
    with pytest.raises(al.InvalidArgumentError, match=match):
        call()


#: (call of the backend's params and input, error type, what the message names); each leaked a
#: KeyError, TypeError, ValueError or AttributeError from inside before, or a bare matmul error
HOSTILE = {
    "missing weight": (lambda p, x: layers.dense.apply({"b": p["dense"]["b"]}, x), al.InvalidArgumentError,
                       r"dense.apply: params has no 'w'"),
    "params a list": (lambda p, x: layers.dense.apply([p["dense"]["w"]], x), al.InvalidArgumentTypeError,
                      r"dense.apply: params is list"),
    "params None": (lambda p, x: layers.layer_norm.apply(None, x), al.InvalidArgumentTypeError,
                    r"layer_norm.apply: params is NoneType"),
    "wrong features": (lambda p, x: layers.dense.apply(p["dense"], al.concat([x, x], axis=-1)),
                       al.InvalidArgumentError, r"dense.apply: x has 16 features .* params\['w'\] takes 8"),
    "norm features": (lambda p, x: layers.rms_norm.apply(p["rms_norm"], x[..., :3]), al.InvalidArgumentError,
                      r"rms_norm.apply: x has 3 features"),
    "mlp half": (lambda p, x: layers.mlp.apply({"up": p["mlp"]["up"]}, x), al.InvalidArgumentError,
                 r"mlp.apply: params has no 'down'"),
    "mlp inner": (lambda p, x: layers.mlp.apply({"up": p["mlp"]["up"], "down": {}}, x), al.InvalidArgumentError,
                  r"mlp.apply: params\['down'\] has no 'w'"),
    "attention 2-d": (lambda p, x: layers.attention.apply(p["attention"], x[0], heads=HEADS), al.InvalidArgumentError,
                      r"attention.apply: x of shape \(5, 8\) is not 3-d"),
    "heads a float": (lambda p, x: layers.attention.apply(p["attention"], x, heads=2.0), al.InvalidArgumentTypeError,
                      r"attention.apply: heads=2.0"),
    "block lacks a part": (lambda p, x: layers.transformer_block.apply({}, x, heads=HEADS), al.InvalidArgumentError,
                           r"transformer_block.apply: params has no 'norm1'"),
    "conv channels": (lambda p, x: layers.conv2d.apply(p["conv2d"], al.ones((1, 4, 4, 5))), al.InvalidArgumentError,
                      r"conv2d.apply: x has 5 features"),
    "conv 3-d": (lambda p, x: layers.conv2d.apply(p["conv2d"], x), al.InvalidArgumentError, r"is not 4-d"),
    "embedding table": (lambda p, x: layers.embedding.apply({}, al.asarray([1])), al.InvalidArgumentError,
                        r"embedding.apply: params has no 'table'"),
    "policy a string": (lambda p, x: layers.dense.apply(p["dense"], x, policy="bfloat16"), al.InvalidArgumentTypeError,
                        r"not a Policy"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_bad_trees_and_inputs_name_the_layer_and_parameter(backend, case):
    call, error, match = HOSTILE[case]
    params = {name: init_on(backend, name) for name in ("dense", "rms_norm", "mlp", "attention", "conv2d")}
    with al.use_backend(backend):
        x = al.asarray(X.tolist(), dtype="float32")
        with pytest.raises(error, match=match):
            call(params, x)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda k: layers.dense.init(k, 3.0, 4), al.InvalidArgumentTypeError, r"dense.init: in_features=3.0"),
    (lambda k: layers.dense.init(k, True, 4), al.InvalidArgumentTypeError, r"in_features=True"),
    (lambda k: layers.dense.init(k, "3", 4), al.InvalidArgumentTypeError, r"in_features='3'"),
    (lambda k: layers.conv2d.init(k, 1, 2, 3.0), al.InvalidArgumentTypeError, r"conv2d.init: kernel_size=3.0"),
    (lambda k: layers.conv2d.init(k, 1, 2, (3, 3, 3)), al.InvalidArgumentError, r"a pair of ints"),
    (lambda k: layers.embedding.init(k, 10, -2), al.InvalidArgumentError, r"embedding.init: features=-2"),
    (lambda k: layers.dense.init(k, 3, 4, bias="yes"), al.InvalidArgumentTypeError, r"bias='yes'"),
])
def test_sizes_that_are_not_positive_ints_are_refused(backend, call, error, match):
    with al.use_backend(backend), pytest.raises(error, match=match):
        call(al.random.key(0))


def test_numpy_ints_are_sizes(backend):
    with al.use_backend(backend):
        params = layers.dense.init(al.random.key(0), np.int64(3), np.int32(2))
    assert tuple(params["w"].shape) == (3, 2)


def _loss(params, x, key):
    h = layers.transformer_block.apply(params, x, heads=HEADS, dropout_rate=0.2, key=key)
    return al.mean(al.square(h))


@functools.cache
def _gradients(backend: str, compile_it: bool = False) -> tuple[float, Any]:
    """The loss and gradients of a transformer block with dropout (cached: jax's is the reference)."""
    from test_compile_and_grad import compiler

    params = init_on(backend, "transformer_block", seed=2)
    with al.use_backend(backend):
        key, x = al.random.key(7), al.asarray(X.tolist(), dtype="float32")
        step = al.value_and_grad(_loss)
        loss, grads = (compiler(backend)(step) if compile_it else step)(params, x, key)
    return float(host(loss)), to_numpy(grads)


def test_gradients_agree_across_backends_and_compilers(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no autodiff")
    loss, grads = _gradients("jax")
    for compile_it in (False, True):
        got_loss, got = _gradients(backend, compile_it)
        assert got_loss == pytest.approx(loss, rel=1e-5)
        for e, g in zip(al.tree_leaves(grads), al.tree_leaves(got), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-6)
