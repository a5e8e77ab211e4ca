"""Instructions per call of bench_ops.py's NumPy dispatch cases, counted by valgrind's callgrind.

On a shared, loaded machine the times of a 1-element add move by tens of percent between runs;
the number of instructions a call executes does not (it is not the time: cache misses and branch
mispredictions are not in it, but every step the layer adds is). Each statement runs ``--calls``
times between two calls of ``os.getppid``, where callgrind dumps its counts; the loop's own cost
(an empty lambda) is subtracted.

``--cache-sim`` adds what callgrind's simulated caches and branch predictor say (this machine's L1
sizes): instruction-cache misses (I1mr, each a line of code fetched from L2 on real hardware, which
an instruction count does not show) and mispredicted branches (Bcm conditional, Bim indirect).

Run: python benchmarks/ops_instructions.py [--calls N] [--cache-sim]  (needs ``valgrind`` on PATH;
~2 minutes, ~3 with --cache-sim). ARRAYLAYER_PURE_PYTHON=1 counts the pure-Python dispatch.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: (label, arraylayer statement, native statement): the native side is bench_ops.py's
CASES = (
    ("tiny: add 1-element float32", "al.add(a, b)", "np.add(a, b)"),
    ("mixed: float32 + int32", "al.add(a, i)", "np.add(a, i.astype(np.float32))"),
    ("mixed: float32 + Python float", "al.add(a, 2.5)", "np.add(a, 2.5)"),
    ("Array: xp.add(A, B)", "xp.add(A, B)", "np.add(a, b)"),
    ("Array: A + B", "A + B", "np.add(a, b)"),
    ("Array: al.add(A, B)", "al.add(A, B)", "np.add(a, b)"),
    ("Array: A < B", "A < B", "np.less(a, b)"),
    ("Array: A ** B", "A ** B", "np.pow(a, b)"),
)
#: callgrind's events, as --cache-sim reports them (per call, arraylayer / native)
SIMULATED = ("I1mr", "Bcm", "Bim")


def child(calls: int) -> None:
    """Run under callgrind: each statement's loop between two dumps, the empty loop last."""
    import numpy as np

    import arraylayer as al

    a, b = np.array([1.5], np.float32), np.array([2.25], np.float32)
    i = np.array([3], np.int32)
    A, B = al.Array(a), al.Array(b)
    env = {"np": np, "al": al, "a": a, "b": b, "i": i, "A": A, "B": B, "xp": A.__array_namespace__()}
    statements = [s for _, ours, native in CASES for s in (ours, native)] + ["None"]
    for statement in statements:
        f = eval(f"lambda: {statement}", env)
        for _ in range(50):  # plans, lazy imports
            f()
        os.getppid()
        for _ in range(calls):
            f()
    os.getppid()


def counts(calls: int, cache_sim: bool = False) -> list[dict[str, float]]:
    """Events per call (Ir, and with ``cache_sim`` :data:`SIMULATED`) of each statement of
    :func:`child`, the empty loop's subtracted."""
    simulate = ["--cache-sim=yes", "--branch-sim=yes"] if cache_sim else []
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", *simulate, "--dump-before=getppid",
                        f"--callgrind-out-file={out}", sys.executable, __file__, "--child", "--calls", str(calls)],
                       check=True, capture_output=True,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
        parts = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))[1:]  # .1: the imports
        totals = []
        for part in parts:
            text = part.read_text()
            events = re.search(r"^events: (.*)$", text, re.M).group(1).split()
            values = re.search(r"^(?:summary|totals): (.*)$", text, re.M).group(1).split()
            totals.append({e: int(v) / calls for e, v in zip(events, values, strict=True)})
    return [{e: t[e] - totals[-1][e] for e in t} for t in totals[:-1]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--cache-sim", action="store_true", help="also simulated I1 misses, branch mispredictions")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.calls)
        return
    per_call = counts(args.calls, args.cache_sim)
    path = "pure Python" if os.environ.get("ARRAYLAYER_PURE_PYTHON", "") not in ("", "0") else "compiled"
    extra = "".join(f" {e + ' al/native':>15s}" for e in SIMULATED) if args.cache_sim else ""
    print(f"{'case':31s} {'native':>8s} {'arraylayer':>10s} {'ratio':>6s}{extra}   ({path} dispatch)")
    for k, (label, _, _) in enumerate(CASES):
        ours, native = per_call[2 * k], per_call[2 * k + 1]
        simulated = "".join(f" {ours[e]:7.1f}/{native[e]:<7.1f}" for e in SIMULATED) if args.cache_sim else ""
        print(f"{label:31s} {native['Ir']:8.0f} {ours['Ir']:10.0f} {ours['Ir'] / native['Ir']:5.2f}x{simulated}")


if __name__ == "__main__":
    main()
