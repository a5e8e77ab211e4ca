"""GRU and LSTM (arraylayer/models/recurrent.py): PyTorch's equations, checked against torch.nn.GRU /
torch.nn.LSTM run in the test with the same weights; the same values on every backend; gradients equal
across jax, torch and tensorflow; the sequence loop is a lax scan under jax.jit and a While op under
tf.function; bad trees and inputs refused with the layer's name."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from arraylayer import layers

B, T, IN, H = 2, 5, 3, 4
RNG = np.random.default_rng(7)
XS = RNG.standard_normal((B, T, IN)).astype(np.float32)


def on(backend, values):
    with al.use_backend(backend):
        return al.asarray(np.asarray(values).tolist(), dtype="float32")


def host(backend, x):
    return np.asarray(al.get_backend(backend).to_numpy(x))


def numpy_params(kind):
    gates = 3 if kind == "gru" else 4
    params = {"w_x": RNG.standard_normal((IN, gates * H)).astype(np.float32) * 0.5,
              "w_h": RNG.standard_normal((H, gates * H)).astype(np.float32) * 0.5}
    if kind == "gru":
        params["b_x"] = RNG.standard_normal(gates * H).astype(np.float32) * 0.1
        params["b_h"] = RNG.standard_normal(gates * H).astype(np.float32) * 0.1
    else:
        params["b"] = RNG.standard_normal(gates * H).astype(np.float32) * 0.1
    return params


GRU_P, LSTM_P = numpy_params("gru"), numpy_params("lstm")


def torch_oracle(kind, params, xs, h0=None):
    """torch.nn.GRU / LSTM with these weights (torch's are (gates*H, in), transposed)."""
    torch = pytest.importorskip("torch")
    module = (torch.nn.GRU if kind == "gru" else torch.nn.LSTM)(IN, H, batch_first=True)
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.from_numpy(params["w_x"].T.copy()))
        module.weight_hh_l0.copy_(torch.from_numpy(params["w_h"].T.copy()))
        if kind == "gru":
            module.bias_ih_l0.copy_(torch.from_numpy(params["b_x"]))
            module.bias_hh_l0.copy_(torch.from_numpy(params["b_h"]))
        else:
            module.bias_ih_l0.copy_(torch.from_numpy(params["b"]))
            module.bias_hh_l0.zero_()
        state = None if h0 is None else (torch.from_numpy(h0)[None] if kind == "gru" else
                                         tuple(torch.from_numpy(s)[None] for s in h0))
        ys, last = module(torch.from_numpy(xs), state)
    last = last[0].numpy() if kind == "gru" else (last[0][0].numpy(), last[1][0].numpy())
    return ys.numpy(), last


def tree_on(backend, params):
    return {k: on(backend, v) for k, v in params.items()}


