"""Checkpoints against hostile users and files (issue 39): every case the issue names, on real files.

- ``load`` reads each tensor at most once (a tree naming one tensor 20,000 times is refused), and
  only regular files (a FIFO, ``/dev/zero``, a directory: CheckpointError, no hang).
- ``save`` keeps the mode of the file it replaces, else honours the umask; deletes the temporaries
  of killed writers (same host, dead pid) and those untouched for a day, never a live writer's;
  refuses a leaf named ``__metadata__``, lone surrogates, trees nested deeper than 100, dtypes that
  are not arraylayer's.
- Damaged and forged files (re-signed: their checksums made right, as an attacker would) are
  refused with a CheckpointError naming the file and the problem: truncations, flipped header
  bytes, bad offsets, dtype codes and names, BOOL bytes of 0xff, steps of the wrong type, nesting
  and header size past the limits.
- Hypothesis: random truncations, byte flips and JSON edits give the original tree back bit for
  bit or a CheckpointError, never another exception, never a hang.

Real files in ``tmp_path``, a real FIFO, ``/dev/zero``, a real killed process; no mocks.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import struct
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import zlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arraylayer as al
from arraylayer.models import atomic_files, safetensors_format

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checkout the writer imports
CRC_KEY = "arraylayer.crc32"
PROPERTY = settings(max_examples=int(os.environ.get("AL_CHECKPOINT_EXAMPLES", "60")), derandomize=True,
                    deadline=None, suppress_health_check=list(HealthCheck), database=None)


def tree_of(backend: str = "numpy") -> dict:
    leaves = {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "mask": np.array([True, False, True]),
              "count": np.asarray(3, np.int32)}
    on = {k: v if backend == "numpy" else al.to_backend(v, backend) for k, v in leaves.items()}
    return {"params": {"w": on["w"], "mask": on["mask"]}, "state": [on["count"], None]}


@pytest.fixture
def saved(tmp_path):
    file = tmp_path / "ok.safetensors"
    al.checkpoint.save(file, tree_of(), step=12)
    return file


def split(file) -> tuple[dict, bytes]:
    data = file.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def write(file, header: dict | bytes, data: bytes, *, sign: bool = True) -> None:
    """The file of ``header`` and ``data``, its header CRC-32 made right (as a forger would) when ``sign``."""
    if isinstance(header, bytes):
        raw = header
    else:
        metadata = header.get("__metadata__")
        signed = sign and isinstance(metadata, dict) and CRC_KEY in metadata
        if signed:
            header["__metadata__"][CRC_KEY] = "0" * 8
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)
        if signed:
            needle = f'"{CRC_KEY}":"00000000"'.encode()
            raw = raw.replace(needle, f'"{CRC_KEY}":"{zlib.crc32(raw):08x}"'.encode())
    file.write_bytes(struct.pack("<Q", len(raw)) + raw + data)


def forge(file, header_edit=None, meta_edit=None, data_edit=None, *, sign: bool = True) -> None:
    """Edit ``file``'s header, arraylayer's metadata and data, then (``sign``) make every checksum right."""
    header, data = split(file)
    data = bytearray(data)
    meta = json.loads(header["__metadata__"]["arraylayer"]) if "arraylayer" in header.get("__metadata__", {}) else None
    for edit, on in ((data_edit, (data, header)), (meta_edit, (meta,))):
        if edit is not None:
            edit(*on)
    if meta is not None:
        if sign and isinstance(meta.get("crc32"), dict):
            for name, entry in header.items():
                if name != "__metadata__" and name in meta["crc32"]:
                    begin, end = entry["data_offsets"]
                    meta["crc32"][name] = f"{zlib.crc32(bytes(data[begin:end])):08x}"
        header["__metadata__"]["arraylayer"] = json.dumps(meta)
    if header_edit is not None:
        header_edit(header)
    write(file, header, bytes(data), sign=sign)


def refused(file, match: str, **load) -> al.CheckpointError:
    with pytest.raises(al.CheckpointError, match=match) as error:
        al.checkpoint.load(file, **load)
    assert str(file) in str(error.value)
    return error.value


def host(x) -> np.ndarray:
    return np.asarray(al.to_backend(x, "numpy"))


def same(a, b) -> bool:
    """The same tree, leaf dtypes and bits."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if a is None:
        return b is None
    a, b = host(a), host(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- a tensor named many times ------------------------------------------------------------------------------
def test_a_tensor_named_by_20000_leaves_is_refused_before_any_read(backend, tmp_path):
    file = tmp_path / "many.safetensors"
    al.checkpoint.save(file, {"w": np.zeros(2**18, np.float32)})  # 1 MiB: read 20,000 times it was 20 GiB
    forge(file, meta_edit=lambda m: m.update(tree={"list": [{"leaf": "w"}] * 20_000}))
    assert 1 << 20 < file.stat().st_size < 2 << 20
    tracemalloc.start()
    started = time.perf_counter()
    try:
        refused(file, "names the leaf at '0' 'w'", backend=backend)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 10 and peak < 32 << 20


def test_one_tensor_named_by_two_leaves_is_refused(tmp_path):
    file = tmp_path / "twice.safetensors"
    al.checkpoint.save(file, {"1": np.ones(2, np.float32)})
    forge(file, meta_edit=lambda m: m.update(tree={"dict": [["1", {"leaf": "1"}], [1, {"leaf": "1"}]]}))
    refused(file, "a tree of 2 leaves for 1 tensors")


def test_each_tensor_is_read_once_and_the_bits_come_back(backend, tmp_path):
    file = tmp_path / "ok.safetensors"
    al.checkpoint.save(file, tree_of(backend), step=3)
    loaded, step = al.checkpoint.load(file, backend=backend)
    assert step == 3 and same(loaded, tree_of())
    assert al.backend_of(loaded["params"]["w"]).name == backend


# -- files that are not regular ----------------------------------------------------------------------------
def _finishes(call, seconds: float = 20) -> BaseException | None:
    """What ``call`` raised, failing the test if it is still running after ``seconds`` (a hang)."""
    outcome: list[BaseException | None] = []

    def run():
        try:
            call()
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - handed to the test
            outcome.append(error)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"still running after {seconds} s: it hangs"
    return outcome[0]


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "/dev/null", "directory"])
def test_only_regular_files_are_read(kind, tmp_path):
    if kind == "fifo":
        path = tmp_path / "pipe"
        os.mkfifo(path)
    elif kind == "directory":
        path = tmp_path
    else:
        path = kind
        if not os.path.exists(path):
            pytest.skip(f"{path} does not exist here")
    what = {"fifo": "a FIFO", "directory": "a directory"}.get(kind, "a character device")
    for call in (lambda: al.checkpoint.load(path), lambda: al.checkpoint.contents(path),
                 lambda: al.checkpoint.load(path, {"w": np.zeros(1)})):
        error = _finishes(call)
        assert isinstance(error, al.CheckpointError), error
        assert str(path) in str(error) and what in str(error) and "regular files only" in str(error)


