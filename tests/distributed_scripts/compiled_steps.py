"""Run from train.py on every rank: data_parallel Adam inside the world's compiler (tf.function,
torch.compile; on jax replicated_step over a global mesh of every process's devices) against the eager
steps, and what each compiler does with a call it cannot compile."""

import numpy as np

import arraylayer as al
import arraylayer.distributed as dist


def loss(p, x, y):
    return al.mean((al.matmul(x, p["w"]) + p["b"] - y) ** 2)


def _steps(step, p, state, x, y, count):
    for _ in range(count):
        p, state = step(p, state, x, y)
    return {k: al.to_backend(v, "numpy") for k, v in p.items()}


def jax_devices():
    import jax

    return jax.devices()


def compiled_adam(backend, x, y, eager, steps):
    """``steps`` compiled data_parallel Adam steps on this rank's half batch equal ``eager`` (2e-5)."""
    opt = dist.data_parallel(al.optim.adam(0.05))
    p = {"w": al.to_backend(np.zeros((5, 1), np.float32), backend), "b": al.to_backend(np.zeros(1, np.float32), backend)}

    def step(p, state, x, y):
        return opt.update(al.grad(loss)(p, x, y), state, p)

    if backend == "tensorflow":
        import tensorflow as tf

        mine = _steps(tf.function(step), p, opt.init(p), x, y, steps)
        # replicated_step in a world of several processes: one replica per process, the world's collectives
        train = dist.replicated_step(lambda carry, x, y: step(*carry, x, y))
        spanning = _steps(lambda p, s, x, y: train((p, s), x, y), p, opt.init(p), x, y, steps)
        for k in spanning:
            assert np.max(np.abs(spanning[k] - eager[k])) <= 2e-5, ("replicated_step", k, spanning[k], eager[k])
        gathered = dist.replicated_step(lambda carry, x: dist.all_gather(x))(None, x)
        assert np.array_equal(np.asarray(gathered), np.asarray(dist.all_gather(x))), gathered
        try:
            dist.replicated_step(lambda carry, x: x, devices=["/cpu:0", "/cpu:1"])(None, x)
            raise AssertionError("two devices per process in a tensorflow world were accepted")
        except al.UnsupportedOperationError as error:
            assert "one replica per process" in str(error), error
    elif backend == "torch":
        import torch

        mine = _steps(torch.compile(step, fullgraph=True), p, opt.init(p), x, y, steps)  # no graph break
    else:  # jax: each process gives its half; its devices each take a part of that
        parts = dist.replicated_step(lambda carry, x: dist.all_gather(x))(None, x)  # over every device of the world
        whole = np.asarray(dist.all_gather(x))  # the processes' halves (the eager engine)
        assert np.array_equal(np.asarray(parts), whole.reshape(parts.shape)) and parts.shape[0] == len(jax_devices()), parts.shape
        train = dist.replicated_step(lambda carry, x, y: step(*carry, x, y))
        mine = _steps(lambda p, s, x, y: train((p, s), x, y), p, opt.init(p), x, y, steps)
    for k in mine:
        assert np.max(np.abs(mine[k] - eager[k])) <= 2e-5, (backend, k, mine[k], eager[k])
    gathered = dist.all_gather(mine)
    assert all(np.array_equal(gathered[k][0], gathered[k][1]) for k in mine), gathered


def gather_and_broadcast(backend):
    """all_gather and broadcast inside tf.function / torch.compile keep the dtype (int8, bool)."""
    r = dist.rank()
    both = lambda x, f: (dist.all_gather(x), dist.broadcast({"x": x, "f": f}, root=1))  # noqa: E731
    if backend == "tensorflow":
        import tensorflow as tf

        compiled = tf.function(both)
    elif backend == "torch":
        import torch

        compiled = torch.compile(both, fullgraph=True)
    else:
        return
    x, f = al.to_backend(np.array([r, 7], np.int8), backend), al.to_backend(np.array([r == 1, False]), backend)
    rows, root = compiled(x, f)
    assert al.Dtype(rows.dtype) == al.int8 and np.array_equal(al.to_backend(rows, "numpy"), [[0, 7], [1, 7]]), rows
    assert np.array_equal(al.to_backend(root["x"], "numpy"), [1, 7]), root
    assert al.Dtype(root["f"].dtype) == al.bool and np.array_equal(al.to_backend(root["f"], "numpy"), [True, False]), root


def refusals(backend):
    """tensorflow and torch: ranks that trace different collectives fail on every rank; jax: an eager collective
    inside jax.jit is refused, naming replicated_step."""
    r = dist.rank()
    if backend == "torch":
        import torch

        try:
            torch.compile(lambda g: dist.all_reduce({"g": g}), fullgraph=True)(torch.ones(2 + r))
            raise AssertionError("a mismatch inside torch.compile was accepted")
        except RuntimeError as error:
            assert "DistributedMismatchError" in str(error) and f"rank {r}" in str(error), error
    if backend == "tensorflow":
        import tensorflow as tf

        try:
            tf.function(lambda g: dist.all_reduce({"g": g}))(tf.ones(2 + r))
            raise AssertionError("a mismatch inside tf.function was accepted")
        except tf.errors.InvalidArgumentError as error:
            assert "DistributedMismatchError" in str(error) and f"rank {r}" in str(error), error
    if backend == "jax":
        import jax

        try:
            jax.jit(lambda g: dist.all_reduce(g))(np.ones(2, np.float32))
            raise AssertionError("a collective on a tracer was accepted")
        except al.UnsupportedOperationError as error:
            assert "replicated_step" in str(error), error
