"""One data-parallel training step on 2 processes: arraylayer against each framework's own data
parallelism on the same model (issue 41: at most 1.05x).

    python benchmarks/bench_dp_step.py --backend all [--compile] [--launches 3]

launches, once per engine and launch, ``python -m arraylayer launch --nproc 2 --backend NAME`` of this
script, collects rank 0's result lines and writes benchmarks/results/dp_step.json (with the load before
and after). Each engine's steps are in their own module, all from dp_step_model.py's model (an MLP
64-256-256-10, tanh, MSE, Adam, 64 rows per rank) and initial parameters, interleaved step by step
after a warm-up whose losses must agree:

- torch (dp_step_torch.py): ``data_parallel`` against ``DistributedDataParallel``, eagerly, and with
  ``--compile`` under ``torch.compile`` too;
- jax (dp_step_jax.py): ``replicated_step`` against ``jax.jit`` of a ``shard_map`` with ``lax.pmean``;
- tensorflow (dp_step_tf.py): ``replicated_step`` against ``MultiWorkerMirroredStrategy.run`` in a
  ``tf.function``.

Under the launcher (``--worker NAME``, which the driver passes) it runs that engine's cases.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time
from typing import Any

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
#: backend -> the module of its steps (in this folder)
MODULES = {"torch": "dp_step_torch", "jax": "dp_step_jax", "tensorflow": "dp_step_tf"}


def worker(backend: str, compiled: bool) -> None:
    import importlib

    import arraylayer.distributed as dist

    dist.initialize(timeout=120)
    module = importlib.import_module(MODULES[backend])
    module.run(False)
    if compiled and backend == "torch":  # jax and tensorflow are compiled already (their idiom)
        module.run(True)
    dist.barrier()
    dist.shutdown()


def launch(backend: str, compiled: bool) -> list[dict[str, Any]]:
    """One launch of 2 ranks on ``backend``'s engine: rank 0's result lines."""
    from dp_step_model import MARK

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               TF_CPP_MIN_LOG_LEVEL="3", OMP_NUM_THREADS="1")
    env.pop("TF_CONFIG", None)
    command = [sys.executable, "-m", "arraylayer", "launch", "--nproc", "2", "--backend", backend, str(HERE / "bench_dp_step.py"),
               "--worker", backend] + ["--compile"] * compiled
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    if done.returncode:
        raise SystemExit(f"{backend} launch failed ({done.returncode}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
    lines = [line.split(MARK, 1)[1] for line in done.stdout.splitlines() if line.startswith(f"[rank 0] {MARK} ")]
    return [json.loads(line) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["all", *MODULES], default="all")
    parser.add_argument("--compile", action="store_true", help="torch: the torch.compile case too")
    parser.add_argument("--launches", type=int, default=1, help="launches per engine, interleaved over the engines")
    parser.add_argument("--worker", choices=list(MODULES), help=argparse.SUPPRESS)
    parser.add_argument("--out", default=str(HERE / "results" / "dp_step.json"))
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.compile)
    backends = list(MODULES) if args.backend == "all" else [args.backend]
    load_before, runs = os.getloadavg(), []
    for index in range(args.launches):
        for backend in backends:
            for line in launch(backend, args.compile):
                line["launch"] = index
                runs.append(line)
                print(f"{line['backend']:10s} {line['mode']:11s} launch {index}: "
                      + "  ".join(f"{k} {v['median_ms']:7.2f} ms" for k, v in line["cases"].items())
                      + f"  ratio {line['ratio']:.3f}", flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    result = {"benchmark": "dp_step", "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": commit,
              "cpus": os.cpu_count(), "load": [round(load_before[0], 2), round(os.getloadavg()[0], 2)], "runs": runs}
    pathlib.Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"load {result['load'][0]} -> {result['load'][1]}; wrote {args.out}")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
