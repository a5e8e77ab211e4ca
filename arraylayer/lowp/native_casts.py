"""The frameworks' own low-precision casts, as an implementation of the cast engine (:mod:`.engine`):
used where their bits are ml_dtypes' (measured by tests/test_lowp_casts.py and tests/test_lowp_engine.py),
with a fix-up where only the out-of-range or NaN codes differ.

``NATIVE_ENCODE`` (backend, format) -> how the framework's cast is used for encoding: "direct" (its
bits are ml_dtypes'), "nan" (only NaN's code differs), "overflow" (it saturates where ml_dtypes gives
NaN), "cast" (its bits are ml_dtypes' but its arrays cannot be viewed as codes: used by ``cast`` only).
``NATIVE_DECODE``: (backend, format) whose own cast of a native low-precision array to a wider float
gives ml_dtypes' bits (NaN's sign included); other native arrays are decoded through their codes.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from arraylayer.context import replaying
from arraylayer.lowp import engine
from arraylayer.lowp.formats import FORMATS, Format
from arraylayer.lowp.one_kernel import compiled

__all__ = ["NATIVE_DECODE", "NATIVE_ENCODE"]

NATIVE_ENCODE: dict[tuple[str, str], str] = {
    **{("numpy", n): "direct" for n in FORMATS if FORMATS[n].is_float},  # ml_dtypes itself
    **{("jax", n): "direct" for n in FORMATS if n.startswith("float8")},
    ("torch", "float8_e4m3fnuz"): "direct",
    ("torch", "float8_e5m2fnuz"): "direct",
    ("torch", "float8_e4m3fn"): "overflow",
    ("torch", "float8_e5m2"): "nan",
    # TensorFlow has no bitcast of its float8 arrays: its cast is used by cast() only
    ("tensorflow", "float8_e4m3fn"): "cast",
    ("tensorflow", "float8_e5m2"): "cast",
}
NATIVE_DECODE = {("tensorflow", "float8_e4m3fn"), ("tensorflow", "float8_e5m2"),
                 *(("numpy", n) for n in FORMATS if FORMATS[n].is_float)}
_DECODE_TO = ("float16", "bfloat16", "float32", "float64")


class NativeCast:
    """The framework's own cast (``astype``), fixed up where ``NATIVE_ENCODE`` says how."""

    name, order, operations = "native", 30, engine.OPERATIONS

    def declines(self, request: engine.Request) -> str:
        ops, f = request.ops, request.format
        if request.op == "decode":
            if not request.stored or (ops.name, f.name) not in NATIVE_DECODE or request.dtype not in _DECODE_TO:
                return f"{ops.name}'s own conversion of {f.name} to {request.dtype} is not ml_dtypes'"
            return ""
        mode = NATIVE_ENCODE.get((ops.name, f.name))
        if mode is None or request.portable:
            return "asked for the portable rule" if request.portable else f"{ops.name} has no {f.name} cast with ml_dtypes' bits"
        if request.op == "cast":
            if mode not in ("direct", "cast") or request.saturate or request.source != "float32":
                return "its cast needs a fix-up (encoded, then viewed)" if mode in ("nan", "overflow") else \
                    "saturate=True or a source other than float32"
        elif mode == "cast":
            return f"{ops.name}'s {f.name} arrays cannot be viewed as codes"
        elif request.saturate and ops.name == "jax":
            return "XLA's clip flushes subnormals"
        if ops.own_cast_unlike_eager(request.wide if request.op == "encode" else request.x, request.source):
            return "inside a compiler whose own conversion differs from the eager one"
        return ""

    def run(self, request: engine.Request) -> Any:
        ops, f = request.ops, request.format
        if request.op == "decode":
            return ops.astype(request.x, request.dtype)
        if request.op == "cast":  # one kernel under jax.jit on an accelerator
            fused = compiled(ops, request.x, ("cast", f.name), lambda: partial(ops.astype, name=f.name))
            return fused(request.x) if fused else ops.astype(request.x, f.name)
        mode = NATIVE_ENCODE[(ops.name, f.name)]
        return engine.finish_float64(request, _encode_native(ops, request.wide, f, request.saturate, mode))


def _encode_native(ops: Any, x: Any, f: Format, saturate: bool, mode: str) -> Any:
    """The codes of the float32 ``x`` by the framework's own cast, fixed up where they differ from
    ml_dtypes' (``mode``)."""
    if saturate:
        x = ops.clip(x, -f.max, f.max)
    codes = ops.codes_of(ops.astype(x, f.name))
    if mode == "direct" or (mode == "overflow" and saturate):
        return codes
    # torch gives "nan" S.11111.11 for NaN where ml_dtypes gives S.11111.10 (no value gives S.11111.11);
    # "overflow": the largest finite S.1111.110 where ml_dtypes gives NaN, S.1111.111.
    bound, inclusive = f.rounding_bound
    torch = ops.torch
    # Eagerly, whether any code may need the fix: for "nan", one maximum over the codes' magnitudes
    # (a byte pass); for "overflow", one aminmax over x (NaN propagates: a NaN takes the fix path,
    # which leaves its code), as cheap as the byte pass and needed after it where data scaled to the
    # format's amax reaches the largest code.
    # (on an accelerator the check's host synchronisation costs more than the fix: none there)
    eager = not replaying()
    if eager and codes.numel() == 0:
        return codes
    eager = eager and x.device.type == "cpu"
    if mode == "nan":  # magnitude + 1 reaches the sign bit only from S.11111.11: flip its last bit
        magnitude = codes & (f.sign_bit - 1)
        if eager and int(torch.amax(magnitude)) < f.sign_bit - 1:
            return codes
        return codes ^ ((magnitude + 1) >> (f.bits - 1))
    if eager:
        low, high = torch.aminmax(x)
        if (high < bound and low > -bound) if inclusive else (high <= bound and low >= -bound):  # NaN: False
            return codes
    beyond = torch.abs(x) >= bound if inclusive else torch.abs(x) > bound
    # a cast, not a bool -> uint8 view: Inductor (torch 2.11, CUDA) fails to lower that view inside
    # a user's torch.compile ("torch.bool is not supported by torch.iinfo"; benchmarks/gpu_compile_casts.py)
    return codes | beyond.to(torch.uint8)


engine.register(NativeCast())
