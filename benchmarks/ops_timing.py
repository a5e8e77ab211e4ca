"""bench_ops.py's timing: the settings of a run, a table row, and the paired interleaved timing of
a native statement against an arraylayer statement (see bench_ops.py's docstring)."""

from __future__ import annotations

import math
import statistics
import time
import timeit
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Settings:
    """Loop lengths and sizes: the full run, or --quick (a smoke test: figures not meaningful)."""

    min_time: float  # seconds per timed loop, dispatch-sized cases
    repeats: int  # interleaved pairs, dispatch-sized cases
    large_sizes: tuple[int, ...]
    large_min_time: float
    large_repeats: int
    mlp_width: int
    mlp_repeats: int
    import_repeats: int  # fresh interpreters per side, set_backend cases
    import_arraylayer_repeats: int


FULL = Settings(0.02, 21, (10**6, 10**7), 0.1, 15, 512, 15, 7, 15)
QUICK = Settings(0.002, 5, (10**5,), 0.005, 3, 64, 3, 1, 3)


@dataclass
class Row:
    """One line of the table. ``native``/``arraylayer`` are seconds per call (unit "s") or counts."""

    backend: str
    case: str
    native: float | None
    arraylayer: float | None
    unit: str = "s"
    ratio: float | None = None
    target: str = ""
    ok: bool | None = None
    details: dict[str, Any] = field(default_factory=dict)


# -- timing ---------------------------------------------------------------------------------------
def calibrate(timer: timeit.Timer, min_time: float) -> int:
    """The number of calls that makes one loop of ``timer`` last about ``min_time``."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= min_time / 10 or number >= 10**7:
            return max(1, math.ceil(number * min_time / max(elapsed, 1e-9)))
        number *= 10


#: the clock of the timed loops: wall time, or this thread's CPU time (--cpu-time: on a shared machine,
#: the time the process waits for a core is left out; what the call itself costs is kept)
CLOCK: dict[str, Any] = {"timer": time.perf_counter}


def paired(env: dict[str, Any], native: str, ours: str, min_time: float, repeats: int) -> dict[str, Any]:
    """Interleaved timing of two statements: medians per call and the median paired ratio."""
    t_native = timeit.Timer(native, globals=env, timer=CLOCK["timer"])
    t_ours = timeit.Timer(ours, globals=env, timer=CLOCK["timer"])
    t_native.timeit(3)  # warm-up: plan caches, compiled-function caches, lazy imports
    t_ours.timeit(3)
    number = calibrate(t_native, min_time)
    natives, ourss, ratios = [], [], []
    for repeat in range(repeats):
        if repeat % 2 == 0:
            n = t_native.timeit(number)
            o = t_ours.timeit(number)
        else:
            o = t_ours.timeit(number)
            n = t_native.timeit(number)
        natives.append(n / number)
        ourss.append(o / number)
        ratios.append(o / n)
    quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
    return {
        "native_s": statistics.median(natives),
        "arraylayer_s": statistics.median(ourss),
        "ratio": statistics.median(ratios),
        "ratio_iqr": [round(quartiles[0], 4), round(quartiles[2], 4)],
        "number": number,
        "repeats": repeats,
    }


def same_result(env: dict[str, Any], native: str, ours: str, tolerance: float = 1e-6) -> None:
    """Both statements give the same dtype and values, or AssertionError saying how they differ."""
    import numpy as np

    from arraylayer import Dtype

    want, got = eval(native, env), eval(ours, env)
    assert Dtype(got.dtype) == Dtype(want.dtype), f"dtype: arraylayer {got.dtype}, native {want.dtype}"
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tolerance, atol=tolerance)


def timed_row(backend: str, case: str, env: dict[str, Any], native: str, ours: str, target: float,
              min_time: float, repeats: int, tolerance: float = 1e-6) -> Row:
    same_result(env, native, ours, tolerance)
    timing = paired(env, native, ours, min_time, repeats)
    return Row(backend, case, timing.pop("native_s"), timing.pop("arraylayer_s"), "s", timing["ratio"],
               f"<= {target:.2f}x", timing["ratio"] <= target, {"native": native, "arraylayer": ours, **timing})
