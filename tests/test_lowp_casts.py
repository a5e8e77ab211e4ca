"""arraylayer.lowp's casts give ml_dtypes' bits, bit for bit, on every backend: decoding every code of
every format, encoding specials, ties and random float32/float64 values and every (sampled, in CI)
float16/bfloat16 pattern, through the native and the portable path, eagerly and under
jax.jit / torch.compile / tf.function. The oracle is ml_dtypes' own ``astype``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from arraylayer import lowp
from arraylayer.errors import InvalidArgumentError, InvalidDtypeError, UnsupportedDtypeError
from tests.lowp_support import EXHAUSTIVE, float32_inputs, host, narrow_inputs, native

ALL = tuple(lowp.FORMATS)
# CI's share: every format on NumPy, a fixed sample of them on the other backends
SAMPLE = ALL if EXHAUSTIVE else ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float6_e3m2fn",
                                 "float4_e2m1fn", "float8_e4m3fnuz", "int4", "uint2")


def formats_for(backend: str) -> tuple[str, ...]:
    return ALL if backend == "numpy" else SAMPLE


def ml(name: str):
    return getattr(ml_dtypes, name)


def expected_codes(values: np.ndarray, name: str, saturate: bool = False) -> np.ndarray:
    f = lowp.FORMATS[name]
    if saturate:
        high = f.max if f.is_float else f.max
        low = -np.inf if f.specials == "e8m0" else f.min if not f.is_float else -f.max
        values = np.where(np.isnan(values), values, np.clip(values, low, high))
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(ml(name)).view(np.uint8) & ((1 << f.bits) - 1)


def _pairs(backend):
    return [(backend, name) for name in formats_for(backend)]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_decode_every_code(backend, name, dtype, request):
    if name not in formats_for(backend):
        pytest.skip("CI samples the formats on this backend (nox -s lowp runs all)")
    if not EXHAUSTIVE and backend != "numpy" and dtype in ("float64", "float16"):
        pytest.skip("CI decodes to float32 and bfloat16 on this backend (nox -s lowp: every dtype)")
    if backend == "jax" and dtype == "float64":
        request.getfixturevalue("x64_on")
    f = lowp.FORMATS[name]
    codes = np.arange(1 << f.bits, dtype=np.uint8)
    target = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    want = codes.view(ml(name)).astype(target)
    got = host(lowp.decode(native(backend, codes), name, dtype))
    assert got.dtype == want.dtype
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
    assert (got.view(width) == want.view(width)).all(), codes[got.view(width) != want.view(width)]


@pytest.mark.parametrize("path", ["native", "portable"])
@pytest.mark.parametrize("name", ALL)
def test_encode_float32_matches_ml_dtypes(backend, name, path):
    if name not in formats_for(backend):
        pytest.skip("CI samples the formats on this backend (nox -s lowp runs all)")
    values = float32_inputs(name)
    got = host(lowp.encode(native(backend, values), name, native=path == "native"))
    want = expected_codes(values, name)
    wrong = got != want
    assert not wrong.any(), (values[wrong][:5], got[wrong][:5], want[wrong][:5])


# Arrays that take each branch of the native casts' fix-ups (casts.py, _encode_native): nothing near
# the top of the range, the largest value reached but nothing beyond it (amax-scaled data), one value
# beyond the rounding bound, a tie at the bound, NaN of either sign alone, and no value at all.
FIXUP_CASES = {
    "in range": [1.0, -3.5, 0.001, 400.0],
    "largest reached": [448.0, -448.0, 460.0, -464.0, 57344.0 / 128, 1.0],
    "one beyond": [448.0, 1.0, -464.5, 2.0],
    "tie at the bound": [464.0, -464.0],
    "nan": [1.0, np.nan],
    "negative nan": [-np.nan, 2.0],
    "e5m2 largest and beyond": [57344.0, -61440.0, 61439.0, 3.0],
    "empty": [],
}


@pytest.mark.parametrize("case", FIXUP_CASES)
@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_astype_takes_every_fixup_branch_with_ml_dtypes_bits(backend, name, case):
    """``arraylayer.astype`` (the public path) of arrays that each take one branch of torch's fix-ups."""
    import arraylayer as al

    values = np.array(FIXUP_CASES[case], np.float32)
    result = al.astype(native(backend, values), name)
    assert lowp.format_of(result) == name
    if backend == "torch":
        import torch

        got = result.view(torch.uint8).numpy()
    elif backend == "tensorflow":  # no byte view of TensorFlow's float8: its exact float32 values, encoded
        got = host(lowp.encode(lowp.decode(result), name))
    else:
        got = host(result).view(np.uint8)
    assert got.tolist() == expected_codes(values, name).tolist()


