"""arraylayer.models.random: threefry keys and samplers, bit-identical to jax.random (the oracle) for
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


@pytest.mark.parametrize("seed", [0, 42, 2**31 + 5, 2**32 - 1])
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
    (lambda: al.random.uniform(al.random.key(0), (2,), minval=1.0, maxval=1.0), al.InvalidArgumentError),
    (lambda: al.random.uniform(al.random.key(0), (2,), minval=2.0, maxval=1.0), al.InvalidArgumentError),
    (lambda: al.random.uniform(al.random.key(0), (2,), maxval=float("inf")), al.InvalidArgumentError),
    (lambda: al.random.uniform(al.random.key(0), (2,), minval="0"), al.InvalidArgumentTypeError),
    (lambda: al.random.categorical(al.random.key(0), al.asarray([1, 2])), al.InvalidDtypeError),
    (lambda: al.random.categorical(al.random.key(0), al.asarray(1.0)), al.InvalidArgumentTypeError),
    (lambda: al.random.categorical(al.random.key(0), [0.5, 0.5]), al.InvalidArgumentTypeError),
    (lambda: al.random.categorical(al.random.key(0), al.asarray([0.5, 0.5]), axis=1), al.AxisError),
    (lambda: al.random.bernoulli(al.random.key(0), al.asarray([1, 0])), al.InvalidArgumentTypeError),
    (lambda: al.random.bernoulli(al.random.key(0), "0.5"), al.InvalidArgumentTypeError),
    (lambda: al.random.bits(al.asarray([1.0, 2.0]), (2,)), al.InvalidArgumentTypeError),
    (lambda: al.random.fold_in(al.random.key(0), 1.5), al.InvalidArgumentTypeError),
    (lambda: al.random.fold_in(al.random.key(0), True), al.InvalidArgumentTypeError),
    (lambda: al.random.fold_in(al.random.key(0), al.asarray(1.0)), al.InvalidArgumentTypeError),
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


def _host(x):
    return np.asarray(al.to_backend(x, "numpy"))


@pytest.mark.parametrize(("lower", "upper"), [(5.0, 6.0), (4.0, 40.0), (-1.0, 9.0), (-7.0, -6.0), (-0.5, 1.5)])
def test_truncated_normal_tails_have_no_nan_and_the_right_mean(backend, lower, upper):
    scipy_stats = pytest.importorskip("scipy.stats")
    with al.use_backend(backend):
        t = _host(al.random.truncated_normal(al.random.key(2), lower, upper, (20_000,)))
    assert not np.isnan(t).any() and lower <= t.min() and t.max() <= upper
    # a float32 CDF near 1 rounded upper-tail draws to a handful of values (or NaN) before
    assert len(np.unique(t)) > 15_000
    expected = scipy_stats.truncnorm(lower, upper)
    assert abs(t.mean() - expected.mean()) < 5 * expected.std() / np.sqrt(t.size)


def test_truncated_normal_agrees_across_backends_in_the_tails(backend):
    def draw():
        return _host(al.random.truncated_normal(al.random.key(9), 5.0, 6.0, (64,)))
    with al.use_backend("numpy"):
        reference = draw()
    with al.use_backend(backend):
        np.testing.assert_allclose(draw(), reference, rtol=4e-7 * 4)


@pytest.mark.parametrize("source", ["numpy", "jax", "torch", "tensorflow", "dask"])
def test_keys_moved_between_backends_give_the_same_numbers(backend, source):
    if source not in al.available_backends():
        pytest.skip(f"{source} is not installed")
    with al.use_backend(source):
        k = al.random.key(77)
        expected = _host(al.random.uniform(k, (6,)))
    if source == "torch" and "int64" not in al.valid_dtypes(backend):
        with pytest.raises(al.UnsupportedDtypeError):  # jax without x64 holds no int64: cast to uint32 on the way
            al.to_backend(k, backend)
        k = al.to_backend(k, "numpy").astype(np.uint32)
    moved = al.to_backend(k, backend)
    with al.use_backend(backend):
        np.testing.assert_array_equal(_host(al.random.uniform(moved, (6,))), expected)
        np.testing.assert_array_equal(_host(al.random.split(moved)), _host(al.random.split(al.random.key(77))))


def test_fold_in_takes_numpy_ints_and_0d_integer_arrays(backend):
    with al.use_backend(backend):
        k = al.random.key(3)
        expected = _host(al.random.fold_in(k, 2**32 + 7))  # the low 32 bits are used
        wide = (al.asarray(7, dtype=al.int64),) if "int64" in al.valid_dtypes(backend) else ()
        for data in (7, np.int64(7), np.uint8(7), al.asarray(7, dtype=al.int32), *wide):
            np.testing.assert_array_equal(_host(al.random.fold_in(k, data)), expected)
        np.testing.assert_array_equal(_host(al.random.fold_in(k, -1)), _host(al.random.fold_in(k, 2**32 - 1)))


def test_fold_in_with_a_traced_step_counter_under_jax_jit():
    with al.use_backend("jax"):
        k = al.random.key(3)
        folded = jax.jit(al.random.fold_in)(k, al.asarray(11, dtype=al.int32))
    np.testing.assert_array_equal(np.asarray(folded), jax.random.key_data(jax.random.fold_in(_jax_key(3), 11)))


def test_bernoulli_with_an_array_of_probabilities(backend):
    with al.use_backend(backend):
        k = al.random.key(4)
        p = al.asarray([0.0, 0.25, 1.0], dtype=al.float32)
        drawn = _host(al.random.bernoulli(k, p, (20_000, 3)))
        assert _host(al.random.bernoulli(k, p)).shape == (3,)
        # the same draws as a scalar p of the same value (both compare float32 uniforms with p)
        np.testing.assert_array_equal(_host(al.random.bernoulli(k, al.asarray(0.25, dtype=al.float32), (7,))),
                                      _host(al.random.bernoulli(k, 0.25, (7,))))
    assert not drawn[:, 0].any() and drawn[:, 2].all() and abs(drawn[:, 1].mean() - 0.25) < 0.015


def test_samplers_take_a_device(backend):
    with al.use_backend(backend):
        k = al.random.key(8)
        device = al.dev(k)
        calls = {
            "bits": lambda **kw: al.random.bits(k, (3,), **kw),
            "uniform": lambda **kw: al.random.uniform(k, (3,), **kw),
            "normal": lambda **kw: al.random.normal(k, (3,), **kw),
            "truncated_normal": lambda **kw: al.random.truncated_normal(k, -1.0, 1.0, (3,), **kw),
            "randint": lambda **kw: al.random.randint(k, (3,), 0, 5, **kw),
            "bernoulli": lambda **kw: al.random.bernoulli(k, 0.5, (3,), **kw),
            "categorical": lambda **kw: al.random.categorical(k, al.asarray([[0.0, 1.0]]), **kw),
            "permutation": lambda **kw: al.random.permutation(k, 4, **kw),
        }
        for name, call in calls.items():
            placed = call(device=device)
            assert al.dev(placed) == device, name
            np.testing.assert_array_equal(_host(placed), _host(call()), err_msg=name)


def test_dtypes_follow_the_default_dtypes(backend, request):
    if backend == "jax":
        request.getfixturevalue("x64_on")
    with al.use_backend(backend):
        k = al.random.key(0)
        wide = "float64" in al.valid_dtypes(backend) and "int64" in al.valid_dtypes(backend)
        if not wide:
            pytest.skip(f"{backend} as configured has no 64-bit dtypes")
        with al.use_default_dtypes(int="int64", float="float64"):
            for sampler in (al.random.uniform, al.random.normal):
                assert al.Dtype(sampler(k, (2,)).dtype) is al.float64
            assert al.Dtype(al.random.truncated_normal(k, -1.0, 1.0, (2,)).dtype) is al.float64
            assert al.Dtype(al.random.randint(k, (2,), 0, 3).dtype) is al.int64
            u64 = _host(al.random.uniform(k, (1000,)))
    with al.use_backend("numpy"):
        reference = _host(al.random.uniform(al.random.key(0), (1000,), dtype=al.float64))
    np.testing.assert_array_equal(u64, reference)  # float64 streams agree across backends too
    assert len(np.unique(u64)) == 1000


def test_scaled_uniform_under_jax_jit_is_within_one_ulp():
    """XLA contracts u * (max - min) + min into a fused multiply-add, so a scaled range may differ
    from the eager value by one ulp under jax.jit (the default [0, 1) is bit-identical)."""
    with al.use_backend("jax"):
        k = al.random.key(6)
        eager = np.asarray(al.random.uniform(k, (10_000,), minval=-2.0, maxval=5.0))
        jitted = np.asarray(jax.jit(lambda k: al.random.uniform(k, (10_000,), minval=-2.0, maxval=5.0))(k))
        unit = np.asarray(jax.jit(lambda k: al.random.uniform(k, (10_000,)))(k))
    np.testing.assert_array_equal(unit, np.asarray(al.random.uniform(al.to_backend(k, "numpy"), (10_000,))))
    # one ulp of the product u * 7 (below 8), however small the sum
    np.testing.assert_allclose(jitted, eager, rtol=0, atol=2.0**-21)
# -- evaluation: tiles (NumPy, PyTorch), chunks (dask), int32 words (PyTorch) ----------------

from arraylayer.models.random import evaluation as al_random  # noqa: E402  (its evaluation tables)
from arraylayer.models.random import threefry  # noqa: E402  (its words and rounds)


def _all_samplers(k, shape):
    draws = [al.random.bits(k, shape), al.random.uniform(k, shape), al.random.uniform(k, shape, minval=-3.0, maxval=2.0),
             al.random.normal(k, shape), al.random.truncated_normal(k, -1.0, 0.5, shape),
             al.random.randint(k, shape, -7, 100, dtype=al.int8), al.random.randint(k, shape, -7, 1000), al.random.bernoulli(k, 0.3, shape)]
    if al.current_backend() != "jax":  # float64 needs jax's x64 mode
        draws += [al.random.uniform(k, shape, dtype=al.float64), al.random.normal(k, shape, dtype=al.float64)]
    return draws


def _computed(x):
    return to_numpy(x.compute() if hasattr(x, "compute") else x)


@pytest.mark.parametrize("shape", [(7,), (8,), (3, 5), (29,), (4, 0), (0,)])
def test_tiles_give_the_bits_of_one_whole_pass(backend, shape, monkeypatch):
    """Tiles of 7 elements (a draw of several tiles, sizes not a multiple of the tile, empty draws)
    equal the untiled evaluation bit for bit, on every backend."""
    with al.use_backend(backend):
        k = al.random.key(2**40 + 9)
        monkeypatch.setattr(al_random, "_EVALUATORS", {})  # every backend: whole arrays
        whole = [_computed(x) for x in _all_samplers(k, shape)]
        monkeypatch.setattr(al_random, "_TILES", {"numpy": 7, "torch": 7})
        monkeypatch.setattr(al_random, "_EVALUATORS", {"numpy": al_random._tiled, "torch": al_random._tiled,
                                                       "dask": al_random._blocks})
        tiled = [_computed(x) for x in _all_samplers(k, shape)]
    for a, b in zip(tiled, whole, strict=True):
        assert a.shape == shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_a_draw_larger_than_a_tile_matches_jax(backend):
    """The real tile sizes: 3 tiles and a part, against jax.random."""
    n = 3 * max(al_random._TILES.values()) + 12345
    with al.use_backend(backend):
        k = al.random.key(17)
        b, u = _computed(al.random.bits(k, (n,))), _computed(al.random.uniform(k, (n,)))
    jk = _jax_key(17)
    np.testing.assert_array_equal(b.astype(np.uint32), np.asarray(jax.random.bits(jk, (n,), dtype=np.uint32)))
    np.testing.assert_array_equal(u, np.asarray(jax.random.uniform(jk, (n,), dtype=np.float32)))


def test_torch_int32_words_equal_numpy_uint32_words():
    """The rounds in PyTorch's int32 words give the bits of NumPy's uint32 words, for key words
    and counters on both sides of 2**31 (where int32 is negative)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    words = np.concatenate([rng.integers(0, 2**32, 1000, dtype=np.uint64), [0, 2**31 - 1, 2**31, 2**32 - 1]])
    key_words = [(0, 0), (2**32 - 1, 2**31), (123456789, 3141592653)]
    for k0, k1 in key_words:
        expected = threefry._threefry_rounds(np.uint32(k0), np.uint32(k1), words.astype(np.uint32)[::-1],
                                             words.astype(np.uint32))
        with al.use_backend("torch"):
            k = threefry._to_rounds(torch.tensor([k0, k1], dtype=torch.int64))
            assert k.dtype == torch.int32
            x = torch.from_numpy(words.astype(np.int64))
            ours = threefry._threefry_rounds(k[0], k[1], threefry._to_rounds(x.flip(0)), threefry._to_rounds(x))
            ours = [threefry._to_public(y) for y in ours]
        for a, b in zip(ours, expected, strict=True):
            assert a.dtype == torch.int64
            np.testing.assert_array_equal(a.numpy(), b.astype(np.int64))


