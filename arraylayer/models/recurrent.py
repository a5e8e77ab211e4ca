"""Recurrent layers: GRU and LSTM, as cells (one step) and as sequence layers over ``scan``.

Each is a :class:`~arraylayer.models.layers.Layer` pair on plain parameter trees, as the other
layers; the equations are PyTorch's (``torch.nn.GRU`` / ``torch.nn.LSTM``, gates in its order), so a
model moves between the frameworks' own layers and these by copying weights:

* GRU, hidden ``H``: ``r, z = sigmoid(x Wx[r, z] + bx[r, z] + h Wh[r, z] + bh[r, z])``,
  ``n = tanh(x Wx[n] + bx[n] + r * (h Wh[n] + bh[n]))``, ``h' = (1 - z) * n + z * h``.
  Parameters ``{"w_x": (in, 3H), "w_h": (H, 3H), "b_x": (3H,), "b_h": (3H,)}``, the gates r, z, n in
  that order along the last axis.
* LSTM: ``i, f, o = sigmoid(...)``, ``g = tanh(...)`` of ``x Wx + h Wh + b`` (gates i, f, g, o),
  ``c' = f * c + i * g``, ``h' = o * tanh(c')``. Parameters ``{"w_x": (in, 4H), "w_h": (H, 4H),
  "b": (4H,)}``; ``init`` sets the forget gate's bias to 1 (``forget_bias=``), as Keras does.

``gru.apply(params, xs, h0=None) -> (ys, h_last)`` for ``xs`` of shape (batch, time, features):
``ys`` is (batch, time, H), every step's hidden state; ``h0`` defaults to zeros. ``lstm``'s state is
the pair ``(h, c)``: ``h0=(h, c)`` and ``h_last == (h, c)``. The input projection of every step is
one matmul before the loop; the loop is :func:`arraylayer.scan` (a lax scan under ``jax.jit``, a
``tf.while_loop`` under ``tf.function``; see docs/control_flow.rst), so a recurrent model jits,
differentiates and gives the same values on every backend.
"""

from __future__ import annotations

from typing import Any

from arraylayer import arguments
from arraylayer.api.creation import zeros_like
from arraylayer.api.elementwise import add, multiply, subtract, tanh
from arraylayer.api.linear_algebra import matmul
from arraylayer.api.manipulation import concat, permute_dims
from arraylayer.errors import InvalidArgumentError
from arraylayer.models import checks, initializers
from arraylayer.models.layer_base import Layer, _features, _inputs, _keys, _output, _positive, _weight
from arraylayer.models.mixed_precision import Policy
from arraylayer.models.nn.activations import sigmoid
from arraylayer.models.lowp_rule import rounded_once

__all__ = ["gru", "gru_cell", "lstm", "lstm_cell"]


def _gates_init(layer: str, key: Any, in_features: int, hidden: int, gates: int, dtype: Any) -> dict[str, Any]:
    n_in, n_h = _positive(in_features, f"{layer}.init: in_features"), _positive(hidden, f"{layer}.init: hidden")
    k_x, k_h = _keys(key, 2)
    return {"w_x": initializers.glorot_uniform(k_x, (n_in, gates * n_h), dtype),
            "w_h": initializers.glorot_uniform(k_h, (n_h, gates * n_h), dtype)}


_BIASES = {3: ("b_x", "b_h"), 4: ("b",)}  # gates -> the bias entries (GRU, LSTM)


def _hidden(layer: str, params: Any, gates: int) -> int:
    """H, from params' ``w_h`` (H, gates * H); every entry the layer reads is checked here."""
    w_h = _weight(layer, params, "w_h", 2)
    for name in _BIASES[gates]:
        checks.entry(layer, params, name, "params")
    h, width = int(w_h.shape[0]), int(w_h.shape[1])
    if width != gates * h:
        raise InvalidArgumentError(f"{layer}.apply: params['w_h'] has shape {(h, width)}, not ({h}, {gates * h}); "
                                   f"pass the parameters {layer}.init(key, ...) made.")
    return h


