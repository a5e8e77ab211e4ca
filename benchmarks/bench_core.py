"""Core benchmarks: import cost, torch's first use, and the per-call cost of promotion.

Prints a table (case, reference, arraylayer, ratio) and writes benchmarks/results/core.json.
Each timing is the median of several repeats of many calls; references (NumPy's own
promote_types/result_type) are measured in the same process, interleaved with ours.

Run: python benchmarks/bench_core.py [--quick]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path
from typing import Final

FRAMEWORKS = ("numpy", "ml_dtypes", "torch", "jax", "tensorflow")
ROOT: Final = Path(__file__).resolve().parent.parent
#: The children read compiled bytecode, as an installed package does (a machine that sets
#: PYTHONDONTWRITEBYTECODE would otherwise compile every module in every child): caches in a
#: folder of their own, filled by a first run that is not counted.
_CHILD_ENV: Final = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
                     "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "arraylayer-bench-pycache")}


def child(code: str) -> str:
    """What ``code`` prints in a fresh interpreter run in the repository root (its arraylayer)."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT, env=_CHILD_ENV).stdout


def import_cost(repeats: int) -> dict[str, object]:
    """Median wall time of `import arraylayer` in a fresh interpreter, and what it imported."""
    code = (
        "import time, sys; t = time.perf_counter(); import arraylayer; "
        "dt = time.perf_counter() - t; "
        f"print(dt, [m for m in {FRAMEWORKS!r} if m in sys.modules])"
    )
    times, loaded = [], []
    child(code)  # fills the bytecode caches
    for _ in range(repeats):
        seconds, modules = child(code).split(" ", 1)
        times.append(float(seconds))
        loaded = eval(modules)  # a list literal printed by the child
    return {"median_s": statistics.median(times), "frameworks_imported": loaded}


#: torch's own first use, then arraylayer's first call on its tensors in the same process. The child
#: prints the seconds of torch's import and first add, of ``import arraylayer``, of the first
#: ``al.add``, the seconds the garbage collector ran during each of those two (a full collection over
#: torch's objects lands wherever the allocations cross its threshold), and whether torch._dynamo
#: was imported.
_TORCH_FIRST_USE: Final = """
import gc, sys, time
t0 = time.perf_counter()
import torch
x = torch.ones(3)
torch.add(x, x)
t1 = time.perf_counter()
collecting = []
gc.callbacks.append(lambda phase, info: collecting.append(time.perf_counter()))
import arraylayer as al
t2 = time.perf_counter()
during_import = collecting[:]
al.add(x, x)
t3 = time.perf_counter()
gc_import, gc_call = (sum(c[1::2]) - sum(c[0::2]) for c in (during_import, collecting[len(during_import):]))
print(t1 - t0, t2 - t1, t3 - t2, gc_import, gc_call, 'torch._dynamo' in sys.modules)
"""


def torch_first_use(repeats: int) -> dict[str, object]:
    """From a fresh interpreter: ``import torch`` and a first ``torch.add`` (torch's own cost), then
    ``import arraylayer`` and a first ``al.add`` on the same tensors. Medians over ``repeats``
    processes; what arraylayer adds is measured inside each process, so a slow start of torch in one
    process does not move it. ``gc_*_s``: the garbage collector's share of each. ``dynamo_imported``:
    whether any run imported ``torch._dynamo`` (it must not, until the user compiles)."""
    child(_TORCH_FIRST_USE)  # fills the bytecode caches
    rows = []
    for _ in range(repeats):
        *seconds, dynamo = child(_TORCH_FIRST_USE).split()
        rows.append((*(float(t) for t in seconds), dynamo == "True"))
    torch_s, import_s, call_s, gc_import_s, gc_call_s = (statistics.median(r[i] for r in rows) for i in range(5))
    return {"torch_s": torch_s, "extra_s": statistics.median(r[1] + r[2] for r in rows),
            "import_arraylayer_s": import_s, "gc_import_s": gc_import_s, "first_call_s": call_s,
            "gc_call_s": gc_call_s, "runs": len(rows), "dynamo_imported": any(r[5] for r in rows)}


