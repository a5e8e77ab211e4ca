"""The low-precision casts inside a user's ``torch.compile`` on a GPU: their bits against ml_dtypes
and their cost against the same function written with torch's own casts.

Inside ``torch.compile`` the Triton kernels of ``arraylayer.lowp.triton_casts`` are not used: the
rule is traced into the user's graph, where Inductor fuses it with its neighbours. This checks that
the rule keeps ml_dtypes' bits there (every float16 pattern and 2**20 random float32 bit patterns,
alone and after a multiply, so that the cast is fused with an operation before it) and what it costs:
``f(x) = astype(x * s, float8)`` and ``g(c) = astype(c, float32) * s`` compiled, against the same
functions with torch's ``.to`` (whose float8_e4m3fn cast saturates: the bits differ there, by
design), at 2**16, 2**20 and 2**24 values.

Usage: ``python benchmarks/gpu_compile_casts.py [--output DIR] [--device cpu]`` (``--device
cpu``: a dry run anywhere, slow to compile).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import gpu_check  # noqa: E402
import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from gpu_check import check, paired_median, report, synchronizer  # noqa: E402

import arraylayer as al  # noqa: E402

FORMATS = ("float8_e4m3fn", "float8_e5m2")
# torch's Inductor on an NVIDIA GPU cannot compile code that touches these (found on an H200, torch
# 2.11, Triton 3.6: "type fp8e4b8 not supported in this architecture"): recorded, not failed
FNUZ = ("float8_e4m3fnuz", "float8_e5m2fnuz")


def _patterns() -> np.ndarray:
    bits = np.random.default_rng(7).integers(0, 2**32, 2**20, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32), bits.view(np.float32)])


def run(device: str) -> None:
    al.set_backend("torch")
    wait = synchronizer("torch")
    target = "cuda" if device != "cpu" else "cpu"
    scale = torch.tensor(1.0, device=target)

    def encoder(name: str) -> Any:
        return torch.compile(lambda x, s: al.astype(x * s, name))

    def decoder() -> Any:
        return torch.compile(lambda c, s: al.astype(c, "float32") * s)

    @check("torch.compile: astype to float8 and back, bits vs ml_dtypes")
    def bits() -> dict[str, Any]:
        # the casts alone, and the cast fused after a multiply (compared with ml_dtypes' codes of
        # the product as torch computes it eagerly: a GPU's arithmetic gives NaNs its own bits)
        values = _patterns()
        x = torch.from_numpy(values).to(target)
        product = (x * scale).cpu().numpy()
        out: dict[str, Any] = {}
        for name in (*FORMATS, *FNUZ):
            with np.errstate(invalid="ignore", over="ignore"):
                want = values.astype(getattr(ml_dtypes, name))
                want_fused = product.astype(getattr(ml_dtypes, name)).view(np.uint8)
            try:
                codes = torch.compile(lambda v, n=name: al.astype(v, n))(x)
                fused = encoder(name)(x, scale).view(torch.uint8).cpu().numpy()
                back = torch.compile(lambda c: al.astype(c, "float32"))(codes).cpu().numpy()
            except Exception as error:  # the fnuz types on NVIDIA: Triton has no such type there
                out[name] = {"error": f"{type(error).__name__}: {str(error).splitlines()[-1][:300]}"}
                continue
            out[name] = {"encode_differ": int((codes.view(torch.uint8).cpu().numpy() != want.view(np.uint8)).sum()),
                         "fused_encode_differ": int((fused != want_fused).sum()),
                         "decode_bits_differ": int((back.view(np.uint32) != want.astype(np.float32).view(np.uint32)).sum())}
        return out

    @check("torch.compile: astype to float8 and back vs torch's .to, compiled alike")
    def speed() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for size in (2**16, 2**20, 2**24) if device != "cpu" else (2**16,):
            x = torch.from_numpy(np.random.default_rng(3).standard_normal(size).astype(np.float32) * 100).to(target)
            for name in FORMATS:
                native_type = getattr(torch, name)
                ours, theirs = encoder(name), torch.compile(lambda v, s, t=native_type: (v * s).to(t))
                codes = ours(x, scale)
                out[f"to {name} {size}"] = paired_median(lambda o=ours, v=x: o(v, scale), lambda t=theirs, v=x: t(v, scale),
                                                         wait, rounds=11, calls=50)
                back, native_back = decoder(), torch.compile(lambda c, s: c.to(torch.float32) * s)
                out[f"from {name} {size}"] = paired_median(lambda b=back, c=codes: b(c, scale),
                                                           lambda b=native_back, c=codes: b(c, scale),
                                                           wait, rounds=11, calls=50)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--device", default="gpu:0", help="cpu: a dry run on a machine without a GPU")
    args = parser.parse_args()
    gpu_check.DEVICE = args.device
    torch._dynamo.config.cache_size_limit = 64  # one graph per format, size and direction
    run(args.device)
    report(args.output, "gpu_compile_casts.json")


if __name__ == "__main__":
    main()
