"""The casts compiled into one kernel (arraylayer.lowp.one_kernel, jax.jit on jax) give ml_dtypes' bits,
as the eager rule does. In production they serve jax arrays on an accelerator (CI has none);
``one_kernel.everywhere()`` sends CPU arrays through them here. torch's are Triton kernels, checked in
tests/test_lowp_triton.py (``nox -s triton``); numpy, TensorFlow and dask compile nothing.
``benchmarks/gpu_check_fused.py`` is the same check on a GPU, with every pattern and the timings."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from arraylayer import lowp
from arraylayer.lowp import one_kernel
from tests.lowp_support import float32_inputs, host, narrow_inputs, native
from tests.test_lowp_casts import expected_codes


@pytest.fixture
def compiling_backend(backend):
    if backend != "jax":
        reason = ("its compiled casts are Triton kernels: tests/test_lowp_triton.py" if backend == "torch"
                  else "NumPy casts with ml_dtypes itself; TensorFlow and dask run the eager rule")
        pytest.skip(f"{backend} compiles no casts with jax.jit ({reason})")
    return backend


def _compiled_keys(backend: str) -> set[tuple]:
    return {key for key in one_kernel._COMPILED if key[0] == backend}


ENCODE = ("float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float6_e3m2fn", "float4_e2m1fn", "float8_e4m3fnuz")
DECODE = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "float8_e8m0fnu")


def test_compiled_encode_matches_ml_dtypes(compiling_backend):
    backend = compiling_backend
    for name in ENCODE:
        values = float32_inputs(name)
        for saturate in (False, True):
            with one_kernel.everywhere():
                got = host(lowp.encode(native(backend, values), name, saturate=saturate))
            assert (got == expected_codes(values, name, saturate)).all(), (name, saturate)
            assert (backend, "encode", name, saturate) in _compiled_keys(backend)


def test_compiled_encode_of_narrow_sources(compiling_backend):
    backend = compiling_backend
    for source, count in ((np.float16, None), (ml_dtypes.bfloat16, None), (np.float16, 1500)):
        values = narrow_inputs(source)[:count]
        with one_kernel.everywhere():
            got = host(lowp.encode(native(backend, values), "float8_e5m2"))
        assert (got == expected_codes(values, "float8_e5m2")).all(), (source, count)


def test_compiled_decode_matches_ml_dtypes(compiling_backend):
    backend = compiling_backend
    for name in DECODE:
        bits = lowp.get_format(name).bits
        codes = np.arange(256, dtype=np.uint8) & np.uint8((1 << bits) - 1)
        want = codes.view(getattr(ml_dtypes, name)).astype(np.float32)
        for dtype in ("float32", "bfloat16"):
            with one_kernel.everywhere():
                got = host(lowp.decode(native(backend, codes), name, dtype)).astype(np.float32)
            same = (got.view(np.uint32) == want.astype(got.dtype).astype(np.float32).view(np.uint32)) | (np.isnan(got) & np.isnan(want))
            assert same.all(), (name, dtype)
            assert np.array_equal(np.signbit(got), np.signbit(want)), (name, dtype)  # NaNs keep the code's sign
            assert (backend, "decode", name, dtype, False) in _compiled_keys(backend)


def test_cpu_arrays_stay_eager(backend):
    # on a CPU the eager casts meet their target: nothing is compiled for them outside everywhere()
    # (on the CPU even where a GPU is JAX's default device: a GPU's arrays are compiled, as they should be)
    before = set(one_kernel._COMPILED)
    x = native(backend, float32_inputs("float8_e4m3fn"))
    if backend == "jax":
        import jax

        x = jax.device_put(x, jax.devices("cpu")[0])
    codes = lowp.encode(x, "float8_e5m2", saturate=True)
    lowp.decode(codes, "float8_e5m2", "float16")
    assert set(one_kernel._COMPILED) == before


def test_traced_arrays_stay_eager(compiling_backend):
    # inside the user's own jax.jit the rule is part of the user's program
    import jax

    values = float32_inputs("float8_e4m3fn")[:512]
    before = set(one_kernel._COMPILED)
    with one_kernel.everywhere():
        got = host(jax.jit(lambda x: lowp.encode(x, "float8_e4m3fn", saturate=True))(native("jax", values)))
    assert (got == expected_codes(values, "float8_e4m3fn", saturate=True)).all()
    assert set(one_kernel._COMPILED) == before


def test_compiled_decode_of_native_arrays(compiling_backend):
    codes = np.arange(256, dtype=np.uint8)
    stored = lowp.to_native(native("jax", codes), "float8_e5m2")
    with one_kernel.everywhere():
        got = host(lowp.decode(stored, dtype="float32"))
    want = codes.view(ml_dtypes.float8_e5m2).astype(np.float32)
    assert ((got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))).all()
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert ("jax", "decode", "float8_e5m2", "float32", True) in _compiled_keys("jax")
