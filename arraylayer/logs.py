"""Keeping frameworks' start-up log lines out of arraylayer's own reports, and saying what is
being done while frameworks load.

TensorFlow (and XLA, oneDNN, absl) write log lines straight to the process's standard error
while they load and run their first kernels, some of them before their own log-level setting
is read. The command line (``info``, ``support``, ``probe``) and ``examples/train_mlp.py`` run
that work inside :func:`quiet_framework_logs`, which sends those lines to a buffer and shows
them only if the work fails. Set ``ARRAYLAYER_FRAMEWORK_LOGS=1`` (or ``TF_CPP_MIN_LOG_LEVEL=0``)
to see them. :func:`progress` writes to the real standard error meanwhile.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["quiet_framework_logs", "progress", "framework_logs_wanted"]

_real_stderr: list[int] = []  # the saved descriptors of the real standard error, innermost last


def framework_logs_wanted() -> bool:
    """True when the user asked to see the frameworks' own log lines."""
    return os.environ.get("ARRAYLAYER_FRAMEWORK_LOGS", "") not in ("", "0") or \
        os.environ.get("TF_CPP_MIN_LOG_LEVEL") == "0"


@contextmanager
def quiet_framework_logs() -> Iterator[None]:
    """Standard error (the file descriptor, which C++ loggers write to) goes to a buffer until
    the block ends; the buffer is shown if the block raises."""
    if framework_logs_wanted():
        yield
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    sys.stderr.flush()
    saved = os.dup(2)
    _real_stderr.append(saved)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except BaseException:
            sys.stderr.flush()
            sink.seek(0)
            os.write(saved, sink.read())
            raise
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            _real_stderr.pop()
            os.close(saved)


def progress(message: str) -> None:
    """One line on the real standard error (also inside :func:`quiet_framework_logs`)."""
    line = f"arraylayer: {message}\n".encode()
    if _real_stderr:
        os.write(_real_stderr[-1], line)
    else:
        sys.stderr.flush()
        os.write(2, line)
