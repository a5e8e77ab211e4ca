"""Gradient transformations and tree paths on every backend, against NumPy (float64) computations
of their definitions."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest

import arraylayer as al

T = al.transforms
P = {"dense": {"w": np.array([[1.0, -2.0], [0.5, 3.0]]), "b": np.array([0.25, -0.75])},
     "norm": {"scale": np.array([1.0, 1.5])}}
G = {"dense": {"w": np.array([[3.0, -4.0], [2.0, 0.5]]), "b": np.array([1.0, -0.5])},
     "norm": {"scale": np.array([-2.0, 0.25])}}


def on(backend: str, tree: Any, dtype: str = "float32") -> Any:
    with al.use_backend(backend):
        return al.tree_map(lambda v: al.asarray(np.asarray(v).tolist(), dtype=dtype), tree)


def host(tree: Any) -> Any:
    return al.tree_map(lambda v: np.asarray(al.to_backend(v, "numpy"), dtype=np.float64), tree)


def apply(backend: str, transform: al.transforms.GradientTransformation, grads: Any = G) -> Any:
    params = on(backend, P)
    updates, _ = transform.update(on(backend, grads), transform.init(params), params)
    return host(updates)


def close(got: Any, expected: Any) -> None:
    for a, b in zip(al.tree_leaves(got), al.tree_leaves(expected), strict=True):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)


def global_norm(tree: Any) -> float:
    return float(np.sqrt(sum(np.sum(np.square(leaf)) for leaf in al.tree_leaves(tree))))


@pytest.mark.parametrize("limit", [1.0, 100.0])
def test_clip_by_global_norm(backend, limit):
    norm = global_norm(G)  # 6.2...
    factor = limit / norm if norm > limit else 1.0
    close(apply(backend, T.clip_by_global_norm(limit)), al.tree_map(lambda g: g * factor, G))
    assert (global_norm(apply(backend, T.clip_by_global_norm(limit))) - min(limit, norm)) < 1e-5


def test_clip_by_value(backend):
    close(apply(backend, T.clip_by_value(-1.0, 0.75)), al.tree_map(lambda g: np.clip(g, -1.0, 0.75), G))
    with pytest.raises(al.InvalidArgumentError, match="low"):
        T.clip_by_value(1.0, -1.0)


MATRICES_ONLY = {"dense": {"w": True, "b": False}, "norm": {"scale": False}}


@pytest.mark.parametrize("mask", [None, MATRICES_ONLY, lambda path, p: p.ndim > 1,
                                  lambda path, p: path[0] == "norm"])
def test_add_decayed_weights_with_a_mask(backend, mask):
    paths = dict(zip(al.tree_paths(P), al.tree_leaves(P), strict=True))
    chosen = {path for path, p in paths.items()
              if mask is None or (mask(path, p) if callable(mask) else MATRICES_ONLY[path[0]][path[1]])}
    expected = al.tree_map_with_path(lambda path, g, p: g + 0.1 * p if path in chosen else g, G, P)
    close(apply(backend, T.add_decayed_weights(0.1, mask)), expected)


def test_a_mask_must_be_bools_or_a_predicate():
    with pytest.raises(al.InvalidArgumentTypeError, match="mask"):
        T.add_decayed_weights(0.1, mask="bias")
    t = T.add_decayed_weights(0.1, mask={"dense": {"w": 1, "b": 0}, "norm": {"scale": 0}})
    with pytest.raises(al.InvalidArgumentTypeError, match="Python bools"):
        t.update(P, t.init(P), P)
    t = T.add_decayed_weights(0.1, mask={"dense": {"w": True}})
    with pytest.raises(al.InvalidArgumentError, match="another structure"):
        t.update(P, t.init(P), P)


@pytest.mark.parametrize("nesterov", [False, True])
def test_trace_is_momentum(backend, nesterov):
    transform, params = T.trace(0.5, nesterov=nesterov), on(backend, P)
    state = transform.init(params)
    velocity = al.tree_map(np.zeros_like, G)
    for scale in (1.0, -2.0, 0.5):
        grads = al.tree_map(lambda g, s=scale: g * s, G)
        updates, state = transform.update(on(backend, grads), state, params)
        velocity = al.tree_map(lambda v, g: 0.5 * v + g, velocity, grads)
        close(host(updates), al.tree_map(lambda v, g: g + 0.5 * v, velocity, grads) if nesterov else velocity)


def test_scale_by_adam_and_the_learning_rate(backend):
    transform = T.chain(T.scale_by_adam(b1=0.5, b2=0.75, eps=1e-3), T.scale_by_learning_rate(0.1))
    params = on(backend, P)
    state = transform.init(params)
    m = v = al.tree_map(np.zeros_like, G)
    for t, scale in enumerate((1.0, -2.0, 0.5), start=1):
        grads = al.tree_map(lambda g, s=scale: g * s, G)
        updates, state = transform.update(on(backend, grads), state, params)
        m = al.tree_map(lambda m, g: 0.5 * m + 0.5 * g, m, grads)
        v = al.tree_map(lambda v, g: 0.75 * v + 0.25 * g * g, v, grads)
        close(host(updates), al.tree_map(lambda m, v, t=t: -0.1 * (m / (1 - 0.5**t)) / (np.sqrt(v / (1 - 0.75**t)) + 1e-3),
                                         m, v))
    assert isinstance(state, tuple) and int(np.asarray(al.to_backend(state[0]["count"], "numpy"))) == 3


def test_a_chain_runs_in_order(backend):
    clip_then_scale = T.chain(T.clip_by_value(-1.0, 1.0), T.scale(3.0))
    scale_then_clip = T.chain(T.scale(3.0), T.clip_by_value(-1.0, 1.0))
    close(apply(backend, clip_then_scale), al.tree_map(lambda g: 3.0 * np.clip(g, -1, 1), G))
    close(apply(backend, scale_then_clip), al.tree_map(lambda g: np.clip(3.0 * g, -1, 1), G))
    with pytest.raises(al.InvalidArgumentTypeError, match="argument 1"):
        T.chain(T.scale(1.0), al.optim.sgd(0.1))


def test_adamw_mask_spares_biases_and_norm_scales(backend):
    """With the mask, the spared leaves move exactly as under Adam; the others as under AdamW."""
    results = {}
    for name, optimizer in {"adam": al.optim.adam(0.01), "adamw": al.optim.adamw(0.01, weight_decay=0.5),
                            "masked": al.optim.adamw(0.01, weight_decay=0.5, mask=lambda path, p: p.ndim > 1)}.items():
        params = on(backend, P)
        state = optimizer.init(params)
        for _ in range(2):
            params, state = optimizer.update(on(backend, G), state, params)
        results[name] = host(params)
    close(results["masked"]["dense"]["b"], results["adam"]["dense"]["b"])
    close(results["masked"]["norm"], results["adam"]["norm"])
    close(results["masked"]["dense"]["w"], results["adamw"]["dense"]["w"])
    assert not np.allclose(results["adamw"]["dense"]["b"], results["adam"]["dense"]["b"])


def test_from_transforms_equals_sgd(backend):
    hand, ours = al.optim.sgd(0.1, momentum=0.9), al.optim.from_transforms(T.trace(0.9), T.scale_by_learning_rate(0.1))
    a = b = on(backend, P)
    sa, sb = hand.init(a), ours.init(b)
    for _ in range(3):
        a, sa = hand.update(on(backend, G), sa, a)
        b, sb = ours.update(on(backend, G), sb, b)
    for x, y in zip(al.tree_leaves(host(a)), al.tree_leaves(host(b)), strict=True):
        np.testing.assert_array_equal(x, y)


# -- paths ----------------------------------------------------------------------------------------------------------
def test_tree_paths_follow_the_leaf_order():
    Pair = collections.namedtuple("Pair", "w b")
    tree = {"z": [np.ones(1), None, (np.zeros(2),)], "a": Pair(np.ones(1), {"q": np.ones(3)})}
    assert al.tree_paths(tree) == [("a", "w"), ("a", "b", "q"), ("z", 0), ("z", 2, 0)]
    sizes = al.tree_map_with_path(lambda path, leaf: (path, leaf.size), tree)
    assert sizes["a"].b["q"] == (("a", "b", "q"), 3) and sizes["z"][1] is None
    assert al.models.tree.path_name(("layers", 0, "w")) == "layers/0/w"
    assert [leaf.size for leaf in al.tree_leaves(tree)] == [1, 3, 1, 2]