@pytest.mark.parametrize("name", SAMPLE)
@pytest.mark.parametrize("source", ["float16", "bfloat16"])
def test_encode_narrow_sources(backend, name, source):
    values = narrow_inputs(ml_dtypes.bfloat16 if source == "bfloat16" else np.float16)
    got = host(lowp.encode(native(backend, values), name))
    assert (got == expected_codes(values, name)).all()


@pytest.mark.parametrize("name", SAMPLE)
def test_encode_float64(backend, name, x64_on):
    values = float32_inputs(name).astype(np.float64)
    rng = np.random.default_rng(3)
    # float64 values between two float32 values: a cast through float32 would round twice
    values = np.concatenate([values, values * (1 + rng.uniform(-1e-9, 1e-9, values.shape)), [2147483653.0, -3e9, 1e15 + 3]])
    got = host(lowp.encode(native(backend, values), name))
    assert (got == expected_codes(values, name)).all()


@pytest.mark.parametrize("name", SAMPLE)
def test_saturate(backend, name):
    values = float32_inputs(name)
    got = host(lowp.encode(native(backend, values), name, saturate=True))
    assert (got == expected_codes(values, name, saturate=True)).all()


@pytest.mark.parametrize("name", lowp.INT_FORMATS)
def test_integer_sources_wrap(backend, name):
    values = np.concatenate([np.arange(-40, 40), [2**31 - 1, -(2**31), 123456789]]).astype(np.int32)
    got = host(lowp.encode(native(backend, values), name))
    assert (got == expected_codes(values, name)).all()
    decoded = host(lowp.decode(native(backend, got), name, "int32"))
    assert (decoded == values.astype(ml(name)).astype(np.int32)).all()


def _compiled(backend, function):
    """``function`` under the backend's compiler (skips where it has none)."""
    if backend == "jax":
        import jax

        return jax.jit(function)
    if backend == "torch":
        import torch

        torch._dynamo.reset()
        return torch.compile(function, fullgraph=True)
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.function(function, autograph=False)
    pytest.skip(f"{backend} has no compiler")


@pytest.mark.parametrize("name", SAMPLE if EXHAUSTIVE else ["float8_e4m3fn", "float6_e3m2fn"])
def test_under_jit_compile_function(backend, name):
    values = float32_inputs(name)[:2000]
    want = expected_codes(values, name)

    def roundtrip(x):
        codes = lowp.encode(x, name)
        return codes, lowp.decode(codes, name)

    codes, back = _compiled(backend, roundtrip)(native(backend, values))
    assert (host(codes) == want).all()
    assert (host(back).view(np.uint32) == want.view(ml(name)).astype(np.float32).view(np.uint32)).all()


@pytest.mark.parametrize("source", ["float16", "bfloat16"])
def test_narrow_sources_under_jit_compile_function(backend, source):
    # found: under jax.jit, XLA folded the float16 -> float32 widening into the float8_e5m2 conversion,
    # which then kept each float16 NaN's payload (2,046 of the 65,536 patterns off ml_dtypes' codes)
    values = narrow_inputs(ml_dtypes.bfloat16 if source == "bfloat16" else np.float16)
    run = _compiled(backend, lambda x: (lowp.encode(x, "float8_e5m2"), lowp.encode(x, "float8_e4m3fn")))
    e5m2, e4m3fn = run(native(backend, values))
    assert (host(e5m2) == expected_codes(values, "float8_e5m2")).all()
    assert (host(e4m3fn) == expected_codes(values, "float8_e4m3fn")).all()


