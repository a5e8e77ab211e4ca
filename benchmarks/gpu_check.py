"""Checks and timings on a GPU: placement, the low-precision casts and matmul, per-call cost.

The project's CI has no GPU; this script is what a session runs on a machine that has one
(``python benchmarks/gpu_check.py --output DIR``). Each check runs on its own: a failure is
recorded (with its exception) and the next check goes on, so one run reports everything.
Backends whose framework is absent, or has no GPU, are skipped with a line saying so.

What it checks, per backend with a GPU (torch, jax; TensorFlow where installed):

* placement: ``DEVICE`` for creation with ``device=``, under ``use_device``, for the results of
  element-wise functions, reductions, matmul and random draws, and ``to_device`` both ways;
* the same values on the GPU as on the CPU for a few functions (float32, 1e-6 relative);
* the low-precision casts (``arraylayer.lowp.cast``) on the GPU: every float16 bit pattern cast to
  each float8 format, compared bit for bit with ml_dtypes;
* ``lowp.scaled_matmul`` on the GPU against NumPy's bits, and torch's own float8 GEMM
  (``torch._scaled_mm``, where the GPU has it) against the same float32-accumulated product;
* per-call cost: ``al.add`` against the framework's own add on tiny and on 4096x4096 float32
  arrays, median of paired interleaved rounds (the GPU synchronised in each timing).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import arraylayer as al  # noqa: E402
from arraylayer import lowp  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gpu_check_more import native_decodes, run_more  # noqa: E402

RESULTS: dict[str, Any] = {}
DEVICE = "gpu:0"
FLOAT8 = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def check(name: str) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Run the decorated check now; record its value or its exception under ``name``."""
    def run(function: Callable[[], Any]) -> Callable[[], Any]:
        start = time.perf_counter()
        try:
            value = function()
            RESULTS[name] = {"ok": True, "value": value}
        except Exception as error:  # a check's failure is a finding, not the end of the run
            RESULTS[name] = {"ok": False, "error": f"{type(error).__name__}: {error}",
                             "where": traceback.format_exc().splitlines()[-3:]}
        RESULTS[name]["seconds"] = round(time.perf_counter() - start, 2)
        print(f"[{'ok' if RESULTS[name]['ok'] else 'FAILED'}] {name}: "
              f"{json.dumps(RESULTS[name].get('value', RESULTS[name].get('error')), default=str)[:600]}", flush=True)
        return function
    return run


def to_numpy(x: Any) -> np.ndarray:
    """``x`` copied to the CPU as a NumPy array (any backend's array)."""
    return np.asarray(al.to_backend(al.to_device(x, "cpu"), "numpy"))


def gpu_backends() -> list[str]:
    found = []
    try:
        import torch
        if torch.cuda.is_available():
            found.append("torch")
    except ImportError:
        pass
    try:
        import jax
        if any(d.platform == "gpu" for d in jax.devices()):
            found.append("jax")
    except Exception:
        pass
    try:
        import tensorflow as tf
        if tf.config.list_physical_devices("GPU"):
            found.append("tensorflow")
    except Exception:
        pass
    return found


def synchronizer(backend: str) -> Callable[[Any], Any]:
    """A function that waits until ``x`` is computed on the device."""
    if backend == "torch":
        import torch
        return (lambda x: None) if DEVICE == "cpu" else (lambda x: torch.cuda.synchronize())
    if backend == "jax":
        return lambda x: x.block_until_ready()
    return lambda x: x.numpy()


def paired_median(first: Callable[[], Any], second: Callable[[], Any], wait: Callable[[Any], Any],
                  rounds: int = 15, calls: int = 200) -> dict[str, float]:
    """Median over interleaved rounds of (time of ``first`` / time of ``second``), each timing
    ``calls`` calls and one wait for the device."""
    for f in (first, second):
        for _ in range(20):
            wait(f())
    ratios, times = [], {"first": [], "second": []}
    for _ in range(rounds):
        for label, f in (("first", first), ("second", second)):
            start = time.perf_counter()
            for _ in range(calls):
                y = f()
            wait(y)
            times[label].append((time.perf_counter() - start) / calls)
        ratios.append(times["first"][-1] / times["second"][-1])
    return {"ratio_median": round(statistics.median(ratios), 3),
            "arraylayer_us": round(statistics.median(times["first"]) * 1e6, 2),
            "native_us": round(statistics.median(times["second"]) * 1e6, 2)}


