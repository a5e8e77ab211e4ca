"""The TensorFlow steps of bench_dp_step.py (a TensorFlow world: one worker per process, the collective
ops MultiWorkerMirroredStrategy runs on): arraylayer's ``replicated_step`` of a ``data_parallel`` Adam
step against the same step through ``tf.distribute``.

``arraylayer``: ``dist.replicated_step(step)`` (in a TensorFlow world of several processes, one
``tf.function`` per process whose all_reduce is the world's graph ``CollectiveReduceV2``).
``native``: the world's own ``MultiWorkerMirroredStrategy`` (the one the engine joined with), a
``tf.function`` of ``strategy.run`` with ``tf.GradientTape``, the replica context's
``all_reduce(MEAN, grads)`` and Adam on ``tf.Variable`` s (one replica per worker: each worker updates its
own variables with the averaged gradients, as DDP does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dp_step_model import adam_moments, batch, forward, initial, interleaved, replicated_adam_step, report

from arraylayer.distributed.engines import tf_collective


def arraylayer_step(x: Any, y: Any) -> Callable[[], float]:
    import tensorflow as tf

    return replicated_adam_step({k: tf.constant(v) for k, v in initial().items()}, x, y)


def native_step(x: Any, y: Any) -> Callable[[], float]:
    import tensorflow as tf

    strategy = tf_collective.strategy()
    start = initial()
    p = {k: tf.Variable(a) for k, a in start.items()}
    m = {k: tf.Variable(tf.zeros_like(a)) for k, a in start.items()}
    v = {k: tf.Variable(tf.zeros_like(a)) for k, a in start.items()}
    t = tf.Variable(0.0)

    def per_replica(x: Any, y: Any) -> Any:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((forward(p, x, tf.matmul, tf.tanh) - y) ** 2)
        names = list(p)
        grads = tape.gradient(loss, [p[k] for k in names])
        grads = tf.distribute.get_replica_context().all_reduce(tf.distribute.ReduceOp.MEAN, grads)
        count = t.assign_add(1.0)
        for k, g in zip(names, grads, strict=True):
            delta, m_new, v_new = adam_moments(g, m[k], v[k], count, tf.sqrt)
            m[k].assign(m_new)
            v[k].assign(v_new)
            p[k].assign_sub(delta)
        return loss

    @tf.function
    def run(x: Any, y: Any) -> Any:
        return strategy.experimental_local_results(strategy.run(per_replica, args=(x, y)))[0]

    def step() -> float:
        return float(run(x, y))

    return step


def run(compiled: bool) -> None:
    """Both steps compiled (``compiled`` is ignored: the compiler is this framework's idiom)."""
    import tensorflow as tf

    x, y = (tf.constant(a) for a in batch())
    cases = {"arraylayer": arraylayer_step(x, y), "native": native_step(x, y)}
    report("tensorflow", "tf.function", "arraylayer", "native", interleaved(cases, ("native", "arraylayer")))
