"""Parameter trees, optimizers and initialisers on every backend, against hand computations in
NumPy (float64) of the published update rules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import arraylayer as al

P0 = {"w": np.array([[1.0, -2.0], [0.5, 3.0]]), "b": np.array([0.25, -0.75])}
GRADS = [{"w": np.array([[0.5, -1.0], [2.0, 0.0]]), "b": np.array([1.0, -0.5])},
         {"w": np.array([[-0.25, 0.5], [1.0, 1.5]]), "b": np.array([0.0, 2.0])},
         {"w": np.array([[1.0, 1.0], [-1.0, 0.5]]), "b": np.array([-1.0, 0.25])}]


def on(backend: str, tree: Any, dtype: str = "float32") -> Any:
    with al.use_backend(backend):
        return al.tree_map(lambda v: al.asarray(np.asarray(v).tolist(), dtype=dtype), tree)


def host(tree: Any) -> Any:
    return al.tree_map(lambda v: np.asarray(al.to_backend(v, "numpy"), dtype=np.float64), tree)


def run(backend: str, optimizer: al.optim.Optimizer, steps: int) -> dict[str, np.ndarray]:
    params = on(backend, P0)
    state = optimizer.init(params)
    for grads in GRADS[:steps]:
        params, state = optimizer.update(on(backend, grads), state, params)
    return host(params)


# -- hand computations of the published rules ------------------------------------------------------------
def hand_sgd(lr: float, momentum: float, nesterov: bool, steps: int) -> dict[str, np.ndarray]:
    out = {}
    for name in P0:
        p, v = P0[name].copy(), np.zeros_like(P0[name])
        for grads in GRADS[:steps]:
            g = grads[name]
            v = momentum * v + g
            p = p - lr * ((g + momentum * v) if nesterov else (v if momentum else g))
        out[name] = p
    return out


def hand_adam(lr: float, b1: float, b2: float, eps: float, decay: float, steps: int) -> dict[str, np.ndarray]:
    out = {}
    for name in P0:
        p, m, v = P0[name].copy(), np.zeros_like(P0[name]), np.zeros_like(P0[name])
        for t, grads in enumerate(GRADS[:steps], start=1):
            g = grads[name]
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            step = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
            p = p - lr * step - lr * decay * p
        out[name] = p
    return out


CASES = {
    "sgd": (lambda: al.optim.sgd(0.1), lambda s: hand_sgd(0.1, 0.0, False, s)),
    "sgd momentum": (lambda: al.optim.sgd(0.1, momentum=0.9), lambda s: hand_sgd(0.1, 0.9, False, s)),
    "sgd nesterov": (lambda: al.optim.sgd(0.05, momentum=0.5, nesterov=True), lambda s: hand_sgd(0.05, 0.5, True, s)),
    "adam": (lambda: al.optim.adam(0.01), lambda s: hand_adam(0.01, 0.9, 0.999, 1e-8, 0.0, s)),
    "adam betas": (lambda: al.optim.adam(0.1, b1=0.5, b2=0.75, eps=1e-3), lambda s: hand_adam(0.1, 0.5, 0.75, 1e-3, 0.0, s)),
    "adamw": (lambda: al.optim.adamw(0.01, weight_decay=0.1), lambda s: hand_adam(0.01, 0.9, 0.999, 1e-8, 0.1, s)),
}


@pytest.mark.parametrize("steps", [1, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_updates_match_hand_computations(backend, name, steps):
    make, hand = CASES[name]
    got, expected = run(backend, make(), steps), hand(steps)
    for key in P0:
        # float32 parameters; Adam's bias corrections 1 - b**t are float32 too
        np.testing.assert_allclose(got[key], expected[key], rtol=2e-6, atol=2e-6, err_msg=f"{name} {key}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_updates_match_hand_computations_to_float64_precision(backend, name, request):
    if backend == "jax":
        request.getfixturevalue("x64_on")
    if "float64" not in al.valid_dtypes(backend):
        pytest.skip(f"{backend} as configured has no float64")
    make, hand = CASES[name]
    optimizer, params = make(), on(backend, P0, "float64")
    state = optimizer.init(params)
    for grads in GRADS:
        params, state = optimizer.update(on(backend, grads, "float64"), state, params)
        assert al.Dtype(params["w"].dtype) is al.float64
    for key in P0:
        # Adam's bias corrections are float64 for float64 parameters (float32 ones were off by 2e-7)
        np.testing.assert_allclose(host(params)[key], hand(len(GRADS))[key], rtol=1e-12, atol=1e-12)


def test_optimizers_take_arraylayer_arrays(backend):
    wrap = lambda tree: al.tree_map(al.Array, tree)  # noqa: E731
    for name, (make, hand) in sorted(CASES.items()):
        optimizer, params = make(), wrap(on(backend, P0))
        state = optimizer.init(params)
        for grads in GRADS:
            params, state = optimizer.update(wrap(on(backend, grads)), state, params)
        assert all(isinstance(params[key], al.Array) for key in P0), name
        for key in P0:
            np.testing.assert_allclose(host(params)[key], hand(len(GRADS))[key],
                                       rtol=2e-6, atol=2e-6, err_msg=name)


@pytest.mark.parametrize("make", [lambda: al.optim.adam(0.01), lambda: al.optim.adamw(0.01, weight_decay=0.1),
                                  lambda: al.optim.sgd(0.1, momentum=0.9)], ids=["adam", "adamw", "sgd"])
def test_whole_column_updates_have_the_bits_of_leaf_by_leaf_ones(backend, make):
    """Where the backend has multi-tensor kernels (torch._foreach_*), an all-float32 tree is updated
    one call per column of leaves; one float16 leaf more sends every leaf down the leaf-by-leaf
    path. The float32 leaves must come out of both with the same bits."""
    from arraylayer.models import leafwise

    if "float16" not in al.valid_dtypes(backend):
        pytest.skip(f"{backend} has no float16 leaf to add")
    rng = np.random.default_rng(3)
    p0 = {"w": rng.standard_normal((3, 5)), "b": rng.standard_normal(5)}
    grads = [{k: rng.standard_normal(v.shape) for k, v in p0.items()} for _ in range(3)]
    extra = {"z": np.array([0.5, -1.0])}

    def final(mixed: bool) -> dict[str, np.ndarray]:
        params = {**on(backend, p0), **(on(backend, extra, "float16") if mixed else {})}
        optimizer = make()
        state = optimizer.init(params)
        for g in grads:
            step = {**on(backend, g), **(on(backend, extra, "float16") if mixed else {})}
            params, state = optimizer.update(step, state, params)
        return host(params)

    column = al.tree_leaves(on(backend, p0))
    assert (leafwise.ops(column) is not leafwise.PER_LEAF) == (backend == "torch")
    whole, by_leaf = final(False), final(True)
    for name in p0:
        np.testing.assert_array_equal(whole[name], by_leaf[name], err_msg=name)


def test_updates_keep_the_dtype_and_backend(backend):
    params = on(backend, P0, "float16" if "float16" in al.valid_dtypes(backend) else "float32")
    dtype = al.Dtype(params["w"].dtype)
    for optimizer in (al.optim.sgd(0.1, momentum=0.9), al.optim.adam(0.01)):
        new, state = optimizer.update(params, optimizer.init(params), params)
        assert al.Dtype(new["w"].dtype) is dtype and al.backend_of(new["w"]).name == backend
        assert all(al.backend_of(leaf).name == backend for leaf in al.tree_leaves(state))


def test_a_compiled_training_step_equals_the_eager_one(backend):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler or autodiff")
    from test_compile_and_grad import compiler

    optimizer = al.optim.adam(0.05)
    x = on(backend, {"x": np.linspace(-1, 1, 8).reshape(4, 2)})["x"]

    def step(params, state):
        loss, grads = al.value_and_grad(lambda p: al.mean(al.square(al.add(al.matmul(x, p["w"]), p["b"]))))(params)
        params, state = optimizer.update(grads, state, params)
        return params, state, loss

    params = on(backend, P0)
    eager = compiled = (params, optimizer.init(params))
    fast = compiler(backend)(step)
    for _ in range(3):
        *eager, eager_loss = step(*eager)
        *compiled, compiled_loss = fast(*compiled)
    np.testing.assert_allclose(float(host(compiled_loss)), float(host(eager_loss)), rtol=1e-6)
    for key in P0:
        np.testing.assert_allclose(host(compiled[0])[key], host(eager[0])[key], rtol=1e-6, atol=1e-7)


# -- trees ----------------------------------------------------------------------------------------------------
def test_tree_map_over_nested_structures(backend):
    tree = on(backend, {"layers": [{"w": np.ones(2)}, {"w": np.zeros(3)}], "scale": np.ones(1)})
    tree["extra"] = None
    doubled = al.tree_map(lambda a: al.multiply(a, 2.0), tree)
    assert doubled["extra"] is None and isinstance(doubled["layers"], list)
    np.testing.assert_array_equal(host(doubled["layers"][0]["w"]), [2.0, 2.0])
    assert len(al.tree_leaves(tree)) == 3
    summed = al.tree_map(al.add, tree, doubled)
    np.testing.assert_array_equal(host(summed["scale"]), [3.0])
    wrapped = al.tree_map(lambda a: al.add(a, 1.0), (al.Array(tree["scale"]),))
    assert isinstance(wrapped, tuple) and isinstance(wrapped[0], al.Array)


def test_tree_map_names_a_structure_mismatch():
    with pytest.raises(al.InvalidArgumentError, match="another structure"):
        al.tree_map(np.add, {"w": np.ones(2)}, {"v": np.ones(2)})
    with pytest.raises(al.InvalidArgumentError, match="another structure"):
        al.tree_map(np.add, [np.ones(2)], (np.ones(2),))


@pytest.mark.parametrize("make", [lambda: al.optim.sgd(-0.1), lambda: al.optim.sgd(0.1, momentum=1.0),
                                  lambda: al.optim.adam(b1=1.0), lambda: al.optim.adamw(weight_decay=-1.0),
                                  lambda: al.optim.adam("0.1")])
def test_bad_hyper_parameters_are_refused(make):
    with pytest.raises((al.InvalidArgumentError, al.InvalidArgumentTypeError)):
        make()


def test_adam_needs_parameters():
    with pytest.raises(al.InvalidArgumentError, match="no arrays"):
        al.optim.adam().init({})


# -- initialisers ----------------------------------------------------------------------------------------------
def test_fans():
    assert al.initializers.fans((64, 10)) == (64, 10)
    assert al.initializers.fans((3, 3, 8, 16)) == (72, 144)  # HWIO
    assert al.initializers.fans((16, 8, 3, 3), in_axis=1, out_axis=0) == (72, 144)  # OIHW
    with pytest.raises(al.InvalidArgumentError):
        al.initializers.fans((5,))


@pytest.mark.parametrize("name", ["glorot_uniform", "he_normal"])
def test_the_same_key_gives_the_same_weights_everywhere(backend, name):
    with al.use_backend(backend):
        weights = getattr(al.initializers, name)(al.random.key(7), (3, 3, 4, 8))
    with al.use_backend("numpy"):
        reference = np.asarray(getattr(al.initializers, name)(al.random.key(7), (3, 3, 4, 8)))
    assert al.Dtype(weights.dtype) is al.default_float_dtype()
    # uniforms are bit-identical across backends; normals agree within a few float32 ulps
    np.testing.assert_allclose(host(weights), reference, rtol=4e-6, atol=1e-7)


def test_initialiser_statistics():
    with al.use_backend("numpy"):
        glorot = np.asarray(al.initializers.glorot_uniform(al.random.key(1), (200, 300)), np.float64)
        he = np.asarray(al.initializers.he_normal(al.random.key(2), (400, 250)), np.float64)
        bias = al.initializers.zeros(al.random.key(3), (5,))
    limit = math.sqrt(6 / 500)
    assert glorot.min() >= -limit and glorot.max() < limit
    assert abs(glorot.std() - limit / math.sqrt(3)) < 0.01 * limit  # 60,000 uniforms: std within 1%
    assert abs(he.std() - math.sqrt(2 / 400)) < 0.01 * math.sqrt(2 / 400)  # 100,000 normals: within 1%
    assert abs(he.mean()) < 5 * math.sqrt(2 / 400) / math.sqrt(he.size)
    np.testing.assert_array_equal(np.asarray(bias), np.zeros(5))


# -- refusals: wrong gradient shapes, another optimizer's state ------------------------------------------------
OPTIMIZERS = {"sgd": lambda: al.optim.sgd(0.1), "momentum": lambda: al.optim.sgd(0.1, 0.9),
              "adam": lambda: al.optim.adam(), "adamw": lambda: al.optim.adamw(weight_decay=0.1),
              "chain": lambda: al.optim.from_transforms(al.transforms.add_decayed_weights(0.1),
                                                        al.transforms.scale(-0.1))}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_gradient_of_another_shape_is_refused_with_its_path(backend, name):
    """A (1,) gradient for a (2, 2) parameter broadcast silently before."""
    optimizer = OPTIMIZERS[name]()
    params = on(backend, {"layer": P0})
    bad = on(backend, {"layer": {"w": np.ones(1), "b": np.ones(2)}})
    with pytest.raises(al.InvalidArgumentError, match=r"at 'layer/w' .*shape \(1,\)"):
        optimizer.update(bad, optimizer.init(params), params)


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_gradients_of_another_tree_are_refused_with_the_path(backend, name):
    optimizer = OPTIMIZERS[name]()
    params = on(backend, P0)
    with pytest.raises(al.InvalidArgumentError, match="no leaf at 'b'"):
        optimizer.update(on(backend, {"w": P0["w"]}), optimizer.init(params), params)


@pytest.mark.parametrize(("made_by", "given_to"), [("adam", "momentum"), ("momentum", "adam"), ("adamw", "chain"),
                                                   ("chain", "adam")])
def test_another_optimizers_state_is_refused(backend, made_by, given_to):
    params = on(backend, P0)
    state = OPTIMIZERS[made_by]().init(params)
    with pytest.raises(al.ArrayLayerError, match="state"):
        OPTIMIZERS[given_to]().update(on(backend, GRADS[0]), state, params)


def test_a_state_for_other_parameters_is_refused(backend):
    optimizer = al.optim.adam()
    state = optimizer.init(on(backend, {"w": np.ones(1), "b": np.ones(2)}))
    params = on(backend, P0)
    with pytest.raises(al.InvalidArgumentError, match=r"at 'w' the update has shape \(2, 2\) but the state's moment \(1,\)"):
        optimizer.update(on(backend, GRADS[0]), state, params)


def test_compiled_updates_refuse_a_wrong_shape_too(backend):
    """Shapes are static under jax.jit, tf.function and torch.compile: the check runs at trace time.
    torch.compile(fullgraph=True) reports the error raised while tracing as its own Unsupported,
    naming ours (as in test_compilers_settings); jax.jit and tf.function raise ours."""
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler")
    from test_compile_and_grad import compiler

    optimizer = al.optim.adam()
    params = on(backend, P0)
    step = compiler(backend)(lambda g, s, p: optimizer.update(g, s, p))
    expected = __import__("torch")._dynamo.exc.Unsupported if backend == "torch" else al.InvalidArgumentError
    with pytest.raises(expected, match="at 'w'"):
        step(on(backend, {"w": np.ones(1), "b": np.ones(2)}), optimizer.init(params), params)
