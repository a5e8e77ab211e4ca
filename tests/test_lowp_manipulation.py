"""The functions that only move, select or repeat elements (arraylayer/lowp/moving.py), the set functions
with counts and indices, nonzero, arange, eye and indexing, on the low-precision formats: on every backend
that holds a format, the result's dtype is the format and its codes are the oracle's bits.

The oracle is NumPy on the codes (uint8, one per element) for what moves elements, and NumPy's own
function on the ml_dtypes array widened to float32 (int32) where values are compared (unique_*, nonzero)
or made (arange, eye: float32, then ml_dtypes' cast). Never arraylayer. The inputs hold every value of the
format (NaN, -0.0, inf where the format has them); CI takes a sample of formats, ``AL_LOWP_EXHAUSTIVE=1``
(``nox -s lowp``) all fifteen.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from arraylayer import lowp
from tests.lowp_support import EXHAUSTIVE

SAMPLE = ("float8_e4m3fn", "float8_e5m2fnuz", "float4_e2m1fn", "int4", "uint2", "float8_e8m0fnu")
FORMATS = tuple(lowp.FORMATS) if EXHAUSTIVE else SAMPLE
# what compares or makes values (the rule: tests/test_lowp_compute.py samples its formats): a format with -0
# and NaN, one without zero, an integer one in CI
VALUE_FORMATS = tuple(lowp.FORMATS) if EXHAUSTIVE else ("float8_e4m3fn", "float8_e8m0fnu", "int4")
SHAPE = (4, 8, 8)


def _holds(backend, name):
    return lowp.STATUS[backend][name] in ("computed", "stored")


def _has_zero(name):
    return lowp.FORMATS[name].specials != "e8m0"  # float8_e8m0fnu: powers of two and NaN only


def _ml(name):
    return getattr(ml_dtypes, name)


def _every(name):
    f = lowp.FORMATS[name]
    if f.is_float:
        return np.arange(1 << f.bits, dtype=np.uint8).view(_ml(name))
    return np.arange(int(f.min), int(f.max) + 1).astype(_ml(name))


def _inputs(name, seed):
    """Every value of the format, shuffled and repeated to SHAPE (256 elements: every code of 8 bits)."""
    every = _every(name)
    return np.resize(np.random.default_rng(seed).permutation(every), np.prod(SHAPE)).reshape(SHAPE)


def make(backend, values):
    """An ml_dtypes NumPy array as ``backend``'s own array of that format, bits unchanged."""
    if backend == "numpy":
        return values
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.asarray(values)
    if backend == "torch":
        import torch

        return torch.from_numpy(values.view(np.uint8).copy()).view(getattr(torch, values.dtype.name))
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.constant(values)
    import dask.array as da

    return da.from_array(values, chunks=3)


def codes(y, name):
    """The codes of a backend's array of the format (the format's bits of each byte)."""
    assert lowp.format_of(y) == name, (type(y), y.dtype)
    module = type(y).__module__
    if module.startswith("torch"):
        import torch

        raw = y.view(torch.uint8).numpy()
    elif module.startswith("dask"):
        raw = np.asarray(y.compute()).view(np.uint8)
    else:
        raw = np.asarray(y).view(np.uint8)
    return raw & np.uint8((1 << lowp.FORMATS[name].bits) - 1)


def host(y):
    """An index or count result as NumPy."""
    if type(y).__module__.startswith("dask"):
        return np.asarray(y.compute())
    return np.asarray(y)


def _code_array(values, name):
    return values.view(np.uint8) & np.uint8((1 << lowp.FORMATS[name].bits) - 1)


def _ints(backend, values):
    """An int32 index array of ``backend``."""
    return al.to_backend(np.asarray(values, np.int32), backend)


