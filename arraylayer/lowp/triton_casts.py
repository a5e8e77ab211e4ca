"""The casts of :mod:`.casts` as Triton kernels, for torch's tensors on a GPU.

Run eagerly on a GPU, the rule is a handful of torch kernels, each a pass over memory: on an H200
with torch 2.11, encoding to float8 cost 5.1-6.3x torch's own cast and decoding 3.5-3.8x. Under
``torch.compile`` the rule fuses into one kernel, but the compiled function's own per-call cost
(150-175 us) is ten times the cast's. Here each cast is one Triton kernel launched directly: one
read of the input and one write of the result, as torch's own cast does.

The kernels spell the same rule as :func:`.casts._encode_portable` (integer operations on the
float32 bit pattern, round to nearest even, the format's specials) and the same table gather as
:func:`.casts._gather`, so they give ml_dtypes' bits; the tests check them against ml_dtypes in
Triton's interpreter (``TRITON_INTERPRET=1``: a CPU runs the kernels, ``nox -s triton``) and
``benchmarks/gpu_check_fused.py`` checks them on a GPU, every pattern and the timings.

Triton comes with torch's CUDA wheels; where it is missing (torch for the CPU) or a kernel fails
to build, the eager rule runs instead, with the same bits: :data:`unavailable` and :data:`failed` say why.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

from .formats import Format

__all__ = ["encoder", "decoder", "available", "interpreted", "unavailable", "failed"]

#: why the kernels are not used here: None while they are (or before the first try)
unavailable: str | None = None
#: (cast, format, flag, on the CPU, dtype) -> why Triton could not run that kernel (the eager rule does)
failed: dict[tuple[Any, ...], str] = {}
_KERNELS: dict[bool, dict[str, Any]] = {}  # on the CPU (interpreted)? -> the kernels
_LAUNCHERS: dict[tuple[Any, ...], Callable[..., Any]] = {}
_BLOCK = 1024
_KIND = {"ieee": 0, "fn": 1, "fnuz": 2, "e8m0": 3, "finite": 4}
_SOURCE_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}


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
                      BIG: tl.constexpr, KIND: tl.constexpr):
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

    return {"encode": encode_kernel, "decode": decode_kernel}


def _launched(kernel: Any, signature: tuple[Any, ...], n: int, *args: Any, **constants: Any) -> bool:
    """Whether ``kernel`` ran over ``n`` values: False, remembered in :data:`failed` for ``signature``
    (the cast and the dtypes), where Triton could not build or launch it (the eager rule serves).
    Triton launches on the current device: a tensor on another GPU makes it current meanwhile."""
    if signature in failed:
        return False
    device = args[0].device
    try:
        elsewhere = device.type == "cuda" and device.index != _torch_cuda().current_device()
        with _torch_cuda().device(device) if elsewhere else nullcontext():
            kernel[((n + _BLOCK - 1) // _BLOCK,)](*args, n, BLOCK=_BLOCK, **constants)
    except Exception as error:  # e.g. a GPU or dtype this Triton cannot compile for
        failed[signature] = f"{type(error).__name__}: {error}"
        return False
    return True


def _torch_cuda() -> Any:
    import torch  # loaded: the tensor is torch's

    return torch.cuda


def encoder(torch: Any, f: Format, saturate: bool, on_cpu: bool = False) -> Callable[[Any], Any]:
    """``x -> codes`` (uint8, ``x``'s shape) of the float format ``f`` for a contiguous float16,
    bfloat16, float32 or float64 tensor: one kernel; None where it could not run. Call
    :func:`available` first."""
    key = ("encode", f.name, saturate, on_cpu)
    return _LAUNCHERS.get(key) or _LAUNCHERS.setdefault(key, _encode_launcher(torch, f, saturate, key))


def _encode_launcher(torch: Any, f: Format, saturate: bool, key: tuple[Any, ...]) -> Callable[[Any], Any]:
    kernel, uint8 = _KERNELS[key[-1]]["encode"], torch.uint8
    big = f.max_code if saturate or f.specials == "finite" else f.inf_code if f.specials == "ieee" else f.nan_code
    fields = dict(BITS=f.bits, MANTISSA=f.mantissa_bits, BIAS=f.bias, MAX_CODE=f.max_code,
                  NAN_CODE=f.nan_code or 0, BIG=big, KIND=_KIND[f.specials])

    def launch(x: Any) -> Any:
        out = torch.empty(x.shape, dtype=uint8, device=x.device)
        n, source = x.numel(), str(x.dtype)[6:]
        if n and not _launched(kernel, (*key, source), n, x, out, SOURCE_BITS=_SOURCE_BITS[source],
                               IS_BFLOAT16=source == "bfloat16", **fields):
            return None
        return out

    return launch


def decoder(torch: Any, f: Format, stored: bool, on_cpu: bool = False) -> Callable[[Any, Any], Any]:
    """``(table, codes) -> values``: the gather of :func:`.casts._gather` as one kernel, for uint8
    codes (``stored``: a tensor of the format's own torch dtype, read as its codes); None where it
    could not run."""
    key = ("decode", f.name, stored, on_cpu)
    return _LAUNCHERS.get(key) or _LAUNCHERS.setdefault(key, _decode_launcher(torch, f, stored, key))


def _decode_launcher(torch: Any, f: Format, stored: bool, key: tuple[Any, ...]) -> Callable[[Any, Any], Any]:
    kernel, uint8, mask = _KERNELS[key[-1]]["decode"], torch.uint8, (1 << f.bits) - 1

    def launch(table: Any, codes: Any) -> Any:
        if stored:
            codes = codes.view(uint8)
        out = torch.empty(codes.shape, dtype=table.dtype, device=codes.device)
        n = codes.numel()
        if n and not _launched(kernel, (*key, str(table.dtype)), n, codes, table, out, CODE_MASK=mask):
            return None
        return out

    return launch
