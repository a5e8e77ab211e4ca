"""torch's float8 casts on the CPU (arraylayer/lowp/cpu_codes.py: the C extension arraylayer._codes, which
encodes float32 to float8_e4m3fn/e5m2 in one pass and decodes every float8 type of torch's by a gather, or
torch's ops and casts.py's table where it is not built) give ml_dtypes' bits: NaN of either sign,
infinities, values at and around each rounding bound and every tie, subnormals, negative zero, at every
position of a vector loop's blocks and at the edges of the chunks that the C functions split over
torch's threads (on torch's OpenMP team, and on pthreads: ``_codes.openmp(False)``; from several Python
threads at once), just under and over the size that takes threads, in contiguous, non-contiguous, empty and 0-d tensors, encoding and decoding to every
wider float. The F16C encode kernel of float8_e4m3fn and float8_e5m2 (x86-64 CPUs with AVX2 and F16C)
and the generic loop that it replaces are both driven (``_codes.f16c(False)`` selects the generic loop),
over every float16 value that the kernel meets and its float32 neighbours, and, with
``AL_LOWP_EXHAUSTIVE=1``, over every float32 bit pattern. The oracle is ml_dtypes' own ``astype``.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from arraylayer import lowp
from arraylayer.lowp import cpu_codes
from tests.lowp_support import EXHAUSTIVE, PAYLOADS, ties

torch = pytest.importorskip("torch")

FORMATS = ("float8_e4m3fn", "float8_e5m2")
DECODED = (*FORMATS, "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu")  # every float8 type torch stores
WIDER = {"float32": np.float32, "float16": np.float16, "float64": np.float64, "bfloat16": ml_dtypes.bfloat16}
BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.fixture(params=["C", "torch ops"])
def path(request, monkeypatch):
    """Each test runs through the C functions and through torch's ops (the extension left out)."""
    if request.param == "C":
        if cpu_codes._kernel is None:
            pytest.skip("arraylayer._codes is not loaded (not built by setup.py build_ext, or ARRAYLAYER_PURE_PYTHON=1)")
    else:
        monkeypatch.setattr(cpu_codes, "_kernel", None)
    return request.param


def edge_values(name: str) -> np.ndarray:
    """Specials, the largest finite value, the rounding bound above it (a tie) and the float32 values
    next to it, ties, subnormals and their halves, and negative zero, with both signs."""
    info = ml_dtypes.finfo(getattr(ml_dtypes, name))
    values = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float64)
    top = float(info.max)
    previous = float(np.max(values[np.isfinite(values) & (values < top)]))
    bound = np.float32(top + (top - previous) / 2)  # the midpoint above the largest value: exact
    tiny = float(info.smallest_subnormal)
    up, down = np.float32(np.inf), np.float32(0)
    near = [np.nextafter(bound, up), np.nextafter(bound, down), bound, np.float32(top),
            np.nextafter(np.float32(top), up), 2 * bound, previous]
    magnitudes = np.array([np.inf, *near, tiny, tiny / 2, tiny * 1.5, tiny / 4, 0.0, 1.0], np.float32)
    return np.concatenate([magnitudes, -magnitudes, ties(name), -ties(name), PAYLOADS, [np.nan, -np.nan]]).astype(
        np.float32)


def codes_of(y) -> np.ndarray:
    return y.contiguous().view(torch.uint8).numpy()


def want_codes(values: np.ndarray, name: str) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(getattr(ml_dtypes, name)).view(np.uint8)


