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
        import jax

        carry = train((p, opt.init(p)), x, y)
        # jax leaves in place, never through the host (on CPU a host copy is no transfer: this bites on GPUs)
        with jax.transfer_guard_device_to_host("disallow"):
            train(carry, x, y)  # the last step's output
            train((p, opt.init(p)), x, y)  # jax arrays of this process
    for k in mine:
        assert np.max(np.abs(mine[k] - eager[k])) <= 2e-5, (backend, k, mine[k], eager[k])
    gathered = dist.all_gather(mine)
    assert all(np.array_equal(gathered[k][0], gathered[k][1]) for k in mine), gathered


def _mixed(rank, op):
    """Rank ``rank``'s tree of mixed dtypes: leaves sharing a wire dtype (float32 with complex64, int32
    with int8 on tensorflow), a scalar, bfloat16 and uint64 each their own."""
    import ml_dtypes

    tree = {"a": np.arange(6, dtype=np.float32).reshape(2, 3) / 4 + rank, "b": np.float32(0.5 - rank),
            "c": np.array([1, -2, 3, 2**30], np.int32) * (rank + 1), "d": np.array([100, -7, 3], np.int8) + rank,
            "f": np.array([1.5, -2.0 - rank], ml_dtypes.bfloat16), "g": np.array([2**63 + rank, 5], np.uint64)}
    if op == "sum":
        tree["e"] = np.array([1 + 2j, -rank + 0.5j], np.complex64)
    return tree


def mixed_reduce(backend):
    """all_reduce of one tree of mixed dtypes equals NumPy's reduction over the ranks, leaf by leaf and
    dtype by dtype, eagerly and (tensorflow) inside tf.function, whose graph holds one CollectiveReduceV2
    per wire dtype (float32, int32, bfloat16, int64), not one per leaf."""
    n = dist.world_size()
    for op in ("sum", "max"):
        rows = [_mixed(q, op) for q in range(n)]
        want = {k: (np.sum if op == "sum" else np.max)(np.stack([np.asarray(r[k]) for r in rows]), axis=0,
                                                       **({"dtype": np.asarray(rows[0][k]).dtype} if op == "sum" else {}))
                for k in rows[0]}
        valid = al.valid_dtypes(backend)  # jax without x64: its uint64 leaf stays NumPy's
        mine = {k: al.to_backend(np.asarray(v), backend) if al.Dtype(np.asarray(v).dtype) in valid else np.asarray(v)
                for k, v in rows[dist.rank()].items()}
        runs = [("eager", lambda t, op=op: dist.all_reduce(t, op))]
        if backend == "tensorflow":
            import tensorflow as tf

            compiled = tf.function(lambda t, op=op: dist.all_reduce(t, op))
            graph = compiled.get_concrete_function(mine).graph
            reduces = [o for o in graph.get_operations() if o.type == "CollectiveReduceV2"]
            assert len(reduces) == 4, (op, [o.inputs[0].dtype for o in reduces])
            runs.append(("tf.function", compiled))
        for name, run in runs:
            got = run(mine)
            for k, w in want.items():
                g = al.to_backend(got[k], "numpy")
                assert np.dtype(g.dtype) == w.dtype and np.array_equal(g, w), (name, op, k, g, w)


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
