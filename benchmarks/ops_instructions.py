"""Instructions per call of bench_ops.py's NumPy dispatch cases, counted by valgrind's callgrind.

On a shared, loaded machine the times of a 1-element add move by tens of percent between runs;
the number of instructions a call executes does not (it is not the time: cache misses and branch
mispredictions are not in it, but every step the layer adds is). Each statement runs ``--calls``
times between two calls of ``os.getppid``, where callgrind dumps its counts; the loop's own cost
(an empty lambda) is subtracted.

Run: python benchmarks/ops_instructions.py [--calls N]  (needs ``valgrind`` on PATH; ~2 minutes)
ARRAYLAYER_PURE_PYTHON=1 counts the pure-Python dispatch.
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
)


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


def counts(calls: int) -> list[float]:
    """Instructions per call of each statement of :func:`child`, the empty loop's subtracted."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-before=getppid", f"--callgrind-out-file={out}",
                        sys.executable, __file__, "--child", "--calls", str(calls)], check=True,
                       capture_output=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
        parts = sorted(Path(folder).glob("cg.out.*"), key=lambda p: int(p.suffix[1:]))[1:]  # .1: the imports
        totals = [int(re.search(r"^(?:summary|totals): (\d+)", p.read_text(), re.M).group(1)) / calls
                  for p in parts]
    return [t - totals[-1] for t in totals[:-1]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.calls)
        return
    per_call = counts(args.calls)
    path = "pure Python" if os.environ.get("ARRAYLAYER_PURE_PYTHON", "") not in ("", "0") else "compiled"
    print(f"{'case':31s} {'native':>8s} {'arraylayer':>10s} {'ratio':>6s}   ({path} dispatch)")
    for k, (label, _, _) in enumerate(CASES):
        ours, native = per_call[2 * k], per_call[2 * k + 1]
        print(f"{label:31s} {native:8.0f} {ours:10.0f} {ours / native:5.2f}x")


if __name__ == "__main__":
    main()
