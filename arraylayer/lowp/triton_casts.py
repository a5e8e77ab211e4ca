"""The casts of :mod:`.casts` as Triton kernels, for torch's tensors on a GPU.

Run eagerly on a GPU, the rule is a handful of torch kernels, each a pass over memory: on an H200
with torch 2.11, encoding to float8 cost 5.1-6.3x torch's own cast and decoding 3.5-3.8x. Under
``torch.compile`` the rule fuses into one kernel, but the compiled function's own per-call cost
(150-175 us) is ten times the cast's. Here each cast is one Triton kernel launched directly: one
read of the input and one write of the result, as torch's own cast does. On an H200 they take
1.02x torch's own cast to float8 and 0.5x back at 2**24 values; below that the host's per-call
cost sets the time (docs/benchmarks.rst, "On a GPU").

The kernels spell the same rule as :func:`.reference.encode_float` (integer operations on the
float32 bit pattern, round to nearest even, the format's specials) and the same table gather as
:func:`.reference.gather`, so they give ml_dtypes' bits. For float8_e4m3fn and float8_e5m2 on a GPU
with float8 conversions the rounding is the GPU's own (the integer rule was compute-bound there),
the specials still the rule's (:func:`hardware_rounding`). The tests check them against ml_dtypes
in Triton's interpreter (``TRITON_INTERPRET=1``: a CPU runs the kernels, ``nox -s triton``) and
``benchmarks/gpu_check_fused.py`` checks them on a GPU, every pattern and the timings.

Triton comes with torch's CUDA wheels; where it is missing (torch for the CPU) or a kernel fails
to build, the eager rule runs instead, with the same bits: :data:`unavailable` and :data:`failed` say why.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from arraylayer.lowp.formats import Format, get_format

__all__ = ["launcher", "available", "interpreted", "unavailable", "failed"]

#: why the kernels are not used here: None while they are (or before the first try)
unavailable: str | None = None
#: (cast, format, flag, on the CPU, dtype) -> why Triton could not run that kernel (the eager rule does)
failed: dict[tuple[Any, ...], str] = {}
_KERNELS: dict[bool, dict[str, Any]] = {}  # on the CPU (interpreted)? -> the kernels
_LAUNCHERS: dict[tuple[Any, ...], Callable[..., Any]] = {}  # (one_kernel's key, on the CPU?) -> its launcher
_BLOCK = 1024  # values per program
_NUM_WARPS = 4  # per program: _BLOCK / (32 * _NUM_WARPS) values per thread
_KIND = {"ieee": 0, "fn": 1, "fnuz": 2, "e8m0": 3, "finite": 4}
_SOURCE_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
_HARDWARE = {"float8_e4m3fn": 1, "float8_e5m2": 2}  # the formats a GPU converts to in hardware
#: False: the encode kernels round in integers everywhere (see :func:`hardware_rounding`)
use_hardware_rounding = True


def interpreted() -> bool:
    """Whether Triton runs its kernels on the CPU, in its interpreter (``TRITON_INTERPRET=1``: how the
    tests run them on a machine without a GPU)."""
    return os.environ.get("TRITON_INTERPRET") == "1"


def available(on_cpu: bool = False) -> bool:
    """Whether the kernels can run here: Triton imported and the kernels defined, once for a GPU's
    tensors and once for the CPU's (``on_cpu``: Triton's interpreter)."""
    global unavailable
    if on_cpu in _KERNELS:
        return True
    if unavailable is not None:
        return False
    try:
        _KERNELS[on_cpu] = _define()
    except Exception as error:  # no Triton, or one this code cannot use: the eager rule serves
        unavailable = f"{type(error).__name__}: {error}"
        return False
    return True


def _define() -> dict[str, Any]:
    """The two kernels, defined (Triton imported) in the mode that ``TRITON_INTERPRET`` says."""
    import triton
    import triton.language as tl

    @triton.jit
    def encode_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SOURCE_BITS: tl.constexpr, IS_BFLOAT16: tl.constexpr,
                      BITS: tl.constexpr,
                      MANTISSA: tl.constexpr, BIAS: tl.constexpr, MAX_CODE: tl.constexpr, NAN_CODE: tl.constexpr,
                      BIG: tl.constexpr, KIND: tl.constexpr, HARDWARE: tl.constexpr, BOUND_BITS: tl.constexpr,
                      INCLUSIVE: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < n
        x = tl.load(x_ptr + offsets, mask=inside, other=0)
        if SOURCE_BITS == 32:
            bits = x.to(tl.int32, bitcast=True)
        elif IS_BFLOAT16:  # float32's top half: widened by a shift, exactly
            bits = x.to(tl.int16, bitcast=True).to(tl.int32) << 16
        else:  # widened to float32 (exactly; float64 rounded once, as ml_dtypes does), the sign from x's own
            bits = x.to(tl.float32).to(tl.int32, bitcast=True) & 0x7FFFFFFF  # bits: a GPU's widening drops NaNs' signs
            if SOURCE_BITS == 16:
                negative = x.to(tl.int16, bitcast=True) < 0
            else:
                negative = x.to(tl.int64, bitcast=True) < 0
            bits = bits | (negative.to(tl.int32) << 31)
        a = bits & 0x7FFFFFFF  # |x| as bits
        sign = (bits >> 31) & 1
        if HARDWARE != 0:  # the GPU's own conversion rounds as the rule does; the specials are the rule's
            wide = bits.to(tl.float32, bitcast=True)
            if HARDWARE == 1:
                narrow = wide.to(tl.float8e4nv, fp_downcast_rounding="rtne")
            else:
                narrow = wide.to(tl.float8e5, fp_downcast_rounding="rtne")
            sign_bit = sign << (BITS - 1)
            if INCLUSIVE:  # rounds past the largest finite value
                over = a >= BOUND_BITS
            else:
                over = a > BOUND_BITS
            out = tl.where(over, BIG | sign_bit, narrow.to(tl.uint8, bitcast=True).to(tl.int32))
            out = tl.where(a > 0x7F800000, NAN_CODE | sign_bit, out)
        else:  # the rule in integers: round to nearest even, then the format's specials
            exponent = a >> 23
            sig = (a & 0x7FFFFF) + (tl.minimum(exponent, 1) << 23)  # with the implicit bit
            te = tl.maximum(exponent, 1) + (BIAS - 127)  # the target's biased exponent if normal
            shift = tl.minimum(tl.maximum(1 - te, 0) + (23 - MANTISSA), 25)
            q = sig >> shift
            rem = sig - (q << shift)
            half = (shift * 0 + 1) << (shift - 1)
            q = tl.where((rem > half) | ((rem == half) & ((q & 1) == 1)), q + 1, q)
            code = ((tl.maximum(te, 1) - 1) << MANTISSA) + q  # carries into the exponent
            nan = a > 0x7F800000
            over = code > MAX_CODE  # inf is over
            sign_bit = sign << (BITS - 1)
            if KIND == 0 or KIND == 1:  # ieee, fn
                out = tl.where(over, BIG | sign_bit, code | sign_bit)
                out = tl.where(nan, NAN_CODE | sign_bit, out)
            elif KIND == 2:  # fnuz: no negative zero, one NaN
                out = tl.where(code == 0, code, code | sign_bit)
                out = tl.where(over, BIG | sign_bit, out)
                out = tl.where(nan, NAN_CODE, out)
            elif KIND == 3:  # e8m0: unsigned powers of two
                out = tl.where(over, BIG, code)
                out = tl.where(nan | (sign == 1) | (a == 0), NAN_CODE, out)
            else:  # finite: saturate; NaN becomes a zero of the opposite sign (ml_dtypes' rule)
                out = tl.where(over, BIG | sign_bit, code | sign_bit)
                out = tl.where(nan, (1 - sign) << (BITS - 1), out)
        tl.store(out_ptr + offsets, out.to(tl.uint8), mask=inside)

    @triton.jit
    def decode_kernel(codes_ptr, table_ptr, out_ptr, n, BLOCK: tl.constexpr, CODE_MASK: tl.constexpr):
        offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inside = offsets < n
        codes = tl.load(codes_ptr + offsets, mask=inside, other=0).to(tl.int32) & CODE_MASK
        tl.store(out_ptr + offsets, tl.load(table_ptr + codes, mask=inside), mask=inside)

    # a profiler's hooks on Triton's launches: while any is set, every launch goes through Triton
    return {"encode": encode_kernel, "decode": decode_kernel, "hooks": triton.knobs.runtime.launch_enter_hook}


class _Launch:
    """One kernel with its constants, for one signature (the cast and the dtypes): each call runs it
    over ``n`` values. Triton's own launch (``kernel[grid](...)``) binds and specializes the arguments
    on every call: on an H200's host, 23.7 us against 13.8 us for all of torch's own cast at 2**16
    values. So on a GPU the compiled kernel that Triton returns is kept, per specialization, and later
    calls launch it directly (:func:`_direct`). The specialization is what Triton derives from the
    arguments: each pointer's 16-byte alignment and the count's divisibility by 16, its being 1, its
    width; and the device. Where a profiler has hooked Triton's launches, every call goes through
    Triton."""

    __slots__ = ("kernel", "signature", "constants", "trailing", "direct", "compiled", "hooks", "block", "as_bytes")

    def __init__(self, kernels: dict[str, Any], name: str, signature: tuple[Any, ...], constants: dict[str, Any],
                 as_bytes: Callable[[Any], Any] | None = None) -> None:
        self.kernel, self.signature, self.hooks = kernels[name], signature, kernels["hooks"]
        # the first tensor as the kernel's pointer type where it is a stored float8 tensor (Triton's
        # launch types its pointers by the tensors; a direct launch takes the address, no view needed)
        self.as_bytes = as_bytes
        self.block = _BLOCK
        self.constants = {"BLOCK": _BLOCK, **constants}
        names = self.kernel.arg_names
        self.trailing = tuple(self.constants[name] for name in names[names.index("n") + 1:])  # in the kernel's order
        self.constants["num_warps"] = _NUM_WARPS  # Triton's launch option (the compiled kernel keeps it)
        self.direct = not signature[3]  # compiled for a GPU (the interpreter has no compiled kernel)
        self.compiled: dict[tuple[Any, ...], Callable[..., Any]] = {}

    def __call__(self, n: int, *tensors: Any) -> bool:
        """Whether the kernel ran: False, remembered in :data:`failed`, where Triton could not build
        or launch it (the eager rule serves). Triton launches on the current device: a tensor on
        another GPU makes it current meanwhile."""
        if failed and self.signature in failed:
            return False
        grid = (n + self.block - 1) // self.block
        device = tensors[0].device
        spec = None
        if self.direct and not self.hooks.calls:
            index = device.index
            pointers = [t.data_ptr() for t in tensors]
            spec = (index, n % 16 == 0, n == 1, n > _INT32_MAX, *[p % 16 == 0 for p in pointers])
            launch = self.compiled.get(spec)
            if launch is not None and index == _device.current():
                launch(grid, _device.stream(index), *pointers, n, *self.trailing)
                return True
        if self.as_bytes is not None:
            tensors = (self.as_bytes(tensors[0]), *tensors[1:])
        try:
            elsewhere = device.type == "cuda" and device.index != _device.current()
            with _device.cuda.device(device) if elsewhere else nullcontext():
                compiled = self.kernel[(grid,)](*tensors, n, **self.constants)
        except Exception as error:  # e.g. a GPU or dtype this Triton cannot compile for
            failed[self.signature] = f"{type(error).__name__}: {error}"
            return False
        if spec is not None and not elsewhere and compiled is not None:
            self.compiled[spec] = _direct(compiled)
        return True


def _direct(compiled: Any) -> Callable[..., Any]:
    """``(grid, stream, *arguments)`` -> a launch of Triton's compiled kernel, pointers given as
    integers. With the Triton this was measured on (3.6), its C launcher is called itself, which
    skips a Python frame and a check of each pointer with the driver (this module took them from
    torch's tensors); with another Triton, the compiled kernel's public launcher."""
    runner = compiled.run
    c_launch = getattr(runner, "launch", None)
    if (_triton_checked() and c_launch is not None
            and not runner.global_scratch_size and not runner.profile_scratch_size):
        head = (compiled.function, runner.launch_cooperative_grid, runner.launch_pdl, None, None,
                compiled.packed_metadata, None, None, None)
        return lambda grid, stream, *arguments: c_launch(grid, 1, 1, stream, *head, *arguments)
    head = (compiled.function, compiled.packed_metadata, None, None, None)
    return lambda grid, stream, *arguments: runner(grid, 1, 1, stream, *head, *arguments)


def _triton_checked() -> bool:
    """Whether this is the Triton whose launcher layout and float8 rounding were checked on a GPU (3.6)."""
    import triton  # loaded: a kernel was compiled

    return triton.__version__.startswith("3.6.")


class _Device:
    """torch's current CUDA device and stream, looked up where first needed (torch is loaded then)."""

    def __getattr__(self, name: str) -> Any:
        import torch

        self.cuda = torch.cuda
        # torch.cuda.current_device without its check for CUDA's initialisation (a tensor is on a GPU)
        self.current = getattr(torch._C, "_cuda_getDevice", torch.cuda.current_device)
        # Triton's own launch asks torch for the raw stream this way (triton/backends/driver.py)
        self.stream = torch._C._cuda_getCurrentRawStream
        return getattr(self, name)


_device = _Device()
_INT32_MAX = 2**31 - 1


def launcher(torch: Any, key: tuple[Any, ...], on_cpu: bool = False) -> Callable[..., Any] | None:
    """The launcher for one_kernel's ``key``, made once: for ``("encode", format, saturate)``,
    ``x -> codes`` (uint8, ``x``'s shape) for a contiguous float16, bfloat16, float32 or float64
    tensor; for ``("decode", format, dtype, stored)``, ``(table, codes) -> values``, the gather of
    :func:`.reference.gather` (``stored``: codes in a tensor of the format's own torch dtype). A
    launcher returns None where its kernel could not run. None here where the kernels cannot run at
    all (see :data:`unavailable`). ``on_cpu``: in Triton's interpreter."""
    found = _LAUNCHERS.get((key, on_cpu))
    if found is None:
        if not available(on_cpu):
            return None
        f = get_format(key[1])
        found = _LAUNCHERS[(key, on_cpu)] = (_encode_launcher(torch, f, key[2], on_cpu) if key[0] == "encode"
                                             else _decode_launcher(torch, f, key[2], key[3], on_cpu))
    return found


def hardware_rounding(torch: Any) -> bool:
    """Whether the encode kernels round float8_e4m3fn and float8_e5m2 with the GPU's own conversion
    (Triton's float8 ``.to``, to nearest even; the specials stay the rule's): on GPUs with float8 conversions in hardware
    (compute capability 8.9 and later), with the Triton whose bits were checked on one (3.6, every
    float16 pattern and 2**20 float32 patterns: benchmarks/gpu_check_fused.py). Set
    :data:`use_hardware_rounding` to False for the integer rule everywhere (the bits are the same)."""
    if not use_hardware_rounding:
        return False
    return _triton_checked() and torch.cuda.get_device_capability() >= (8, 9)


def _encode_launcher(torch: Any, f: Format, saturate: bool, on_cpu: bool) -> Callable[[Any], Any]:
    kernels, uint8, key = _KERNELS[on_cpu], torch.uint8, ("encode", f.name, saturate, on_cpu)
    big = f.max_code if saturate or f.specials == "finite" else f.inf_code if f.specials == "ieee" else f.nan_code
    bound, inclusive = f.rounding_bound
    fields = dict(BITS=f.bits, MANTISSA=f.mantissa_bits, BIAS=f.bias, MAX_CODE=f.max_code,
                  NAN_CODE=f.nan_code or 0, BIG=big, KIND=_KIND[f.specials],
                  HARDWARE=_HARDWARE.get(f.name, 0) if not on_cpu and hardware_rounding(torch) else 0,
                  BOUND_BITS=struct.unpack("<i", struct.pack("<f", bound))[0], INCLUSIVE=inclusive)
    launches: dict[Any, _Launch] = {}  # the source's torch dtype -> its launch

    def launch(x: Any) -> Any:
        run = launches.get(x.dtype)
        if run is None:
            source = str(x.dtype)[6:]
            run = launches[x.dtype] = _Launch(kernels, "encode", (*key, source), dict(
                SOURCE_BITS=_SOURCE_BITS[source], IS_BFLOAT16=source == "bfloat16", **fields))
        out = torch.empty_like(x, dtype=uint8)
        n = x.numel()
        return out if not n or run(n, x, out) else None

    launch.launches = launches  # type: ignore[attr-defined]  # (for the tests: what ran, per dtype)
    return launch


def _decode_launcher(torch: Any, f: Format, dtype: str, stored: bool, on_cpu: bool) -> Callable[[Any, Any], Any]:
    as_bytes = (lambda codes: codes.view(torch.uint8)) if stored else None
    run = _Launch(_KERNELS[on_cpu], "decode", ("decode", f.name, stored, on_cpu, dtype), dict(CODE_MASK=(1 << f.bits) - 1),
                  as_bytes)

    def launch(table: Any, codes: Any) -> Any:  # table: the format's values as ``dtype``, on codes' device
        out = torch.empty_like(codes, dtype=table.dtype)
        n = codes.numel()
        return out if not n or run(n, codes, table, out) else None

    return launch