def test_save_refuses_to_replace_a_fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    error = _finishes(lambda: al.checkpoint.save(path, tree_of()))
    assert isinstance(error, al.CheckpointError) and "a FIFO" in str(error)
    assert stat.S_ISFIFO(os.stat(path).st_mode) and os.listdir(tmp_path) == ["pipe"]


# -- modes --------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
@pytest.mark.parametrize("mask, existing, expected", [
    (0o022, None, 0o644), (0o077, None, 0o600), (0o002, None, 0o664),
    (0o022, 0o600, 0o600), (0o077, 0o640, 0o640), (0o000, 0o604, 0o604), (0o022, 0o666, 0o666),
])
def test_save_keeps_the_mode_it_replaces_else_honours_the_umask(mask, existing, expected, tmp_path):
    file = tmp_path / "m.safetensors"
    if existing is not None:
        file.write_bytes(b"old")
        os.chmod(file, existing)
    with umask(mask):
        al.checkpoint.save(file, tree_of())
    assert stat.S_IMODE(os.stat(file).st_mode) == expected
    assert same(al.checkpoint.load(file).tree, tree_of())


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_the_temporary_is_never_more_open_than_the_file_it_replaces(tmp_path):
    dask = pytest.importorskip("dask")
    import dask.array as da

    file = tmp_path / "secret.safetensors"
    file.write_bytes(b"old")
    os.chmod(file, 0o600)
    seen = []

    def look():  # runs while save writes: the temporary is there, the data half written
        seen.extend(stat.S_IMODE(os.stat(tmp_path / n).st_mode) for n in os.listdir(tmp_path) if n.endswith(".tmp"))
        return np.ones(4, np.float32)

    with umask(0o022):
        lazy = da.from_delayed(dask.delayed(look)(), (4,), np.float32)
        al.checkpoint.save(file, {"a": np.ones(8, np.float32), "z": lazy})
    assert seen == [0o600] and stat.S_IMODE(os.stat(file).st_mode) == 0o600


