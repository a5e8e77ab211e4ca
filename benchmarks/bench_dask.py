"""The dask backend, measured: an out-of-core reduction and the cost of building graphs.

1. Out of core. An array larger than this machine's memory (default 32 GB of float32, made
   lazily by dask's random generator in chunks of 64 MiB) is reduced to its mean, standard
   deviation and maximum through arraylayer, and the same computation is written with
   ``dask.array`` directly; each runs on a LocalCluster of 1 and of 2 worker processes (one
   cluster per worker count, started once, so that start-up is not timed). The two are run in
   alternating pairs (A B, then B A, ...), several rounds. Printed per run and in summary:
   seconds, throughput (GB/s), the peak memory of the whole process tree (this process and the
   workers, sampled every 50 ms), the ratio arraylayer / dask.array as the median of the rounds'
   paired ratios with their range (target <= 1.05x), and the speed-up from 1 to 2 workers
   (medians).
2. Graph building. The time to build one call's graph (no computation) through arraylayer and
   through dask.array, alternating in every repeat; the median of the paired ratios (target
   <= 1.2x).

Results are printed and written to benchmarks/results/dask.json.

Run: PYTHONPATH=. python benchmarks/bench_dask.py [--gigabytes 32] [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
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


def _cluster(workers: int) -> distributed.LocalCluster:
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                    memory_limit="6GiB", dashboard_address=":0", silence_logs=logging.ERROR)


def out_of_core(client: distributed.Client, gigabytes: float,
                written: Callable[[Any], tuple[Any, ...]]) -> dict[str, float]:
    """One timed reduction of the lazily generated array on the client's cluster."""
    x = _source(gigabytes)
    with PeakMemory() as memory:
        start = time.perf_counter()
        values = client.compute(list(written(x)), sync=True)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "gb_per_s": gigabytes * 2**30 / 1e9 / seconds, "peak_gib": memory.peak / 2**30,
            "mean": float(values[0]), "std": float(values[1]), "max": float(values[2])}


WRITTEN_AS: dict[str, Callable[[Any], tuple[Any, ...]]] = {"dask.array": through_dask,
                                                           "arraylayer": through_arraylayer}


def rounds_on(workers: int, gigabytes: float, rounds: int) -> dict[str, list[dict[str, float]]]:
    """``rounds`` pairs of runs on one cluster, the order alternating (A B, B A, ...), so that
    drifting load and the cluster's warming up hit both alike."""
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in WRITTEN_AS}
    with _cluster(workers) as cluster, distributed.Client(cluster) as client:
        for round_ in range(rounds):
            order = list(WRITTEN_AS) if round_ % 2 == 0 else list(reversed(WRITTEN_AS))
            for label in order:
                run = out_of_core(client, gigabytes, WRITTEN_AS[label])
                runs[label].append(run)
                print(f"  {label:<11} {workers} worker(s): {run['seconds']:7.1f} s  {run['gb_per_s']:.2f} GB/s  "
                      f"peak {run['peak_gib']:.2f} GiB  mean {run['mean']:.6f}", flush=True)
    return runs


def summary(runs: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    """Medians per label and the median (and range) of the paired ratios arraylayer / dask.array."""
    paired = [ours["seconds"] / theirs["seconds"] for ours, theirs in zip(runs["arraylayer"], runs["dask.array"], strict=True)]
    medians = {label: statistics.median(run["seconds"] for run in label_runs) for label, label_runs in runs.items()}
    peaks = {label: max(run["peak_gib"] for run in label_runs) for label, label_runs in runs.items()}
    return {"median_seconds": medians, "peak_gib": peaks, "paired_ratios": paired,
            "ratio": statistics.median(paired), "ratio_range": [min(paired), max(paired)]}


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


def _per_call(fn: Callable[[], Any], repeats: int) -> float:
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def graph_building(repeats: int, rounds: int = 9) -> dict[str, dict[str, float]]:
    """Per function: arraylayer's and dask.array's time per call (medians), alternating in every
    round so that drifting load affects both alike, and the median of the paired ratios."""
    results = {}
    for name, (ours, theirs) in BUILDS.items():
        ours(), theirs()
        pairs = [(_per_call(ours, repeats), _per_call(theirs, repeats)) for _ in range(rounds)]
        results[name] = {"arraylayer_us": statistics.median(a for a, _ in pairs) * 1e6,
                         "dask_us": statistics.median(b for _, b in pairs) * 1e6,
                         "ratio": statistics.median(a / b for a, b in pairs)}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=32.0, help="size of the reduced array (GiB)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating pairs of runs per cluster")
    parser.add_argument("--quick", action="store_true", help="1 GiB, 1 round and fewer repeats (a smoke run)")
    args = parser.parse_args()
    gigabytes = 1.0 if args.quick else args.gigabytes
    rounds = 1 if args.quick else args.rounds
    repeats = 20 if args.quick else 200
    total = psutil.virtual_memory().total / 2**30
    print(f"graph building, microseconds per call (medians of 9 alternating rounds of {repeats} calls)")
    builds = graph_building(repeats)
    for name, row in builds.items():
        print(f"  {name:<22}{row['arraylayer_us']:>10.1f}{row['dask_us']:>10.1f}   ratio {row['ratio']:.3f}")
    print(f"out of core: mean, std and max of {gigabytes:g} GiB of float32 (this machine: {total:.1f} GiB of memory), "
          f"{rounds} alternating rounds per cluster")
    out_of_core_runs = {workers: rounds_on(workers, gigabytes, rounds) for workers in (1, 2)}
    summaries = {workers: summary(runs) for workers, runs in out_of_core_runs.items()}
    for workers, row in summaries.items():
        low, high = row["ratio_range"]
        print(f"  {workers} worker(s): arraylayer / dask.array {row['ratio']:.3f} (median of {rounds} pairs; "
              f"{low:.3f}-{high:.3f}); peak {max(row['peak_gib'].values()):.2f} GiB")
    speedup = {label: summaries[1]["median_seconds"][label] / summaries[2]["median_seconds"][label]
               for label in WRITTEN_AS}
    print(f"  speed-up from 1 to 2 workers (medians): arraylayer {speedup['arraylayer']:.2f}x, dask.array "
          f"{speedup['dask.array']:.2f}x")
    RESULTS.parent.mkdir(exist_ok=True)
    record = {"gigabytes": gigabytes, "rounds": rounds, "memory_gib": total, "cores": psutil.cpu_count(),
              "graph_building": builds, "out_of_core": {str(w): runs for w, runs in out_of_core_runs.items()},
              "summary": {str(w): row for w, row in summaries.items()}, "speedup": speedup}
    RESULTS.write_text(json.dumps(record, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
