"""TensorFlow's collective ops: the engine of tensorflow worlds (those MultiWorkerMirroredStrategy runs on).

``join`` starts the worker of ``TF_CONFIG`` through MultiWorkerMirroredStrategy (bounded by the timeout);
each collective is then one eager ``CollectiveReduceV2`` (one per wire dtype: ``reduce_grouped``) / ``CollectiveGatherV2`` /
``CollectiveBcastSendV2`` / ``CollectiveBcastRecvV2`` on this worker's CPU, ended past the timeout by a watchdog thread (_Watchdog). The
ranks number their calls alike (the signature exchange keeps them in step), which gives the instance keys.
The ops carry only some dtypes: the others travel through a wider one and are cast back exactly (_WIRE).
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Final

import numpy as np

from arraylayer.distributed.engines.common import as_numpy, env, fail
from arraylayer.errors import DistributedError, DistributedTimeoutError, UnsupportedDtypeError

__all__ = ["launch_envs", "join", "leave", "gather_digest", "all_reduce", "all_gather", "broadcast", "device", "strategy",
           "reduce_grouped"]

_GROUP: Final = 4100  # the group key of the world (any key MultiWorkerMirroredStrategy leaves unused)
_STATE: dict[str, Any] = {}
_NATIVE: Final = frozenset(("float16", "float32", "float64", "int32", "int64"))  # every op's; reductions: bfloat16 too
#: dtype -> the dtype it travels as, for those the collective ops refuse (each cast back is exact)
_WIRE: Final = {"bfloat16": "float32", "bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int32", "uint16": "int32",
                "uint32": "int64", "uint64": "int64", "complex64": "float32", "complex128": "float64"}
_MERGE: Final = {"sum": "Add", "max": "Max", "min": "Min"}


def launch_envs(ranks: range, world: int, addr: str, ports: list[int]) -> list[dict[str, str]]:
    """``TF_CONFIG`` naming one worker per rank on ``ports`` at the master address (one host), or the
    cluster of a ``TF_CONFIG`` already set (several hosts) with each rank's task index."""
    if "TF_CONFIG" in os.environ:
        cluster = json.loads(os.environ["TF_CONFIG"])["cluster"]
    else:
        cluster = {"worker": [f"{addr}:{p}" for p in ports[:world]]}
    return [{"TF_CONFIG": json.dumps({"cluster": cluster, "task": {"type": "worker", "index": r}})} for r in ranks]


