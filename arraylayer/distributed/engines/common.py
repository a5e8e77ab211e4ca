"""What the engines share: the leaves' wire form through NumPy, and a framework error as arraylayer's."""

from __future__ import annotations

import datetime
from typing import Any, NoReturn

import numpy as np

import arraylayer as al
from arraylayer.errors import DistributedError, DistributedTimeoutError

__all__ = ["as_numpy", "fail", "timedelta", "env", "free_ports"]

_TIMED_OUT = ("imeout", "imed out", "DEADLINE_EXCEEDED", "eadline")


def as_numpy(x: Any) -> np.ndarray:
    """A leaf of any backend as a NumPy array (a copy where the framework needs one)."""
    return np.asarray(al.to_backend(x, "numpy"))


def timedelta(seconds: float) -> datetime.timedelta:
    return datetime.timedelta(seconds=seconds)


def fail(error: BaseException, rank: int, what: str, timeout: float) -> NoReturn:
    """Raise ``error`` as DistributedTimeoutError (past the timeout) or DistributedError (a peer gone)."""
    message = (str(error).strip().splitlines() or [type(error).__name__])[0]
    if any(word in message or word in type(error).__name__ for word in _TIMED_OUT):
        raise DistributedTimeoutError(f"rank {rank}: {what} did not complete within {timeout:g} s: {message}") from None
    raise DistributedError(f"rank {rank}: {what} failed (a peer gone?): {message}") from None


def env(*names: str) -> str | None:
    """The first of ``names`` set in the environment."""
    import os

    return next((os.environ[n] for n in names if n in os.environ), None)


def free_ports(count: int, host: str = "127.0.0.1") -> list[int]:
    """``count`` distinct TCP ports free now on ``host`` (the operating system's choice, held together)."""
    import socket

    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()
