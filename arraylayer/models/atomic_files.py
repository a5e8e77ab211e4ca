"""Files that are replaced whole or not at all, and read only when they are regular files.

:func:`write_atomically` writes a temporary file next to the target, syncs it and renames it over
the target, so a reader sees the old file or the new one, never part of one. The new file keeps
the mode of the one it replaces; a new path gets ``0o666`` less the umask, as ``open`` gives. The
temporary is never more readable than that while it is written.

Temporaries are named ``.<target name>.<host>.<pid>.<random>.tmp`` (host: 8 hex digits of the
host name's CRC-32, pid: the writer's process id). A writer killed mid-write leaves one behind;
the next write to the same target deletes those of that target whose writer is known to be dead
(same host, no process with that pid) and those untouched for :data:`STALE_AFTER` seconds (other
hosts, pids reused since), plus temporaries of older versions (``.<name>.<8 chars>.tmp``) that
old. A live writer's temporary is kept: its pid answers, and its writes keep it fresh.

:func:`open_regular` refuses FIFOs, devices, directories and sockets before opening anything
(``open`` would hang on a FIFO and read ``/dev/zero`` forever).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
import zlib
from collections.abc import Callable
from typing import BinaryIO

from arraylayer.errors import CheckpointError

__all__ = ["STALE_AFTER", "open_regular", "write_atomically", "temporary_name", "stale_temporaries"]

#: seconds after its last write when a temporary counts as abandoned whatever its pid says
STALE_AFTER = 24 * 3600
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
_OLD_STYLE = r"[a-z0-9_]{8}\.tmp"  # tempfile.mkstemp's names, which arraylayer used before


def _host() -> str:
    import socket

    return f"{zlib.crc32(socket.gethostname().encode('utf-8', 'replace')):08x}"


def temporary_name(target: str, pid: int | None = None) -> str:
    """A fresh temporary's path for ``target`` (in the same folder), written by ``pid`` (default: this process)."""
    folder, name = os.path.split(os.path.abspath(target))
    return os.path.join(folder, f".{name}.{_host()}.{os.getpid() if pid is None else pid}.{os.urandom(4).hex()}.tmp")


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def _refused(path: str, mode: int, doing: str) -> CheckpointError:
    return CheckpointError(f"{path}: {_kind(mode)}, not a regular file; checkpoints are {doing} regular files only "
                           f"(copy it into one first).")


def open_regular(path: str) -> BinaryIO:
    """``path`` open for reading, or CheckpointError when it is not a regular file (OSError when
    it is missing or unreadable)."""
    if not stat.S_ISREG(mode := os.stat(path).st_mode):
        raise _refused(path, mode, "read from")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))  # O_NONBLOCK: a FIFO swapped in since does not hang
    try:
        if not stat.S_ISREG(mode := os.fstat(fd).st_mode):
            raise _refused(path, mode, "read from")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _alive(pid: int) -> bool:
    if os.name != "posix":  # os.kill(pid, 0) would stop it on Windows: the age rule alone applies there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process (or a pid no process can have: kept, the age rule applies)
    return True


def stale_temporaries(target: str, now: float | None = None) -> list[str]:
    """The temporaries of ``target`` that the rule in this module's docstring deletes."""
    folder, name = os.path.split(os.path.abspath(target))
    ours = re.compile(rf"\.{re.escape(name)}\.(?P<host>[0-9a-f]{{8}})\.(?P<pid>[0-9]{{1,10}})\.[0-9a-f]{{8}}\.tmp")
    old = re.compile(rf"\.{re.escape(name)}\.{_OLD_STYLE}")
    now, host, found = time.time() if now is None else now, _host(), []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            match = ours.fullmatch(entry.name)
            if not (match or old.fullmatch(entry.name)) or not entry.is_file(follow_symlinks=False):
                continue
            with contextlib.suppress(OSError):
                dead = match is not None and match["host"] == host and not _alive(int(match["pid"]))
                if dead or now - entry.stat(follow_symlinks=False).st_mtime > STALE_AFTER:
                    found.append(entry.path)
    return sorted(found)


def write_atomically(target: str, write: Callable[[BinaryIO], None]) -> None:
    """Call ``write`` on a temporary file, then rename it over ``target`` (see the module docstring)."""
    try:
        mode: int | None = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise _refused(target, mode, "written to")
    for stale in stale_temporaries(target):
        with contextlib.suppress(OSError):
            os.unlink(stale)
    kept = None if mode is None else stat.S_IMODE(mode)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temporary = temporary_name(target)
        try:  # the umask applies to the mode asked, so the temporary is never more open than the end result
            fd = os.open(temporary, flags, 0o666 if kept is None else kept)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(f"{target}: no free temporary name after 100 tries")
    try:
        with os.fdopen(fd, "wb") as out:
            if kept is not None:  # before any byte is written
                os.fchmod(fd, kept) if hasattr(os, "fchmod") else os.chmod(temporary, kept)
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(os.path.dirname(os.path.abspath(target)))


def _sync_folder(folder: str) -> None:
    """fsync the folder, so that the rename itself survives a crash (where the OS allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
