"""Several devices in one process: ``replicated_step`` runs a per-replica step on every local device.

The step is written once with arraylayer, its gradients averaged with ``all_reduce`` as on several
processes. On jax it runs as one jitted ``shard_map`` over a mesh of the local devices (the batch split
along its first axis, the collectives ``lax.psum`` / ``pmean`` / ...); on TensorFlow as one
``tf.function`` of ``MirroredStrategy.run`` (the collectives the replica context's). Other backends
(numpy, torch, dask) run it on their one device, the whole batch one replica. While a replicated step
runs, the collectives are over its replicas, not over the processes of the world; in a jax world of
several processes the replicas are the devices of every process (a global mesh, the batch a global
array made from each process's part with ``make_array_from_process_local_data``). In a TensorFlow world
of several processes each process is one replica: the step is one ``tf.function`` whose collectives are
the world's graph collectives, each process on its own part of the batch.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import arraylayer as al
from arraylayer.errors import InvalidArgumentError, UnsupportedOperationError
from arraylayer.models.tree import tree_flatten

__all__ = ["replicated_step", "active", "Replicas"]

class Replicas:
    """The collectives over the replicas of one step: leaves in, leaves out (dtypes prepared by the caller)."""

    def __init__(self, reduce: Callable[[Any, str], Any], gather: Callable[[Any], Any]):
        self.reduce, self.gather = reduce, gather


def active() -> Replicas | None:
    """The replicas of the step now running, or None outside ``replicated_step``."""
    return _SHARED["replicas"]


#: module-wide, not per thread: TensorFlow may trace the replicas in threads of its own
_SHARED: dict[str, Replicas | None] = {"replicas": None}


@contextlib.contextmanager
def _within(replicas: Replicas) -> Iterator[None]:
    before = _SHARED["replicas"]
    _SHARED["replicas"] = replicas
    try:
        yield
    finally:
        _SHARED["replicas"] = before


def _one_device() -> Replicas:
    return Replicas(lambda x, op: x, lambda x: al.expand_dims(x, axis=0))


def _check_batch(batch: Sequence[Any], count: int) -> None:
    if not batch:
        raise InvalidArgumentError("replicated_step: give at least one batch argument after the replicated tree.")
    for x in tree_flatten(list(batch))[0]:
        if not getattr(x, "shape", None) or x.shape[0] % count:
            raise InvalidArgumentError(f"replicated_step: every batch leaf's first axis must split evenly over "
                                       f"{count} devices, got shape {tuple(getattr(x, 'shape', ()))} "
                                       f"(pad or drop rows, or pass devices=).")


# --- jax: one jitted shard_map over a mesh of the devices -----------------------------------------------

def _jax_replicas(axis: str) -> Replicas:
    from jax import lax

    ops = {"sum": lax.psum, "mean": lax.pmean, "max": lax.pmax, "min": lax.pmin}
    return Replicas(lambda x, op: ops[op](x, axis), lambda x: lax.all_gather(x, axis))


def _jax_runner(step_fn: Callable[..., Any], devices: Sequence[Any] | None) -> tuple[Callable[..., Any], int]:
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    processes = _world_size("jax_dist")
    if devices is None:  # in a world of several processes: every process's local devices, process by process
        devices = jax.local_devices() if processes == 1 else sorted(jax.devices(), key=lambda d: (d.process_index, d.id))
    devices = list(devices)
    mesh = Mesh(np.array(devices), ("replicas",))

    def per_replica(carry: Any, *batch: Any) -> Any:
        with _within(_jax_replicas("replicas")):
            return step_fn(carry, *batch)

    def run(carry: Any, *batch: Any) -> Any:
        mapped = jax.shard_map(per_replica, mesh=mesh, in_specs=(PartitionSpec(),) + (PartitionSpec("replicas"),) * len(batch),
                               out_specs=PartitionSpec(), check_vma=False)  # pmap's rules: local gradients, pmean averages
        return mapped(carry, *batch)

    compiled = jax.jit(run)
    whole, split = NamedSharding(mesh, PartitionSpec()), NamedSharding(mesh, PartitionSpec("replicas"))

    def placed(carry: Any, *batch: Any) -> Any:  # the carry on every device, each batch part on its own
        return compiled(jax.device_put(carry, whole), *jax.device_put(batch, split))

    if processes == 1:
        return placed, len(devices)

    def global_(sharding: Any, tree: Any) -> Any:  # this process's data as its part of a global array
        return jax.tree.map(lambda x: jax.make_array_from_process_local_data(
            sharding, x if isinstance(x, jax.Array) else np.asarray(x)), tree)  # a jax leaf: not through the host

    mine = [d for d in devices if d.process_index == jax.process_index()]
    last: dict[int, tuple[Any, Any]] = {}  # id of a leaf the last call returned -> (that leaf, its global array)

    def replicated(x: Any) -> Any:
        """A carry leaf as the replicated global array: the last call's output as it was (no conversion),
        another jax array in place on this process's devices (not through the host), others from the host."""
        if not isinstance(x, jax.Array):
            return jax.make_array_from_process_local_data(whole, np.asarray(x))
        known = last.get(id(x))
        if known is not None and known[0] is x:
            return known[1]
        if x.sharding == whole:
            return x
        local = [jax.device_put(x, d) for d in mine]  # no copy on the device it is on
        return jax.make_array_from_single_device_arrays(x.shape, whole, local)

    def spanning(carry: Any, *batch: Any) -> Any:  # each process gives its own part of the batch
        out = compiled(jax.tree.map(replicated, carry), *global_(split, batch))
        globals_ = jax.tree.leaves(out)
        mine_out = [y.addressable_data(0) for y in globals_]  # replicated: this process's copy
        last.clear()
        last.update((id(y), (y, g)) for y, g in zip(mine_out, globals_, strict=True))
        return jax.tree.unflatten(jax.tree.structure(out), mine_out)

    return spanning, sum(d.process_index == jax.process_index() for d in devices)


