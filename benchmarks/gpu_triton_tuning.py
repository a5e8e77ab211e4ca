"""The Triton cast kernels' settings on a GPU (``arraylayer.lowp.triton_casts``): the device time of
each (block, warps, rounding) configuration against torch's own cast, at 2**20 and 2**24 values.
Rounding is the integer rule's or the GPU's own float8 conversion's (``hardware_rounding``); every
configuration must give the same bits.

The time is the GPU's own (``triton.testing.do_bench``, median), not the host's per-call cost:
``benchmarks/gpu_check_fused.py`` measures that. Run where torch sees a GPU and Triton imports:
``python benchmarks/gpu_triton_tuning.py [--output DIR]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton.testing  # noqa: E402

from arraylayer.lowp import triton_casts  # noqa: E402
from arraylayer.lowp.casts import decode_table  # noqa: E402

CONFIGURATIONS = [(block, warps, hardware) for hardware in (False, True) for block, warps in ((1024, 4), (2048, 8), (4096, 8))]


def median_us(call: Any) -> float:
    return round(triton.testing.do_bench(call, warmup=25, rep=200, return_mode="median") * 1000, 2)


def configuration(block: int, warps: int, hardware: bool, x32: Any, x16: Any, codes: Any, table: Any) -> dict[str, Any]:
    """The three casts' device times with ``block`` values per program on ``warps`` warps, rounding
    by the GPU's conversion or not, and their results (the same bits in every configuration)."""
    triton_casts._BLOCK, triton_casts._NUM_WARPS, triton_casts.use_hardware_rounding = block, warps, hardware
    triton_casts._LAUNCHERS.clear()
    encode = triton_casts.launcher(torch, ("encode", "float8_e4m3fn", False))
    decode = triton_casts.launcher(torch, ("decode", "float8_e4m3fn", "float32", True))
    times = {"float32->e4m3fn": median_us(lambda: encode(x32)), "float16->e4m3fn": median_us(lambda: encode(x16)),
             "e4m3fn->float32": median_us(lambda: decode(table, codes))}
    return {"us": times, "results": (encode(x32), encode(x16), decode(table, codes))}


def size_row(size: int, table: Any) -> dict[str, Any]:
    x32 = torch.from_numpy(np.random.default_rng(3).standard_normal(size).astype(np.float32) * 100).cuda()
    x16, codes = x32.to(torch.float16), x32.to(torch.float8_e4m3fn)
    row: dict[str, Any] = {
        "torch float32->e4m3fn": median_us(lambda: x32.to(torch.float8_e4m3fn)),
        "torch float16->e4m3fn": median_us(lambda: x16.to(torch.float8_e4m3fn)),
        "torch e4m3fn->float32": median_us(lambda: codes.to(torch.float32)),
    }
    reference = None
    for block, warps, hardware in CONFIGURATIONS:
        found = configuration(block, warps, hardware, x32, x16, codes, table)
        reference = reference or found["results"]
        same = all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) if a.dtype == torch.uint8 else
                   torch.equal(a.view(torch.int32), b.view(torch.int32)) for a, b in zip(found["results"], reference, strict=True))
        row[f"{block}/{warps}{' hardware' if hardware else ''}"] = {**found["us"], "same bits as the first": same}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    assert triton_casts.available(False), triton_casts.unavailable
    result: dict[str, Any] = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                              "triton": triton.__version__}
    table = torch.from_numpy(decode_table("float8_e4m3fn", "float32")).cuda()
    for size in (2**20, 2**24):
        result[str(size)] = size_row(size, table)
        print(size, json.dumps(result[str(size)]), flush=True)
    if args.output:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / "gpu_triton_tuning.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