def _moving_cases(backend, name):
    """(what, a thunk giving arraylayer's result: an array or a tuple of arrays, the oracle's codes) for every
    function that moves; the second list holds variants of their arguments (run with AL_LOWP_EXHAUSTIVE=1:
    each JAX call of a new shape and dtype compiles)."""
    x, y = _inputs(name, 1), _inputs(name, 2)
    cx, cy = _code_array(x, name), _code_array(y, name)
    bx, by = make(backend, x), make(backend, y)
    rng = np.random.default_rng(3)
    along = rng.integers(0, SHAPE[2], (SHAPE[0], SHAPE[1], 3))
    column, row = make(backend, x[0, 0, :5].copy()), make(backend, x[1, :, 0].copy())
    counts = [0, 1, 2, 3, 0, 1, 2, 3]
    mask = rng.random(SHAPE[:2]) < 0.5
    core = [
        ("reshape", lambda: al.reshape(bx, (8, 32)), cx.reshape(8, 32)),
        ("concat", lambda: al.concat([bx, by], axis=1), np.concatenate([cx, cy], axis=1)),
        ("stack", lambda: al.stack([bx, by], axis=1), np.stack([cx, cy], axis=1)),
        ("unstack", lambda: al.unstack(bx, axis=2), tuple(np.moveaxis(cx, 2, 0))),
        ("flip", lambda: al.flip(bx, axis=(0, 2)), np.flip(cx, axis=(0, 2))),
        ("roll", lambda: al.roll(bx, (3, -1), axis=(1, 2)), np.roll(cx, (3, -1), axis=(1, 2))),
        ("squeeze", lambda: al.squeeze(make(backend, x[:, None, :, :1].copy()), axis=(1, 3)), cx[:, :, 0]),
        ("expand_dims", lambda: al.expand_dims(bx, axis=(0, 3)), np.expand_dims(cx, axis=(0, 3))),
        ("moveaxis", lambda: al.moveaxis(bx, 0, -1), np.moveaxis(cx, 0, -1)),
        ("permute_dims", lambda: al.permute_dims(bx, (2, 0, 1)), np.transpose(cx, (2, 0, 1))),
        ("matrix_transpose", lambda: al.matrix_transpose(bx), np.swapaxes(cx, -1, -2)),
        ("Array.T", lambda: al.Array(make(backend, x[0].copy())).T.native, cx[0].T),
        ("broadcast_to", lambda: al.broadcast_to(make(backend, x[:, :1, :].copy()), (3, 4, 5, 8)),
         np.broadcast_to(cx[:, :1, :], (3, 4, 5, 8))),
        ("broadcast_arrays", lambda: al.broadcast_arrays(al.expand_dims(column, axis=1), row),
         tuple(np.broadcast_arrays(cx[0, 0, :5, None], cx[1, :, 0]))),
        ("tile", lambda: al.tile(bx, (2, 1, 3)), np.tile(cx, (2, 1, 3))),
        ("repeat", lambda: al.repeat(bx, _ints(backend, counts), axis=2), np.repeat(cx, counts, axis=2)),
        ("take", lambda: al.take(bx, _ints(backend, [0, 7, 3, 3, -1]), axis=1), np.take(cx, [0, 7, 3, 3, -1], axis=1)),
        ("take_along_axis", lambda: al.take_along_axis(bx, _ints(backend, along), axis=2),
         np.take_along_axis(cx, along, axis=2)),
        ("meshgrid", lambda: al.meshgrid(column, row), tuple(np.meshgrid(cx[0, 0, :5], cx[1, :, 0]))),
        ("linalg.diagonal", lambda: al.linalg.diagonal(bx, offset=1), np.diagonal(cx, offset=1, axis1=-2, axis2=-1)),
        ("getitem slices", lambda: al.Array(bx)[1:3, ::-2, 4].native, cx[1:3, ::-2, 4]),
        ("getitem array", lambda: al.Array(bx)[_ints(backend, [3, 0, 0])].native, cx[[3, 0, 0]]),
    ]
    if _has_zero(name):  # code 0 is the format's +0 (and int 0)
        core += [("tril", lambda: al.tril(bx, k=-2), np.tril(cx, k=-2)), ("triu", lambda: al.triu(bx, k=1), np.triu(cx, k=1))]
    variants = [
        ("reshape -1", lambda: al.reshape(bx, (-1,)), cx.reshape(-1)),
        ("concat None", lambda: al.concat([bx, by], axis=None), np.concatenate([cx.ravel(), cy.ravel()])),
        ("flip all", lambda: al.flip(bx), np.flip(cx)),
        ("roll flat", lambda: al.roll(bx, 5), np.roll(cx, 5)),
        ("Array.mT", lambda: al.Array(bx).mT.native, np.swapaxes(cx, -1, -2)),
        ("repeat int", lambda: al.repeat(bx, 2, axis=1), np.repeat(cx, 2, axis=1)),
        ("repeat flat", lambda: al.repeat(bx, 3), np.repeat(cx, 3)),
        ("meshgrid ij", lambda: al.meshgrid(column, row, indexing="ij"),
         tuple(np.meshgrid(cx[0, 0, :5], cx[1, :, 0], indexing="ij"))),
        ("getitem mask", lambda: al.Array(bx)[al.to_backend(mask, backend)].native, cx[mask]),
    ]
    if _has_zero(name):
        variants.append(("tril k=0", lambda: al.tril(bx), np.tril(cx)))
    return core, variants