def per_call_ns(stmt: str, setup_globals: dict, number: int, repeats: int) -> float:
    timer = timeit.Timer(stmt, globals=setup_globals)
    return min(timer.repeat(repeat=repeats, number=number)) / number * 1e9


def main() -> None:
    quick = "--quick" in sys.argv
    number, repeats = (20_000, 5) if quick else (200_000, 7)

    import numpy as np

    import arraylayer as al

    env = {"al": al, "np": np, "f32": al.float32, "i8": al.int8, "nf32": np.dtype("float32"),
           "ni8": np.dtype("int8"), "x": np.ones(4, np.float32)}
    cases = [
        # (case, reference statement, arraylayer statement)
        ("promote_types(Dtype, Dtype)", "np.promote_types(nf32, ni8)", "al.promote_types(f32, i8)"),
        ("promote_types(str, str)", "np.promote_types('float32', 'int8')", "al.promote_types('float32', 'int8')"),
        ("promote_types(np.dtype, np.dtype)", "np.promote_types(nf32, ni8)", "al.promote_types(nf32, ni8)"),
        ("result_type(Dtype, Dtype)", "np.result_type(nf32, ni8)", "al.result_type(f32, i8)"),
        ("result_type(array, float)", "np.result_type(x, 1.5)", "al.result_type(x, 1.5)"),
        ("promote_types(int8, int) weak", "np.promote_types(ni8, ni8)", "al.promote_types(i8, int)"),
    ]
    rows = []
    for name, reference, ours in cases:
        # interleave: reference, ours, reference, ours ... and keep the best of each
        ref_ns, our_ns = [], []
        for _ in range(3):
            ref_ns.append(per_call_ns(reference, env, number, repeats))
            our_ns.append(per_call_ns(ours, env, number, repeats))
        ref, our = min(ref_ns), min(our_ns)
        rows.append({"case": name, "reference": reference, "reference_ns": round(ref, 1),
                     "arraylayer_ns": round(our, 1), "ratio": round(our / ref, 3)})

    imported = import_cost(5 if quick else 15)
    print(f"{'case':36} {'numpy (ns)':>11} {'arraylayer (ns)':>16} {'ratio':>7}")
    for row in rows:
        print(f"{row['case']:36} {row['reference_ns']:>11.1f} {row['arraylayer_ns']:>16.1f} {row['ratio']:>7.2f}")
    print(f"\nimport arraylayer: {imported['median_s'] * 1000:.1f} ms (median), "
          f"frameworks imported: {imported['frameworks_imported'] or 'none'}")
    first = torch_first_use(3 if quick else 9)
    print(f"torch's first use ({first['runs']} processes, medians): import torch + torch.add {first['torch_s']:.3f} s; "
          f"then import arraylayer + the first al.add +{first['extra_s']:.3f} s (the import "
          f"{first['import_arraylayer_s']:.3f} s, the first call {first['first_call_s']:.3f} s; of these, the "
          f"garbage collector ran {first['gc_import_s']:.3f} s and {first['gc_call_s']:.3f} s); "
          f"torch._dynamo imported: {'YES' if first['dynamo_imported'] else 'no'}")
    limits = {"promote_types(Dtype, Dtype)": 1.5, "result_type(Dtype, Dtype)": 3.0, "result_type(array, float)": 3.0}
    target_ok = all(r["ratio"] <= limits[r["case"]] for r in rows if r["case"] in limits)  # issue 42
    print(f"promote_types(Dtype, Dtype) <= 1.5x np.promote_types, result_type <= 3x np.result_type: "
          f"{'yes' if target_ok else 'NO'}")

    out = Path(__file__).parent / "results" / "core.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"python": sys.version.split()[0], "numpy": np.__version__,
                               "promotion": rows, "import": imported,
                               "torch_first_use": first}, indent=2) + "\n")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
