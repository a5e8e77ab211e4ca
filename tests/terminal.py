"""Running a command on a pseudo-terminal, as a person's shell does (a helper module, not a
conftest): the main job's tests check what a terminal receives, progress bars included."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
from collections.abc import Mapping, Sequence
from pathlib import Path

# what the frameworks print at start-up when their log level is not set: TensorFlow's
# cpu_feature_guard, absl's warning, XLA's and oneDNN's lines
FRAMEWORK_LOG_LINES = ("cpu_feature_guard", "absl::InitializeLog", "I0000 ", "W0000 ", "oneDNN")


def on_a_terminal(args: Sequence[str], env: Mapping[str, str], cwd: Path) -> tuple[int, str]:
    """Run ``args`` with standard input, output and error on a pseudo-terminal 120 columns wide;
    the exit status and everything the terminal received."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    child = subprocess.Popen(list(args), stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=dict(env),
                             close_fds=True)
    os.close(slave)
    received = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    return child.wait(timeout=600), received.decode("utf-8", "replace")


def environment_without_log_settings(root: Path) -> dict[str, str]:
    """This process's environment with ``root`` importable and the frameworks' log settings
    removed (so that their start-up lines would appear unless the script hides them)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "ARRAYLAYER_FRAMEWORK_LOGS")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    return env
