"""``astype``, ``asarray`` and creation with the low-precision dtypes give ml_dtypes' values and bits on
every backend that stores the type: every code decoded, specials, ties and random float32 encoded (a
fixed-seed sample; ``AL_LOWP_EXHAUSTIVE=1``, ``nox -s lowp``, runs every type), ``saturate=True``,
integer wrapping, and the refusals (nothing implicit wraps)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from tests.lowp_support import EXHAUSTIVE, float32_inputs, ties

LOW = [str(d) for d in al.all_low_precision_dtypes]
SAMPLE = LOW if EXHAUSTIVE else ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e8m0fnu",
                                 "float6_e3m2fn", "float4_e2m1fn", "int4", "uint2"]


def _values(x) -> np.ndarray:
    """An arraylayer array's values as float64 NumPy (through astype, itself checked on NumPy)."""
    return np.asarray(al.to_backend(al.astype(x, "float32"), "numpy"), np.float64)


def _same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values, NaN where NaN, and the same sign everywhere (so the same code)."""
    nan = np.isnan(want)
    return bool(np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], want[~nan])
                and np.array_equal(np.signbit(got), np.signbit(want)))


def _stores(backend: str, name: str) -> bool:
    with al.use_backend(backend):
        return name in al.valid_low_precision_dtypes


def _inputs(name: str) -> np.ndarray:
    if name.startswith(("int", "uint")):
        return np.arange(-40, 40, dtype=np.float32) + np.float32(0.5)
    return np.concatenate([float32_inputs(name), ties(name).astype(np.float32)])


@pytest.mark.parametrize("name", SAMPLE)
def test_astype_from_float32_matches_ml_dtypes(backend, name):
    if not _stores(backend, name):
        with al.use_backend(backend), pytest.raises(al.UnsupportedDtypeError, match="Use a backend that stores it"):
            al.astype(al.asarray([1.0]), name)
        return
    host = _inputs(name)
    with al.use_backend(backend):
        x = al.asarray(host)
        got = al.astype(x, name)
        assert al.Dtype(got.dtype) is al.Dtype(name)
        want = host.astype(getattr(ml_dtypes, name)).astype(np.float64)
        assert _same(_values(got), want)


@pytest.mark.parametrize("name", SAMPLE)
def test_every_code_decodes_and_round_trips(backend, name):
    if not _stores(backend, name):
        return  # the refusal is tested above
    codes = np.arange(1 << al.Dtype(name).bits, dtype=np.uint8)
    values = codes.view(getattr(ml_dtypes, name)) if al.Dtype(name).bits == 8 else codes.astype(np.int8 if name.startswith("int") else np.uint8)
    want = values.astype(np.float64) if al.Dtype(name).bits == 8 else np.asarray(values, np.float64)
    if al.Dtype(name).bits < 8:  # sub-byte types: the values, through ml_dtypes' own type
        want = np.unique(np.asarray(np.arange(-64, 64).astype(getattr(ml_dtypes, name)).astype(np.float64)))
        want = want[~np.isnan(want)]
    with al.use_backend(backend):
        x = al.asarray(want.astype(np.float32), dtype=name) if name.startswith(("float6", "float4")) or al.Dtype(name).bits == 8 \
            else al.astype(al.asarray(want.astype(np.int32)), name)
        assert _same(_values(x), want)
        back = al.astype(al.astype(x, "float32"), name)  # float32 holds every value: the round trip is exact
        assert _same(_values(back), want)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4"])
def test_saturate_clamps_to_the_largest_finite(backend, name):
    if not _stores(backend, name):
        return
    host = np.array([1e6, -1e6, np.inf, -np.inf, 1.0], np.float32)
    with al.use_backend(backend):
        got = _values(al.astype(al.asarray(host), name, saturate=True))
    top = float(al.iinfo(name).max) if name == "int4" else al.finfo(name).max
    low = float(al.iinfo(name).min) if name == "int4" else -al.finfo(name).max
    if name == "int4":  # inf has no integer: ml_dtypes' rule, as for the wrap, gives 0
        assert list(got[[0, 1, 4]]) == [top, low, 1.0]
    else:
        assert list(got) == [top, low, top, low, 1.0]


def test_integer_casts_wrap_but_nothing_implicit_does(backend):
    if not _stores(backend, "int4"):
        return
    with al.use_backend(backend):
        x = al.astype(al.asarray([9, -9, 7, 16], dtype="int32"), "int4")
        assert list(_values(x)) == list(np.array([9, -9, 7, 16]).astype(ml_dtypes.int4).astype(np.float64))
        with pytest.raises(al.ScalarOverflowError, match="int4"):
            al.asarray([9], dtype="int4")
        with pytest.raises(al.ScalarOverflowError, match="int4"):
            al.full(3, -9, dtype="int4")
        with pytest.raises(al.TypePromotionError):
            al.asarray([1.5], dtype="int4")


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e8m0fnu", "int4"])
def test_creation_gives_the_cast_of_the_value(backend, name):
    if not _stores(backend, name):
        return
    fill = 1000.0 if name.startswith("float") else 5
    with al.use_backend(backend):
        for made, value in ((al.zeros(3, dtype=name), 0), (al.ones(3, dtype=name), 1), (al.full(3, fill, dtype=name), fill),
                            (al.zeros_like(al.ones(3), dtype=name), 0), (al.full_like(al.ones(3), fill, dtype=name), fill),
                            (al.asarray([fill] * 3, dtype=name), fill)):
            assert al.Dtype(made.dtype) is al.Dtype(name)
            assert _same(_values(made), np.full(3, value, np.float32).astype(getattr(ml_dtypes, name)).astype(np.float64))
        assert al.Dtype(al.empty(3, dtype=name).dtype) is al.Dtype(name)


def test_astype_under_jit_and_compile_gives_the_same_bits():
    """jax.jit in the normal run; torch.compile and tf.function as well under AL_LOWP_EXHAUSTIVE=1."""
    host = np.array([1.0, 0.3, 464.0, 1000.0, -np.inf, np.nan], np.float32)
    want = host.astype(ml_dtypes.float8_e4m3fn).astype(np.float64)
    compiled = {"jax": pytest.importorskip("jax").jit}
    if EXHAUSTIVE:  # compiling costs minutes on a busy CI machine: the full run does torch and TensorFlow too
        compiled.update(torch=pytest.importorskip("torch").compile, tensorflow=pytest.importorskip("tensorflow").function)
    for backend, compile_ in compiled.items():
        step = compile_(lambda x: al.astype(al.astype(x, "float8_e4m3fn"), "float32"))
        with al.use_backend(backend):
            x = al.asarray(host)
        assert _same(np.asarray(al.to_backend(step(x), "numpy"), np.float64), want), backend
