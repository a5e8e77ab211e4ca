"""Keeping frameworks' start-up log lines out of arraylayer's own reports, and saying what is
being done while frameworks load.

TensorFlow (and XLA, oneDNN, absl) write log lines straight to the process's standard error
while they load and run their first kernels, some of them before their own log-level setting
is read. The command line (``info``, ``support``, ``probe``) and the examples run that work
inside :func:`quiet_framework_logs`, which points file descriptor 2 at a buffer and shows the
buffer only if the work fails. Set ``ARRAYLAYER_FRAMEWORK_LOGS=1`` (or ``TF_CPP_MIN_LOG_LEVEL=0``)
to see them. Meanwhile the real standard error stays reachable through a descriptor saved before
the redirection: :func:`progress` writes a line there, and :func:`progress_stream` is a text
stream on it for progress bars (tqdm's ``file=``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["quiet_framework_logs", "progress", "progress_stream", "framework_logs_wanted"]

_real_stderr: list[TextIO] = []  # streams on the saved descriptors of the real standard error, innermost last


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
    saved = os.dup(2)  # the real standard error, before fd 2 is pointed at the buffer
    real = open(saved, "w", buffering=1, encoding=getattr(sys.stderr, "encoding", None) or "utf-8",
                errors="replace", closefd=True)
    _real_stderr.append(real)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except BaseException:
            sys.stderr.flush()
            real.flush()
            sink.seek(0)
            os.write(saved, sink.read())
            raise
        finally:
            sys.stderr.flush()
            real.flush()
            os.dup2(saved, 2)
            _real_stderr.pop()
            real.close()


def progress(message: str) -> None:
    """One line on the real standard error (also inside :func:`quiet_framework_logs`)."""
    stream = progress_stream()
    stream.write(f"arraylayer: {message}\n")
    stream.flush()


def progress_stream() -> TextIO:
    """Where progress goes: a text stream on the real standard error, also inside
    :func:`quiet_framework_logs` (then on the descriptor saved before the redirection; valid until
    that block ends), else ``sys.stderr``. ``progress_stream().isatty()`` says whether a person
    watches it (a progress bar) or not (a log: plain lines)."""
    return _real_stderr[-1] if _real_stderr else sys.stderr