def shapes(values: np.ndarray) -> dict[str, np.ndarray]:
    """The values in tensors of every layout the casts meet (views of one array where they are views)."""
    grid = np.resize(values, (7, 2 * values.size // 7 + 1))
    return {"1-d": values, "2-d": grid, "empty": values[:0], "empty 2-d": np.zeros((0, 3), np.float32),
            "0-d nan": np.array(np.nan, np.float32), "0-d beyond": np.array(1e6, np.float32)}


def layouts(host: np.ndarray):
    """(what, tensor, its values as NumPy) for a contiguous tensor, a transposed one and a strided slice."""
    t = torch.from_numpy(host.copy())
    yield "contiguous", t, host
    if t.ndim == 2:
        yield "transposed", t.T, host.T
    if t.ndim >= 1:
        yield "every other", t[..., ::2], host[..., ::2]


@pytest.mark.parametrize("name", FORMATS)
def test_astype_and_encode_give_ml_dtypes_bits(path, name):
    for shape, host in shapes(edge_values(name)).items():
        for layout, t, values in layouts(host):
            want = want_codes(values, name)
            result = al.astype(t, name)
            assert result.dtype == getattr(torch, name) and result.shape == t.shape
            assert (codes_of(result) == want).all(), (shape, layout, values[codes_of(result) != want])
            assert (codes_of(lowp.cast(t, name)) == want).all(), (shape, layout)
            assert (lowp.encode(t, name).numpy() == want).all(), (shape, layout)


@pytest.mark.parametrize("name", FORMATS)
def test_every_position_of_a_block(path, name):
    """A code to fix first, last, alone and among others in arrays around the C loops' block length."""
    special = edge_values(name)[:14]  # inf, the bound's neighbours, the largest value, ...
    rng = np.random.default_rng(5)
    for size in (1, 2, 255, 256, 257, 511, 600):
        for where in {0, size // 2, size - 1}:
            for value in (*special, np.nan, -np.nan):
                values = (rng.standard_normal(size) * 10).astype(np.float32)
                values[where] = value
                got = codes_of(al.astype(torch.from_numpy(values), name))
                assert (got == want_codes(values, name)).all(), (size, where, value)


@pytest.mark.parametrize("name", FORMATS)
def test_saturate_and_wider_sources(path, name):
    values = edge_values(name)
    t = torch.from_numpy(values)
    top = float(ml_dtypes.finfo(getattr(ml_dtypes, name)).max)
    clipped = np.where(np.isnan(values), values, np.clip(values, -top, top))
    assert (codes_of(al.astype(t, name, saturate=True)) == want_codes(clipped, name)).all()
    for dtype in (torch.float16, torch.bfloat16, torch.float64):
        wide = t.to(dtype)  # float16 and bfloat16 round the values first: ml_dtypes casts theirs
        host = wide.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if dtype is torch.bfloat16 else wide.numpy()
        assert (codes_of(al.astype(wide, name)) == want_codes(host, name)).all(), dtype


@pytest.mark.parametrize("dtype", WIDER)
@pytest.mark.parametrize("name", DECODED)
def test_decode_every_code(path, name, dtype):
    codes = np.arange(256, dtype=np.uint8)
    want = codes.view(getattr(ml_dtypes, name)).astype(WIDER[dtype])
    width = BITS[want.itemsize]
    stored = torch.from_numpy(codes.copy()).view(getattr(torch, name))
    every_other = torch.from_numpy(codes.reshape(16, 16).copy()).view(getattr(torch, name))[:, ::2]
    cases = [("astype", al.astype(stored, dtype), want), ("decode", lowp.decode(stored, dtype=dtype), want),
             ("uint8 codes", lowp.decode(torch.from_numpy(codes.copy()), name, dtype), want),
             ("every other", lowp.decode(every_other, dtype=dtype), want.reshape(16, 16)[:, ::2])]
    for what, got, expected in cases:
        got = got.contiguous().view(getattr(torch, f"int{8 * want.itemsize}")).numpy().view(width)
        assert got.shape == expected.shape
        wrong = got != expected.view(width)
        assert not wrong.any(), (what, got[wrong], expected.view(width)[wrong])
    for empty in (stored[:0], stored[:0].reshape(0, 4)):
        assert lowp.decode(empty, dtype=dtype).shape == empty.shape
    scalar = lowp.decode(stored[lowp.FORMATS[name].nan_code].reshape(()), dtype=dtype)  # a NaN code, 0-d
    assert scalar.shape == () and torch.isnan(scalar.to(torch.float32))


def test_the_c_path_serves_contiguous_cpu_tensors_only():
    if cpu_codes._kernel is None:
        pytest.skip("arraylayer._codes is not loaded (not built by setup.py build_ext, or ARRAYLAYER_PURE_PYTHON=1)")
    t = torch.zeros(8)
    assert cpu_codes.usable(t, t)
    assert not cpu_codes.usable(t[::2], t[::2])
    assert not cpu_codes.usable(t.reshape(2, 4).T, t)
    with pytest.raises(ValueError, match="itemsize=3"):
        cpu_codes._kernel.decode(t.data_ptr(), t.data_ptr(), t.data_ptr(), 0, 3, 1)
    with pytest.raises(ValueError, match="mantissa=0"):
        cpu_codes._kernel.encode(t.data_ptr(), t.data_ptr(), 0, 0, 7, 0x7E, 0x7F, 0x7F, 1)


#: _codes.c: more elements than MIN_CHUNK are encoded on torch's OpenMP team (at::parallel_for's split,
#: chunks rounded to BLOCK); a pthread started for the call (no team; decoding) takes MIN_STARTED or more.
MIN_CHUNK, MIN_STARTED, BLOCK = 32768, 1048576, 64


@pytest.fixture(params=[1, 2, 3])
def threads(request):
    """torch's thread count, which the C functions split their work over, set for one test."""
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


@pytest.fixture(params=["OpenMP team", "pthreads"])
def scheme(request):
    """The C functions' threads for one test: torch's OpenMP team (skipped where the process has none)
    or pthreads started for the call."""
    if cpu_codes._kernel is None:
        pytest.skip("arraylayer._codes is not loaded (not built by setup.py build_ext, or ARRAYLAYER_PURE_PYTHON=1)")
    team = request.param == "OpenMP team"
    if cpu_codes._kernel.openmp(team) != team:
        pytest.skip("no OpenMP team here (torch without libgomp, or no pthreads)")
    yield request.param
    cpu_codes._kernel.openmp(True)


def ceil(a: int, b: int) -> int:
    return -(-a // b)


def chunk_edges(n: int, threads: int, least: int = MIN_CHUNK) -> list[int]:
    """The first and last positions of each chunk that n elements split into over up to ``threads``
    threads (``least``: MIN_CHUNK on the team, MIN_STARTED on pthreads), their neighbours, and each
    chunk's middle."""
    used = max(1, min(threads, ceil(n, least) if least == MIN_CHUNK else n // least)) if n > MIN_CHUNK else 1
    size = ceil(ceil(n, used), BLOCK) * BLOCK
    return sorted({p for s in range(0, n, size) for p in (s - 1, s, s + 1, s + size // 2, s + size - 1) if 0 <= p < n})


def with_specials(n: int, name: str, edges: list[int], seed: int) -> np.ndarray:
    """n random float32 values with an edge value (NaN, ties, out of range, ...) at each position of
    ``edges`` and 64 more at random."""
    rng = np.random.default_rng(seed)
    special = edge_values(name)
    values = (rng.standard_normal(n) * 100).astype(np.float32)
    values[edges] = special[np.arange(len(edges)) % special.size]
    values[rng.integers(0, n, 64)] = special[rng.integers(0, special.size, 64)]
    return values


def assert_encoded(t, values: np.ndarray, name: str) -> None:
    """al.astype of ``t`` (whose values are ``values``) to ``name``, plain and saturating, gives ml_dtypes' bits."""
    top = float(ml_dtypes.finfo(getattr(ml_dtypes, name)).max)
    clipped = np.where(np.isnan(values), values, np.clip(values, -top, top))
    for saturate, want in ((False, want_codes(values, name)), (True, want_codes(clipped, name))):
        got = codes_of(al.astype(t, name, saturate=saturate))
        assert (got == want).all(), (values.shape, saturate, np.flatnonzero(got != want)[:8])


def assert_decoded(codes: np.ndarray, name: str, dtypes=WIDER) -> None:
    """al.astype of the stored ``codes`` to each of ``dtypes`` gives ml_dtypes' bits."""
    stored = torch.from_numpy(codes.copy()).view(getattr(torch, name))
    for dtype in dtypes:
        width = np.dtype(WIDER[dtype]).itemsize
        expected = codes.view(getattr(ml_dtypes, name)).astype(WIDER[dtype]).view(BITS[width])
        got = al.astype(stored, dtype).view(getattr(torch, f"int{8 * width}")).numpy().view(BITS[width])
        assert (got == expected).all(), (codes.size, dtype)


@pytest.mark.parametrize("name", FORMATS)
def test_chunks_of_every_thread(path, threads, name):
    """Around the size at which the C functions use threads (just under, at and over it; odd sizes), the
    edge values at each chunk's edges and middle, the rest random; encode (plain and saturating) and decode."""
    for n in (MIN_CHUNK - 1, MIN_CHUNK, MIN_CHUNK + 1, 2 * MIN_CHUNK + 77, 3 * MIN_CHUNK + 1001):
        values = with_specials(n, name, chunk_edges(n, threads), seed=threads)
        assert_encoded(torch.from_numpy(values), values, name)
        assert_decoded(want_codes(values, name), name)


@pytest.mark.parametrize("name", FORMATS)
def test_threads_of_either_scheme_from_any_start(scheme, name):
    """Over each scheme's least size for 2 threads, from contiguous tensors that start 0, 1 and 5
    elements into their storage (no chunk on a vector boundary), with 2 and 3 of torch's threads."""
    before = torch.get_num_threads()
    least = MIN_CHUNK if scheme == "OpenMP team" else MIN_STARTED
    try:
        for threads, offset in ((2, 0), (3, 1), (2, 5)):
            torch.set_num_threads(threads)
            n = 2 * least + 2 * BLOCK + 3
            edges = [e + offset for e in chunk_edges(n, threads, least)]
            values = with_specials(n + offset, name, edges, seed=offset)
            assert_encoded(torch.from_numpy(values)[offset:], values[offset:], name)
            assert_decoded(want_codes(values, name)[offset:], name, ("float32", "float16"))
    finally:
        torch.set_num_threads(before)


def test_threaded_casts_from_several_python_threads(scheme):
    """Python threads that cast at once (each its own OpenMP team or pthreads, the GIL released) get
    their own bits."""
    from concurrent.futures import ThreadPoolExecutor

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    n = 2 * (MIN_CHUNK if scheme == "OpenMP team" else MIN_STARTED) + 3
    names = FORMATS * 2
    arrays = [with_specials(n, name, chunk_edges(n, 2), seed=i) for i, name in enumerate(names)]
    try:
        with ThreadPoolExecutor(len(names)) as pool:
            got = list(pool.map(lambda v, name: codes_of(al.astype(torch.from_numpy(v), name)), arrays, names))
    finally:
        torch.set_num_threads(before)
    for name, values, codes in zip(names, arrays, got, strict=True):
        assert (codes == want_codes(values, name)).all(), name


@pytest.mark.parametrize("name", FORMATS)
def test_large_strided_tensors_take_torch_ops(path, name):
    """Non-contiguous tensors over the threads' size (a transposed grid, every other element) are cast
    by torch's ops and casts.py's fix-up, not the C functions: the same bits."""
    values = with_specials(4 * MIN_CHUNK + 6, name, chunk_edges(4 * MIN_CHUNK + 6, 2), seed=9)
    t = torch.from_numpy(values)
    for view, host in ((t.reshape(2, -1).T, values.reshape(2, -1).T), (t[1::2], values[1::2])):
        assert not view.is_contiguous()
        assert_encoded(view, host, name)


@pytest.fixture(params=["F16C", "generic"])
def loop(request):
    """The C encoder's loop for one test (and float8_e5m2's decoder's): the F16C kernel (skipped where the
    CPU or the build has none) or the generic loop."""
    if cpu_codes._kernel is None:
        pytest.skip("arraylayer._codes is not loaded (not built by setup.py build_ext, or ARRAYLAYER_PURE_PYTHON=1)")
    before = cpu_codes._kernel.f16c()
    if cpu_codes._kernel.f16c(request.param == "F16C") != (request.param == "F16C"):
        pytest.skip("no F16C kernel here (not x86-64 with AVX2 and F16C, or not built by gcc/clang)")
    yield request.param
    cpu_codes._kernel.f16c(before)


#: The F16C kernel's scaling of the float32 values, 2**(15 - bias) inverted: a float16 value v stands
#: for the float32 value v * KERNEL_SCALE[format] (so its ties are all float16 values scaled so).
KERNEL_SCALE = {"float8_e5m2": 1.0, "float8_e4m3fn": 2.0**8}


def around_float16(name: str) -> np.ndarray:
    """Every float16 value scaled to the format (NaNs with payloads, inf, subnormals, every tie of the
    format's) and its float32 neighbours; the largest value, the rounding bound past it (e4m3fn: 464, the
    tie between 448 and NaN's 480) and the value past that, the bound past float16's largest (scaled);
    the smallest subnormal's half (the tie to 0) and magnitudes under it (float32 subnormals too); the
    float32 NaN payloads; with both signs."""
    scale = np.float32(KERNEL_SCALE[name])
    with np.errstate(invalid="ignore"):
        every = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32) * scale
    finite = every[np.isfinite(every)]
    up, down = np.nextafter(finite, np.float32(np.inf)), np.nextafter(finite, np.float32(-np.inf))
    info = ml_dtypes.finfo(getattr(ml_dtypes, name))
    top, tiny = float(info.max), float(info.smallest_subnormal)
    codes = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float64)
    step = top - float(np.max(codes[np.isfinite(codes) & (codes < top)]))  # the last ulp
    bounds = np.array([top, top + step / 2, top + step, 65520 * scale, 65536 * scale, 1e6, 3.4e38, np.inf], np.float32)
    small = np.array([tiny / 2, tiny * 0.75, tiny * 0.5001, tiny / 4, 1e-30, 1e-40, 1e-45], np.float32)
    edges = np.concatenate([bounds, np.nextafter(bounds, np.float32(0)), np.nextafter(bounds, np.float32(np.inf)), small])
    return np.concatenate([every, up, down, edges, -edges, PAYLOADS, -PAYLOADS]).astype(np.float32)


@pytest.mark.parametrize("name", FORMATS)
def test_encode_loops_around_every_float16(loop, name):
    values = around_float16(name)
    t = torch.from_numpy(values)
    assert (codes_of(al.astype(t, name)) == want_codes(values, name)).all()
    top = float(ml_dtypes.finfo(getattr(ml_dtypes, name)).max)
    clipped = np.where(np.isnan(values), values, np.clip(values, -top, top))
    assert (codes_of(al.astype(t, name, saturate=True)) == want_codes(clipped, name)).all()


@pytest.mark.parametrize("name", FORMATS)
def test_encode_loops_at_every_length_and_offset(loop, name):
    """Lengths that leave a tail after the kernel's steps of 32 (and of 8), each start address of a
    vector, the specials (the bound past the largest value, the one past it, half the smallest
    subnormal) first, last and among others."""
    rng = np.random.default_rng(7)
    info = ml_dtypes.finfo(getattr(ml_dtypes, name))
    top, tiny = float(info.max), float(info.smallest_subnormal)
    bound = {"float8_e5m2": 61440, "float8_e4m3fn": 464}[name]  # the tie past the largest value
    special = np.array([np.nan, -np.nan, np.inf, -np.inf, bound, -bound, 2 * bound - top, tiny / 2, -0.0, 1.125],
                       np.float32)
    for size in (*range(1, 41), 63, 64, 65, 97):
        for offset in (0, 1, 5):
            values = (rng.standard_normal(size + offset) * top / 2).astype(np.float32)
            values[offset + rng.integers(0, size, 3)] = rng.choice(special, 3)
            values[offset], values[-1] = rng.choice(special, 2)
            part = values[offset:]
            got = codes_of(al.astype(torch.from_numpy(values)[offset:], name))
            assert (got == want_codes(part, name)).all(), (size, offset, part[got != want_codes(part, name)])


@pytest.mark.parametrize("dtype", WIDER)
def test_e5m2_decode_loops(loop, dtype):
    """Every code in blocks of 16 with and without NaN codes, at lengths that leave a tail, from each
    start address; decoded to every wider float (float16 and float32 by the F16C kernel)."""
    rng = np.random.default_rng(3)
    every = np.arange(256, dtype=np.uint8)
    plain = every[(every & 0x7F) <= 0x7C]  # no NaN code
    for size, offset in ((257, 0), (300, 1), (1000, 3), (4099, 7)):
        codes = rng.choice(plain, size + offset).astype(np.uint8)
        codes[offset : offset + 256] = rng.permutation(every)
        codes[-5] = 0xFF
        codes = codes[offset:]
        want = codes.view(ml_dtypes.float8_e5m2).astype(WIDER[dtype])
        stored = torch.from_numpy(np.concatenate([np.zeros(offset, np.uint8), codes]))[offset:]
        for got in (lowp.decode(stored, "float8_e5m2", dtype), al.astype(stored.view(torch.float8_e5m2), dtype)):
            got = got.view(getattr(torch, f"int{8 * want.itemsize}")).numpy().view(BITS[want.itemsize])
            assert (got == want.view(BITS[want.itemsize])).all(), (size, offset, codes[got != want.view(got.dtype)])


@pytest.mark.skipif(not EXHAUSTIVE, reason="every float32 pattern takes minutes: AL_LOWP_EXHAUSTIVE=1 runs it")
@pytest.mark.parametrize("name", FORMATS)
def test_every_float32_pattern(loop, name):
    """All 2**32 float32 bit patterns through the C encoder (2**24 at a time, on 2 threads: torch's OpenMP
    team and pthreads by turns, a chunk boundary in the middle of each), plain and saturating, against
    ml_dtypes, on each loop."""
    dtype = getattr(ml_dtypes, name)
    top = np.float32(ml_dtypes.finfo(dtype).max)
    chunk = np.arange(1 << 24, dtype=np.uint32)
    codes = torch.empty(1 << 24, dtype=torch.uint8)
    try:
        for high in range(256):
            cpu_codes._kernel.openmp(high % 2 == 0)
            x = torch.from_numpy((chunk | np.uint32(high << 24)).view(np.float32))
            values = x.numpy()
            for saturate, want in ((False, values), (True, np.where(np.isnan(values), values, np.clip(values, -top, top)))):
                cpu_codes._kernel.encode(x.data_ptr(), codes.data_ptr(), x.numel(), *cpu_codes._fields(name, saturate), 2)
                wrong = codes.numpy() != want_codes(want, name)
                assert not wrong.any(), (high, saturate, values[wrong][:8])
    finally:
        cpu_codes._kernel.openmp(True)
