"""The low-precision casts on a GPU (``arraylayer.lowp.one_kernel``: on jax compiled into one kernel by
``jax.jit``, on torch Triton kernels of arraylayer's own, ``arraylayer.lowp.triton_casts``): their bits
against ml_dtypes and their cost against the framework's own cast.

For each backend with a GPU (torch, jax): every float16 and every bfloat16 bit pattern, and 2**20
random float32 bit patterns (NaN payloads, infinities and subnormals included), encoded into each
floating format the backend keeps (saturating too, for float8_e4m3fn and float8_e5m2) and compared
code for code with ml_dtypes; every code of each format decoded to float32 (and to bfloat16 and float16 for the two
float8 formats above) and compared bit for bit with ml_dtypes (NaNs compared as NaNs, their bit differences counted
apart); which casts ran compiled; the first call's time (the compilation, on jax); and the casts to and from float8_e4m3fn and float8_e5m2 against the framework's own
at 2**16, 2**20 and 2**24 values (median of paired interleaved rounds, the device synchronised).

Usage: ``python benchmarks/gpu_check_fused.py [--output DIR] [--device cpu]`` (``--device cpu``: a
dry run anywhere, with ``one_kernel.everywhere()`` so that the compiled casts run on the CPU; torch's
Triton kernels there only with ``TRITON_INTERPRET=1`` and Triton installed).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from gpu_check import check, gpu_backends, paired_median, report, synchronizer  # noqa: E402
from gpu_check_more import _native_cast, _native_type  # noqa: E402

import arraylayer as al  # noqa: E402
from arraylayer import lowp  # noqa: E402
from arraylayer.lowp import one_kernel, triton_casts  # noqa: E402
from arraylayer.lowp.casts import decode_table  # noqa: E402

FULL = ("float8_e4m3fn", "float8_e5m2")  # every source and saturation


def _numpy(x: Any) -> np.ndarray:
    return np.asarray(al.to_backend(al.to_device(x, "cpu"), "numpy"))


def _sources() -> dict[str, np.ndarray]:
    bits = np.random.default_rng(7).integers(0, 2**32, 2**20, dtype=np.uint64).astype(np.uint32)
    return {"float16": np.arange(2**16, dtype=np.uint16).view(np.float16),
            "bfloat16": np.arange(2**16, dtype=np.uint16).view(ml_dtypes.bfloat16),
            "float32": bits.view(np.float32)}


def _expected_codes(values: np.ndarray, name: str, saturate: bool) -> np.ndarray:
    f = lowp.get_format(name)
    wide = values.astype(np.float32)
    if saturate:
        wide = np.where(np.isnan(wide), wide, np.clip(wide, -float(f.max), float(f.max)))
    with np.errstate(invalid="ignore", over="ignore"):
        return wide.astype(getattr(ml_dtypes, name)).view(np.uint8) & np.uint8((1 << f.bits) - 1)


def run_backend(backend: str, device: str) -> None:
    al.set_backend(backend)
    wait = synchronizer(backend)
    formats = [d.name for d in al.valid_low_precision_dtypes(backend) if al.isdtype(d, "real floating")]
    if device == "cpu":  # a dry run: two formats (each compiles in seconds on a CPU)
        formats = list(FULL)

    @check(f"{backend}: compiled encode, bits vs ml_dtypes")
    def encode_bits() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for source, values in _sources().items():
            # the patterns themselves (asarray keeps ml_dtypes' bfloat16 bits): torch's float32 -> bfloat16
            # cast would give every NaN one pattern (0xFFFF on the CPU), losing the sign that encode keeps
            x = al.asarray(values, device=device)
            for name in formats:
                for saturate in ((False, True) if name in FULL else (False,)):
                    if name not in FULL and source != "float32":
                        continue
                    start = time.perf_counter()
                    codes = lowp.encode(x, name, saturate=saturate)
                    wait(codes)
                    seconds = time.perf_counter() - start
                    differ = int(np.sum(_numpy(codes) != _expected_codes(values, name, saturate)))
                    out[f"{source}->{name}{' sat' if saturate else ''}"] = {"differ": differ, "first_call_s": round(seconds, 2)}
        return out

    @check(f"{backend}: compiled decode, bits vs ml_dtypes (every code, 2**16 values)")
    def decode_bits() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in formats:
            f = lowp.get_format(name)
            codes = np.tile(np.arange(256, dtype=np.uint8), 256) & np.uint8((1 << f.bits) - 1)
            expected_values = codes.view(getattr(ml_dtypes, name))
            for dtype in ("float32", "bfloat16", "float16") if name in FULL else ("float32",):
                got = _numpy(lowp.decode(al.asarray(codes, device=device), name, dtype))
                expected = expected_values.astype(np.float32).astype(got.dtype)
                nan = np.isnan(got.astype(np.float32)) & np.isnan(expected.astype(np.float32))
                view = {1: np.uint8, 2: np.uint16, 4: np.uint32}[got.itemsize]
                bits_differ = got.view(view) != expected.view(view)
                out[f"{name}->{dtype}"] = {"differ": int(np.sum(bits_differ & ~nan)), "nan_bits_differ": int(np.sum(bits_differ & nan))}
        return out

    @check(f"{backend}: which casts ran compiled")
    def paths() -> dict[str, Any]:
        if backend == "torch":
            import torch

            return {"triton": sorted("/".join(map(str, (*k, on_cpu))) for k, on_cpu in triton_casts._LAUNCHERS),
                    "triton_unavailable": triton_casts.unavailable,
                    "hardware_rounding": triton_casts.hardware_rounding(torch) if device != "cpu" else False}
        return {"compiled": sorted("/".join(map(str, k)) for k in one_kernel._COMPILED if k[0] == backend)}

    @check(f"{backend}: float8 casts compiled vs the framework's own (2**16, 2**20, 2**24 values)")
    def speed() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for size in (2**16, 2**20, 2**24) if device != "cpu" else (2**16,):
            x = al.asarray(np.random.default_rng(3).standard_normal(size).astype(np.float32) * 100, device=device)
            for name in FULL:
                native_type = _native_type(backend, name)
                codes = lowp.cast(x, name)
                calls = 50 if size < 2**24 else 10
                out[f"to {name} {size}"] = paired_median(lambda n=name, v=x: lowp.cast(v, n), lambda t=native_type, v=x: _native_cast(backend, v, t),
                                                         wait, rounds=11, calls=calls)
                out[f"from {name} {size}"] = paired_median(lambda c=codes: al.astype(c, "float32"),
                                                           lambda c=codes: _native_cast(backend, c, _native_type(backend, "float32")),
                                                           wait, rounds=11, calls=calls)
        return out


    if backend == "torch":
        breakdown(wait, device)


def breakdown(wait: Any, device: str) -> None:
    """Where a torch cast's time goes at 2**16 values, where the launch, not the memory, sets the time:
    each layer alone, per call (microseconds, ``calls`` calls then one wait for the device)."""
    import torch

    @check("torch: where a cast's time goes, per call in us (2**16 values, float8_e4m3fn)")
    def layers() -> dict[str, Any]:
        x = al.asarray(np.random.default_rng(3).standard_normal(2**16).astype(np.float32) * 100, device=device)
        y = lowp.cast(x, "float8_e4m3fn")
        out = torch.empty_like(x, dtype=torch.uint8)
        encoder = triton_casts.launcher(torch, ("encode", "float8_e4m3fn", False), device == "cpu")
        run = getattr(encoder, "launches", {}).get(torch.float32)
        table = al.asarray(decode_table("float8_e4m3fn", "float32"), device=device)
        decoder = triton_casts.launcher(torch, ("decode", "float8_e4m3fn", "float32", True), device == "cpu")
        candidates = {
            "torch .to(float8_e4m3fn)": lambda: x.to(torch.float8_e4m3fn),
            "torch.empty_like": lambda: torch.empty_like(x, dtype=torch.uint8),
            "torch .view(uint8)": lambda: y.view(torch.uint8),
            "kernel launch, direct": (lambda: run(x.numel(), x, out)) if run is not None else None,
            "kernel launch, through Triton": (lambda: run.kernel[(64,)](x, out, x.numel(), **run.constants)) if run is not None else None,
            "encoder (empty + launch)": lambda: encoder(x),
            "lowp.encode": lambda: lowp.encode(x, "float8_e4m3fn"),
            "lowp.cast": lambda: lowp.cast(x, "float8_e4m3fn"),
            "al.astype to float8_e4m3fn": lambda: al.astype(x, "float8_e4m3fn"),
            "torch .to(float32) from float8": lambda: y.to(torch.float32),
            "decoder (empty + launch)": lambda: decoder(table, y),
            "lowp.decode": lambda: lowp.decode(y, "float8_e4m3fn", "float32"),
            "al.astype to float32": lambda: al.astype(y, "float32"),
        }
        result: dict[str, Any] = {}
        rounds, calls = (7, 200) if device != "cpu" else (1, 2)  # the interpreter: a dry run
        for label, call in candidates.items():
            if call is None:
                continue
            for _ in range(calls // 4):
                call()
            times = []
            for _ in range(rounds):
                start = time.perf_counter()
                for _ in range(calls):
                    z = call()
                wait(z)
                times.append((time.perf_counter() - start) / calls * 1e6)
            result[label] = round(sorted(times)[rounds // 2], 2)
        result["direct launches kept"] = len(run.compiled) if run is not None else None
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None, help="folder for gpu_check_fused.json")
    parser.add_argument("--backend", action="append", default=None)
    parser.add_argument("--device", default="gpu:0", help="cpu: a dry run on a machine without a GPU")
    args = parser.parse_args()
    gpu_check.DEVICE = args.device  # what its synchronizer waits on
    found = gpu_backends()
    print("gpu backends:", found, flush=True)
    scope = one_kernel.everywhere() if args.device == "cpu" else contextlib.nullcontext()
    with scope:
        for backend in args.backend or (found if args.device != "cpu" else ["torch", "jax"]):
            run_backend(backend, args.device)
    report(args.output, "gpu_check_fused.json")


if __name__ == "__main__":
    main()