def run_backend(backend: str) -> None:
    al.set_backend(backend)

    @check(f"{backend}: placement")
    def placement() -> dict[str, str]:
        x = al.ones((4, 4), dtype="float32", device=DEVICE)
        seen = {"ones(device=)": al.dev(x), "add": al.dev(al.add(x, 1)), "sum": al.dev(al.sum(x)),
                "matmul": al.dev(al.matmul(x, x)), "astype bf16": al.dev(al.astype(x, "bfloat16")),
                "exp": al.dev(al.exp(x)), "mixed f16+f32": al.dev(al.add(al.astype(x, "float16"), x))}
        with al.use_device(DEVICE):
            seen["zeros under use_device"] = al.dev(al.zeros(3))
            seen["random.normal under use_device"] = al.dev(al.random.normal(al.random.key(0), (3,)))
        seen["random.normal(device=)"] = al.dev(al.random.normal(al.random.key(0), (3,), device=DEVICE))
        seen["to_device cpu"] = al.dev(al.to_device(x, "cpu"))
        seen["to_device back"] = al.dev(al.to_device(al.to_device(x, "cpu"), DEVICE))
        seen["Array"] = al.Array(x).device
        wrong = {k: v for k, v in seen.items() if v != ("cpu" if k == "to_device cpu" else DEVICE)}
        return {"seen": seen, "wrong": wrong}

    @check(f"{backend}: values gpu vs cpu")
    def values() -> dict[str, float]:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64, 64)).astype(np.float32)
        worst = {}
        for name, f in {"exp": al.exp, "tanh": al.tanh, "sum": lambda v: al.sum(v, axis=0),
                        "matmul": lambda v: al.matmul(v, v), "softmax": lambda v: al.nn.softmax(v, axis=-1),
                        "cumulative_sum": lambda v: al.cumulative_sum(v, axis=1)}.items():
            on_gpu = to_numpy(f(al.asarray(a, device=DEVICE)))
            on_cpu = to_numpy(f(al.asarray(a, device="cpu")))
            worst[name] = float(np.max(np.abs(on_gpu - on_cpu) / (np.abs(on_cpu) + 1e-6)))
        return worst

    @check(f"{backend}: lowp casts bit-exact on gpu (every float16 pattern)")
    def casts() -> dict[str, int]:
        patterns = np.arange(2**16, dtype=np.uint16).view(np.float16)
        source = al.asarray(patterns.astype(np.float32), device=DEVICE)
        differ = {}
        for name in FLOAT8 + ("float8_e8m0fnu", "float4_e2m1fn", "float6_e3m2fn", "int4"):
            try:
                got = lowp.cast(source, name)
                codes = np.asarray(to_numpy(lowp.encode(source, name, native=False))).astype(np.uint8)
            except Exception as error:
                differ[name] = f"{type(error).__name__}: {str(error)[:120]}"
                continue
            expected = patterns.astype(np.float32).astype(getattr(ml_dtypes, name)).view(np.uint8)
            ours = codes & np.uint8((1 << lowp.get_format(name).bits) - 1)
            differ[name] = {"differ": int(np.sum(ours != expected)), "device": al.dev(got)}
        return differ

    @check(f"{backend}: lowp scaled_matmul on gpu vs numpy bits")
    def scaled() -> dict[str, Any]:
        rng = np.random.default_rng(1)
        a = rng.standard_normal((256, 512)).astype(np.float32)
        b = rng.standard_normal((512, 128)).astype(np.float32)
        out = {}
        for name in ("float8_e4m3fn", "float8_e5m2"):
            al.set_backend("numpy")
            qa, sa = lowp.quantize(a, name)
            qb, sb = lowp.quantize(b, name)
            expected = np.asarray(lowp.scaled_matmul(qa, sa, qb, sb, name, name))
            al.set_backend(backend)
            ga, gb = al.asarray(a, device=DEVICE), al.asarray(b, device=DEVICE)
            qga, sga = lowp.quantize(ga, name)
            qgb, sgb = lowp.quantize(gb, name)
            got = lowp.scaled_matmul(qga, sga, qgb, sgb, name, name)
            got_np = np.asarray(to_numpy(got))
            out[name] = {"device": al.dev(got), "max_err_over_max": float(np.max(np.abs(got_np - expected)) / np.max(np.abs(expected))),
                         "bits_equal": bool(np.array_equal(got_np.view(np.uint32), expected.view(np.uint32)))}
        return out

    if backend == "torch":
        @check("torch: native float8 GEMM (torch._scaled_mm) vs float32-accumulated product")
        def scaled_mm() -> dict[str, Any]:
            import torch
            rng = np.random.default_rng(2)
            a = torch.tensor(rng.standard_normal((256, 512)), dtype=torch.float32, device="cuda")
            b = torch.tensor(rng.standard_normal((128, 512)), dtype=torch.float32, device="cuda")
            qa, qb = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
            one = torch.tensor(1.0, device="cuda")
            native = torch._scaled_mm(qa, qb.t(), scale_a=one, scale_b=one, out_dtype=torch.float32)
            exact = qa.to(torch.float32) @ qb.to(torch.float32).t()
            rel = ((native - exact).abs().max() / exact.abs().max()).item()
            return {"capability": list(torch.cuda.get_device_capability()), "max_err_over_max_vs_f32_product": rel,
                    "bits_equal": bool(torch.equal(native, exact))}

        @check("torch: float8 kernels on cuda (native ops on float8_e4m3fn tensors)")
        def float8_kernels() -> dict[str, str]:
            import torch
            x = torch.ones(8, device="cuda").to(torch.float8_e4m3fn)
            seen = {}
            for name, f in {"add": lambda: x + x, "mul": lambda: x * x, "sum": lambda: x.sum(), "abs": lambda: x.abs(),
                            "matmul": lambda: x.reshape(2, 4) @ x.reshape(4, 2), "exp": lambda: x.exp(),
                            "max": lambda: x.max()}.items():
                try:
                    seen[name] = str(f().dtype)
                except Exception as error:
                    seen[name] = f"{type(error).__name__}: {str(error).splitlines()[0][:100]}"
            return seen

    @check(f"{backend}: float8 dtypes through the public API on gpu (astype, add, exp, sum vs NumPy)")
    def float8_api() -> dict[str, Any]:
        rng = np.random.default_rng(4)
        a = (rng.standard_normal(4096) * 8).astype(np.float32)
        b = (rng.standard_normal(4096) * 8).astype(np.float32)
        out = {}
        for name in [d.name for d in al.all_float8_dtypes if d in al.valid_low_precision_dtypes(backend)]:
            expected = {}
            with al.use_backend("numpy"):
                x, y = al.astype(al.asarray(a), name), al.astype(al.asarray(b), name)
                for op, f in (("astype", lambda u, v: u), ("add", al.add), ("exp", lambda u, v: al.exp(u)),
                              ("sum", lambda u, v: al.sum(u))):
                    expected[op] = np.asarray(f(x, y)).view(np.uint8)
            gx = al.astype(al.asarray(a, device=DEVICE), name)
            gy = al.astype(al.asarray(b, device=DEVICE), name)
            seen = {}
            for op, f in (("astype", lambda u, v: u), ("add", al.add), ("exp", lambda u, v: al.exp(u)),
                          ("sum", lambda u, v: al.sum(u))):
                try:
                    got = f(gx, gy)
                    bits = np.asarray(to_numpy(got)).view(np.uint8)
                    seen[op] = {"device": al.dev(got), "differ": int(np.sum(bits != expected[op]))}
                except Exception as error:
                    seen[op] = f"{type(error).__name__}: {str(error)[:150]}"
            out[name] = seen
        return out

    @check(f"{backend}: per-call al.add vs native add on gpu")
    def per_call() -> dict[str, Any]:
        wait = synchronizer(backend)
        native_add = {"torch": lambda: __import__("torch").add, "jax": lambda: __import__("jax").numpy.add,
                      "tensorflow": lambda: __import__("tensorflow").add}[backend]()
        out = {}
        for label, shape, calls in (("tiny (3,)", (3,), 300), ("4096x4096", (4096, 4096), 20)):
            a = al.ones(shape, dtype="float32", device=DEVICE)
            b = al.ones(shape, dtype="float32", device=DEVICE)
            out[label] = paired_median(lambda a=a, b=b: al.add(a, b), lambda a=a, b=b: native_add(a, b), wait, calls=calls)
        return out

    @check(f"{backend}: lowp.cast to float8_e4m3fn vs the framework's own cast on gpu (2**22 values)")
    def cast_speed() -> dict[str, Any]:
        wait = synchronizer(backend)
        x = al.asarray(np.random.default_rng(3).standard_normal(2**22).astype(np.float32) * 100, device=DEVICE)
        if backend == "torch":
            import torch
            native = lambda: x.to(torch.float8_e4m3fn)  # noqa: E731
        elif backend == "jax":
            import jax.numpy as jnp
            native = lambda: x.astype(jnp.float8_e4m3fn)  # noqa: E731
        else:
            import tensorflow as tf
            native = lambda: tf.cast(x, tf.dtypes.experimental.float8_e4m3fn)  # noqa: E731
        return paired_median(lambda: lowp.cast(x, "float8_e4m3fn"), native, wait, calls=20)

    run_more(backend, check, DEVICE, to_numpy, paired_median, synchronizer(backend))
    native_decodes(backend, check, DEVICE, to_numpy)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=None, help="folder for gpu_check.json")
    parser.add_argument("--backend", action="append", default=None)
    parser.add_argument("--device", default="gpu:0", help="cpu: a dry run of the script on a machine without a GPU")
    args = parser.parse_args()
    global DEVICE
    DEVICE = args.device
    import importlib.metadata as metadata
    versions = {}
    for package in ("numpy", "ml_dtypes", "torch", "jax", "jaxlib", "tensorflow"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    RESULTS["environment"] = {"python": platform.python_version(), "versions": versions}
    found = gpu_backends()
    RESULTS["environment"]["gpu_backends"] = found
    print("environment:", json.dumps(RESULTS["environment"]), flush=True)
    for backend in args.backend or (found if DEVICE != "cpu" else ["torch", "jax"]):
        run_backend(backend)
    report(args.output, "gpu_check.json")


def report(output: Path | None, filename: str) -> None:
    """Write RESULTS to ``output/filename`` (where given) and print which checks failed."""
    if output:
        output.mkdir(parents=True, exist_ok=True)
        (output / filename).write_text(json.dumps(RESULTS, indent=1, default=str))
    failed = [name for name, result in RESULTS.items() if isinstance(result, dict) and result.get("ok") is False]
    print(f"{len(failed)} checks failed: {failed}")


if __name__ == "__main__":
    main()