def test_cast_gives_native_storage_where_it_exists(backend):
    values = np.array([1.0, -2.5, 1000.0, np.nan], np.float32)
    x = lowp.cast(native(backend, values), "float8_e4m3fn")
    status = lowp.STATUS[backend]["float8_e4m3fn"]
    assert lowp.format_of(x) == "float8_e4m3fn"
    assert status in ("computed", "stored")
    back = host(lowp.decode(x))
    want = values.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert (back.view(np.uint32) == want.view(np.uint32)).all()
    # a format the backend cannot hold stays uint8 codes
    held = {b for b, s in lowp.STATUS.items() if s["float6_e2m3fn"] in ("computed", "stored")}
    y = lowp.cast(native(backend, values), "float6_e2m3fn")
    assert lowp.format_of(y) == ("float6_e2m3fn" if backend in held else None)


@pytest.mark.parametrize("name", [n for n in SAMPLE if lowp.FORMATS[n].is_float])
def test_cast_and_native_decode_match_ml_dtypes(backend, name):
    """cast() through the framework's own dtype where it stores the format, decode() of such arrays."""
    values = float32_inputs(name)
    y = lowp.cast(native(backend, values), name)
    got = host(lowp.decode(y, None if lowp.format_of(y) else name))
    want = expected_codes(values, name).view(ml(name)).astype(np.float32)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    f = lowp.FORMATS[name]
    every = np.arange(1 << f.bits, dtype=np.uint8)
    if lowp.STATUS[backend][name] in ("computed", "stored"):
        stored = lowp.to_native(native(backend, every), name)
        assert lowp.format_of(stored) == name
        for dtype in ("float32", "bfloat16"):
            want = every.view(ml(name)).astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else np.float32)
            width = np.uint16 if dtype == "bfloat16" else np.uint32
            assert (host(lowp.decode(stored, dtype=dtype)).view(width) == want.view(width)).all()


def test_to_native_refuses_what_the_backend_cannot_hold(backend):
    refused = [n for n, s in lowp.STATUS[backend].items() if s not in ("computed", "stored")]
    if not refused:
        pytest.skip(f"{backend} holds every format")
    with pytest.raises(UnsupportedDtypeError, match=refused[0]):
        lowp.to_native(native(backend, np.zeros(3, np.uint8)), refused[0])


def test_bad_arguments_name_the_fix():
    with pytest.raises(InvalidDtypeError, match="use one of float8_e4m3fn, "):
        lowp.encode(np.ones(3, np.float32), "float8_e4m3xx")
    with pytest.raises(InvalidDtypeError, match="format='float9'"):
        lowp.encode(np.ones(3, np.float32), "float9")
    with pytest.raises(UnsupportedDtypeError, match="int32"):
        lowp.encode(np.ones(3, np.int32), "float8_e4m3fn")
    with pytest.raises(InvalidArgumentError, match="format="):
        lowp.decode(np.ones(3, np.uint8))
    with pytest.raises(InvalidArgumentError, match="dtype='int8'"):
        lowp.decode(np.ones(3, np.uint8), "float8_e5m2", "int8")


def test_jax_float64_without_x64_is_refused(x64_off):
    import jax.numpy as jnp

    with pytest.raises(UnsupportedDtypeError, match="jax_enable_x64"):
        lowp.decode(jnp.zeros(3, jnp.uint8), "float8_e5m2", "float64")


def test_arraylayer_arrays_in_and_out():
    import arraylayer as al

    x = al.Array(np.array([0.5, 3.0, -1.0], np.float32))
    codes = lowp.encode(x, "float8_e5m2")
    assert isinstance(codes, al.Array) and codes.dtype == al.uint8
    back = lowp.decode(codes, "float8_e5m2")
    assert isinstance(back, al.Array) and (np.asarray(back.native) == np.array([0.5, 3.0, -1.0])).all()
