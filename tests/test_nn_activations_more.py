"""The rest of keras.ops.nn in arraylayer.models.nn (activations, cross-entropies, ctc_loss, moments,
normalize, multi_hot) against float64 NumPy formulas written here and, where torch has the
function, torch.nn.functional computed here; on every backend: values, result dtypes, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer.dtypes import as_dtype

RNG = np.random.default_rng(11)
X = np.concatenate([np.linspace(-4, 4, 17), RNG.standard_normal(7) * 3]).reshape(4, 6)
SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805


def host(x):
    return np.asarray(al.to_backend(x, "numpy"), dtype=np.float64)


def sig(x):
    return 1 / (1 + np.exp(-x))


def ref_sparsemax(z):
    out = np.zeros_like(z)
    for i, row in enumerate(z):
        s = np.sort(row)[::-1]
        k = np.arange(1, len(s) + 1)
        support = 1 + k * s > np.cumsum(s)
        kz = k[support].max()
        tau = (np.cumsum(s)[kz - 1] - 1) / kz
        out[i] = np.maximum(row - tau, 0)
    return out


REFERENCES = {
    "relu6": (al.nn.relu6, lambda x: np.minimum(np.maximum(x, 0), 6), "relu6"),
    "leaky_relu": (al.nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.2 * x), None),
    "elu": (al.nn.elu, lambda x: np.where(x > 0, x, np.expm1(x)), "elu"),
    "selu": (al.nn.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * np.expm1(x)), "selu"),
    "celu": (lambda x: al.nn.celu(x, 0.7), lambda x: np.maximum(x, 0) + np.minimum(0, 0.7 * np.expm1(x / 0.7)), None),
    "softsign": (al.nn.softsign, lambda x: x / (np.abs(x) + 1), "softsign"),
    "log_sigmoid": (al.nn.log_sigmoid, lambda x: np.log(sig(x)), "logsigmoid"),
    "hard_sigmoid": (al.nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6, "hardsigmoid"),
    "hard_silu": (al.nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6, "hardswish"),
    "hard_tanh": (al.nn.hard_tanh, lambda x: np.clip(x, -1, 1), "hardtanh"),
    "tanh_shrink": (al.nn.tanh_shrink, lambda x: x - np.tanh(x), "tanhshrink"),
    "soft_shrink": (al.nn.soft_shrink, lambda x: np.sign(x) * np.maximum(np.abs(x) - 0.5, 0), "softshrink"),
    "hard_shrink": (al.nn.hard_shrink, lambda x: np.where(np.abs(x) > 0.5, x, 0), "hardshrink"),
    "threshold": (lambda x: al.nn.threshold(x, 0.3, -2.0), lambda x: np.where(x > 0.3, x, -2.0), None),
    "sparse_plus": (al.nn.sparse_plus, lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)), None),
    "sparse_sigmoid": (al.nn.sparse_sigmoid, lambda x: np.clip((x + 1) / 2, 0, 1), None),
    "squareplus": (al.nn.squareplus, lambda x: (x + np.sqrt(x * x + 4)) / 2, None),
    "glu": (al.nn.glu, lambda x: x[:, :3] * sig(x[:, 3:]), "glu"),
    "sparsemax": (al.nn.sparsemax, ref_sparsemax, None),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values_and_dtype(backend, name, dtype):
    if dtype == "float64" and backend == "jax":
        pytest.importorskip("jax")
        import jax

        if not jax.config.jax_enable_x64:
            dtype = "float32"  # JAX without x64 holds no float64 (the x64 runs cover it)
    function, reference, _ = REFERENCES[name]
    x = al.to_backend(X.astype(dtype), backend)
    y = function(x)
    assert as_dtype(y.dtype) == as_dtype(dtype)
    tolerance = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(host(y), reference(X.astype(dtype).astype(np.float64)), rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("name", sorted(n for n, (_, _, t) in REFERENCES.items() if t))
def test_activations_match_torch(name):
    torch = pytest.importorskip("torch")
    function, _, torch_name = REFERENCES[name]
    x = torch.tensor(X, dtype=torch.float32)
    np.testing.assert_allclose(host(function(x)), getattr(torch.nn.functional, torch_name)(x).numpy(), rtol=1e-6,
                               atol=1e-6)


def test_sparsemax_rows_are_distributions(backend):
    y = host(al.nn.sparsemax(al.to_backend(X.astype(np.float32), backend), axis=0))
    np.testing.assert_allclose(y.sum(axis=0), 1.0, rtol=1e-6)
    assert (y >= 0).all()


@pytest.mark.parametrize("call", [
    lambda x: al.nn.glu(x[:, :5]), lambda x: al.nn.celu(x, 0.0), lambda x: al.nn.squareplus(x, -1.0),
    lambda x: al.nn.soft_shrink(x, -0.1), lambda x: al.nn.normalize(x, order=0.5),
])
def test_bad_arguments(backend, call):
    with pytest.raises(al.InvalidArgumentError):
        call(al.to_backend(X.astype(np.float32), backend))


def test_integer_input_is_refused(backend):
    with pytest.raises(al.InvalidDtypeError):
        al.nn.elu(al.to_backend(np.arange(3, dtype=np.int32), backend))


# -- cross-entropies ----------------------------------------------------------------------------------------
P = RNG.uniform(0.02, 0.98, (5, 3))
T = RNG.uniform(0, 1, (5, 3))
Z = RNG.standard_normal((5, 3)) * 4
LABELS = np.array([0, 2, 1, 1, 0])


def ref_log_softmax(z):
    m = z.max(-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(-1, keepdims=True))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(backend, reduction):
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction]
    t = al.to_backend(T.astype(np.float32), backend)
    probs = al.nn.binary_cross_entropy(al.to_backend(P.astype(np.float32), backend), t, reduction=reduction)
    np.testing.assert_allclose(host(probs), reduce(-(T * np.log(P) + (1 - T) * np.log(1 - P))), rtol=1e-5)
    logits = al.nn.binary_cross_entropy(al.to_backend(Z.astype(np.float32), backend), t, from_logits=True,
                                        reduction=reduction)
    s = sig(Z)
    np.testing.assert_allclose(host(logits), reduce(-(T * np.log(s) + (1 - T) * np.log(1 - s))), rtol=1e-5)
    assert as_dtype(logits.dtype) == as_dtype(probs.dtype) == as_dtype("float32")


def test_binary_cross_entropy_matches_torch():
    torch = pytest.importorskip("torch")
    z, t = torch.tensor(Z), torch.tensor(T)
    expected = torch.nn.functional.binary_cross_entropy_with_logits(z, t).item()
    np.testing.assert_allclose(float(al.nn.binary_cross_entropy(z, t, from_logits=True)), expected, rtol=1e-12)


def test_binary_cross_entropy_of_certain_probabilities_is_finite(backend):
    p = al.to_backend(np.array([0.0, 1.0], np.float32), backend)
    loss = host(al.nn.binary_cross_entropy(p, al.to_backend(np.array([1.0, 0.0], np.float32), backend), reduction="none"))
    assert np.isfinite(loss).all() and (loss > 15).all()


def test_categorical_cross_entropies(backend):
    onehot = np.eye(3)[LABELS]
    targets = al.to_backend(onehot.astype(np.float32), backend)
    probabilities = P / P.sum(-1, keepdims=True)
    got = al.nn.categorical_cross_entropy(al.to_backend(P.astype(np.float32), backend), targets, reduction="none")
    np.testing.assert_allclose(host(got), -np.log(probabilities[np.arange(5), LABELS]), rtol=1e-5)
    got = al.nn.categorical_cross_entropy(al.to_backend(Z.astype(np.float32), backend), targets, from_logits=True)
    np.testing.assert_allclose(host(got), -np.mean(ref_log_softmax(Z)[np.arange(5), LABELS]), rtol=1e-5)
    labels = al.to_backend(LABELS.astype(np.int32), backend)
    sparse = al.nn.sparse_categorical_cross_entropy(al.to_backend(P.astype(np.float32), backend), labels, reduction="sum")
    np.testing.assert_allclose(host(sparse), -np.log(probabilities[np.arange(5), LABELS]).sum(), rtol=1e-5)
    sparse = al.nn.sparse_categorical_cross_entropy(al.to_backend(Z.T.copy().astype(np.float32), backend), labels,
                                                    from_logits=True, axis=0)
    np.testing.assert_allclose(host(sparse), -np.mean(ref_log_softmax(Z)[np.arange(5), LABELS]), rtol=1e-5)


def test_cross_entropy_bad_input(backend):
    p = al.to_backend(P.astype(np.float32), backend)
    with pytest.raises(al.InvalidArgumentError):
        al.nn.binary_cross_entropy(p, al.to_backend(T[:2].astype(np.float32), backend))
    with pytest.raises(al.InvalidArgumentError):
        al.nn.categorical_cross_entropy(p, p, reduction="avg")
    with pytest.raises(al.InvalidArgumentError):
        al.nn.sparse_categorical_cross_entropy(p, al.to_backend(LABELS[:3].astype(np.int32), backend))


# -- ctc -----------------------------------------------------------------------------------------------------
def ref_ctc(logits, labels, label_lengths, logit_lengths, blank=0):
    """The forward recursion in float64 with explicit loops over the extended labels."""
    losses = []
    for b in range(len(labels)):
        lp = ref_log_softmax(logits[b, : logit_lengths[b]])
        ext = [blank]
        for c in labels[b, : label_lengths[b]]:
            ext += [int(c), blank]
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = lp[0, ext[0]]
        if len(ext) > 1:
            alpha[1] = lp[0, ext[1]]
        for t in range(1, len(lp)):
            new = np.full(len(ext), -np.inf)
            for s in range(len(ext)):
                terms = [alpha[s]] + ([alpha[s - 1]] if s >= 1 else [])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    terms.append(alpha[s - 2])
                new[s] = np.logaddexp.reduce(terms) + lp[t, ext[s]]
            alpha = new
        losses.append(-np.logaddexp.reduce(alpha[-2:]) if len(ext) > 1 else -alpha[-1])
    return np.array(losses)


def test_ctc_loss(backend):
    b, frames, classes = 3, 8, 5
    logits = RNG.standard_normal((b, frames, classes))
    labels = np.array([[1, 2, 2], [3, 1, 0], [4, 0, 0]])
    label_lengths, logit_lengths = np.array([3, 2, 1]), np.array([8, 6, 5])
    loss = al.nn.ctc_loss(*(al.to_backend(a.astype(np.int32), backend) for a in (labels,)),
                          al.to_backend(logits.astype(np.float32), backend),
                          al.to_backend(label_lengths.astype(np.int32), backend),
                          al.to_backend(logit_lengths.astype(np.int32), backend))
    assert as_dtype(loss.dtype) == as_dtype("float32") and tuple(loss.shape) == (b,)
    np.testing.assert_allclose(host(loss), ref_ctc(logits, labels, label_lengths, logit_lengths), rtol=1e-5)


def test_ctc_loss_matches_torch():
    torch = pytest.importorskip("torch")
    logits = torch.tensor(RNG.standard_normal((2, 6, 4)), dtype=torch.float32)
    labels = torch.tensor([[1, 3], [2, 2]])
    lengths, frames = torch.tensor([2, 2]), torch.tensor([6, 5])
    expected = torch.nn.functional.ctc_loss(torch.log_softmax(logits, -1).transpose(0, 1), labels, frames, lengths,
                                            reduction="none")
    got = al.nn.ctc_loss(labels.int(), logits, lengths.int(), frames.int())
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5)


def test_ctc_loss_bad_input(backend):
    logits = al.to_backend(np.zeros((2, 4, 3), np.float32), backend)
    ints = al.to_backend(np.zeros((2, 2), np.int32), backend)
    lengths = al.to_backend(np.ones(2, np.int32), backend)
    with pytest.raises(al.InvalidArgumentError):
        al.nn.ctc_loss(ints, logits, lengths, lengths, blank_index=3)
    with pytest.raises(al.InvalidDtypeError):
        al.nn.ctc_loss(al.to_backend(np.zeros((2, 2), np.float32), backend), logits, lengths, lengths)


# -- moments, normalize, multi_hot ---------------------------------------------------------------------------
def test_moments_and_normalize(backend):
    x = al.to_backend(X.astype(np.float32), backend)
    mean, variance = al.nn.moments(x, axes=(0,))
    np.testing.assert_allclose(host(mean), X.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(host(variance), X.var(0), rtol=1e-5)
    mean, variance = al.nn.moments(x, axes=1, keepdims=True)
    assert tuple(mean.shape) == tuple(variance.shape) == (4, 1)
    for order, norm in ((2, np.linalg.norm(X, axis=-1, keepdims=True)), (1, np.abs(X).sum(-1, keepdims=True)),
                        (float("inf"), np.abs(X).max(-1, keepdims=True)),
                        (3, (np.abs(X) ** 3).sum(-1, keepdims=True) ** (1 / 3))):
        np.testing.assert_allclose(host(al.nn.normalize(x, order=order)), X / norm, rtol=1e-5, atol=1e-6)
    zero = host(al.nn.normalize(al.to_backend(np.zeros((2, 3), np.float32), backend)))
    assert (zero == 0).all()


def test_multi_hot(backend):
    labels = np.array([[0, 2, 2], [1, 3, 0]])
    got = al.nn.multi_hot(al.to_backend(labels.astype(np.int32), backend), 4)
    np.testing.assert_array_equal(host(got), [[1, 0, 1, 0], [1, 1, 0, 1]])
    got = al.nn.multi_hot(al.to_backend(labels.T.copy().astype(np.int32), backend), 4, axis=0)
    np.testing.assert_array_equal(host(got), [[1, 1], [0, 1], [1, 0], [0, 1]])