def test_torch_counters_past_2_to_31_wrap_into_int32():
    pytest.importorskip("torch")
    with al.use_backend("torch"):
        lo = al_random._counters(2**31 - 2, 2**31 + 2, "cpu")
        assert threefry._to_public(lo).tolist() == [2**31 - 2, 2**31 - 1, 2**31, 2**31 + 1]
        assert threefry._word(2**32 - 1) == -1
        folded = al.random.fold_in(al.random.key(3), 2**32 - 1)  # data past 2**31: a negative int32 word
    expected = jax.random.key_data(jax.random.fold_in(_jax_key(3), 2**32 - 1))
    np.testing.assert_array_equal(folded.numpy(), np.asarray(expected, np.int64))


def test_dask_draws_stay_lazy_and_follow_dask_chunks():
    """Nothing is computed when the sampler is called; each chunk is one task running the NumPy
    tiles; several chunks give the NumPy bits."""
    dask = pytest.importorskip("dask")

    def refuse(*args, **kwargs):
        raise AssertionError("computed")

    n = 100_003
    with dask.config.set({"array.chunk-size": "64KiB", "scheduler": refuse}), al.use_backend("dask"):
        k = al.random.split(al.random.key(5), 3)[1]
        draws = [al.random.uniform(k, (n,)), al.random.bits(k, (n,)), al.random.normal(k, (n // 7, 7))]
        assert all(isinstance(d, dask.array.Array) for d in draws)
        assert draws[0].numblocks == (-(-n * 4 // 2**16),)
    with al.use_backend("numpy"):
        k = al.random.split(al.random.key(5), 3)[1]
        expected = [al.random.uniform(k, (n,)), al.random.bits(k, (n,)), al.random.normal(k, (n // 7, 7))]
    for d, e in zip(draws, expected, strict=True):
        np.testing.assert_array_equal(d.compute(scheduler="threads"), e)


def test_under_torch_compile_a_step_that_draws_compiles_once(monkeypatch):
    """A second call (another key) reuses the first compilation: nothing is cached while Dynamo
    traces (threefry's cache, written then, failed its guard on the next call: every draw compiled twice)."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.utils import counters

    monkeypatch.setattr(threefry, "_COMPILED", {})  # as in a fresh process
    torch._dynamo.reset()
    counters.clear()
    x = torch.ones(3, 5)
    f = torch.compile(lambda k, x: al.nn.dropout(k, x, 0.25), backend="eager")
    with al.use_backend("torch"):
        compiled = [f(al.random.key(seed), x) for seed in (1, 2)]
    assert counters["stats"]["unique_graphs"] == 1
    for seed, mask in zip((1, 2), compiled, strict=True):
        keep = np.asarray(jax.random.uniform(_jax_key(seed), (3, 5), dtype=np.float32)) < np.float32(0.75)
        np.testing.assert_array_equal(mask.numpy(), np.where(keep, np.float32(1 / 0.75), 0))


@pytest.mark.parametrize("name", ["jax", "tensorflow"])
def test_exact_draws_compiled_whole_give_numpys_bits(name):
    """On jax and tensorflow, bits, bernoulli and randint run counters, rounds and transform as one
    compiled call, eagerly and inside the user's own jit: NumPy's values (threefry one op at a time)."""
    compile_ = {"jax": lambda f: jax.jit(f), "tensorflow": lambda f: pytest.importorskip("tensorflow").function(f)}
    if name == "tensorflow":
        pytest.importorskip("tensorflow")

    def draws(k):
        return (al.random.bits(k, (4, 5)), al.random.bernoulli(k, 0.3, (7, 3)),
                al.random.randint(k, (6,), -5, 9, dtype=al.int32))

    expected = [np.asarray(d) for d in draws(al.random.key(9))]
    with al.use_backend(name):
        for got in (draws(al.random.key(9)), compile_[name](draws)(al.random.key(9))):
            for a, b in zip(got, expected, strict=True):
                np.testing.assert_array_equal(np.asarray(a), b)


def test_under_torch_compile_a_draw_larger_than_a_tile():
    """torch.compile traces the whole-array evaluation (no tiles under a tracer): the eager bits."""
    torch = pytest.importorskip("torch")
    n = al_random._TILES["torch"] + 3
    with al.use_backend("torch"):
        k = al.random.key(8)
        compiled = torch.compile(lambda k: al.random.uniform(k, (n,)), backend="eager")(k)
        eager = al.random.uniform(k, (n,))
    np.testing.assert_array_equal(compiled.numpy(), eager.numpy())


def test_array_bounds_broadcast_over_a_tiled_draw(backend, monkeypatch):
    """uniform's minval/maxval may be arrays of the whole shape: applied after the tiles."""
    monkeypatch.setattr(al_random, "_TILES", {"numpy": 7, "torch": 7})
    low = np.linspace(-1, 0, 30, dtype=np.float32).reshape(3, 10)
    with al.use_backend(backend):
        k = al.random.key(4)
        u = _computed(al.random.uniform(k, (3, 10), minval=al.asarray(low), maxval=1.0))
        unit = _computed(al.random.uniform(k, (3, 10)))
    np.testing.assert_array_equal(u, np.maximum(unit * (1.0 - low) + low, low))
