"""nn.dot_product_attention and nn.cross_entropy's ignore_index / mask / label_smoothing, on every
backend. Oracles: float64 NumPy formulas written here; torch.nn.functional.cross_entropy as a second
oracle for ignore_index and label_smoothing. Gradients across backends are in
tests/test_gradients_agree.py (the ``nn.`` cases)."""

from __future__ import annotations

import numpy as np
import pytest
from test_nn import host, on, ref_logsumexp

import arraylayer as al

RNG = np.random.default_rng(23)
B, T, N, H = 2, 5, 3, 4
Q, K, V = (RNG.standard_normal((B, T, N, H)) for _ in range(3))
MASK = RNG.random((B, 1, T, T)) > 0.3
MASK[:, :, :, 0] = True  # every query sees at least one key


def ref_attention(q, k, v, mask=None, causal=False, scale=None):
    logits = np.einsum("btnh,bsnh->bnts", q, k) * (q.shape[-1] ** -0.5 if scale is None else scale)
    allowed = np.ones(logits.shape, bool)
    if mask is not None:
        allowed &= mask
    if causal:
        allowed &= np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(allowed, logits, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    return np.einsum("bnts,bsnh->btnh", weights / weights.sum(-1, keepdims=True), v)


CASES = {
    "plain": {}, "causal": {"causal": True}, "mask": {"mask": MASK}, "mask causal": {"mask": MASK, "causal": True},
    "scale": {"scale": 0.3, "causal": True},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_matches_the_formula(backend, name):
    kw = dict(CASES[name])
    args = [on(backend, a) for a in (Q, K, V)]
    if "mask" in kw:
        kw["mask"] = on(backend, kw["mask"], "bool")
    out = al.nn.dot_product_attention(*args, **kw)
    assert str(al.Dtype(out.dtype)) == "float32" and tuple(out.shape) == (B, T, N, H)
    # the stated tolerance of the fused kernels against the composed form (arraylayer/models/attention.py)
    np.testing.assert_allclose(host(out), ref_attention(Q, K, V, **CASES[name]), rtol=2e-6, atol=1e-6)


def test_attention_with_more_keys_than_queries_and_a_padding_mask(backend):
    keys = RNG.standard_normal((B, 7, N, H))
    lengths = np.array([7, 3])
    padding = (np.arange(7) < lengths[:, None])[:, None, None, :]
    with al.use_backend(backend):
        mask = al.less(al.arange(7), al.asarray([[7], [3]]))[:, None, None, :]
    out = al.nn.dot_product_attention(on(backend, Q), on(backend, keys), on(backend, keys), mask=mask, causal=True)
    np.testing.assert_allclose(host(out), ref_attention(Q, keys, keys, padding, True), rtol=2e-6, atol=1e-6)


def test_a_query_with_no_key_gets_the_mean_of_the_values(backend):
    nothing = np.zeros((B, 1, T, T), bool)
    out = al.nn.dot_product_attention(*(on(backend, a) for a in (Q, K, V)), mask=on(backend, nothing, "bool"))
    np.testing.assert_allclose(host(out), np.broadcast_to(V.mean(1, keepdims=True), V.shape), rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_attention_in_half_precision(backend, dtype):
    out = al.nn.dot_product_attention(*(on(backend, a, dtype) for a in (Q, K, V)), causal=True)
    assert str(al.Dtype(out.dtype)) == dtype
    rounded = [on("numpy", a, dtype).astype(np.float64) for a in (Q, K, V)]
    np.testing.assert_allclose(host(out), ref_attention(*rounded, causal=True), atol=0.05 if dtype == "bfloat16" else 0.01)


def test_attention_dropout_is_the_same_on_every_backend(backend):
    def run(b):
        with al.use_backend(b):
            key = al.random.key(4)
        return host(al.nn.dot_product_attention(*(on(b, a) for a in (Q, K, V)), causal=True, dropout_rate=0.5, key=key))

    expected = run("numpy")
    # the oracle: the dropped weights, by the same keyed mask that nn.dropout draws
    with al.use_backend("numpy"):
        keep = np.asarray(al.random.bernoulli(al.random.key(4), 0.5, (B, N, T, T)))
    logits = np.where(np.tril(np.ones((T, T), bool)), np.einsum("btnh,bsnh->bnts", Q, K) / 2.0, -np.inf)
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights = np.where(keep, weights / weights.sum(-1, keepdims=True) / 0.5, 0.0)
    np.testing.assert_allclose(expected, np.einsum("bnts,bsnh->btnh", weights, V), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(run(backend), expected, rtol=2e-6, atol=1e-6)


def test_attention_under_the_compilers(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler")
    from test_compile_and_grad import compiler

    def model(q, k, v, mask, key):
        causal = al.nn.dot_product_attention(q, k, v, causal=True)  # the fused kernel on torch and jax
        return al.add(causal, al.nn.dot_product_attention(q, k, v, mask=mask, causal=True, dropout_rate=0.25, key=key))

    with al.use_backend(backend):
        key = al.random.key(1)
    args = (*(on(backend, a) for a in (Q, K, V)), on(backend, MASK, "bool"), key)
    np.testing.assert_allclose(host(compiler(backend)(model)(*args)), host(model(*args)), rtol=1e-5, atol=1e-6)


BAD = [
    (lambda b: al.nn.dot_product_attention(on(b, Q[0]), on(b, K[0]), on(b, V[0])), al.InvalidArgumentError, "4-d"),
    (lambda b: al.nn.dot_product_attention(on(b, Q), on(b, K[..., :2]), on(b, V)), al.InvalidArgumentError, "do not fit"),
    (lambda b: al.nn.dot_product_attention(*(on(b, np.round(a), "int32") for a in (Q, K, V))), al.InvalidDtypeError, "floating"),
    (lambda b: al.nn.dot_product_attention(on(b, Q), on(b, K), on(b, V), dropout_rate=0.1), al.InvalidArgumentError, "key="),
    (lambda b: al.nn.dot_product_attention(on(b, Q), on(b, K), on(b, V), mask=on(b, MASK, "float32")),
     al.InvalidDtypeError, "booleans"),
]


@pytest.mark.parametrize("index", range(len(BAD)))
def test_attention_bad_input(backend, index):
    call, error, match = BAD[index]
    with pytest.raises(error, match=match):
        call(backend)


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -float("inf")])
def test_a_non_finite_scale_is_refused_on_every_backend(backend, scale):
    """torch's fused kernel gave 0.0 for scale=nan where the others gave NaN: now one refusal."""
    with pytest.raises(al.InvalidArgumentError, match="finite"):
        al.nn.dot_product_attention(*(on(backend, a) for a in (Q, K, V)), scale=scale)
    with pytest.raises(al.InvalidArgumentError, match="finite"):
        al.nn.dot_product_attention(*(on(backend, a) for a in (Q, K, V)), dropout_rate=scale, key=None)


def test_masks_as_lists_and_python_bools(backend):
    """A nested list of bools, one Python bool or a NumPy array is the mask on q's backend (they
    raised AttributeError before)."""
    args = [on(backend, a) for a in (Q, K, V)]
    causal = np.tril(np.ones((T, T), bool))
    from_list = al.nn.dot_product_attention(*args, mask=causal.tolist())
    np.testing.assert_allclose(host(from_list), ref_attention(Q, K, V, causal=True), rtol=2e-6, atol=1e-6)
    from_numpy = al.nn.dot_product_attention(*args, mask=causal)
    assert al.backend_of(from_numpy).name == backend
    np.testing.assert_allclose(host(from_numpy), host(from_list), rtol=0, atol=0)
    everything = al.nn.dot_product_attention(*args, mask=True)
    np.testing.assert_allclose(host(everything), ref_attention(Q, K, V), rtol=2e-6, atol=1e-6)
    nothing = al.nn.dot_product_attention(*args, mask=False)
    np.testing.assert_allclose(host(nothing), np.broadcast_to(V.mean(1, keepdims=True), V.shape), rtol=2e-6, atol=1e-6)
    with pytest.raises(al.InvalidDtypeError, match="booleans"):
        al.nn.dot_product_attention(*args, mask=[[1, 0]] * T)
    with pytest.raises(al.InvalidArgumentTypeError, match="pass booleans"):
        al.nn.dot_product_attention(*args, mask="yes")


# -- cross_entropy: ignore_index, mask, label_smoothing, reductions ----------------------------------------
LOGITS = RNG.standard_normal((6, 5)) * 3
LABELS = np.array([0, 4, -100, 2, -100, 1])
KEEP = np.array([True, False, True, True, True, True])


def ref_losses(logits, labels, smoothing=0.0):
    log_p = logits - ref_logsumexp(logits, axis=-1, keepdims=True)
    picked = -log_p[np.arange(len(labels)), np.where(labels < 0, 0, labels)]
    return (1 - smoothing) * picked + smoothing * -log_p.mean(-1)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_ignore_mask_smoothing(backend, reduction, smoothing):
    counted = (LABELS != -100) & KEEP
    per_entry = np.where(counted, ref_losses(LOGITS, LABELS, smoothing), 0.0)
    expected = {"none": per_entry, "sum": per_entry.sum(), "mean": per_entry.sum() / counted.sum()}[reduction]
    got = al.nn.cross_entropy(on(backend, LOGITS), on(backend, LABELS, "int32"), reduction=reduction,
                              ignore_index=-100, mask=on(backend, KEEP, "bool"), label_smoothing=smoothing)
    np.testing.assert_allclose(host(got), expected, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 1.0])
def test_cross_entropy_agrees_with_torch(backend, smoothing):
    torch = pytest.importorskip("torch")
    logits = RNG.standard_normal((4, 5, 5)) * 2  # classes on axis 1, as torch takes them
    labels = np.array([[0, 2, -1, 4, 1], [-1, -1, 3, 0, 2], [1, 1, 1, -1, 0], [2, 0, 4, 4, -1]])
    for reduction in ("mean", "sum", "none"):
        expected = torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(labels), ignore_index=-1,
                                                     label_smoothing=smoothing, reduction=reduction).numpy()
        got = al.nn.cross_entropy(on(backend, logits), on(backend, labels, "int64" if backend != "jax" else "int32"),
                                  axis=1, reduction=reduction, ignore_index=-1, label_smoothing=smoothing)
        np.testing.assert_allclose(host(got), expected, rtol=2e-6, atol=1e-6, err_msg=reduction)


def test_cross_entropy_with_nothing_counted_is_zero(backend):
    got = al.nn.cross_entropy(on(backend, LOGITS), on(backend, np.full(6, -100), "int32"), ignore_index=-100)
    assert host(got) == 0.0


def test_cross_entropy_bad_options(backend):
    logits, labels = on(backend, LOGITS), on(backend, np.array([0, 1, 2, 3, 4, 0]), "int32")
    with pytest.raises(al.InvalidArgumentError, match="label_smoothing"):
        al.nn.cross_entropy(logits, labels, label_smoothing=1.5)
    with pytest.raises(al.InvalidArgumentError, match="ignore_index"):
        al.nn.cross_entropy(logits, labels, ignore_index=1.0)
    with pytest.raises(al.InvalidArgumentError, match="boolean array"):
        al.nn.cross_entropy(logits, labels, mask=on(backend, np.ones(5, bool), "bool"))
    with pytest.raises(al.InvalidArgumentError, match="label 7"):  # ignore_index does not hide a bad label
        host(al.nn.cross_entropy(logits, on(backend, np.array([0, 7, -100, 2, 3, 4]), "int32"), ignore_index=-100))
