"""rmsprop, adagrad, lion, lamb and adafactor on every backend, against torch.optim's own
RMSprop/Adagrad/Adafactor (float64, CPU) and NumPy (float64) computations of the papers' rules."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arraylayer as al

RNG = np.random.default_rng(11)
P0 = {"w": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(4), "k": RNG.standard_normal((2, 3, 2))}
GRADS = [{k: RNG.standard_normal(v.shape) for k, v in P0.items()} for _ in range(4)]


def on(backend: str, tree: Any, dtype: str = "float32") -> Any:
    with al.use_backend(backend):
        return al.tree_map(lambda v: al.asarray(np.asarray(v).tolist(), dtype=dtype), tree)


def host(tree: Any) -> Any:
    return al.tree_map(lambda v: np.asarray(al.to_backend(v, "numpy"), dtype=np.float64), tree)


def run(backend: str, optimizer: al.optim.Optimizer, steps: int = len(GRADS)) -> dict[str, np.ndarray]:
    params = on(backend, P0)
    state = optimizer.init(params)
    for grads in GRADS[:steps]:
        params, state = optimizer.update(on(backend, grads), state, params)
    return host(params)


# -- oracles -------------------------------------------------------------------------------------------------
def by_torch(make: Any) -> dict[str, np.ndarray]:
    """torch.optim's own optimizer, float64 on the CPU."""
    import torch

    params = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in P0.items()}
    opt = make(list(params.values()))
    for grads in GRADS:
        for k, p in params.items():
            p.grad = torch.tensor(grads[k], dtype=torch.float64)
        opt.step()
    return {k: p.detach().numpy() for k, p in params.items()}


def hand_lion(lr: float, b1: float, b2: float, wd: float) -> dict[str, np.ndarray]:
    out = {}
    for name, p in P0.items():
        p, m = p.copy(), np.zeros_like(p)
        for grads in GRADS:
            g = grads[name]
            p = p - lr * (np.sign(b1 * m + (1 - b1) * g) + wd * p)
            m = b2 * m + (1 - b2) * g
        out[name] = p
    return out


def hand_lamb(lr: float, b1: float, b2: float, eps: float, wd: float) -> dict[str, np.ndarray]:
    out = {}
    for name, p in P0.items():
        p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
        for t, grads in enumerate(GRADS, start=1):
            g = grads[name]
            m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
            r = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps) + wd * p
            pn, rn = np.linalg.norm(p), np.linalg.norm(r)
            p = p - lr * (pn / rn if pn > 0 and rn > 0 else 1.0) * r
        out[name] = p
    return out


def torch_optim(name: str, **kw: Any) -> Any:
    return lambda: by_torch(lambda ps: getattr(__import__("torch").optim, name)(ps, **kw))