def _state(layer: str, h: Any, like: Any, hidden: int) -> Any:
    """The state ``h`` (zeros shaped as ``like``'s first ``hidden`` columns where None), checked."""
    if h is None:
        return zeros_like(like[..., :hidden])
    _features(layer, h, hidden, "the hidden state")
    return h


# -- GRU ---------------------------------------------------------------------------------------------------
def _gru_init(key: Any, in_features: int, hidden: int, *, dtype: Any = None) -> dict[str, Any]:
    """{"w_x": (in, 3H), "w_h": (H, 3H)} Glorot-uniform, {"b_x", "b_h": (3H,)} zeros."""
    params = _gates_init("gru", key, in_features, hidden, 3, dtype)
    width = params["w_x"].shape[1]
    params["b_x"] = initializers.zeros(key, (width,), dtype)
    params["b_h"] = initializers.zeros(key, (width,), dtype)
    return params


def _gru_step(params: Any, projected: Any, h: Any, hidden: int) -> Any:
    """One GRU step from the input's projection ``x Wx + bx`` (batch, 3H) and the state ``h``."""
    recurrent = add(matmul(h, params["w_h"]), params["b_h"])
    r = sigmoid(add(projected[..., :hidden], recurrent[..., :hidden]))
    z = sigmoid(add(projected[..., hidden:2 * hidden], recurrent[..., hidden:2 * hidden]))
    n = tanh(add(projected[..., 2 * hidden:], multiply(r, recurrent[..., 2 * hidden:])))
    return add(n, multiply(z, subtract(h, n)))  # (1 - z) n + z h


def _gru_cell_apply(params: dict[str, Any], x: Any, h: Any = None, *, policy: Policy | None = None) -> Any:
    """The next hidden state (batch, H) from ``x`` (batch, in) and ``h`` (zeros where None)."""
    params, x = _inputs(policy, params, x)
    hidden = _hidden("gru_cell", params, 3)
    w_x = _weight("gru_cell", params, "w_x", 2)
    _features("gru_cell", x, w_x.shape[0], "params['w_x']")
    projected = add(matmul(x, w_x), params["b_x"])
    h = _state("gru_cell", h if policy is None else policy.cast_to_compute(h), projected, hidden)
    return _output(policy, _gru_step(params, projected, h, hidden))


def _gru_apply(params: dict[str, Any], xs: Any, h0: Any = None, *, policy: Policy | None = None) -> tuple[Any, Any]:
    """``(ys, h_last)`` over ``xs`` (batch, time, in): ys (batch, time, H)."""
    params, xs = _inputs(policy, params, xs)
    hidden = _hidden("gru", params, 3)
    projected = _projected("gru", params, xs, "b_x")
    h0 = _state("gru", h0 if policy is None or h0 is None else policy.cast_to_compute(h0), projected[0], hidden)

    def step(h: Any, p: Any) -> tuple[Any, Any]:
        h = _gru_step(params, p, h, hidden)
        return h, h

    h_last, ys = _scan(step, h0, projected)
    return _output(policy, permute_dims(ys, (1, 0, 2))), _output(policy, h_last)


# -- LSTM --------------------------------------------------------------------------------------------------
def _lstm_init(key: Any, in_features: int, hidden: int, *, forget_bias: float = 1.0, dtype: Any = None) -> dict[str, Any]:
    """{"w_x": (in, 4H), "w_h": (H, 4H)} Glorot-uniform, {"b": (4H,)}: zeros, ``forget_bias`` for f."""
    params = _gates_init("lstm", key, in_features, hidden, 4, dtype)
    n_h = params["w_h"].shape[0]
    zeros, ones = initializers.zeros(key, (n_h,), dtype), initializers.ones(key, (n_h,), dtype)
    params["b"] = concat([zeros, multiply(ones, arguments.real_float(forget_bias, "lstm.init: forget_bias")), zeros, zeros])
    return params


