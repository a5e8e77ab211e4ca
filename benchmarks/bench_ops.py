"""Operation benchmarks: arraylayer's functions next to each framework's own, in one process.

Prints a table (backend, case, native, arraylayer, ratio, target, ok) and writes
benchmarks/results/ops.json.

Run: python benchmarks/bench_ops.py [--quick] [--backend NAME ...] [--only PREFIX ...] [--cpu-time] [--output PATH]
(``--only "Array:"`` runs just the cases whose name starts so, and writes ops.partial.json.)

The run and its cases are here; the timing is ``ops_timing.py``, each framework's native
statements and allocation counters ``ops_frameworks.py``.

How a case is timed. Each case is a native statement and an arraylayer statement that
compute the same result from the same inputs; before timing, both run once and must give
the same dtype and values. Both run as ``timeit`` loops of ``number`` calls (``number``
calibrated on the native statement so one loop lasts ``min_time``), interleaved: every
repeat times both sides, alternating which goes first, so drift, frequency scaling and
noisy neighbours hit both alike. Reported: the median per-call time of each side and the
median of the per-repeat ratios arraylayer/native (paired: a slow moment cancels).

Cases (per backend unless said):

* tiny: ``al.add`` of two 1-element float32 arrays vs the framework's own add: the
  per-call overhead of the layer.
* mixed (targets as tiny's): float32 + int32 arrays vs the native add after an explicit cast of the int32 array
  (``np.add(a, i.astype(np.float32))`` ...); float32 + a Python float vs the native add
  with the same Python float, which numpy 2, torch, jax and TensorFlow all keep float32
  (the scalar takes the array's dtype natively, so this measures the layer's planning).
* Array (per backend, on ``arraylayer.Array`` wrappers of 1-element float32 arrays): the
  Array namespace's ``xp.add(A, B)``, the operator ``A + B``, and ``al.add(A, B)``, each
  against the framework's own add on the native arrays inside; ``xp.sum(A)`` and ``xp.mean(A)``
  against ``al.sum(a)`` / ``al.mean(a)``: what the Array path adds to arraylayer's own call.
* large: float32 adds of 1e6 and 1e7 elements; and how many result-sized arrays one add
  allocates (the ``allocations_*`` functions say how, per backend).
* compiled: a 3-layer MLP (batch 64, width 512, relu as ``al.maximum(x, 0.0)``) written
  once with arraylayer under jax.jit, tf.function and torch.compile, vs the same model
  written natively; and its graph breaks under torch.compile (``torch._dynamo.explain``).
* import (fresh interpreters, medians): ``import arraylayer`` (no framework may be
  imported; bench_core's measurement), and ``import arraylayer; set_backend(name)`` (then a
  first add) vs ``import <framework>`` (then the same first add, natively).
* promotion (no backend): ``promote_types``/``result_type`` of two dtypes, with NumPy's own
  as the reference (bench_core.py has the full set of promotion cases).

Dispatch: the compiled one (``arraylayer._dispatch``) where it is built; ARRAYLAYER_PURE_PYTHON=1 in
the environment measures the pure-Python one. The line after the table says which ran.

JAX: the dispatch cases (tiny, mixed) do not block on the result, on either side; the large
and compiled cases call ``block_until_ready()`` on both sides.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# this checkout's arraylayer, not the one installed in the environment (an editable install of another tree)
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from bench_core import import_cost  # noqa: E402  (the `import arraylayer` measurement, reused)
from ops_frameworks import ALLOCATIONS, NATIVES, Native, mlp_arraylayer  # noqa: E402
from ops_timing import CLOCK, FULL, QUICK, Row, Settings, paired, timed_row  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

BACKENDS = ("numpy", "jax", "torch", "tensorflow")
# issue 24: the element-wise functions on same-dtype and cached mixed-dtype inputs, and the Array path,
# against the native call
TINY_TARGET = {"numpy": 1.10, "jax": 1.05, "torch": 1.05, "tensorflow": 1.05}  # issue 42
ARRAY_TARGET = 1.15  # every Array path (operators, reductions, indexing, astype) against the call on the natives
ARRAY_REDUCTION_TARGET = ARRAY_TARGET  # xp.sum(A) / xp.mean(A) / xp.max(A) against al.sum / al.mean / al.max
LARGE_TARGET = 1.02
COMPILED_TARGET = 1.02
IMPORT_TARGET_S = 0.1
PROMOTION_TARGET = {"promote_types": 1.5, "result_type": 3.0}  # issue 42: ratios to NumPy's own


# -- the cases ------------------------------------------------------------------------------------
#: --only: run just the cases whose name starts with one of these (all when empty)
ONLY: list[str] = []


def case(rows: list[Row], backend: str, name: str, run: Callable[[], Row | list[Row]]) -> None:
    """Run one case; a failure becomes a row saying so (the other cases still run)."""
    if ONLY and not any(name.startswith(prefix) for prefix in ONLY):
        return
    print(f"  {backend:<10} {name} ...", file=sys.stderr, flush=True)
    try:
        result = run()
    except Exception as error:  # a backend's kernels missing, a compiler error, a wrong result
        summary = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        rows.append(Row(backend, name, None, None, ok=False, target="runs",
                        details={"error": summary[:300], "traceback": traceback.format_exc(limit=-4)}))
        return
    rows.extend(result if isinstance(result, list) else [result])


def fmt_size(n: int) -> str:
    exponent = int(math.log10(n))
    return f"1e{exponent}" if n == 10**exponent else str(n)


def backend_cases(name: str, s: Settings, rows: list[Row]) -> None:
    import numpy as np

    import arraylayer as al

    fw = NATIVES[name]()
    env = {**fw.env, "al": al}
    rng = np.random.default_rng(0)

    def tiny() -> Row:
        env.update(a=fw.array(np.array([1.5], np.float32)), b=fw.array(np.array([2.25], np.float32)))
        return timed_row(name, "tiny: add 1-element float32", env, f"{fw.add}(a, b)", "al.add(a, b)",
                         TINY_TARGET[name], s.min_time, s.repeats)

    def mixed_arrays() -> Row:
        env.update(a=fw.array(np.array([1.5], np.float32)), i=fw.array(np.array([3], np.int32)))
        return timed_row(name, "mixed: float32 + int32", env, f"{fw.add}(a, {fw.cast.format('i')})",
                         "al.add(a, i)", TINY_TARGET[name], s.min_time, s.repeats)

    def mixed_scalar() -> Row:
        env.update(a=fw.array(np.array([1.5], np.float32)))
        return timed_row(name, "mixed: float32 + Python float", env, f"{fw.add}(a, 2.5)", "al.add(a, 2.5)",
                         TINY_TARGET[name], s.min_time, s.repeats)

    case(rows, name, "tiny: add 1-element float32", tiny)
    case(rows, name, "mixed: float32 + int32", mixed_arrays)
    case(rows, name, "mixed: float32 + Python float", mixed_scalar)
    array_cases(name, fw, env, s, rows)

    for n in s.large_sizes:
        def large(n: int = n) -> Row:
            env.update(a=fw.array(rng.standard_normal(n, np.float32)), b=fw.array(rng.standard_normal(n, np.float32)))
            return timed_row(name, f"large: add {fmt_size(n)} float32", env, fw.sync.format(f"{fw.add}(a, b)"),
                             fw.sync.format("al.add(a, b)"), LARGE_TARGET, s.large_min_time, s.large_repeats)

        case(rows, name, f"large: add {fmt_size(n)} float32", large)

    def allocations() -> Row:
        n = s.large_sizes[0]
        a, b = fw.array(rng.standard_normal(n, np.float32)), fw.array(rng.standard_normal(n, np.float32))
        count = ALLOCATIONS[name]
        native_add = eval(fw.add, env)
        native, native_details = count(native_add, a, b)
        ours, details = count(al.add, a, b)
        return Row(name, f"large: arrays allocated per add ({fmt_size(n)})", native, ours, "count", None, "== 1",
                   ours == 1, {"method": count.__doc__.split(".")[0], "native": native_details, "arraylayer": details})

    case(rows, name, f"large: arrays allocated per add ({fmt_size(s.large_sizes[0])})", allocations)

    if fw.compile is not None:
        compiled_cases(fw, env, s, rows)


def array_cases(name: str, fw: Native, env: dict[str, Any], s: Settings, rows: list[Row]) -> None:
    """The Array path: each statement on Arrays against the arraylayer call on the natives inside."""
    import importlib

    import numpy as np

    import arraylayer as al

    def setup() -> None:
        a, b = fw.array(np.array([1.5], np.float32)), fw.array(np.array([2.25], np.float32))
        c = fw.array(np.array([1.5, 2.5, 3.5, 4.5], np.float32))  # indexing needs more than one element
        env.update(a=a, b=b, c=c, A=al.Array(a), B=al.Array(b), C=al.Array(c), i32=al.int32,
                   xp=importlib.import_module(f"arraylayer.xp.arrays.{name}"))

    add = f"{fw.add}(a, b)"
    for label, native, ours, target in (("Array: xp.add(A, B)", add, "xp.add(A, B)", ARRAY_TARGET),
                                        ("Array: A + B", add, "A + B", ARRAY_TARGET),
                                        ("Array: al.add(A, B)", add, "al.add(A, B)", ARRAY_TARGET),
                                        ("Array: xp.sum(A)", "al.sum(a)", "xp.sum(A)", ARRAY_REDUCTION_TARGET),
                                        ("Array: xp.mean(A)", "al.mean(a)", "xp.mean(A)", ARRAY_REDUCTION_TARGET),
                                        ("Array: xp.max(A)", "al.max(a)", "xp.max(A)", ARRAY_REDUCTION_TARGET),
                                        ("Array: C[1]", "c[1]", "C[1]", ARRAY_TARGET),
                                        ("Array: C[1:3]", "c[1:3]", "C[1:3]", ARRAY_TARGET),
                                        # (Array has no astype method: issue 42's A.astype is xp.astype here)
                                        ("Array: xp.astype(A, int32)", "al.astype(a, i32)", "xp.astype(A, i32)",
                                         ARRAY_TARGET)):
        def run(label: str = label, native: str = native, ours: str = ours, target: float = target) -> Row:
            setup()
            return timed_row(name, label, env, native, ours, target, s.min_time, s.repeats)

        case(rows, name, label, run)


def compiled_cases(fw: Native, env: dict[str, Any], s: Settings, rows: list[Row]) -> None:
    import numpy as np

    rng = np.random.default_rng(1)
    width = s.mlp_width
    label = f"compiled: MLP 64x{width} x3 ({fw.compiler})"

    def setup() -> None:
        x = fw.array(rng.standard_normal((64, width), np.float32))
        params = tuple(
            (fw.array((rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)),
             fw.array(rng.standard_normal(width, np.float32) * 0.1))
            for _ in range(3)
        )
        env.update(x=x, params=params, f_native=fw.compile(fw.mlp), f_al=fw.compile(mlp_arraylayer))

    def mlp() -> Row:
        setup()
        return timed_row(fw.name, label, env, fw.sync.format("f_native(x, params)"), fw.sync.format("f_al(x, params)"),
                         COMPILED_TARGET, s.min_time * 2.5, s.mlp_repeats, tolerance=1e-4)

    case(rows, fw.name, label, mlp)
    if fw.name == "torch":
        def graph_breaks() -> Row:
            import torch

            if "x" not in env:
                setup()
            native = torch._dynamo.explain(fw.mlp)(env["x"], env["params"])
            ours = torch._dynamo.explain(mlp_arraylayer)(env["x"], env["params"])
            # explain() does not count a break in a frame with no tensor operation before it;
            # fullgraph=True refuses every break
            try:
                torch.compile(mlp_arraylayer, backend="eager", fullgraph=True)(env["x"], env["params"])
                fullgraph = "compiles"
            except Exception as error:
                fullgraph = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"[:300]
            ok = ours.graph_break_count == 0 and ours.graph_count == 1 and fullgraph == "compiles"
            return Row(fw.name, "compiled: MLP graph breaks (torch.compile)", native.graph_break_count,
                       ours.graph_break_count, "count", None, "== 0", ok,
                       {"reasons": [str(r.reason) for r in ours.break_reasons], "graphs": ours.graph_count,
                        "fullgraph": fullgraph})

        case(rows, fw.name, "compiled: MLP graph breaks (torch.compile)", graph_breaks)


# -- import ---------------------------------------------------------------------------------------
_NATIVE_IMPORT = {
    "numpy": ("import numpy as np", "x = np.asarray([1.0, 2.0], dtype=np.float32); np.add(x, x)"),
    "jax": ("import jax.numpy as jnp",
            "x = jnp.asarray([1.0, 2.0], dtype=jnp.float32); jnp.add(x, x).block_until_ready()"),
    "torch": ("import torch", "x = torch.asarray([1.0, 2.0], dtype=torch.float32); torch.add(x, x)"),
    "tensorflow": ("import tensorflow as tf", "x = tf.constant([1.0, 2.0], dtype=tf.float32); tf.add(x, x)"),
}


def _child(imports: str, first_use: str) -> str:
    return ("import time; t0 = time.perf_counter()\n" + imports + "\nt1 = time.perf_counter()\n" + first_use
            + "\nt2 = time.perf_counter(); print(t1 - t0, t2 - t0)\n")


def _run_child(code: str) -> tuple[float, float]:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    first, second = out.stdout.split()[-2:]
    return float(first), float(second)


def import_rows(name: str, s: Settings) -> list[Row]:
    """set_backend(name) (+ a first add) in fresh interpreters vs import <framework> (+ the same add)."""
    imports, use = _NATIVE_IMPORT[name]
    native_code = _child(imports, use)
    ours_code = _child(f"import arraylayer as al; al.set_backend({name!r})",
                       "x = al.asarray([1.0, 2.0]); y = al.add(x, x); getattr(y, 'block_until_ready', int)()")
    natives, ourss = [], []
    for repeat in range(s.import_repeats):
        pair = (native_code, ours_code) if repeat % 2 == 0 else (ours_code, native_code)
        results = {code: _run_child(code) for code in pair}
        natives.append(results[native_code])
        ourss.append(results[ours_code])
    ours = statistics.median(t[1] for t in ourss)  # set_backend imports the framework at first use
    rows = []
    for k, (label, native_label) in enumerate([("import: set_backend+add vs import", imports),
                                               ("import: set_backend+add vs import+add", f"{imports}; {use}")]):
        native = statistics.median(t[k] for t in natives)
        rows.append(Row(name, label, native, ours, "s", ours / native, "info", None,
                        {"native": native_label, "arraylayer": ours_code, "delta_s": ours - native,
                         "repeats": s.import_repeats}))
    return rows


def backend_free_rows(s: Settings, rows: list[Row]) -> None:
    def import_arraylayer() -> Row:
        measured = import_cost(s.import_arraylayer_repeats)
        seconds, loaded = measured["median_s"], measured["frameworks_imported"]
        return Row("-", "import arraylayer (no framework)", None, seconds, "s", None,
                   f"< {IMPORT_TARGET_S * 1000:.0f} ms", seconds < IMPORT_TARGET_S and not loaded,
                   {"frameworks_imported": loaded, "repeats": s.import_arraylayer_repeats})

    def promotion() -> list[Row]:
        import numpy as np

        import arraylayer as al

        env = {"al": al, "np": np, "f32": al.float32, "i8": al.int8, "nf32": np.dtype("float32"),
               "ni8": np.dtype("int8")}
        out = []
        for label, native, ours in [("promotion: promote_types(f32, i8)", "np.promote_types(nf32, ni8)",
                                     "al.promote_types(f32, i8)"),
                                    ("promotion: result_type(f32, i8)", "np.result_type(nf32, ni8)",
                                     "al.result_type(f32, i8)")]:
            timing = paired(env, native, ours, s.min_time, s.repeats)
            seconds = timing.pop("arraylayer_s")
            limit = PROMOTION_TARGET[ours.partition("(")[0].removeprefix("al.")]
            out.append(Row("-", label, timing.pop("native_s"), seconds, "s", timing["ratio"],
                           f"<= {limit:.2f}x", timing["ratio"] <= limit,
                           {"native": native, "arraylayer": ours, **timing}))
        return out

    case(rows, "-", "import arraylayer", import_arraylayer)
    case(rows, "-", "promotion", promotion)


# -- report ---------------------------------------------------------------------------------------
def fmt_value(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "count":
        return str(int(value))
    for scale, suffix in ((1, "s"), (1e-3, "ms"), (1e-6, "us")):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}" if value / scale < 100 else f"{value / scale:.0f} {suffix}"
    return f"{value * 1e9:.0f} ns"


def table(rows: list[Row]) -> str:
    header = ("backend", "case", "native", "arraylayer", "ratio", "target", "ok")
    lines = [header]
    for r in rows:
        ours = "error" if "error" in r.details else fmt_value(r.arraylayer, r.unit)
        lines.append((r.backend, r.case, fmt_value(r.native, r.unit), ours,
                      "-" if r.ratio is None else f"{r.ratio:.2f}x", r.target,
                      "-" if r.ok is None else ("yes" if r.ok else "NO")))
    widths = [max(len(line[k]) for line in lines) for k in range(len(header))]
    right = {2, 3, 4}
    out = []
    for k, line in enumerate(lines):
        out.append("  ".join(cell.rjust(w) if i in right else cell.ljust(w)
                             for i, (cell, w) in enumerate(zip(line, widths, strict=True))).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def _commit() -> str:
    """The checkout measured: short commit id, "+changes" when the tree differs from it."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "arraylayer"],
                               capture_output=True, text=True, cwd=root, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def result_file(rows: list[Row], quick: bool, backends: list[str]) -> dict[str, Any]:
    """What ops.json holds: flat ``results`` rows (the table, with raw numbers) and per-row
    ``details`` (statements, loop sizes, ratio quartiles, allocation logs, errors)."""
    versions = {"python": sys.version.split()[0]}
    for module in BACKENDS:
        if module in sys.modules:
            versions[module] = getattr(sys.modules[module], "__version__", "?")
    results, details = [], []
    for r in rows:
        shown = "error" if "error" in r.details else fmt_value(r.arraylayer, r.unit)
        results.append({"backend": r.backend, "case": r.case, "native": fmt_value(r.native, r.unit),
                        "arraylayer": shown, "ratio": None if r.ratio is None else round(r.ratio, 3),
                        "target": r.target, "ok": r.ok, "unit": r.unit, "native_value": r.native,
                        "arraylayer_value": r.arraylayer})
        details.append({"backend": r.backend, "case": r.case,
                        **{k: v for k, v in r.details.items() if k != "traceback"}})
    from arraylayer.runtime.compiled_dispatch import ACTIVE

    return {"date": time.strftime("%Y-%m-%d %H:%M"), "commit": _commit(), "quick": quick,
            "dispatch": "compiled" if ACTIVE else "pure Python", "clock": CLOCK["timer"].__name__,
            "platform": platform.platform(),
            "cpus": os.cpu_count(), "backends": backends, "versions": versions, "settings": asdict(QUICK if quick else FULL),
            "results": results, "details": details}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (a smoke test)")
    parser.add_argument("--backend", action="append", choices=BACKENDS,
                        help="only this backend (repeatable); default: every installed one")
    parser.add_argument("--only", action="append", default=[], metavar="PREFIX",
                        help="only the cases whose name starts with PREFIX (repeatable), e.g. 'Array:'")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time loops by this thread's CPU time, not wall time (a shared, loaded machine)")
    parser.add_argument("--output", type=Path, default=None,
                        help="default: benchmarks/results/ops.json (ops.partial.json with --only)")
    args = parser.parse_args(argv)
    s = QUICK if args.quick else FULL
    ONLY[:] = args.only
    if args.cpu_time:
        CLOCK["timer"] = time.thread_time
    if args.output is None:
        args.output = Path(__file__).parent / "results" / ("ops.partial.json" if args.only else "ops.json")

    import arraylayer as al

    backends = args.backend or [b for b in BACKENDS if b in al.installed_backends()]
    started = time.perf_counter()
    rows: list[Row] = []
    print("import cases (fresh interpreters) ...", file=sys.stderr, flush=True)
    backend_free_rows(s, rows)
    for name in backends:
        case(rows, name, "import", lambda name=name: import_rows(name, s))
    for name in backends:
        print(f"{name} ...", file=sys.stderr, flush=True)
        backend_cases(name, s, rows)

    from arraylayer import __file__ as al_file
    from arraylayer.runtime.compiled_dispatch import ACTIVE

    print(table(rows))
    errors = [r for r in rows if "error" in r.details]
    for r in errors:
        print(f"\nerror in {r.backend} / {r.case}: {r.details['error']}")
    judged = [r for r in rows if r.ok is not None]
    print(f"\ndispatch: {'compiled (arraylayer._dispatch)' if ACTIVE else 'pure Python'}; "
          f"clock: {'thread CPU time' if args.cpu_time else 'wall time'}; arraylayer: {Path(al_file).parent}")
    print(f"{sum(r.ok for r in judged)} of {len(judged)} targets met"
          f"{' (--quick: a smoke test, figures not meaningful)' if args.quick else ''}; "
          f"{time.perf_counter() - started:.0f} s")

    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result_file(rows, args.quick, backends), indent=1, default=str) + "\n")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