def join(rank: int, size: int, timeout: float) -> None:
    if "TF_CONFIG" not in os.environ:
        port = env("ARRAYLAYER_MASTER_PORT", "MASTER_PORT")
        if port is None:
            raise DistributedError(f"a tensorflow world of {size} needs TF_CONFIG (or MASTER_ADDR and MASTER_PORT: "
                                   f"then workers listen on MASTER_PORT + 1 + rank): start it with "
                                   f"'python -m arraylayer launch --backend tensorflow'.")
        addr = env("ARRAYLAYER_MASTER_ADDR", "MASTER_ADDR") or "127.0.0.1"
        os.environ.update(launch_envs(range(rank, rank + 1), size, addr, [int(port) + 1 + r for r in range(size)])[0])
    import tensorflow as tf

    done: dict[str, Any] = {}

    def start() -> None:
        try:
            done["strategy"] = tf.distribute.MultiWorkerMirroredStrategy()
        except Exception as error:  # reported by the joining thread
            done["error"] = error

    thread = threading.Thread(target=start, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise DistributedTimeoutError(f"rank {rank}: the tensorflow workers of TF_CONFIG did not all start "
                                      f"within {timeout:g} s")
    if "error" in done:
        raise DistributedError(f"rank {rank} could not join the tensorflow world of {size}: {done['error']}") from None
    _STATE.update(strategy=done["strategy"], instance=1 << 20, watchdog=_Watchdog(),
                  device=f"/job:worker/replica:0/task:{rank}/device:CPU:0")


def device() -> str:
    """This process's device in the world (its collectives run there)."""
    return _STATE["device"]


def strategy() -> Any:
    """The MultiWorkerMirroredStrategy this process joined the world with (a second one cannot start)."""
    return _STATE["strategy"]


def leave() -> None:
    _STATE.clear()  # the workers' servers stop with the process: TensorFlow has no way to stop them earlier


def _key() -> int:
    _STATE["instance"] += 1
    return _STATE["instance"]


def _tensor(x: Any) -> Any:
    import tensorflow as tf

    return x if isinstance(x, tf.Tensor) else tf.constant(as_numpy(x))


def _native(name: str, op: str) -> bool:
    return name in _NATIVE or (name == "bfloat16" and op in _MERGE)


def _encode(t: Any, op: str) -> Any:
    """``t`` in a dtype the collective ops take; uint64 max/min keep their order (sign bit flipped)."""
    import tensorflow as tf

    name = t.dtype.name
    if _native(name, op):
        return t
    if name not in _WIRE:
        raise UnsupportedDtypeError(f"the tensorflow engine cannot carry {name} leaves: cast them to float32 first.")
    if name.startswith("complex"):
        return tf.stack([tf.math.real(t), tf.math.imag(t)], axis=-1)
    if name == "uint64":
        bits = tf.bitcast(t, tf.int64)
        return tf.bitwise.bitwise_xor(bits, tf.constant(np.iinfo(np.int64).min)) if op in ("max", "min") else bits
    return tf.cast(t, _WIRE[name])


def _decode(w: Any, like: Any, op: str) -> Any:
    import tensorflow as tf

    name = like.dtype.name
    if _native(name, op):
        return w
    if name.startswith("complex"):
        return tf.complex(w[..., 0], w[..., 1])
    if name == "uint64":
        bits = tf.bitwise.bitwise_xor(w, tf.constant(np.iinfo(np.int64).min)) if op in ("max", "min") else w
        return tf.bitcast(bits, tf.uint64)
    return tf.cast(w, like.dtype)  # modular for the integers (a sum wraps as the narrow dtype does)


class _Watchdog:
    """The process's one thread that aborts its collectives when the one in flight passes its deadline.

    TensorFlow's own ``timeout_seconds`` on an eager collective op races with the op's completion and
    crashed the process (SIGSEGV) in 2 of 10 runs on a loaded 2-core machine; its documented way to end
    collectives that wait for a lost peer, ``abort_collective_ops``, did not (0 of 14 at load 3-8)."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._deadline: float | None = None
        self.fired = False
        threading.Thread(target=self._watch, daemon=True, name="arraylayer-tf-watchdog").start()

    def arm(self, seconds: float) -> None:
        with self._lock:
            self._deadline, self.fired = time.monotonic() + seconds, False
            self._lock.notify()

    def disarm(self) -> None:
        with self._lock:
            self._deadline = None

    def _watch(self) -> None:
        with self._lock:
            while True:
                if self._deadline is None:
                    self._lock.wait()
                    continue
                left = self._deadline - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                self._deadline, self.fired = None, True
                _abort("DEADLINE_EXCEEDED", "a collective did not complete within its timeout")


def _call(rank: int, what: str, timeout: float, op: str, **arguments: Any) -> Any:
    """``tf.raw_ops.<op>`` on this worker's CPU, aborted by the watchdog past ``timeout``; its failure as
    arraylayer's."""
    import tensorflow as tf

    if "aborted" in _STATE:
        raise DistributedError(f"rank {rank}: {what} refused: this process's tensorflow collectives were aborted "
                               f"after an earlier failure ({_STATE['aborted']}); a tensorflow world does not outlive "
                               f"a timeout or a lost peer: start the processes again.")
    watchdog = _STATE["watchdog"]
    watchdog.arm(timeout)
    try:
        with tf.device(_STATE["device"]):
            return getattr(tf.raw_ops, op)(group_key=_GROUP, instance_key=_key(), **arguments)
    except tf.errors.OpError as error:
        if watchdog.fired:
            raise DistributedTimeoutError(f"rank {rank}: {what} did not complete within {timeout:g} s") from None
        _abort(error.error_code, (str(error.message).strip().splitlines() or [type(error).__name__])[0])
        fail(error, rank, what, timeout)
    finally:
        watchdog.disarm()


def _abort(code: Any, message: str) -> None:
    """End this worker's collectives: the one waiting for a peer returns an error, and every later one of
    the process is refused at once (DistributedError): a tensorflow world does not outlive a timeout or a
    lost peer; start the processes again."""
    from tensorflow.python.eager import context
    from tensorflow.python.framework import errors

    _STATE["aborted"] = message
    context.context().abort_collective_ops(getattr(errors, code) if isinstance(code, str) else code,
                                           f"arraylayer: {message}")


def gather_digest(rank: int, size: int, digest: bytes, timeout: float) -> list[bytes]:
    import tensorflow as tf

    mine = tf.constant(np.frombuffer(digest, dtype=np.int32)[None])
    rows = _call(rank, "the signature exchange", timeout, "CollectiveGatherV2", input=mine, group_size=size,
                 ordering_token=[])
    return [row.tobytes() for row in rows.numpy()]


def reduce_grouped(tensors: list, op: str, reduce_flat: Any) -> list:
    """``tensors`` reduced with one ``reduce_flat(flat) -> flat`` per wire dtype: the leaves of a wire dtype
    travel flattened and concatenated in one buffer (one collective per dtype, not one per leaf), then
    are split, reshaped and decoded back to their own dtypes."""
    import tensorflow as tf

    wires = [_encode(t, op) for t in tensors]
    groups: dict[Any, list[int]] = {}
    for i, w in enumerate(wires):
        groups.setdefault(w.dtype, []).append(i)
    out = list(wires)
    for members in groups.values():
        flat = reduce_flat(tf.concat([tf.reshape(wires[i], [-1]) for i in members], axis=0))
        sizes = [tf.size(wires[i]) for i in members]
        for i, part in zip(members, tf.split(flat, sizes) if len(members) > 1 else [flat], strict=True):
            out[i] = tf.reshape(part, tf.shape(wires[i]))
    return [_decode(w, t, op) for w, t in zip(out, tensors, strict=True)]


def all_reduce(rank: int, size: int, leaves: list, op: str, timeout: float) -> list:
    """One ``CollectiveReduceV2`` per wire dtype (``reduce_grouped``)."""
    return reduce_grouped([_tensor(x) for x in leaves], op, lambda flat: _call(
        rank, f"all_reduce[{op}]", timeout, "CollectiveReduceV2", input=flat, group_size=size, ordering_token=[],
        merge_op=_MERGE[op], final_op="Id"))


def all_gather(rank: int, size: int, leaves: list, timeout: float) -> list:
    out = []
    for x in leaves:
        t = _tensor(x)
        wire = _call(rank, "all_gather", timeout, "CollectiveGatherV2", input=_encode(t, "gather")[None],
                     group_size=size, ordering_token=[])
        out.append(_decode(wire, t, "gather"))
    return out


def broadcast(rank: int, size: int, leaves: list, root: int, timeout: float) -> list:
    import tensorflow as tf

    out = []
    for x in leaves:
        t = _tensor(x)
        wire = _encode(t, "broadcast")
        if rank == root:
            got = _call(rank, "broadcast", timeout, "CollectiveBcastSendV2", input=wire, group_size=size)
        else:
            got = _call(rank, "broadcast", timeout, "CollectiveBcastRecvV2", group_size=size, shape=tf.shape(wire),
                        T=wire.dtype)
        out.append(_decode(got, t, "broadcast"))
    return out