def _lstm_step(params: Any, projected: Any, state: tuple[Any, Any], hidden: int) -> tuple[Any, Any]:
    """One LSTM step from ``x Wx + b`` (batch, 4H) and the state ``(h, c)``."""
    h, c = state
    g = add(projected, matmul(h, params["w_h"]))
    i, f = sigmoid(g[..., :hidden]), sigmoid(g[..., hidden:2 * hidden])
    cell, o = tanh(g[..., 2 * hidden:3 * hidden]), sigmoid(g[..., 3 * hidden:])
    c = add(multiply(f, c), multiply(i, cell))
    return multiply(o, tanh(c)), c


def _lstm_states(layer: str, state: Any, like: Any, hidden: int, policy: Policy | None) -> tuple[Any, Any]:
    if state is None:
        return _state(layer, None, like, hidden), _state(layer, None, like, hidden)
    if not isinstance(state, (tuple, list)) or len(state) != 2:
        raise InvalidArgumentError(f"{layer}.apply: the state is the pair (h, c), got {type(state).__name__}; pass "
                                   f"h0=(h, c) or None.")
    h, c = state if policy is None else (policy.cast_to_compute(state[0]), policy.cast_to_compute(state[1]))
    return _state(layer, h, like, hidden), _state(layer, c, like, hidden)


def _lstm_cell_apply(params: dict[str, Any], x: Any, state: Any = None, *,
                     policy: Policy | None = None) -> tuple[Any, Any]:
    """The next ``(h, c)`` from ``x`` (batch, in) and ``state`` = (h, c) (zeros where None)."""
    params, x = _inputs(policy, params, x)
    hidden = _hidden("lstm_cell", params, 4)
    w_x = _weight("lstm_cell", params, "w_x", 2)
    _features("lstm_cell", x, w_x.shape[0], "params['w_x']")
    projected = add(matmul(x, w_x), params["b"])
    h, c = _lstm_step(params, projected, _lstm_states("lstm_cell", state, projected, hidden, policy), hidden)
    return _output(policy, h), _output(policy, c)


def _lstm_apply(params: dict[str, Any], xs: Any, h0: Any = None, *,
                policy: Policy | None = None) -> tuple[Any, tuple[Any, Any]]:
    """``(ys, (h_last, c_last))`` over ``xs`` (batch, time, in): ys (batch, time, H)."""
    params, xs = _inputs(policy, params, xs)
    hidden = _hidden("lstm", params, 4)
    projected = _projected("lstm", params, xs, "b")
    state = _lstm_states("lstm", h0, projected[0], hidden, policy)

    def step(carry: tuple[Any, Any], p: Any) -> tuple[tuple[Any, Any], Any]:
        carry = _lstm_step(params, p, carry, hidden)
        return carry, carry[0]

    (h, c), ys = _scan(step, state, projected)
    return _output(policy, permute_dims(ys, (1, 0, 2))), (_output(policy, h), _output(policy, c))


# -- shared ------------------------------------------------------------------------------------------------
def _projected(layer: str, params: Any, xs: Any, bias: str) -> Any:
    """Every step's input projection ``x Wx + b``, time-major: (time, batch, gates * H), one matmul."""
    w_x = _weight(layer, params, "w_x", 2)
    shape = _features(layer, xs, w_x.shape[0], "params['w_x']")
    if len(shape) != 3:
        raise InvalidArgumentError(f"{layer}.apply: xs has shape {shape}; pass (batch, time, features).")
    return add(matmul(permute_dims(xs, (1, 0, 2)), w_x), params[bias])


def _scan(step: Any, init: Any, xs: Any) -> tuple[Any, Any]:
    from arraylayer.models.flow.loops import scan

    return scan(step, init, xs)


gru_cell = Layer(_gru_init, rounded_once(_gru_cell_apply, trees=True))
gru = Layer(_gru_init, rounded_once(_gru_apply, trees=True))
lstm_cell = Layer(_lstm_init, rounded_once(_lstm_cell_apply, trees=True))
lstm = Layer(_lstm_init, rounded_once(_lstm_apply, trees=True))