def _world_size(engine: str) -> int:
    """The processes of a joined world of ``engine`` (``jax_dist``, ``tf_collective``; 1 outside one): a
    replicated step then spans them all."""
    from arraylayer.distributed import world

    joined = world.is_initialized() and world.current()
    return joined.size if joined and joined.engine is not None and joined.engine.__name__.endswith(engine) else 1


# --- TensorFlow: a tf.function of MirroredStrategy.run ---------------------------------------------------

def _tf_devices() -> list[str]:
    import tensorflow as tf

    return [d.name for d in tf.config.list_logical_devices("GPU")] or [d.name for d in tf.config.list_logical_devices("CPU")]


def _tf_replicas() -> Replicas:
    import tensorflow as tf

    def reduce(x: Any, op: str) -> Any:
        context = tf.distribute.get_replica_context()
        if op in ("sum", "mean"):
            return context.all_reduce(tf.distribute.ReduceOp.SUM if op == "sum" else tf.distribute.ReduceOp.MEAN, x)
        rows = context.all_gather(tf.expand_dims(x, 0), axis=0)  # ReduceOp has no max or min
        return (tf.reduce_max if op == "max" else tf.reduce_min)(rows, axis=0)

    return Replicas(reduce, lambda x: tf.distribute.get_replica_context().all_gather(tf.expand_dims(x, 0), axis=0))


_STRATEGIES: dict[tuple[str, ...], Any] = {}


def _tf_runner(step_fn: Callable[..., Any], devices: Sequence[Any] | None) -> tuple[Callable[..., Any], int]:
    import tensorflow as tf

    if _world_size("tf_collective") > 1:
        from arraylayer.distributed.engines import tf_collective

        return _tf_world_runner(step_fn, tuple(devices) if devices is not None else (tf_collective.device(),)), 1
    names = tuple(devices) if devices is not None else tuple(_tf_devices())
    if names not in _STRATEGIES:  # one per device set: a second one would reuse the first's collective keys
        _STRATEGIES[names] = tf.distribute.MirroredStrategy(list(names))
    strategy = _STRATEGIES[names]
    count = strategy.num_replicas_in_sync

    def per_replica(carry: Any, batch: tuple[Any, ...]) -> Any:
        with _within(_tf_replicas()):
            return step_fn(carry, *batch)

    @tf.function
    def run(carry: Any, *batch: Any) -> Any:
        def part(ctx: Any) -> Any:
            size = [tf.shape(x)[0] // count for x in batch]
            i = ctx.replica_id_in_sync_group
            return tuple(x[i * s:(i + 1) * s] for x, s in zip(batch, size, strict=True))

        parts = strategy.experimental_distribute_values_from_function(part)
        out = strategy.run(per_replica, args=(carry, parts))
        return tf.nest.map_structure(lambda v: strategy.experimental_local_results(v)[0], out)

    return run, count


def _tf_world_runner(step_fn: Callable[..., Any], names: tuple[str, ...]) -> Callable[..., Any]:
    """In a TensorFlow world of several processes: one replica per process, ``step_fn`` as one
    ``tf.function`` whose collectives are the world's graph collectives (distributed/compiled.py), each
    process on its own part of the batch (``shard(x)``), as a jax world's replicated step."""
    import tensorflow as tf

    if len(names) != 1:
        raise UnsupportedOperationError(
            f"replicated_step: in a TensorFlow world of several processes a replicated step runs one replica per "
            f"process, and this process has {len(names)} devices ({', '.join(names)}); pass devices=[one of them], or "
            f"launch one process per device.")

    @tf.function
    def run(carry: Any, *batch: Any) -> Any:
        with tf.device(names[0]):
            return step_fn(carry, *batch)

    return run


RUNNERS: dict[str, Callable[[Callable[..., Any], Sequence[Any] | None], tuple[Callable[..., Any], int]]] = {
    "jax": _jax_runner, "tensorflow": _tf_runner}


def replicated_step(step_fn: Callable[..., Any], devices: Sequence[Any] | None = None) -> Callable[..., Any]:
    """``step_fn(carry, *batch)`` on every local device, each on its part of the batch (first axis).

    ``carry`` (parameters, optimizer state, ...) is replicated; ``step_fn`` averages its gradients with
    ``all_reduce(grads, "mean")`` and must return a result equal on every replica (what it derives from
    the carry and all-reduced values), which is returned once. ``devices``: jax devices or TensorFlow
    device names (default: all local ones); ignored by backends without several devices. In a jax
    world of several processes the default is every process's devices in one global mesh: each process
    passes its own part of the batch (``shard(x)``) and the same carry; in a TensorFlow world of several
    processes too, each process one replica on one device (else UnsupportedOperationError).
    """
    if not callable(step_fn):
        raise InvalidArgumentError(f"replicated_step: step_fn must be callable, got {type(step_fn).__name__}.")
    runners: dict[str, tuple[Callable[..., Any], int]] = {}

    def step(carry: Any, *batch: Any) -> Any:
        leaves = tree_flatten(list(batch))[0]
        name = al.backend_of(leaves[0]).name if leaves else "numpy"
        if name not in RUNNERS:
            _check_batch(batch, 1)
            with _within(_one_device()):
                return step_fn(carry, *batch)
        if name not in runners:
            runners[name] = RUNNERS[name](step_fn, devices)
        run, count = runners[name]
        _check_batch(batch, count)
        return run(carry, *batch)

    return step

