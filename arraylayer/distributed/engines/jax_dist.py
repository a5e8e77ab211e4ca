"""jax.distributed: the engine of jax worlds, with XLA's CPU collectives over gloo.

Each process holds one device of a one-axis mesh. A collective builds the global array whose rows are
the ranks' leaves (``make_array_from_single_device_arrays``) and runs one jitted program over all leaves
whose output is replicated: a sum/max/min over the rows, the rows themselves (all_gather) or the root's
row (broadcast). The signature goes through the coordination service's key-value store, whose reads
are timed, so a missing or different peer is found before any XLA collective starts. Leaves of other
backends travel as jax arrays (64-bit ones inside ``jax.enable_x64``) and come back as NumPy arrays.
"""

from __future__ import annotations

import contextlib
import functools
import time
from typing import Any

import numpy as np

from arraylayer.distributed.engines.common import as_numpy, env, fail
from arraylayer.errors import DistributedError

__all__ = ["launch_envs", "join", "leave", "gather_digest", "all_reduce", "all_gather", "broadcast"]

#: the environment variable holding the coordinator's host:port
COORDINATOR = "ARRAYLAYER_JAX_COORDINATOR"
_STATE: dict[str, Any] = {}
_X64_ONLY = frozenset(("int64", "uint64", "float64", "complex128"))


def launch_envs(ranks: range, world: int, addr: str, ports: list[int]) -> list[dict[str, str]]:
    """The coordinator on the first of ``ports`` at the master address, for every rank."""
    return [{COORDINATOR: f"{addr}:{ports[0]}"} for _ in ranks]


def join(rank: int, size: int, timeout: float) -> None:
    import jax

    coordinator = env(COORDINATOR)
    if coordinator is None:
        port = env("ARRAYLAYER_MASTER_PORT", "MASTER_PORT")
        if port is None:
            raise DistributedError(f"a jax world of {size} needs {COORDINATOR}=host:port (or MASTER_ADDR and "
                                   f"MASTER_PORT, then MASTER_PORT + 1 is used): start it with "
                                   f"'python -m arraylayer launch --backend jax'.")
        coordinator = f"{env('ARRAYLAYER_MASTER_ADDR', 'MASTER_ADDR') or '127.0.0.1'}:{int(port) + 1}"
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(coordinator_address=coordinator, num_processes=size, process_id=rank,
                                   initialization_timeout=max(1, int(round(timeout))),
                                   shutdown_timeout_seconds=max(1, int(round(timeout))))  # bounds the exit too
    except Exception as error:
        raise DistributedError(f"rank {rank} could not join the jax world of {size} at {coordinator}: "
                               f"{str(error).splitlines()[0] if str(error) else type(error).__name__} (initialize "
                               f"must come before the first jax computation of the process)") from None
    from jax._src import distributed as jax_distributed
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = [min((d for d in jax.devices() if d.process_index == p), key=lambda d: d.id) for p in range(size)]
    mesh = Mesh(np.array(devices), ("ranks",))
    _STATE.update(client=jax_distributed.global_state.client, device=devices[rank], sequence=0,
                  rows=NamedSharding(mesh, PartitionSpec("ranks")), replicated=NamedSharding(mesh, PartitionSpec()))


def leave() -> None:
    import jax

    _STATE.clear()
    _program.cache_clear()
    jax.distributed.shutdown()


#: signature keys live in directories of this many rounds; rank 0 drops a whole directory at once
_BLOCK = 64


def gather_digest(rank: int, size: int, digest: bytes, timeout: float) -> list[bytes]:
    """One set and one timed read per peer on the coordination service (its round trips are the cost).

    Keys are ``arraylayer/signature/<block>/<round>/<rank>``. A rank at round s has read every key of
    round s - 1, so every peer has finished round s - 2: rank 0 deletes block b - 2 as block b starts,
    one delete per 64 rounds instead of one per rank and round."""
    client = _STATE["client"]
    _STATE["sequence"] += 1
    sequence = _STATE["sequence"]
    block = sequence // _BLOCK
    key = f"arraylayer/signature/{block}/{sequence}/{{}}".format
    deadline = time.monotonic() + timeout
    try:
        client.key_value_set_bytes(key(rank), digest)
        rows = [digest if r == rank else client.blocking_key_value_get_bytes(
            key(r), max(1, int(1000 * (deadline - time.monotonic())))) for r in range(size)]
        if rank == 0 and sequence % _BLOCK == 0 and block >= 2:
            client.key_value_delete(f"arraylayer/signature/{block - 2}")
    except Exception as error:
        fail(error, rank, "the signature exchange", timeout)
    return rows


def _reduce(op: str, leaves: list) -> list:
    import jax.numpy as jnp

    if op == "sum":
        return [jnp.sum(a, axis=0, dtype=a.dtype) for a in leaves]
    return [(jnp.max if op == "max" else jnp.min)(a, axis=0) for a in leaves]


def _row(root: int, leaves: list) -> list:
    return [a[root] for a in leaves]


@functools.cache
def _program(kind: str, argument: Any) -> Any:
    """The jitted program of one collective (jax caches its compilations per shapes and dtypes)."""
    import jax

    body = {"reduce": functools.partial(_reduce, argument), "row": functools.partial(_row, argument),
            "gather": lambda leaves: leaves}[kind]
    return jax.jit(body, out_shardings=_STATE["replicated"])


def _run(rank: int, size: int, leaves: list, kind: str, argument: Any, what: str, timeout: float) -> list:
    import jax

    if not leaves:
        return []
    native = [isinstance(x, jax.Array) for x in leaves]
    hosts = [None if n else as_numpy(x) for n, x in zip(native, leaves, strict=True)]
    wide = any(h is not None and h.dtype.name in _X64_ONLY for h in hosts)
    with jax.enable_x64(True) if wide else contextlib.nullcontext():
        rows = [jax.make_array_from_single_device_arrays(
            (size, *np.shape(x)), _STATE["rows"], [jax.device_put(x if h is None else h, _STATE["device"])[None]])
            for x, h in zip(leaves, hosts, strict=True)]
        try:
            out = [y.addressable_data(0) for y in _program(kind, argument)(rows)]
            jax.block_until_ready(out)
        except Exception as error:
            fail(error, rank, what, timeout)
        return [y if n else np.asarray(y) for n, y in zip(native, out, strict=True)]


def all_reduce(rank: int, size: int, leaves: list, op: str, timeout: float) -> list:
    return _run(rank, size, leaves, "reduce", op, f"all_reduce[{op}]", timeout)


def all_gather(rank: int, size: int, leaves: list, timeout: float) -> list:
    return _run(rank, size, leaves, "gather", None, "all_gather", timeout)


def broadcast(rank: int, size: int, leaves: list, root: int, timeout: float) -> list:
    return _run(rank, size, leaves, "row", root, "broadcast", timeout)
