"""torch's casts as Triton kernels (arraylayer/lowp/triton_casts.py) give ml_dtypes' bits, as the eager
rule does. In production they serve torch tensors on a GPU. Here they run on the CPU in Triton's
interpreter: ``nox -s triton`` (part of CI's test command) installs Triton beside torch for the CPU
and sets ``TRITON_INTERPRET=1``; a GPU with Triton runs them compiled. The shared environment has no
Triton (torch for the CPU does not ship it): there these tests skip. ``benchmarks/gpu_check_fused.py``
is the same check on a GPU, with every pattern and the timings."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from arraylayer.lowp import FORMATS, one_kernel, triton_casts
from tests.lowp_support import EXHAUSTIVE, float32_inputs, host, narrow_inputs, native
from tests.test_lowp_casts import expected_codes

torch = pytest.importorskip("torch")
pytest.importorskip("triton", reason="Triton is not installed here: `nox -s triton` runs these tests in its interpreter")
GPU = torch.cuda.is_available()
if not (GPU or triton_casts.interpreted()):
    pytest.skip("no GPU, and TRITON_INTERPRET is not 1: Triton has nothing to run its kernels on", allow_module_level=True)

from arraylayer import lowp  # noqa: E402

FLOATS = tuple(name for name, f in FORMATS.items() if f.is_float)
ENCODE = FLOATS if EXHAUSTIVE else ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn")


def on_device(values: np.ndarray):
    x = native("torch", values)
    return x.cuda() if GPU else x


def cpu(x) -> np.ndarray:
    return host(x.cpu())


def launched(kind: str, name: str) -> bool:
    return any(key[:2] == (kind, name) for key, _ in triton_casts._LAUNCHERS)


@pytest.mark.parametrize("name", ENCODE)
@pytest.mark.parametrize("saturate", [False, True])
def test_encode_matches_ml_dtypes(name, saturate):
    values = float32_inputs(name)
    with one_kernel.everywhere():
        got = cpu(lowp.encode(on_device(values), name, saturate=saturate))
    assert (got == expected_codes(values, name, saturate)).all()
    assert launched("encode", name), triton_casts.unavailable


@pytest.mark.parametrize("source", [np.float16, ml_dtypes.bfloat16, np.float64])
@pytest.mark.parametrize("name", ["float8_e5m2", "float8_e4m3fn", "float8_e8m0fnu"])
def test_encode_of_other_sources(source, name):
    # every float16 and bfloat16 pattern (their NaNs keep their signs, bfloat16's subnormals their
    # values), and float64 rounded once to float32 as ml_dtypes does
    values = narrow_inputs(source) if source is not np.float64 else float32_inputs(name).astype(np.float64) * (1 + 2.0**-30)
    with one_kernel.everywhere():
        got = cpu(lowp.encode(on_device(values), name))
    with np.errstate(invalid="ignore", over="ignore"):
        want = values.astype(getattr(ml_dtypes, name)).view(np.uint8)
    assert (got == want).all(), int((got != want).sum())


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_decode_matches_ml_dtypes(name):
    f = FORMATS[name]
    codes = np.arange(256, dtype=np.uint8) & np.uint8((1 << f.bits) - 1)
    want = codes.view(getattr(ml_dtypes, name))
    for dtype in ("float32", "float16", "bfloat16", "float64") + (() if f.is_float else ("int8", "int32", "uint8")):
        with one_kernel.everywhere():
            got = cpu(lowp.decode(on_device(codes), name, dtype))
        expected = want.astype(getattr(ml_dtypes, dtype) if dtype == "bfloat16" else dtype)
        assert got.dtype == expected.dtype
        assert (got.view(np.uint8) == expected.view(np.uint8)).all(), dtype  # NaNs keep the code's sign
    assert launched("decode", name)


def test_stored_float8_and_shapes():
    # a tensor of torch's float8 dtype is read as its codes; shapes are kept; nothing to do for no values
    codes = np.arange(256, dtype=np.uint8).reshape(16, 16)
    stored = on_device(codes).view(torch.float8_e5m2)
    with one_kernel.everywhere():
        got = cpu(lowp.decode(stored, dtype="float32"))
        empty = lowp.encode(on_device(np.zeros((0, 3), np.float32)), "float8_e4m3fn")
    want = codes.view(ml_dtypes.float8_e5m2).astype(np.float32)
    assert got.shape == (16, 16) and (got.view(np.uint32) == want.view(np.uint32)).all()
    assert tuple(empty.shape) == (0, 3) and empty.dtype == torch.uint8
    assert (("decode", "float8_e5m2", "float32", True), not GPU) in triton_casts._LAUNCHERS


def test_public_astype_through_the_kernels():
    import arraylayer as al

    values = float32_inputs("float8_e4m3fn")
    with al.use_backend("torch"), one_kernel.everywhere():
        y = al.astype(on_device(values), al.float8_e4m3fn)
        back = cpu(al.astype(y, al.float32))
    assert y.dtype == torch.float8_e4m3fn and launched("encode", "float8_e4m3fn")
    assert (cpu(y.view(torch.uint8)) == expected_codes(values, "float8_e4m3fn")).all()  # 1000.0 -> NaN, not 448
    want = values.astype(ml_dtypes.float8_e4m3fn).astype(np.float32)
    assert ((back.view(np.uint32) == want.view(np.uint32)) | (np.isnan(back) & np.isnan(want))).all()


def test_every_specialization_on_repeated_launches():
    # on a GPU, a launch after the first of its specialization runs Triton's compiled kernel directly
    # (triton_casts._Launch): each mix of pointer alignment and count (a multiple of 16, 1, other)
    # must still give ml_dtypes' bits, on the first call and the next
    values = float32_inputs("float8_e4m3fn")[:4200]
    codes = expected_codes(values, "float8_e4m3fn")
    x, stored = on_device(values), on_device(codes)
    table = codes.view(ml_dtypes.float8_e4m3fn).astype(np.float32)
    slices = [(0, 4096), (1, 4097), (0, 4099), (3, 4), (0, 1), (16, 4112), (5, 4101)]
    key = (("encode", "float8_e4m3fn", False), not GPU)
    triton_casts._LAUNCHERS.pop(key, None)  # counted afresh below
    with one_kernel.everywhere():
        for _ in range(2):
            for start, stop in slices:
                got = cpu(lowp.encode(x[start:stop], "float8_e4m3fn"))
                assert (got == codes[start:stop]).all(), (start, stop)
                want = table[start:stop]
                for held in (stored, stored.view(torch.float8_e4m3fn)):  # uint8 codes, torch's float8 tensor
                    back = cpu(lowp.decode(held[start:stop], "float8_e4m3fn" if held.dtype == torch.uint8 else None, "float32"))
                    assert ((back.view(np.uint32) == want.view(np.uint32)) | (np.isnan(back) & np.isnan(want))).all(), (start, stop)
    runs = triton_casts._LAUNCHERS[key].launches[torch.float32]
    assert len(runs.compiled) == (5 if GPU else 0)  # aligned or not x (4096-like, 4099-like, 1); none interpreted


@pytest.mark.parametrize("hardware", [True, False])
def test_hardware_rounding_and_the_integer_rule_agree(hardware):
    # on a GPU with float8 conversions (compute capability 8.9+) e4m3fn and e5m2 round by the GPU's
    # own conversion, the specials by the rule; use_hardware_rounding=False asks for the integer
    # rule: both give ml_dtypes' bits (the interpreter always runs the integer rule)
    key = (("encode", "float8_e5m2", False), not GPU)
    values = float32_inputs("float8_e5m2")
    before = triton_casts.use_hardware_rounding
    triton_casts.use_hardware_rounding = hardware
    triton_casts._LAUNCHERS.pop(key, None)
    try:
        with one_kernel.everywhere():
            got = cpu(lowp.encode(on_device(values), "float8_e5m2"))
        used = triton_casts._LAUNCHERS[key].launches[torch.float32].constants["HARDWARE"]
    finally:
        triton_casts.use_hardware_rounding = before
        triton_casts._LAUNCHERS.pop(key, None)
    assert (got == expected_codes(values, "float8_e5m2")).all()
    assert used == (2 if hardware and GPU and torch.cuda.get_device_capability() >= (8, 9) else 0)


def test_strided_tensors_take_the_eager_rule():
    values = float32_inputs("float8_e5m2")[:1000].reshape(100, 10)
    key = (("encode", "float8_e5m2", True), not GPU)
    triton_casts._LAUNCHERS.pop(key, None)
    with one_kernel.everywhere():
        got = cpu(lowp.encode(on_device(values).T, "float8_e5m2", saturate=True))
    assert (got == expected_codes(values.T, "float8_e5m2", saturate=True)).all()
    assert key not in triton_casts._LAUNCHERS


def test_a_kernel_triton_cannot_build_is_declined_and_remembered():
    # complex64 is no dtype Triton compiles for: the launch fails, is remembered, and is not tried again
    assert triton_casts.available(not GPU), triton_casts.unavailable
    x, out = on_device(np.zeros(4, np.complex64)), on_device(np.zeros(4, np.uint8))
    signature = ("encode", "test", False, not GPU, "complex64")
    constants = dict(SOURCE_BITS=32, IS_BFLOAT16=False, BITS=8, MANTISSA=3, BIAS=7, MAX_CODE=126, NAN_CODE=127, BIG=127, KIND=1,
                     HARDWARE=0, BOUND_BITS=0, INCLUSIVE=False)
    launch = triton_casts._Launch(triton_casts._KERNELS[not GPU], "encode", signature, constants)
    try:
        assert not launch(4, x, out)
        assert "complex64" in triton_casts.failed[signature]
        assert not launch(4, on_device(np.zeros(4, np.float32)), out)
    finally:
        triton_casts.failed.pop(signature, None)


def test_a_declined_kernel_leaves_the_cast_to_the_eager_rule():
    values = float32_inputs("float8_e4m3fn")
    signature = ("encode", "float8_e4m3fn", False, not GPU, "float32")
    triton_casts.failed[signature] = "declined by this test"
    try:
        with one_kernel.everywhere():
            got = cpu(lowp.encode(on_device(values), "float8_e4m3fn"))
    finally:
        del triton_casts.failed[signature]
    assert (got == expected_codes(values, "float8_e4m3fn")).all()
