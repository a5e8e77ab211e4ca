"""torch.compile of keyed dropout: a step compiled once draws a new mask for each new key, the
same mask as eager dropout and as NumPy's for that key (the behaviour is torch.compile's, so the
check runs on torch alone; test_nn_agreement checks the masks on every backend)."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al

torch = pytest.importorskip("torch")

RATE = 0.25


def _step(key, x):
    return al.nn.dropout(key, x, RATE) * 2.0


def test_compiled_dropout_compiles_once_and_keeps_the_masks():
    """Three steps with new keys (tensors, as a training loop passes them): one compilation with
    Inductor, no recompilation, and each step's output equal to eager dropout's and to NumPy's
    for the same key (whose eager masks come from another code path: NumPy or the C extension)."""
    from torch._dynamo.eval_frame import _debug_get_cache_entry_list
    from torch._dynamo.utils import counters

    # a new options dict per torch.compile: torch.compile pops "guard_filter_fn" out of it
    compiled = torch.compile(_step, options={"guard_filter_fn": al.torch_guard_filter})
    x = np.linspace(-3.0, 3.0, 4 * 33, dtype=np.float32).reshape(4, 33)  # not a multiple of a tile or vector
    with al.use_backend("torch"):
        keys = al.random.split(al.random.key(7), 3)
    # the oracles first: a backend's first use registers its dtype aliases, which bumps
    # context.EPOCH and so compiles again (by design: see guard_filter.py)
    expected = [np.asarray(al.nn.dropout(np.asarray(k), x, RATE)) * np.float32(2.0) for k in keys]
    with al.use_backend("torch"):
        eager = [_step(k, torch.from_numpy(x)) for k in keys]
    torch._dynamo.reset()
    counters.clear()
    dropped = []
    for i in range(3):
        out = compiled(keys[i], torch.from_numpy(x))
        assert torch.equal(out, eager[i])
        np.testing.assert_array_equal(out.numpy(), expected[i])
        dropped.append((out == 0).numpy())
    assert counters["stats"]["unique_graphs"] == 1
    assert len(_debug_get_cache_entry_list(_step.__code__)) == 1
    assert not np.array_equal(dropped[0], dropped[1])  # new key, new mask
    assert 0.1 < np.mean(dropped) < 0.4  # about RATE of the elements dropped
