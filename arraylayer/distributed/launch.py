"""``python -m arraylayer launch --nproc N SCRIPT [ARGS...]``: start N ranks, prefix their output, stop all on a failure.

Each rank gets the launcher's variables (``ARRAYLAYER_RANK`` ...) and torchrun's (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``) on a free port. When a rank exits
non-zero the others are terminated (then killed) and the launcher exits with that status, naming the rank.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from arraylayer.cli import Command, CommandError

__all__ = ["COMMAND", "free_port", "run_launch"]


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free now on ``host`` (the operating system's choice)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nproc", type=int, required=True, help="processes on this node")
    parser.add_argument("--backend", default=None, help="arraylayer backend the ranks use (ARRAYLAYER_BACKEND)")
    parser.add_argument("--nnodes", type=int, default=1)
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--master-addr", default="127.0.0.1")
    parser.add_argument("--master-port", type=int, default=0, help="0: a free port (one node only)")
    parser.add_argument("script")
    parser.add_argument("script_args", nargs=argparse.REMAINDER)


def _pump(stream, rank: int, lock: threading.Lock) -> None:
    for line in iter(stream.readline, b""):
        with lock:
            sys.stdout.buffer.write(f"[rank {rank}] ".encode() + line)
            sys.stdout.buffer.flush()


def _stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 3.0
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _status(code: int) -> str:
    return f"killed by {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"


def run_launch(args: argparse.Namespace) -> int:
    if args.nproc < 1 or args.nnodes < 1 or not 0 <= args.node_rank < args.nnodes:
        raise CommandError("--nproc and --nnodes must be >= 1 and --node-rank in [0, nnodes).")
    if args.master_port == 0 and args.nnodes > 1:
        raise CommandError("--master-port is required with --nnodes > 1.")
    port = args.master_port or free_port(args.master_addr)
    world = args.nproc * args.nnodes
    lock = threading.Lock()
    procs, pumps = [], []
    for local in range(args.nproc):
        rank = args.node_rank * args.nproc + local
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        for prefix in ("ARRAYLAYER_", ""):
            env.update({f"{prefix}RANK": str(rank), f"{prefix}WORLD_SIZE": str(world),
                        f"{prefix}LOCAL_RANK": str(local), f"{prefix}MASTER_ADDR": args.master_addr,
                        f"{prefix}MASTER_PORT": str(port)})
        env["LOCAL_WORLD_SIZE"] = str(args.nproc)
        if args.backend:
            env["ARRAYLAYER_BACKEND"] = args.backend
        p = subprocess.Popen([sys.executable, "-u", args.script, *args.script_args], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(p)
        pumps.append(threading.Thread(target=_pump, args=(p.stdout, rank, lock), daemon=True))
        pumps[-1].start()
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = next(((i, c) for i, c in enumerate(codes) if c not in (None, 0)), None)
            if failed is not None:
                i, code = failed
                _stop(procs)
                for t in pumps:
                    t.join(timeout=1.0)
                print(f"arraylayer launch: rank {args.node_rank * args.nproc + i} failed ({_status(code)}); "
                      f"stopped the other ranks", file=sys.stderr, flush=True)
                return code if code > 0 else 128 - code
            if all(c == 0 for c in codes):
                for t in pumps:
                    t.join(timeout=5.0)
                return 0
            time.sleep(0.05)
    except KeyboardInterrupt:
        _stop(procs)
        return 130


COMMAND = Command(name="launch", help="run a script on N processes (the torchrun of arraylayer)",
                  arguments=_arguments, run=run_launch)
