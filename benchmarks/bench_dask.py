"""The dask backend, measured: an out-of-core reduction and the cost of building graphs.

1. Out of core. An array larger than this machine's memory (default 32 GB of float32, made
   lazily by dask's random generator in chunks of 64 MiB) is reduced to its mean, standard
   deviation and maximum through arraylayer, and the same computation is written with
   ``dask.array`` directly; each runs on a LocalCluster of 1 and of 2 worker processes. Printed:
   seconds, throughput (GB/s), the peak memory of the whole process tree (this process and the
   workers, sampled every 50 ms), the ratio arraylayer / dask.array (target <= 1.05x) and the
   speed-up from 1 to 2 workers. Each configuration runs twice, in the order A B B A, and the
   faster run of each counts.
2. Graph building. The time to build one call's graph (no computation) through arraylayer and
   through dask.array, best of many, for a few functions (target <= 1.2x).

Results are printed and written to benchmarks/results/dask.json.

Run: PYTHONPATH=. python benchmarks/bench_dask.py [--gigabytes 32] [--quick]
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.array as da
import distributed
import numpy as np
import psutil

import arraylayer as al

RESULTS = Path(__file__).resolve().parent / "results" / "dask.json"
CHUNK_ROWS = 4096  # rows of 4096 float32: 64 MiB per chunk
COLUMNS = 4096


# -- out of core -------------------------------------------------------------------------------------------
def _source(gigabytes: float) -> Any:
    rows = int(gigabytes * 2**30 / (4 * COLUMNS))
    return da.random.default_rng(0).random((rows, COLUMNS), dtype=np.float32, chunks=(CHUNK_ROWS, COLUMNS))


def through_arraylayer(x: Any) -> tuple[Any, ...]:
    return al.mean(x), al.std(x), al.max(x)


def through_dask(x: Any) -> tuple[Any, ...]:
    return da.mean(x), da.std(x), da.max(x)


class PeakMemory:
    """The largest resident memory of this process and its children, sampled in a thread."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = psutil.Process()
        while not self._stop.is_set():
            total = 0
            for process in [me, *me.children(recursive=True)]:
                try:
                    total += process.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.05)

    def __enter__(self) -> PeakMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self._stop.set()
        self._thread.join()


def out_of_core(gigabytes: float, workers: int, written: Callable[[Any], tuple[Any, ...]]) -> dict[str, float]:
    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       memory_limit="6GiB", dashboard_address=":0", silence_logs=logging.ERROR)
    with distributed.Client(cluster) as client:
        x = _source(gigabytes)
        with PeakMemory() as memory:
            start = time.perf_counter()
            values = client.compute(list(written(x)), sync=True)
            seconds = time.perf_counter() - start
    cluster.close()
    return {"seconds": seconds, "gb_per_s": gigabytes * 2**30 / 1e9 / seconds, "peak_gib": memory.peak / 2**30,
            "mean": float(values[0]), "std": float(values[1]), "max": float(values[2])}


# -- graph building -----------------------------------------------------------------------------------------
X = da.ones((4000, 4000), dtype=np.float32, chunks=(1000, 1000))
Y = da.ones((4000, 4000), dtype=np.float32, chunks=(1000, 1000))

#: name -> (arraylayer call, dask.array call), the same graph
BUILDS: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "add": (lambda: al.add(X, Y), lambda: X + Y),
    "multiply by a scalar": (lambda: al.multiply(X, 2.5), lambda: X * np.float32(2.5)),
    "exp": (lambda: al.exp(X), lambda: da.exp(X)),
    "sum over an axis": (lambda: al.sum(X, axis=0), lambda: da.sum(X, axis=0)),
    "mean": (lambda: al.mean(X), lambda: da.mean(X)),
    "matmul": (lambda: al.matmul(X, Y), lambda: X @ Y),
}


def _best(fn: Callable[[], Any], repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - start) / repeats)
    return best


def graph_building(repeats: int) -> dict[str, dict[str, float]]:
    results = {}
    for name, (ours, theirs) in BUILDS.items():
        # measured alternately, twice each, so that drifting load affects both alike
        ours_s = min(_best(ours, repeats), _best(ours, repeats))
        theirs_s = min(_best(theirs, repeats), _best(theirs, repeats))
        results[name] = {"arraylayer_us": ours_s * 1e6, "dask_us": theirs_s * 1e6, "ratio": ours_s / theirs_s}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=32.0, help="size of the reduced array (GiB)")
    parser.add_argument("--quick", action="store_true", help="1 GiB and fewer repeats (a smoke run)")
    args = parser.parse_args()
    gigabytes = 1.0 if args.quick else args.gigabytes
    total = psutil.virtual_memory().total / 2**30
    print(f"graph building, microseconds per call (best of 5 x {20 if args.quick else 200} calls)")
    builds = graph_building(20 if args.quick else 200)
    for name, row in builds.items():
        print(f"  {name:<22}{row['arraylayer_us']:>10.1f}{row['dask_us']:>10.1f}   ratio {row['ratio']:.3f}")
    print(f"out of core: mean, std and max of {gigabytes:g} GiB of float32 (this machine: {total:.1f} GiB of memory)")
    runs: dict[str, dict[str, float]] = {}
    written_as = {"dask.array": through_dask, "arraylayer": through_arraylayer}
    for workers in (1, 2):
        # ABBA order, the faster of each label's two runs: drifting load hits both alike
        for label in ("dask.array", "arraylayer", "arraylayer", "dask.array"):
            run = out_of_core(gigabytes, workers, written_as[label])
            print(f"  {label:<11} {workers} worker(s): {run['seconds']:7.1f} s  {run['gb_per_s']:.2f} GB/s  "
                  f"peak {run['peak_gib']:.2f} GiB  mean {run['mean']:.6f}")
            key = f"{label}, {workers} worker(s)"
            if key not in runs or run["seconds"] < runs[key]["seconds"]:
                runs[key] = run
    ratio = {w: runs[f"arraylayer, {w} worker(s)"]["seconds"] / runs[f"dask.array, {w} worker(s)"]["seconds"]
             for w in (1, 2)}
    speedup = {label: runs[f"{label}, 1 worker(s)"]["seconds"] / runs[f"{label}, 2 worker(s)"]["seconds"]
               for label in ("arraylayer", "dask.array")}
    print(f"  arraylayer / dask.array: {ratio[1]:.3f} (1 worker), {ratio[2]:.3f} (2 workers)")
    print(f"  speed-up from 1 to 2 workers: arraylayer {speedup['arraylayer']:.2f}x, dask.array "
          f"{speedup['dask.array']:.2f}x")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"gigabytes": gigabytes, "memory_gib": total, "graph_building": builds,
                                   "out_of_core": runs, "ratio": ratio, "speedup": speedup}, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