def _mismatches(cases, name):
    failures = []
    for what, call, want in cases:
        got = call()
        got_codes = tuple(codes(g, name) for g in got) if isinstance(want, tuple) else codes(got, name)
        pairs = zip(got_codes, want, strict=True) if isinstance(want, tuple) else [(got_codes, want)]
        if isinstance(want, tuple) and len(got_codes) != len(want):
            failures.append((what, f"{len(got_codes)} arrays, not {len(want)}"))
            continue
        for g, w in pairs:
            if g.shape != w.shape or not (g == w).all():
                failures.append((what, g.shape, w.shape))
    return failures


@pytest.mark.parametrize("name", FORMATS)
def test_moving_functions_give_the_inputs_bits(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    core, variants = _moving_cases(backend, name)
    assert not _mismatches(core + variants if EXHAUSTIVE else core, name)


@pytest.mark.parametrize("name", FORMATS)
def test_setitem_writes_the_values_bits(backend, name):
    """``A[key] = value`` of the same format, on every backend (TensorFlow: a gather, it has no float8 scatter)."""
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    x, y = _inputs(name, 1), _inputs(name, 2)
    want = x.copy()
    want[1:3, 2] = y[0, 0]
    want[0, 0, 5] = y[3, 7, 7]
    a = al.Array(make(backend, x.copy()))
    a[1:3, 2] = al.Array(make(backend, y[0, 0].copy()))
    a[0, 0, 5] = al.Array(make(backend, y[3:, 7:, 7:].copy()))[0, 0, 0]
    assert (codes(a.native, name) == _code_array(want, name)).all()


def _wide(values):
    return values.astype(np.float32 if lowp.FORMATS[values.dtype.name].is_float else np.int32)


def _narrowed(values32, name):
    """A float32 (int32) result in the format: NaN as the format's one NaN (the computation rule), codes."""
    if lowp.FORMATS[name].is_float:
        values32 = np.where(np.isnan(values32), np.float32(np.nan), values32)
    return _code_array(values32.astype(_ml(name)), name)


def _one_zero(c, name):
    """-0 and +0 are one value for unique: which of the two is kept is unspecified."""
    f = lowp.FORMATS[name]
    return np.where(c == f.sign_bit, 0, c) if f.specials in ("ieee", "fn", "finite") else c


@pytest.mark.parametrize("name", VALUE_FORMATS)
def test_unique_nonzero_and_counts_follow_the_standard(backend, name):
    """unique_counts/unique_inverse/unique_all: -0.0 equals 0.0, every NaN is distinct; nonzero and
    count_nonzero: -0.0 is zero, NaN is not. The oracle: NumPy on the values widened to float32 (int32)."""
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    every = _every(name)
    x = np.random.default_rng(4).permutation(np.concatenate([every, every[: len(every) // 2]]))
    w = _wide(x)
    bx = make(backend, x)
    values, index, counts = np.unique(w, return_index=True, return_counts=True, equal_nan=False)
    want_values = _one_zero(_narrowed(values, name), name)
    nan = np.isnan(values) if w.dtype.kind == "f" else np.zeros(len(values), bool)
    everything = al.unique_all(bx)
    for result in (everything, al.unique_counts(bx), al.unique_inverse(bx)):
        got_values = _one_zero(codes(result.values, name), name)
        assert (got_values == want_values).all()  # NaNs last, each its own value: the format's one NaN
        if hasattr(result, "counts"):
            assert host(result.counts).tolist() == counts.tolist()
        if hasattr(result, "inverse_indices"):  # x rebuilt from the values; each NaN its own index
            inverse = host(result.inverse_indices)
            assert (got_values[inverse] == _one_zero(_narrowed(w, name), name)).all()
            assert sorted(inverse[np.isnan(w)].tolist()) == np.flatnonzero(nan).tolist()
    first = host(everything.indices)
    assert first[~nan].tolist() == index[~nan].tolist()  # which NaN comes first among the NaNs is unspecified
    assert sorted(first[nan].tolist()) == sorted(index[nan].tolist())
    square = make(backend, x[: (len(x) // 4) * 4].reshape(4, -1))
    got = al.nonzero(square)
    want = np.nonzero(w[: (len(x) // 4) * 4].reshape(4, -1))
    assert [host(g).tolist() for g in got] == [v.tolist() for v in want]
    assert int(host(al.count_nonzero(bx))) == int(np.count_nonzero(w))
    assert host(al.count_nonzero(square, axis=1)).tolist() == np.count_nonzero(w[: len(x) // 4 * 4].reshape(4, -1),
                                                                               axis=1).tolist()


def _arange_bounds(name):
    f = lowp.FORMATS[name]
    if not f.is_float:  # start, stop and step must fit the format: int1 (-1 and 0) counts down
        return (int(f.min), int(f.max), 1) if f.max >= 1 else (int(f.max), int(f.min), -1)
    return -7.0, 9.0, 0.75  # values the format rounds (7.5 in float4: 8 -> 6 saturates) and -0.0 nowhere


@pytest.mark.parametrize("name", VALUE_FORMATS)
def test_arange_and_eye_compute_in_float32_and_cast_once(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    wide = np.float32 if lowp.FORMATS[name].is_float else np.int32
    start, stop, step = _arange_bounds(name)
    with al.use_backend(backend):
        got = al.arange(start, stop, step, dtype=name)
        with np.errstate(invalid="ignore"):
            want = np.arange(start, stop, step, dtype=wide).astype(_ml(name))
        assert (codes(got, name) == _code_array(want, name)).all()
        if not _has_zero(name):
            for function in (lambda: al.eye(3, 4, k=1, dtype=name), lambda: al.tril(al.ones((2, 2), dtype=name)),
                             lambda: al.triu(al.ones((2, 2), dtype=name))):
                with pytest.raises(al.UnsupportedDtypeError, match=f"{name} has no zero"):
                    function()
            return
        if lowp.FORMATS[name].max < 1:  # int1 has no 1: eye raises as ones does (nothing implicit wraps)
            with pytest.raises(al.ScalarOverflowError, match=name):
                al.eye(3, 4, k=1, dtype=name)
            return
        got = al.eye(3, 4, k=1, dtype=name)
        assert (codes(got, name) == _code_array(np.eye(3, 4, k=1, dtype=wide).astype(_ml(name)), name)).all()


def test_compiled_paths_move_the_same_bits(backend):
    """Under jax.jit and tf.function (and torch.compile with AL_LOWP_EXHAUSTIVE=1: it costs seconds) the moves
    give the eager bits (TensorFlow: the positions' gather; torch: uint8 views)."""
    name = "float8_e4m3fn"
    x = _inputs(name, 5)
    bx = make(backend, x)
    c = _code_array(x, name)

    def moved(a):
        return al.flip(al.tril(al.roll(a, 2, axis=1)), axis=0)

    want = np.flip(np.tril(np.roll(c, 2, axis=1)), axis=0)
    if backend == "jax":
        import jax

        got = jax.jit(moved)(bx)
    elif backend == "tensorflow":
        import tensorflow as tf

        got = tf.function(moved, autograph=False)(bx)
    elif backend == "torch" and EXHAUSTIVE:
        import torch

        got = torch.compile(moved)(bx)
    else:
        got = moved(bx)
    assert (codes(got, name) == want).all()


def test_the_support_cells_say_what_the_calls_do():
    """The declarations (arraylayer.support.low_precision_support) of what moves, of eye's zero, and of what
    stays refused; tests/test_lowp_compute.py and the probe compare every cell with a call."""
    from arraylayer.support import low_precision_support

    def status(fn, backend, name):
        return low_precision_support(fn, backend)[al.Dtype(name)].status

    for fn in ("reshape", "take", "tril", "meshgrid", "linalg.diagonal", "pad", "fft.fftshift", "unique_all", "arange"):
        assert status(fn, "jax", "float8_e4m3fn") == "supported", fn
        assert status(fn, "numpy", "int4") == "supported", fn
    assert [status(fn, "jax", "float8_e8m0fnu") for fn in ("eye", "tril", "triu", "flip")] == \
        ["unsupported", "unsupported", "unsupported", "supported"]
    assert "has no zero" in low_precision_support("eye", "numpy")[al.float8_e8m0fnu].why
    assert status("diff", "numpy", "float8_e4m3fn") == "supported"  # subtract of moved elements
    assert [status("quantile", "numpy", n) for n in ("float8_e4m3fn", "int4")] == ["unsupported", "supported"]
    assert status("reshape", "torch", "int4") == "invalid"


@pytest.mark.parametrize("function", ["quantile", "nanquantile"])
def test_quantiles_of_a_float_format_are_refused(backend, function):
    """They would interpolate in the format (every step rounded) next to float32: refused on every backend,
    as nanmean is; an int format computes in float32, as int8 does."""
    with al.use_backend(backend):
        x = al.asarray([1.0, 0.5, 2.0], dtype="float8_e4m3fn")
        with pytest.raises(al.UnsupportedDtypeError, match=r"astype\(x, 'float32'\)"):
            getattr(al, function)(x, 0.5)
