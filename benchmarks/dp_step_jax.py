"""The jax steps of bench_dp_step.py (a jax.distributed world, one CPU device per process): arraylayer's
``replicated_step`` of a ``data_parallel`` Adam step against the same step written in jax.

``arraylayer``: ``dist.replicated_step(step)`` (one jitted ``shard_map`` over the global mesh of every
process's device; ``data_parallel``'s all_reduce is ``lax.pmean`` there), each process passing its part
of the batch. ``native``: jax's own idiom for the same thing, ``jax.jit(jax.shard_map(...))`` over that
mesh with ``jax.value_and_grad``, ``lax.pmean`` and Adam in ``jax.numpy``; its parameters stay global
arrays between steps and the batch becomes a global array each step
(``make_array_from_process_local_data``), as in a training loop fed by each process.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from dp_step_model import adam_moments, batch, forward, initial, interleaved, replicated_adam_step, report


def arraylayer_step(x: Any, y: Any) -> Callable[[], float]:
    return replicated_adam_step(initial(), x, y)


def native_step(x: Any, y: Any) -> Callable[[], float]:
    import jax
    import jax.numpy as jnp
    from jax import lax
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    mesh = Mesh(np.array(devices), ("replicas",))
    whole, split = NamedSharding(mesh, PartitionSpec()), NamedSharding(mesh, PartitionSpec("replicas"))

    def loss_of(p: Any, x: Any, y: Any) -> Any:
        return jnp.mean((forward(p, x, jnp.matmul, jnp.tanh) - y) ** 2)

    def per_replica(p: Any, m: Any, v: Any, t: Any, x: Any, y: Any) -> Any:
        loss, g = jax.value_and_grad(loss_of)(p, x, y)
        g = lax.pmean(g, "replicas")
        t = t + 1
        out = {k: adam_moments(g[k], m[k], v[k], t, jnp.sqrt) for k in p}
        return (loss, {k: p[k] - out[k][0] for k in p}, {k: out[k][1] for k in p}, {k: out[k][2] for k in p}, t)

    mapped = jax.shard_map(per_replica, mesh=mesh, in_specs=(PartitionSpec(),) * 4 + (PartitionSpec("replicas"),) * 2,
                           out_specs=PartitionSpec(), check_vma=False)  # the loss: each process's own
    run = jax.jit(mapped)
    place = lambda tree: jax.tree.map(lambda a: jax.make_array_from_process_local_data(whole, a), tree)  # noqa: E731
    params = initial()
    zeros = {k: np.zeros_like(a) for k, a in params.items()}
    carry = [place(params), place(zeros), place(zeros), place(np.zeros((), np.float32))]

    def step() -> float:
        xs, ys = (jax.make_array_from_process_local_data(split, np.asarray(a)) for a in (x, y))
        loss, *carry[:] = run(*carry, xs, ys)
        return float(loss.addressable_data(0))

    return step


def run(compiled: bool) -> None:
    """Both steps compiled (``compiled`` is ignored: the compiler is this framework's idiom)."""
    import jax.numpy as jnp

    x, y = (jnp.asarray(a) for a in batch())  # this process's part, on its device
    cases = {"arraylayer": arraylayer_step(x, y), "native": native_step(x, y)}
    report("jax", "jit", "arraylayer", "native", interleaved(cases, ("native", "arraylayer")))
