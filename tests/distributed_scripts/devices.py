"""replicated_step on 2 devices of one process against one device on the whole batch (Adam, an MLP)."""

import os
import sys

BACKEND = sys.argv[1]
if BACKEND == "jax":  # the device count is fixed when the framework starts
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=2"
elif BACKEND == "tensorflow":
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import numpy as np  # noqa: E402

import arraylayer as al  # noqa: E402
import arraylayer.distributed as dist  # noqa: E402


def loss(p, x, y):
    h = al.tanh(al.matmul(x, p["w1"]) + p["b1"])
    return al.mean((al.matmul(h, p["w2"]) + p["b2"] - y) ** 2)


OPT = al.optim.adam(0.05)


def step(carry, x, y):
    p, state = carry
    value, grads = al.value_and_grad(loss)(p, x, y)
    grads, value = dist.all_reduce((grads, value), "mean")
    p, state = OPT.update(grads, state, p)
    return (p, state), value


def main() -> None:
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(16, 5)).astype(np.float32), rng.normal(size=(16, 1)).astype(np.float32)
    p0 = {"w1": rng.normal(size=(5, 8)).astype(np.float32) * 0.5, "b1": np.zeros(8, np.float32),
          "w2": rng.normal(size=(8, 1)).astype(np.float32) * 0.5, "b2": np.zeros(1, np.float32)}
    p0 = {k: al.to_backend(v, BACKEND) for k, v in p0.items()}
    x, y = al.to_backend(X, BACKEND), al.to_backend(Y, BACKEND)
    several = dist.replicated_step(step)
    if BACKEND == "jax":
        import jax

        assert len(jax.local_devices()) == 2
    carry_a = carry_b = (p0, OPT.init(p0))
    for _ in range(5):
        carry_a, loss_a = several(carry_a, x, y)
        carry_b, loss_b = _one(carry_b, x, y)
        assert abs(float(loss_a) - float(loss_b)) <= 2e-5 * max(1.0, abs(float(loss_b))), (loss_a, loss_b)
    for k in p0:
        a, b = al.to_backend(carry_a[0][k], "numpy"), al.to_backend(carry_b[0][k], "numpy")
        assert a.dtype == b.dtype == np.float32 and a.shape == b.shape
        assert np.max(np.abs(a - b)) <= 2e-5, (k, a, b)
    gathered = _gathered(x)
    assert np.array_equal(al.to_backend(gathered, "numpy"), X.reshape(_count(), -1, 5)), gathered
    if _count() > 1:
        try:
            several(carry_a, x[:15], y[:15])
        except al.InvalidArgumentError as e:
            assert "split evenly" in str(e)
        else:
            raise AssertionError("an uneven batch was accepted")
    print("OK", BACKEND)


def _count() -> int:
    return 2 if BACKEND in ("jax", "tensorflow") else 1


def _one(carry, x, y):
    """One device on the whole batch: the same step, in a world of one (all_reduce returns its input)."""
    dist.initialize()
    return step(carry, x, y)


def _gathered(x):
    return dist.replicated_step(lambda carry, xs: dist.all_gather(xs))(None, x)


if __name__ == "__main__":
    main()