CASES = {
    "rmsprop": (lambda: al.optim.rmsprop(0.01), torch_optim("RMSprop", lr=0.01)),
    "rmsprop centered momentum": (lambda: al.optim.rmsprop(0.02, decay=0.9, eps=1e-6, momentum=0.5, centered=True),
                                  torch_optim("RMSprop", lr=0.02, alpha=0.9, eps=1e-6, momentum=0.5, centered=True)),
    "rmsprop decay": (lambda: al.optim.rmsprop(0.01, weight_decay=0.1),
                      torch_optim("RMSprop", lr=0.01, weight_decay=0.1)),
    "adagrad": (lambda: al.optim.adagrad(0.1), torch_optim("Adagrad", lr=0.1)),
    "adagrad accumulator": (lambda: al.optim.adagrad(0.1, initial_accumulator_value=0.5, weight_decay=0.01),
                            torch_optim("Adagrad", lr=0.1, initial_accumulator_value=0.5, weight_decay=0.01)),
    "adafactor": (lambda: al.optim.adafactor(), torch_optim("Adafactor")),
    "adafactor options": (lambda: al.optim.adafactor(0.05, decay_rate=-0.5, eps1=1e-6, eps2=1e-2),
                          torch_optim("Adafactor", lr=0.05, beta2_decay=-0.5, eps=(1e-6, 1e-2))),
    "lion": (lambda: al.optim.lion(0.01), lambda: hand_lion(0.01, 0.9, 0.99, 0.0)),
    "lion decay": (lambda: al.optim.lion(0.01, b1=0.8, b2=0.9, weight_decay=0.1),
                   lambda: hand_lion(0.01, 0.8, 0.9, 0.1)),
    "lamb": (lambda: al.optim.lamb(0.01), lambda: hand_lamb(0.01, 0.9, 0.999, 1e-6, 0.0)),
    "lamb decay": (lambda: al.optim.lamb(0.01, weight_decay=0.1), lambda: hand_lamb(0.01, 0.9, 0.999, 1e-6, 0.1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_updates_match_the_oracle(backend, name):
    make, oracle = CASES[name]
    got, expected = run(backend, make()), oracle()
    for key in P0:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, atol=2e-6, err_msg=f"{name} {key}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_float64_updates_match_to_float64_precision(backend, name, request):
    if backend == "jax":
        request.getfixturevalue("x64_on")
    if "float64" not in al.valid_dtypes(backend):
        pytest.skip(f"{backend} as configured has no float64")
    make, oracle = CASES[name]
    optimizer, params = make(), on(backend, P0, "float64")
    state = optimizer.init(params)
    for grads in GRADS:
        params, state = optimizer.update(on(backend, grads, "float64"), state, params)
    expected = oracle()
    for key in P0:
        assert al.Dtype(params[key].dtype) is al.float64
        np.testing.assert_allclose(host(params)[key], expected[key], rtol=1e-10, atol=1e-12, err_msg=f"{name} {key}")


MAKERS = {"rmsprop": lambda: al.optim.rmsprop(0.01, momentum=0.5, centered=True),
          "adagrad": lambda: al.optim.adagrad(0.1, initial_accumulator_value=0.1),
          "lion": lambda: al.optim.lion(0.01, weight_decay=0.1), "lamb": lambda: al.optim.lamb(0.01, weight_decay=0.1),
          "adafactor": lambda: al.optim.adafactor(0.05)}


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_compiled_training_step_equals_the_eager_one(backend, name):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler or autodiff")
    from test_compile_and_grad import compiler

    optimizer = MAKERS[name]()
    x = on(backend, {"x": np.linspace(-1, 1, 12).reshape(3, 4)})["x"]

    def step(params, state):
        loss, grads = al.value_and_grad(lambda p: al.mean(al.square(al.add(al.matmul(x, p["w"]), p["b"]))))(params)
        params, state = optimizer.update(grads, state, params)
        return params, state, loss

    params = on(backend, {"w": P0["w"].T, "b": P0["w"][:, 0]})
    eager = compiled = (params, optimizer.init(params))
    fast = compiler(backend)(step)
    for _ in range(3):
        *eager, eager_loss = step(*eager)
        *compiled, compiled_loss = fast(*compiled)
    np.testing.assert_allclose(float(host(compiled_loss)), float(host(eager_loss)), rtol=1e-5)
    for key in ("w", "b"):
        np.testing.assert_allclose(host(compiled[0])[key], host(eager[0])[key], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_the_state_checkpoints_and_training_resumes(backend, name, tmp_path):
    optimizer = MAKERS[name]()
    params = on(backend, P0)
    state = optimizer.init(params)
    params, state = optimizer.update(on(backend, GRADS[0]), state, params)
    al.checkpoint.save(tmp_path / "s.safetensors", {"params": params, "state": state}, step=1)
    loaded = al.checkpoint.load(tmp_path / "s.safetensors", {"params": params, "state": state}).tree
    for grads in GRADS[1:]:
        params, state = optimizer.update(on(backend, grads), state, params)
        loaded["params"], loaded["state"] = optimizer.update(on(backend, grads), loaded["state"], loaded["params"])
    for key in P0:
        np.testing.assert_array_equal(host(loaded["params"])[key], host(params)[key])


@pytest.mark.parametrize("make", [lambda: al.optim.rmsprop(-0.1), lambda: al.optim.rmsprop(decay=1.0),
                                  lambda: al.optim.rmsprop(momentum=1.5), lambda: al.optim.rmsprop(centered=1),
                                  lambda: al.optim.adagrad(eps=-1.0),
                                  lambda: al.optim.adagrad(initial_accumulator_value=-0.1),
                                  lambda: al.optim.lion(b1=1.0), lambda: al.optim.lion(b2=-0.1),
                                  lambda: al.optim.lamb(weight_decay=-1.0), lambda: al.optim.lamb(b1=1.0),
                                  lambda: al.optim.adafactor(0.0), lambda: al.optim.adafactor(decay_rate=0.5),
                                  lambda: al.optim.adafactor(clipping_threshold=0.0), lambda: al.optim.lion("0.1")])
def test_bad_hyper_parameters_are_refused(make):
    with pytest.raises((al.InvalidArgumentError, al.InvalidArgumentTypeError), match="must lie in|must be|pass|float"):
        make()


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_a_gradient_of_another_shape_is_refused_with_its_path(backend, name):
    optimizer = MAKERS[name]()
    params = on(backend, {"layer": P0})
    bad = on(backend, {"layer": {**P0, "w": np.ones(1)}})
    with pytest.raises(al.InvalidArgumentError, match=r"at 'layer/w' .*shape \(1,\)"):
        optimizer.update(bad, optimizer.init(params), params)


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_gradients_of_another_tree_are_refused_with_the_path(backend, name):
    optimizer = MAKERS[name]()
    params = on(backend, P0)
    with pytest.raises(al.InvalidArgumentError, match="no leaf at 'k'|leaf at 'k'"):
        optimizer.update(on(backend, {"w": P0["w"], "b": P0["b"]}), optimizer.init(params), params)


@pytest.mark.parametrize(("made_by", "given_to"), [("adam", "rmsprop"), ("rmsprop", "adagrad"), ("adagrad", "lion"),
                                                   ("lion", "adafactor"), ("adafactor", "lamb"), ("sgd", "lamb")])
def test_another_optimizers_state_is_refused(backend, made_by, given_to):
    makers = {**MAKERS, "adam": lambda: al.optim.adam(), "sgd": lambda: al.optim.sgd(0.1, momentum=0.9)}
    params = on(backend, P0)
    state = makers[made_by]().init(params)
    with pytest.raises(al.ArrayLayerError, match="state"):
        makers[given_to]().update(on(backend, GRADS[0]), state, params)


def test_a_schedule_sets_the_learning_rate(backend):
    """torch's Adagrad lr_decay as a schedule of the step count (0 at the first step)."""
    def rate(count):
        return al.divide(0.1, al.add(1.0, al.multiply(al.astype(count, al.float32), 0.5)))

    got = run(backend, al.optim.adagrad(rate))
    expected = by_torch(lambda ps: __import__("torch").optim.Adagrad(ps, lr=0.1, lr_decay=0.5))
    for key in P0:
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-5, atol=2e-6, err_msg=key)