# -- temporaries --------------------------------------------------------------------------------------------
@pytest.mark.skipif(os.name != "posix", reason="kills a process with SIGKILL")
def test_the_temporary_of_a_killed_save_is_deleted_by_the_next_save(tmp_path):
    pytest.importorskip("dask")
    file = tmp_path / "run.safetensors"
    al.checkpoint.save(file, tree_of(), step=1)
    script = textwrap.dedent(f"""
        import time, dask, dask.array as da, numpy as np, arraylayer as al
        def stall():
            time.sleep(120)
        al.checkpoint.save({str(file)!r}, {{"a": np.ones(9, np.float32),
                           "z": da.from_delayed(dask.delayed(stall)(), (1,), np.float32)}}, step=2)
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": ROOT})
    try:
        deadline = time.monotonic() + 60
        while not (left := [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]) and time.monotonic() < deadline:
            assert writer.poll() is None, "the writer ended before writing"
            time.sleep(0.05)
        assert left, "no temporary appeared"
        al.checkpoint.save(file, tree_of(), step=3)  # the writer lives: its temporary stays
        assert left[0] in os.listdir(tmp_path)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    assert sorted(os.listdir(tmp_path)) == sorted([file.name, *left])  # killed mid-save: left behind
    assert left[0].startswith(f".{file.name}.") and f".{writer.pid}." in left[0]
    assert al.checkpoint.load(file).step == 3  # the old file is whole
    al.checkpoint.save(file, tree_of(), step=4)
    assert os.listdir(tmp_path) == [file.name]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_which_temporaries_a_save_deletes(tmp_path):
    file = tmp_path / "c.safetensors"
    day_old = time.time() - atomic_files.STALE_AFTER - 60
    here = os.path.basename(atomic_files.temporary_name(file)).rsplit(".", 4)[1]  # this host's tag
    there = "0" * 8 if here != "0" * 8 else "1" * 8

    def temporary(host: str, pid: int, target: str = file.name) -> str:
        return f".{target}.{host}.{pid}.{os.urandom(4).hex()}.tmp"

    dead = _dead_pid()
    cases = {  # name -> (modified that long ago, deleted?)
        temporary(here, os.getpid()): (None, False),  # a live writer: this process
        temporary(here, os.getpid()): (day_old, True),  # alive, but untouched for a day
        temporary(here, dead): (None, True),  # this host, a dead writer
        temporary(there, dead): (None, False),  # another host: its pid means nothing here, and it is fresh
        temporary(there, dead): (day_old, True),  # another host, untouched for a day
        f".{file.name}.k3j_x9a1.tmp": (day_old, True),  # tempfile's names, of arraylayer before
        f".{file.name}.k3j_x9a2.tmp": (None, False),
        temporary(here, dead) + ".keep": (day_old, False),  # not a temporary's name
        temporary(here, dead, "other.safetensors"): (None, False),  # another target's
    }
    for entry, (mtime, _) in cases.items():
        (tmp_path / entry).write_bytes(b"partial")
        if mtime is not None:
            os.utime(tmp_path / entry, (mtime, mtime))
    os.mkdir(tmp_path / f".{file.name}.deadbeef.1.deadbeef.tmp")  # a folder of that name: never deleted
    al.checkpoint.save(file, tree_of())
    kept = set(os.listdir(tmp_path))
    assert kept == {file.name, f".{file.name}.deadbeef.1.deadbeef.tmp"} | {n for n, (_, gone) in cases.items()
                                                                            if not gone}


# -- what save refuses --------------------------------------------------------------------------------------
def _nested(leaf, depth: int):
    for i in range(depth):
        leaf = {"k": leaf} if i % 2 else [leaf]
    return leaf


def _holds_itself(leaf):
    tree = [leaf]
    tree.append(tree)
    return tree


@pytest.mark.parametrize("build, match", [
    (lambda leaf: {"__metadata__": leaf}, "a leaf is named '__metadata__'"),
    (lambda leaf: {"ok": leaf, "a\udc80b": leaf}, "lone surrogate"),
    (lambda leaf: {"\ud800": {"x": leaf}}, "lone surrogate"),
    (lambda leaf: _nested(leaf, 400), "more than 100 deep"),
    (lambda leaf: _nested(leaf, 101), "more than 100 deep"),
    (_holds_itself, "more than 100 deep"),
], ids=["__metadata__", "surrogate-leaf", "surrogate-dict", "400-deep", "101-deep", "holds-itself"])
def test_save_refuses_what_it_could_not_read_back(backend, build, match, tmp_path):
    leaf = al.to_backend(np.ones(2, np.float32), backend)
    with pytest.raises(al.CheckpointError, match=match) as error:
        al.checkpoint.save(tmp_path / "x.safetensors", build(leaf))
    assert "x.safetensors" in str(error.value) and os.listdir(tmp_path) == []


def test_a_tree_100_deep_is_kept(backend, tmp_path):
    tree = _nested(al.to_backend(np.arange(3, dtype=np.int32), backend), 100)
    al.checkpoint.save(tmp_path / "deep.safetensors", tree, step=0)
    loaded = al.checkpoint.load(tmp_path / "deep.safetensors", backend=backend)
    assert loaded.step == 0 and same(loaded.tree, tree)


@pytest.mark.parametrize("leaf, match", [
    (np.array(["a"]), "dtype <U1"), (np.array(["2026-01-01"], "datetime64[s]"), "dtype datetime64"),
    (np.array([object()]), "dtype object"),
])
def test_save_refuses_dtypes_that_are_not_arraylayers(leaf, match, tmp_path):
    with pytest.raises(al.CheckpointError, match=match):
        al.checkpoint.save(tmp_path / "x.safetensors", {"x": leaf})
    assert os.listdir(tmp_path) == []


def test_save_refuses_a_step_outside_int64(tmp_path):
    with pytest.raises(al.CheckpointError, match="outside int64"):
        al.checkpoint.save(tmp_path / "x.safetensors", {"x": np.ones(1)}, step=2**63)


# -- damaged and forged files -------------------------------------------------------------------------------
def _entry(name: str, **change):
    return lambda header: header[name].update(change)


def _set_byte(name: str, value: int):
    def edit(data, header):
        data[header[name]["data_offsets"][0]] = value
    return edit


def _raw(file, raw: bytes) -> None:
    _, data = split(file)
    write(file, raw, data)


def _sparse_header(file) -> None:
    length = 100 * 2**20
    with open(file, "wb") as out:
        out.write(struct.pack("<Q", length))
        out.truncate(8 + length + 64)  # a real 100 MiB header region, sparse on disk


DAMAGE = {  # id -> (damage, what the error says)
    "offsets past the end": (lambda f: forge(f, _entry("params/w", data_offsets=[0, 10**9])), "outside the"),
    "offsets reversed": (lambda f: forge(f, _entry("params/w", data_offsets=[24, 0])), r"\(or reversed\)"),
    "offsets overlapping": (lambda f: forge(f, _entry("params/w", data_offsets=[0, 24])), "overlap or leave a gap"),
    "unknown dtype code": (lambda f: forge(f, _entry("params/w", dtype="F7")), "dtype 'F7'"),
    "dtype code of a number": (lambda f: forge(f, _entry("params/w", dtype=32)), "dtype 32"),
    "shape of true": (lambda f: forge(f, _entry("params/mask", shape=[True, 3])), "shape"),
    "shape of a float": (lambda f: forge(f, _entry("params/mask", shape=[3.0])), "shape"),
    "65 dimensions": (lambda f: forge(f, _entry("params/mask", shape=[1] * 62 + [3, 1, 1])), "at most 64"),
    "2**62 times 0": (lambda f: forge(f, _entry("params/w", shape=[2**62, 0], data_offsets=[0, 0])), "too large"),
    "an entry key more": (lambda f: forge(f, _entry("params/w", extra=1)), "exactly"),
    "a key twice": (lambda f: _raw(f, json.dumps(split(f)[0]).encode().replace(b'{"__metadata__"',
                                                                               b'{"state/0": 1, "__metadata__"')),
                    "a key twice"),
    "NaN": (lambda f: forge(f, _entry("params/w", shape=float("nan"))), "NaN, which is not JSON"),
    "a lone surrogate": (lambda f: forge(f, lambda h: h.update({"\ud800": h.pop("state/0")})), "lone surrogate"),
    "bytes that are not UTF-8": (lambda f: _raw(f, b'{"\xff":1}     '), "not valid JSON"),
    "a header that is a list": (lambda f: _raw(f, b"[1, 2, 3]"), "not a JSON object"),
    "metadata of a number": (lambda f: forge(f, lambda h: h["__metadata__"].update(arraylayer=5)), "of strings"),
    "a 200,000-deep header": (lambda f: _raw(f, b'{"a":' + b"[" * 200_000 + b"]" * 200_000 + b"}"),
                              "nested 200001 deep, more than the 3"),
    "200,000-deep metadata": (lambda f: forge(f, lambda h: h["__metadata__"].update(
        arraylayer="[" * 200_000 + "]" * 200_000)), "nested 200000 deep, more than the 302"),
    "a 100 MiB header": (_sparse_header, f"header length of 104857600 bytes, more than the limit of "
                                         f"{safetensors_format.HEADER_LIMIT}"),
    "a header longer than the file": (lambda f: f.write_bytes(struct.pack("<Q", 10**6) + b"{}"), "more than the 2"),
    "an int of 5,000 digits": (lambda f: _raw(f, b'{"a":' + b"9" * 5000 + b"}"), "not valid JSON"),
    "a step of a string": (lambda f: forge(f, meta_edit=lambda m: m.update(step="12")), "a step of '12'"),
    "a step of true": (lambda f: forge(f, meta_edit=lambda m: m.update(step=True)), "a step of True"),
    "a step of a float": (lambda f: forge(f, meta_edit=lambda m: m.update(step=12.0)), "a step of 12.0"),
    "a step past int64": (lambda f: forge(f, meta_edit=lambda m: m.update(step=2**64)), "not an int64"),
    "a dtype <U1": (lambda f: forge(f, _entry("params/w", dtype="U8", shape=[6, 4]), lambda m: m["dtypes"].update(
        {"params/w": "<U1"})), "'<U1', which is none"),
    "a dtype datetime64": (lambda f: forge(f, _entry("params/w", dtype="U8", shape=[3, 8]),
                                           lambda m: m["dtypes"].update({"params/w": "datetime64[s]"})), "datetime64"),
    "a dtype name of a number": (lambda f: forge(f, meta_edit=lambda m: m["dtypes"].update({"params/w": 7})),
                                 "do not name each tensor"),
    "a dtype name against the code": (lambda f: forge(f, meta_edit=lambda m: m["dtypes"].update(
        {"params/w": "int32"})), "of int32 stored as F32"),
    "header changed": (lambda f: forge(f, _entry("params/w", shape=[3, 2]), sign=False), "match its CRC-32"),
    "header CRC missing": (lambda f: forge(f, lambda h: h["__metadata__"].pop(CRC_KEY)), "match its CRC-32"),
    "CRC without metadata": (lambda f: forge(f, lambda h: h["__metadata__"].pop("arraylayer")),
                             "CRC-32 but without arraylayer's metadata"),
    "version 3": (lambda f: forge(f, meta_edit=lambda m: m.update(version=3)), "version 3"),
    "version true": (lambda f: forge(f, meta_edit=lambda m: m.update(version=True)), "version True"),
    "version 1 with a CRC": (lambda f: forge(f, meta_edit=lambda m: (m.update(version=1), m.pop("crc32"))),
                             "which has none"),
    "a metadata key more": (lambda f: forge(f, meta_edit=lambda m: m.update(code="import os")), "with keys"),
    "a tensor without a dtype": (lambda f: forge(f, meta_edit=lambda m: m["dtypes"].pop("params/w")), "each tensor"),
    "a tensor CRC of a number": (lambda f: forge(f, meta_edit=lambda m: m["crc32"].update({"params/w": 5}), sign=False),
                                 "match its CRC-32"),
    "a misnamed leaf": (lambda f: forge(f, meta_edit=lambda m: m["tree"]["dict"][0][1]["dict"][0][1].update(
        leaf="params/w")), "names the leaf at 'params/mask' 'params/w'"),
    "a node of no kind": (lambda f: forge(f, meta_edit=lambda m: m.update(tree={"set": []})), "no node of a tree"),
    "a tree 150 deep": (lambda f: forge(f, meta_edit=lambda m: m.update(tree=json.loads(
        '{"list":[' * 150 + "null" + "]}" * 150))), "nests more than 100 deep"),
    "a leaf left out": (lambda f: forge(f, meta_edit=lambda m: m["tree"]["dict"][1][1]["list"].pop(0)),
                        "a tree of 2 leaves for 3 tensors"),
    "a dict key twice": (lambda f: forge(f, meta_edit=lambda m: m["tree"]["dict"].append(["state", None])),
                         "each once"),
    "a dict key of a float": (lambda f: forge(f, meta_edit=lambda m: m["tree"]["dict"].append([1.5, None])),
                              "str or int"),
}


#: damage in the data, found when the tensor is read (contents, which reads none, does not see it)
DATA_DAMAGE = {
    "BOOL byte 0xff": (lambda f: forge(f, data_edit=_set_byte("params/mask", 0xFF)), "the byte 0xff, which is no bool"),
    "BOOL byte 0x02, no metadata": (lambda f: forge(f, lambda h: h.pop("__metadata__"), data_edit=_set_byte(
        "params/mask", 2)), "the byte 0x02, which is no bool"),
    "data changed": (lambda f: f.write_bytes(f.read_bytes()[:-1] + b"\x7f"), "match their CRC-32"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_or_forged_file_is_refused_naming_the_file_and_the_problem(case, backend, saved):
    damage, match = DAMAGE[case]
    damage(saved)
    refused(saved, match, backend=backend)
    with pytest.raises(al.CheckpointError):
        al.checkpoint.contents(saved)


@pytest.mark.parametrize("case", list(DATA_DAMAGE))
def test_damaged_or_forged_data_is_refused_when_read(case, backend, saved):
    damage, match = DATA_DAMAGE[case]
    damage(saved)
    refused(saved, match, backend=backend)


def test_a_sub_byte_dtype_holds_only_its_bits(backend, tmp_path):
    file = tmp_path / "i4.safetensors"
    al.checkpoint.save(file, {"q": np.array([-8, 7, -1], ml_dtypes.int4)})
    assert host(al.checkpoint.load(file, backend="numpy").tree["q"]).tolist() == [-8, 7, -1]
    forge(file, data_edit=_set_byte("q", 0xF0))
    refused(file, "the byte 0xf0, which is no int4", backend=backend)


def test_a_template_load_refuses_a_forged_file_too(backend, saved):
    like = al.checkpoint.load(saved, backend=backend).tree
    forge(saved, data_edit=_set_byte("params/mask", 0xFF))
    refused(saved, "which is no bool", like=like)


def test_every_truncation_is_refused(saved):
    data = saved.read_bytes()
    for n in range(len(data)):
        saved.write_bytes(data[:n])
        with pytest.raises(al.CheckpointError) as error:
            al.checkpoint.load(saved)
        assert str(saved) in str(error.value), n


def test_every_flipped_header_byte_is_refused(saved):
    data = saved.read_bytes()
    for i in range(8 + struct.unpack("<Q", data[:8])[0]):
        for mask in (0x01, 0x80):
            saved.write_bytes(data[:i] + bytes([data[i] ^ mask]) + data[i + 1:])
            with pytest.raises(al.CheckpointError) as error:
                al.checkpoint.load(saved)
            assert str(saved) in str(error.value), (i, mask)


def test_a_file_of_version_1_without_checksums_still_loads(backend, saved):
    forge(saved, lambda h: h["__metadata__"].pop(CRC_KEY), lambda m: (m.update(version=1), m.pop("crc32")))
    loaded, step = al.checkpoint.load(saved, backend=backend)
    assert step == 12 and same(loaded, tree_of())


# -- properties ---------------------------------------------------------------------------------------------
_DTYPES = ["float32", "bfloat16", "bool", "int4", "complex128", "uint8", "float8_e4m3fn"]


@st.composite
def arrays(draw) -> np.ndarray:
    name = draw(st.sampled_from(_DTYPES))
    dtype = np.dtype(getattr(ml_dtypes, name, name))
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    raw = np.frombuffer(draw(st.binary(min_size=int(np.prod(shape)) * dtype.itemsize,
                                       max_size=int(np.prod(shape)) * dtype.itemsize)), np.uint8).copy()
    bound = {"bool": 2, "int4": 16}.get(name)
    return (raw % bound if bound else raw).view(dtype).reshape(shape)


keys = st.text("abc/", min_size=1, max_size=2).filter(lambda k: "/" not in k)
trees = st.recursive(arrays() | st.none(), lambda inner: st.dictionaries(keys, inner, max_size=3)
                     | st.lists(inner, max_size=3) | st.lists(inner, max_size=2).map(tuple), max_leaves=5)


def _outcome(file):
    started = time.perf_counter()
    try:
        result = al.checkpoint.load(file, backend="numpy")
    except al.CheckpointError as error:
        assert str(file) in str(error)
        result = None
    assert time.perf_counter() - started < 5, "a load that took seconds on a small file"
    return result


@PROPERTY
@given(tree=trees, step=st.none() | st.integers(-2**63, 2**63 - 1), cut=st.floats(0, 1, exclude_max=True))
def test_property_a_truncated_file_is_refused(tmp_path_factory, tree, step, cut):
    file = tmp_path_factory.mktemp("t") / "c.safetensors"
    al.checkpoint.save(file, tree, step=step)
    data = file.read_bytes()
    file.write_bytes(data[:int(cut * len(data))])
    assert _outcome(file) is None


@PROPERTY
@given(tree=trees, where=st.floats(0, 1, exclude_max=True), masks=st.lists(st.integers(1, 255), min_size=1, max_size=4))
def test_property_a_burst_of_flipped_bytes_gives_the_tree_or_an_error(tmp_path_factory, tree, where, masks):
    """Up to 4 bytes in a row changed (a burst of up to 32 bits, which CRC-32 always finds)."""
    file = tmp_path_factory.mktemp("f") / "c.safetensors"
    al.checkpoint.save(file, tree, step=5)
    data = bytearray(file.read_bytes())
    start = int(where * len(data))
    for i, mask in enumerate(masks[:len(data) - start]):
        data[start + i] ^= mask
    file.write_bytes(bytes(data))
    result = _outcome(file)
    assert result is None or (result.step == 5 and same(result.tree, tree))


def _plain(file) -> bool:
    """Whether ``file``'s header (if it is one) has lost both of arraylayer's metadata keys."""
    with contextlib.suppress(Exception):
        metadata = split(file)[0].get("__metadata__", {})
        return not ({"arraylayer", CRC_KEY} & metadata.keys())
    return False


@PROPERTY
@given(tree=trees, flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)), min_size=2,
                                  max_size=4))
def test_property_scattered_flips_give_the_tree_an_error_or_a_plain_file(tmp_path_factory, tree, flips):
    """Bytes changed here and there: the original or an error, unless the changes hit both of
    arraylayer's metadata keys, which leaves a plain safetensors file (the format lets a file carry
    no metadata), read as its tensors by name; never another exception."""
    file = tmp_path_factory.mktemp("s") / "c.safetensors"
    al.checkpoint.save(file, tree, step=5)
    data = bytearray(file.read_bytes())
    for where, mask in flips:
        data[int(where * len(data))] ^= mask
    file.write_bytes(bytes(data))
    result = _outcome(file)
    assert result is None or (result.step == 5 and same(result.tree, tree)) or (result.step is None and _plain(file))


json_values = st.recursive(st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=4),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                       max_size=3), max_leaves=6)


def _replace(value, choice: int, new):
    """``value`` with its ``choice``-th node (depth first, modulo their number) replaced by ``new``."""
    nodes = []

    def walk(node, put):
        nodes.append(put)
        children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, child in list(children):
            walk(child, lambda v, node=node, key=key: node.__setitem__(key, v))

    box = [value]
    walk(value, lambda v: box.__setitem__(0, v))
    nodes[choice % len(nodes)](new)
    return box[0]


@PROPERTY
@given(tree=trees, choice=st.integers(0, 10**6), new=json_values, in_meta=st.booleans(), sign=st.booleans())
def test_property_edited_json_gives_the_tree_or_an_error(tmp_path_factory, tree, choice, new, in_meta, sign):
    """One JSON value of the header or of arraylayer's metadata replaced. Unsigned: the original
    tree or an error. Signed (a forger's edit, the header's CRC-32 made right): another valid file
    may come of it, which must load as its header says. An edit that takes arraylayer's metadata
    away leaves a plain safetensors file: the tensors its header names, with the bytes saved (a
    header of ``{}`` is a valid file when the data is empty)."""
    file = tmp_path_factory.mktemp("j") / "c.safetensors"
    al.checkpoint.save(file, tree, step=7)
    header, data = split(file)
    if in_meta:
        meta = _replace(json.loads(header["__metadata__"]["arraylayer"]), choice, new)
        header["__metadata__"]["arraylayer"] = json.dumps(meta, separators=(",", ":"))
    else:
        header = _replace(header, choice, new)
    edited = header.get("__metadata__") if isinstance(header, dict) else None
    plain = not (isinstance(edited, dict) and {"arraylayer", CRC_KEY} & edited.keys())
    write(file, header if isinstance(header, dict) else json.dumps(header).encode(), data, sign=sign)
    result = _outcome(file)
    if result is None or (result.step == 7 and same(result.tree, tree)):
        return
    if plain:
        saved = {"/".join(map(str, path)): host(leaf) for path, leaf in zip(al.tree_paths(tree), al.tree_leaves(tree))}
        assert result.step is None and result.tree.keys() == al.checkpoint.contents(file).keys() <= saved.keys()
        assert all(leaf.tobytes() == saved[name].tobytes() for name, leaf in result.tree.items())
        return
    assert sign, "an unsigned edit was accepted as another tree"
    stored = al.checkpoint.contents(file)
    leaves = al.tree_leaves(result.tree)
    assert len(leaves) <= len(stored) and all(isinstance(leaf, np.ndarray) for leaf in leaves)
    assert {(str(al.Dtype(leaf.dtype)), leaf.shape) for leaf in leaves} <= set(stored.values())
    assert result.step is None or -2**63 <= result.step < 2**63


@PROPERTY
@given(header=json_values, data=st.binary(max_size=64))
def test_property_a_random_header_is_an_error_or_a_file(tmp_path_factory, header, data):
    file = tmp_path_factory.mktemp("r") / "c.safetensors"
    write(file, json.dumps(header).encode(), data, sign=False)
    result = _outcome(file)
    assert result is None or isinstance(result.tree, dict)
