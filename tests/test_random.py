"""arraylayer.random: threefry keys and samplers, bit-identical to jax.random (the oracle) for
key/split/fold_in/bits/uniform on every backend; statistics of the other samplers; errors; and
the generator under jax.jit, tf.function and torch.compile."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al

to_numpy = np.asarray  # every backend here is on the CPU

jax = pytest.importorskip("jax")


def _jax_key(seed):
    return jax.random.key(seed)


@pytest.mark.parametrize("seed", [0, 42, 2**31 + 5])
def test_key_split_fold_in_bits_uniform_match_jax(backend, seed):
    with al.use_backend(backend):
        k = al.random.key(seed)
        ours = [k, al.random.split(k, 4), al.random.fold_in(k, 123), al.random.bits(k, (3, 5)),
                al.random.uniform(k, (7, 3))]
    jk = _jax_key(seed)
    theirs = [jax.random.key_data(jk), jax.random.key_data(jax.random.split(jk, 4)),
              jax.random.key_data(jax.random.fold_in(jk, 123)), jax.random.bits(jk, (3, 5), dtype=np.uint32),
              jax.random.uniform(jk, (7, 3), dtype=np.float32)]
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(to_numpy(a).astype(np.asarray(b).dtype), np.asarray(b))
    assert str(to_numpy(ours[4]).dtype) == "float32"


def test_uniform_range_matches_jax(backend):
    with al.use_backend(backend):
        u = al.random.uniform(al.random.key(3), (100,), minval=-2.0, maxval=5.0)
    # XLA fuses jax's u * (max - min) + min into one FMA; arraylayer rounds twice.
    expected = np.asarray(jax.random.uniform(_jax_key(3), (100,), minval=-2.0, maxval=5.0, dtype=np.float32))
    np.testing.assert_allclose(to_numpy(u), expected, rtol=0, atol=2.0**-21)  # 1 ulp at |x| < 8


def test_other_samplers_agree_with_numpy_backend(backend):
    def draw():
        k = al.random.key(7)
        return [al.random.normal(k, (50,)), al.random.randint(k, (50,), -5, 9),
                al.random.bernoulli(k, 0.3, (50,)), al.random.permutation(k, 20),
                al.random.truncated_normal(k, -1.0, 2.0, (50,)),
                al.random.categorical(k, al.asarray([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]]))]
    with al.use_backend("numpy"):
        reference = [to_numpy(x) for x in draw()]
    with al.use_backend(backend):
        ours = [to_numpy(x) for x in draw()]
    np.testing.assert_allclose(ours[0], reference[0], rtol=4e-7 * 4, atol=1e-6)
    np.testing.assert_allclose(ours[4], reference[4], rtol=4e-7 * 4, atol=1e-6)
    for i in (1, 2, 3, 5):
        np.testing.assert_array_equal(ours[i], reference[i])


def test_statistics():
    k = al.random.key(11)
    z = al.random.normal(k, (200_000,))
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    assert abs(np.mean(z > 1.0) - 0.158655) < 0.003
    assert abs(al.random.bernoulli(k, 0.3, (100_000,)).mean() - 0.3) < 0.005
    counts = np.bincount(al.random.categorical(k, np.log(np.asarray([0.2, 0.3, 0.5], np.float32)),
                                               shape=(60_000,)), minlength=3) / 60_000
    np.testing.assert_allclose(counts, [0.2, 0.3, 0.5], atol=0.01)
    perm = al.random.permutation(k, 1000)
    assert sorted(perm.tolist()) == list(range(1000)) and perm.tolist() != list(range(1000))
    t = al.random.truncated_normal(k, -0.5, 1.5, (50_000,))
    assert t.min() >= -0.5 and t.max() <= 1.5
    r = al.random.randint(k, (60_000,), -3, 3)
    assert set(r.tolist()) == set(range(-3, 3))
    u = al.random.uniform(k, (100_000,))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.005


def test_dtypes_and_shapes(backend):
    with al.use_backend(backend):
        k = al.random.key(1)
        assert al.random.uniform(k, (2, 3)).shape == (2, 3)
        assert al.random.normal(k, ()).shape == ()
        assert al.random.uniform(k, (0, 4)).shape == (0, 4)
        assert al.as_arraylayer_dtype(al.random.uniform(k, (2,)).dtype) == al.default_float_dtype()
        assert al.as_arraylayer_dtype(al.random.randint(k, (2,), 0, 3).dtype) == al.default_int_dtype()
        assert al.as_arraylayer_dtype(al.random.randint(k, (2,), 0, 3, dtype=al.int8).dtype) == al.int8
        assert al.as_arraylayer_dtype(al.random.bernoulli(k, 0.5, (2,)).dtype) == al.bool
        assert al.dev(al.random.uniform(k, (2,))) == al.dev(k)


def test_float64_on_numpy():
    u = al.random.uniform(al.random.key(0), (1000,), dtype=al.float64)
    assert u.dtype == np.float64 and 0 <= u.min() and u.max() < 1
    assert len(np.unique(u)) == 1000


@pytest.mark.parametrize(("call", "error"), [
    (lambda: al.random.key(1.5), al.InvalidArgumentTypeError),
    (lambda: al.random.key(True), al.InvalidArgumentTypeError),
    (lambda: al.random.uniform(al.random.key(0), (-1, 2)), al.InvalidArgumentError),
    (lambda: al.random.uniform(al.random.key(0), (2.5,)), al.InvalidArgumentTypeError),
    (lambda: al.random.uniform(al.random.key(0), (2,), dtype=al.int32), al.InvalidDtypeError),
    (lambda: al.random.randint(al.random.key(0), (2,), 3, 3), al.InvalidArgumentError),
    (lambda: al.random.randint(al.random.key(0), (2,), 0, 300, dtype=al.int8), al.InvalidArgumentError),
    (lambda: al.random.randint(al.random.key(0), (2,), 0, 3, dtype=al.float32), al.InvalidDtypeError),
    (lambda: al.random.bernoulli(al.random.key(0), 1.5), al.InvalidArgumentError),
    (lambda: al.random.split(np.zeros(3, np.uint32)), al.InvalidArgumentTypeError),
    (lambda: al.random.truncated_normal(al.random.key(0), 1.0, 0.0), al.InvalidArgumentError),
])
def test_bad_input_refused(backend, call, error):
    with al.use_backend(backend), pytest.raises(error):
        call()


def test_under_jax_jit():
    with al.use_backend("jax"):
        f = jax.jit(lambda k: (al.random.split(k, 3), al.random.uniform(k, (4,))))
        keys, u = f(al.random.key(5))
    jk = _jax_key(5)
    np.testing.assert_array_equal(np.asarray(keys), jax.random.key_data(jax.random.split(jk, 3)))
    np.testing.assert_array_equal(np.asarray(u), jax.random.uniform(jk, (4,), dtype=np.float32))


def test_under_tf_function():
    tf = pytest.importorskip("tensorflow")
    with al.use_backend("tensorflow"):
        f = tf.function(lambda k: (al.random.split(k, 3), al.random.uniform(k, (4,))))
        keys, u = f(al.random.key(5))
    jk = _jax_key(5)
    np.testing.assert_array_equal(keys.numpy(), jax.random.key_data(jax.random.split(jk, 3)))
    np.testing.assert_array_equal(u.numpy(), jax.random.uniform(jk, (4,), dtype=np.float32))


def test_under_torch_compile():
    torch = pytest.importorskip("torch")
    with al.use_backend("torch"):
        f = torch.compile(lambda k: (al.random.split(k, 3), al.random.uniform(k, (4,))), backend="eager")
        keys, u = f(al.random.key(5))
    jk = _jax_key(5)
    np.testing.assert_array_equal(keys.numpy(), np.asarray(jax.random.key_data(jax.random.split(jk, 3)), np.int64))
    np.testing.assert_array_equal(u.numpy(), jax.random.uniform(jk, (4,), dtype=np.float32))