def test_gru_matches_torch_nn_gru(backend):
    want_ys, want_h = torch_oracle("gru", GRU_P, XS)
    ys, h = layers.gru.apply(tree_on(backend, GRU_P), on(backend, XS))
    assert host(backend, ys).shape == (B, T, H)
    np.testing.assert_allclose(host(backend, ys), want_ys, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(host(backend, h), want_h, rtol=2e-5, atol=2e-6)


def test_lstm_matches_torch_nn_lstm_with_a_given_state(backend):
    h0 = RNG.standard_normal((B, H)).astype(np.float32)
    c0 = RNG.standard_normal((B, H)).astype(np.float32)
    want_ys, (want_h, want_c) = torch_oracle("lstm", LSTM_P, XS, (h0, c0))
    ys, (h, c) = layers.lstm.apply(tree_on(backend, LSTM_P), on(backend, XS), (on(backend, h0), on(backend, c0)))
    np.testing.assert_allclose(host(backend, ys), want_ys, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(host(backend, h), want_h, rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(host(backend, c), want_c, rtol=2e-5, atol=2e-6)


def test_cells_are_one_step_of_the_sequence_layers(backend):
    x0 = on(backend, XS[:, 0])
    ys, _ = layers.gru.apply(tree_on(backend, GRU_P), on(backend, XS[:, :1]))
    np.testing.assert_allclose(host(backend, layers.gru_cell.apply(tree_on(backend, GRU_P), x0)), host(backend, ys)[:, 0],
                               rtol=1e-6, atol=1e-7)
    ys, (h, c) = layers.lstm.apply(tree_on(backend, LSTM_P), on(backend, XS[:, :1]))
    h1, c1 = layers.lstm_cell.apply(tree_on(backend, LSTM_P), x0)
    np.testing.assert_allclose(host(backend, h1), host(backend, h), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(host(backend, c1), host(backend, c), rtol=1e-6, atol=1e-7)


def test_init_is_the_same_on_every_backend_and_sets_the_forget_bias(backend):
    with al.use_backend(backend):
        params = layers.lstm.init(al.random.key(0), IN, H)
        gru = layers.gru.init(al.random.key(0), IN, H)
    assert {k: host(backend, v).shape for k, v in params.items()} == {"w_x": (IN, 4 * H), "w_h": (H, 4 * H), "b": (4 * H,)}
    np.testing.assert_array_equal(host(backend, params["b"]), np.r_[np.zeros(H), np.ones(H), np.zeros(2 * H)])
    with al.use_backend("numpy"):
        reference = layers.gru.init(al.random.key(0), IN, H)
    for name in ("w_x", "w_h"):
        np.testing.assert_array_equal(host(backend, gru[name]), reference[name])


def loss(params, xs):
    ys, h = layers.gru.apply(params, xs)
    return al.add(al.sum(al.multiply(ys, ys)), al.sum(h))


def test_gradients_through_the_scan_are_equal_across_backends(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no autodiff (arraylayer.grad refuses it: test_autodiff.py)")
    grads = al.grad(loss)(tree_on(backend, GRU_P), on(backend, XS))
    torch = pytest.importorskip("torch")
    params = {k: torch.tensor(v, requires_grad=True) for k, v in GRU_P.items()}
    value = loss(params, torch.from_numpy(XS))
    value.backward()
    for name, p in params.items():
        np.testing.assert_allclose(host(backend, grads[name]), p.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_the_sequence_loop_is_a_lax_scan_under_jax_jit():
    jax = pytest.importorskip("jax")
    params = tree_on("jax", GRU_P)
    jaxpr = str(jax.make_jaxpr(lambda p, x: layers.gru.apply(p, x))(params, on("jax", XS)))
    assert "scan" in jaxpr
    assert jaxpr.count("tanh") < T  # one step's body, not T unrolled steps


def test_the_sequence_loop_is_a_while_op_under_tf_function():
    tf = pytest.importorskip("tensorflow")
    params = tree_on("tensorflow", GRU_P)
    graph = tf.function(lambda p, x: layers.gru.apply(p, x)).get_concrete_function(params, on("tensorflow", XS)).graph
    assert {op.type for op in graph.get_operations()} & {"While", "StatelessWhile"}


@pytest.mark.parametrize("bad, match", [
    ({"w_x": np.zeros((IN, 3 * H), np.float32)}, "no 'w_h'"),
    ({**GRU_P, "w_h": np.zeros((H, 2 * H), np.float32)}, r"not \(4, 12\)"),
    ({k: v for k, v in GRU_P.items() if k != "b_h"}, "no 'b_h'"),
])
def test_bad_parameter_trees_name_the_layer(backend, bad, match):
    with pytest.raises(al.InvalidArgumentError, match=match):
        layers.gru.apply(tree_on(backend, bad), on(backend, XS))


def test_bad_inputs_name_the_layer(backend):
    params = tree_on(backend, GRU_P)
    with pytest.raises(al.InvalidArgumentError, match="gru.apply: x has 2 features"):
        layers.gru.apply(params, on(backend, XS[..., :2]))
    with pytest.raises(al.InvalidArgumentError, match=r"pass \(batch, time, features\)"):
        layers.gru.apply(params, on(backend, XS[0]))
    with pytest.raises(al.InvalidArgumentError, match="the pair"):
        layers.lstm.apply(tree_on(backend, LSTM_P), on(backend, XS), on(backend, np.zeros((B, H), np.float32)))
    with pytest.raises(al.InvalidArgumentError, match="hidden"):
        layers.gru.init(al.random.key(0), IN, 0)


def test_the_gru_example_trains_with_equal_losses_on_every_backend(request):
    """examples/train_gru.py in small: a few steps on each autodiff backend, the losses checked to
    agree by the script itself (exit status 0), the held-out losses scored on NumPy."""
    from pathlib import Path

    from conftest import load_script, trained_backends

    backends = trained_backends(request.config)
    if len(backends) < 2:
        pytest.skip("the example compares at least two autodiff backends; fewer are installed or selected")
    script = load_script(Path(__file__).resolve().parents[1] / "examples" / "train_gru.py")
    assert script.main(["--steps", "6", "--backends", ",".join(backends)]) == 0
