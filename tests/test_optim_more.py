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
