"""Checkpoints that move between backends: a tree of arrays (parameters, optimizer state) and a
step count in a safetensors file, written on one backend and read on any other, bits unchanged.

The file is plain safetensors (an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the bytes), so other tools read it. Each leaf is
named by its path in the tree (``"params/layers/0/w"``); the tree's structure, each leaf's dtype
name and the step are kept as JSON in the header's ``__metadata__["arraylayer"]``. A dtype the
format lacks (complex128, int4, ...) is stored by its bits, as uint8 with a last axis of the
item size. Writes are atomic (a temporary file in the same folder, fsync, ``os.replace``);
reading never executes anything from the file, and every inconsistency is a
:class:`~arraylayer.errors.CheckpointError`.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import struct
from typing import Any, NamedTuple

from arraylayer import arguments
from arraylayer.api.dispatch import WRAPPERS
from arraylayer.dtypes import Dtype
from arraylayer.errors import CheckpointError, InvalidDtypeError
from arraylayer.api.interchange import to_backend
from arraylayer.runtime.registry import backend_of, current_backend
from arraylayer.models.tree import Path, _keys, path_name, tree_flatten, tree_paths

__all__ = ["Checkpoint", "save", "load", "contents"]

#: dtype name -> safetensors dtype, for the dtypes the format holds with the same bytes
_FORMAT = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32",
           "uint32": "U32", "int64": "I64", "uint64": "U64", "float16": "F16", "bfloat16": "BF16",
           "float32": "F32", "float64": "F64", "complex64": "C64", "float8_e4m3fn": "F8_E4M3",
           "float8_e5m2": "F8_E5M2", "float8_e4m3fnuz": "F8_E4M3FNUZ", "float8_e5m2fnuz": "F8_E5M2FNUZ",
           "float8_e8m0fnu": "F8_E8M0"}
_FROM_FORMAT = {code: name for name, code in _FORMAT.items()}
_HEADER_LIMIT = 100 * 2**20  # what the safetensors package itself accepts
_META = "arraylayer"


class Checkpoint(NamedTuple):
    """What :func:`load` returns: the tree and the step saved with it (None if none was)."""

    tree: Any
    step: int | None


def _numpy_dtype(name: str) -> Any:
    """NumPy's dtype (ml_dtypes' for the low-precision types) of a dtype name."""
    import ml_dtypes
    import numpy as np

    found = getattr(ml_dtypes, name, None)
    try:
        return np.dtype(found if found is not None else name)
    except TypeError:
        raise CheckpointError(f"dtype {name!r}: neither NumPy nor ml_dtypes knows it; the file names a dtype "
                              f"this installation cannot hold.") from None


# -- structure ----------------------------------------------------------------------------------------------
def _structure(tree: Any, path: Path) -> Any:
    """The tree as JSON: {"leaf": name}, {"dict": [[key, node], ...]}, {"list": [...]},
    {"tuple": [...]}, null (a named tuple becomes a dict of its fields)."""
    if type(tree) in WRAPPERS:
        return {"leaf": path_name(path)}
    if isinstance(tree, dict) or hasattr(tree, "_fields"):
        items = list(tree._asdict().items()) if hasattr(tree, "_fields") else [(k, tree[k]) for k in _keys(tree)]
        for key, _ in items:
            if key.__class__ not in (str, int):
                raise CheckpointError(f"save: the key {key!r} at {path_name(path) or 'the root'} is a "
                                      f"{type(key).__name__}; checkpoints keep str and int keys.")
        return {"dict": [[key, _structure(item, (*path, key))] for key, item in items]}
    if isinstance(tree, (list, tuple)):
        kind = "list" if isinstance(tree, list) else "tuple"
        return {kind: [_structure(item, (*path, i)) for i, item in enumerate(tree)]}
    return None if tree is None else {"leaf": path_name(path)}


def _rebuild(node: Any, arrays: dict[str, Any]) -> Any:
    if node is None:
        return None
    if not isinstance(node, dict) or len(node) != 1:
        raise CheckpointError(f"the tree in the file's metadata holds {node!r:.80}, which is no node of a tree; "
                              f"the file was changed after arraylayer wrote it.")
    (kind, body), = node.items()
    if kind == "leaf":
        return arrays[body]
    if kind == "dict":
        return {key: _rebuild(child, arrays) for key, child in body}
    if kind in ("list", "tuple"):
        items = [_rebuild(child, arrays) for child in body]
        return items if kind == "list" else tuple(items)
    raise CheckpointError(f"the tree in the file's metadata has a node of kind {kind!r}; the file was changed "
                          f"after arraylayer wrote it.")


def _subtree(node: Any, prefix: tuple[str, ...]) -> Any:
    """The node at ``prefix`` (keys compared as strings, as they appear in names)."""
    for key in prefix:
        children = next(iter(node.values())) if isinstance(node, dict) else None
        if isinstance(node, dict) and "dict" in node:
            match = [child for k, child in children if str(k) == key]
        elif isinstance(node, dict) and ("list" in node or "tuple" in node):
            match = [child for i, child in enumerate(children) if str(i) == key]
        else:
            match = []
        if not match:
            raise CheckpointError(f"load: the file holds nothing under prefix {'/'.join(prefix)!r}.")
        node = match[0]
    return node


# -- writing --------------------------------------------------------------------------------------------------
def _entry(leaf: Any, name: str) -> tuple[Any, str, tuple[int, ...]]:
    """A leaf's NumPy dtype, dtype name and shape, without computing it (dask stays lazy)."""
    if not (hasattr(leaf, "dtype") and hasattr(leaf, "shape")):
        raise CheckpointError(f"save: the leaf {name!r} is a {type(leaf).__name__}; checkpoints hold arrays "
                              f"(make it one with arraylayer.asarray).")
    try:
        dtype_name = str(Dtype(leaf.dtype))
    except InvalidDtypeError:
        dtype_name = str(_host(leaf).dtype)
    shape = tuple(leaf.shape)
    if any(not isinstance(n, int) or math.isnan(n) for n in shape):
        raise CheckpointError(f"save: the leaf {name!r} has shape {shape} with unknown lengths; compute them first "
                              f"(dask: x.compute_chunk_sizes()).")
    return _numpy_dtype(dtype_name), dtype_name, shape


def _host(leaf: Any) -> Any:
    import numpy as np

    return leaf if isinstance(leaf, np.ndarray) else np.asarray(to_backend(leaf, "numpy"))


def _header(names: list[str], entries: list[tuple[Any, str, tuple[int, ...]]], meta: dict[str, Any]) -> bytes:
    header: dict[str, Any] = {"__metadata__": {_META: json.dumps(meta, separators=(",", ":"))}}
    offset = 0
    for name, (dtype, dtype_name, shape) in zip(names, entries, strict=True):
        code = _FORMAT.get(dtype_name)
        stored = list(shape) if code else [*shape, dtype.itemsize]
        size = math.prod(shape) * dtype.itemsize
        header[name] = {"dtype": code or "U8", "shape": stored, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    return raw + b" " * (-len(raw) % 8)  # padded to 8 bytes, as the safetensors package writes


def save(file: str | os.PathLike[str], tree: Any, *, step: int | None = None) -> None:
    """Write ``tree`` (its leaves: arrays of any backend) and ``step`` to ``file`` atomically: the
    old file, if any, stays whole until the new one is complete on disk."""
    import numpy as np

    leaves, _ = tree_flatten(tree)
    names = [path_name(p) for p in tree_paths(tree)]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CheckpointError(f"save: the paths {twice} name two leaves each (keys containing '/'); rename them.")
    if step is not None:
        step = arguments.integer(step, "step")
    entries = [_entry(leaf, name) for leaf, name in zip(leaves, names, strict=True)]
    meta = {"version": 1, "tree": _structure(tree, ()), "step": step,
            "dtypes": {name: entry[1] for name, entry in zip(names, entries, strict=True)}}
    header = _header(names, entries, meta)
    path = os.fspath(file)
    folder = os.path.dirname(os.path.abspath(path))
    import tempfile  # here: it costs ~20 ms to import, and only saving needs it

    fd, temporary = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(struct.pack("<Q", len(header)))
            out.write(header)
            for leaf, name, (dtype, _, shape) in zip(leaves, names, entries, strict=True):
                host = np.asarray(_host(leaf), order="C")
                if host.dtype != dtype or host.shape != shape:
                    raise CheckpointError(f"save: the leaf {name!r} became {host.dtype} {host.shape} on the host, "
                                          f"not {dtype} {shape}.")
                out.write(host.astype(dtype.newbyteorder("<"), copy=False).reshape(-1).view(np.uint8).data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(folder)


def _sync_folder(folder: str) -> None:
    """fsync the folder, so that the rename itself survives a crash (where the OS allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# -- reading --------------------------------------------------------------------------------------------------
class _Tensor(NamedTuple):
    dtype: Any  # NumPy's
    dtype_name: str
    shape: tuple[int, ...]
    begin: int
    end: int


def _bad(path: str, what: str) -> CheckpointError:
    return CheckpointError(f"{path}: {what}; the file is truncated, was changed after it was written, or is not a "
                           f"safetensors file.")


def _read_header(path: str, handle: Any) -> tuple[dict[str, _Tensor], dict[str, Any] | None, int]:
    """The tensors, arraylayer's metadata (None for files other tools wrote) and where the data starts."""
    size = os.fstat(handle.fileno()).st_size
    if size < 8:
        raise _bad(path, f"{size} bytes, fewer than the 8 of the header length")
    (length,) = struct.unpack("<Q", handle.read(8))
    if length > min(size - 8, _HEADER_LIMIT):
        raise _bad(path, f"a header length of {length} bytes, more than the {size - 8} bytes after it")
    try:
        header = json.loads(handle.read(length).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _bad(path, f"a header that is not valid JSON ({error})") from None
    if not isinstance(header, dict):
        raise _bad(path, "a header that is not a JSON object")
    meta = _metadata(path, header.pop("__metadata__", None))
    data = size - 8 - length
    tensors = {name: _tensor(path, name, entry, meta, data) for name, entry in header.items()}
    covered = 0
    for t in sorted(tensors.values(), key=lambda t: (t.begin, t.end)):
        if t.begin != covered:
            raise _bad(path, f"tensor bytes that overlap or leave a gap at byte {covered} of the data")
        covered = t.end
    if covered != data:
        raise _bad(path, f"{data} bytes of data where the header describes {covered}")
    return tensors, meta, 8 + length


def _metadata(path: str, raw: Any) -> dict[str, Any] | None:
    if raw is None or (isinstance(raw, dict) and _META not in raw):
        return None
    try:
        meta = json.loads(raw[_META])
    except (TypeError, json.JSONDecodeError):
        raise _bad(path, "arraylayer's metadata is not valid JSON") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("dtypes"), dict) or "tree" not in meta:
        raise _bad(path, "arraylayer's metadata lacks its tree or dtypes")
    return meta


def _tensor(path: str, name: str, entry: Any, meta: dict[str, Any] | None, data: int) -> _Tensor:
    if not isinstance(entry, dict) or not {"dtype", "shape", "data_offsets"} <= entry.keys():
        raise _bad(path, f"tensor {name!r} without dtype, shape and data_offsets")
    code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if code not in _FROM_FORMAT or not isinstance(shape, list) or not all(
            isinstance(n, int) and n >= 0 for n in shape):
        raise _bad(path, f"tensor {name!r} with dtype {code!r} and shape {shape!r}")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)
            and 0 <= offsets[0] <= offsets[1] <= data):
        raise _bad(path, f"tensor {name!r} at bytes {offsets!r}, outside the {data} bytes of data")
    dtype_name = meta["dtypes"].get(name, _FROM_FORMAT[code]) if meta else _FROM_FORMAT[code]
    dtype = _numpy_dtype(dtype_name)
    shape = tuple(shape)
    if dtype_name != _FROM_FORMAT[code]:  # stored by its bits: uint8 with a last axis of the item size
        if code != "U8" or not shape or shape[-1] != dtype.itemsize:
            raise _bad(path, f"tensor {name!r} of {dtype_name} stored as {code} {list(shape)}")
        shape = shape[:-1]
    if offsets[1] - offsets[0] != math.prod(shape) * dtype.itemsize:
        raise _bad(path, f"tensor {name!r} of {dtype_name} {list(shape)} in {offsets[1] - offsets[0]} bytes")
    return _Tensor(dtype, dtype_name, shape, offsets[0], offsets[1])


def contents(file: str | os.PathLike[str]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The name, dtype name and shape of every tensor in ``file``, without reading the data."""
    path = os.fspath(file)
    with open(path, "rb") as handle:
        tensors, _, _ = _read_header(path, handle)
    return {name: (t.dtype_name, t.shape) for name, t in sorted(tensors.items())}


def _prefix(prefix: str | Path | None) -> tuple[str, ...]:
    if prefix is None:
        return ()
    keys = prefix.split("/") if isinstance(prefix, str) else [str(k) for k in prefix]
    return tuple(k for k in keys if k != "")


def load(file: str | os.PathLike[str], like: Any = None, *, backend: str | None = None,
         prefix: str | Path | None = None) -> Checkpoint:
    """Read ``file``: the tree (or its subtree under ``prefix``, e.g. ``"params"``) and the step.

    With ``like`` (a tree of arrays), the file must hold exactly its leaves under ``prefix``, with
    the same shapes and dtypes (CheckpointError naming each difference otherwise); the result has
    ``like``'s structure and each leaf the backend of ``like``'s. Without it, the structure is
    the one saved (a dict of names for files other tools wrote). ``backend`` (default: ``like``'s,
    else the active one) places every leaf."""
    import numpy as np

    path, keys = os.fspath(file), _prefix(prefix)
    start = "/".join(keys)
    with open(path, "rb") as handle:
        tensors, meta, base = _read_header(path, handle)

        def read(name: str, target: str) -> Any:
            t = tensors[name]
            handle.seek(base + t.begin)
            raw = bytearray(handle.read(t.end - t.begin))
            if len(raw) != t.end - t.begin:
                raise _bad(path, f"tensor {name!r} cut short")
            host = np.frombuffer(raw, dtype=t.dtype.newbyteorder("<")).astype(t.dtype, copy=False).reshape(t.shape)
            return host if target == "numpy" else to_backend(host, target)

        if like is not None:
            return Checkpoint(_into(path, like, start, tensors, read, backend), meta and meta.get("step"))
        target = backend or current_backend()
        if meta is None:
            chosen = {n: read(n, target) for n in sorted(tensors) if not start or n == start or
                      n.startswith(start + "/")}
            return Checkpoint(chosen, None)
        node = _subtree(meta["tree"], keys)
        arrays = _Lazy(lambda name: read(name, target))
        return Checkpoint(_rebuild(node, arrays), meta.get("step"))


class _Lazy(dict):
    """Reads a tensor when the rebuilt tree asks for it (only those under the prefix are read)."""

    def __init__(self, read: Any) -> None:
        super().__init__()
        self.read = read

    def __missing__(self, name: str) -> Any:
        return self.read(name)


def _into(path: str, like: Any, start: str, tensors: dict[str, _Tensor], read: Any, backend: str | None) -> Any:
    leaves, rebuild = tree_flatten(like)
    names = [path_name(p) for p in tree_paths(like)]
    full = [f"{start}/{n}" if start and n else (start or n) for n in names]
    in_file = {n for n in tensors if not start or n == start or n.startswith(start + "/")}
    problems = [f"{n!r} is missing" for n in full if n not in tensors]
    problems += [f"{n!r} is in the file but not in the template" for n in sorted(in_file - set(full))]
    for name, leaf in zip(full, leaves, strict=True):
        if name in tensors:
            dtype_name, shape = str(_entry(leaf, name)[1]), tuple(leaf.shape)
            t = tensors[name]
            if (t.dtype_name, t.shape) != (dtype_name, shape):
                problems.append(f"{name!r} is {t.dtype_name} {list(t.shape)} in the file, {dtype_name} "
                                f"{list(shape)} in the template")
    if problems:
        raise CheckpointError(f"load({path!r}): the file does not match the template: {'; '.join(problems)}. Load "
                              f"without a template to see what it holds, or pass prefix= for a part of it.")
    return rebuild([read(name, backend or backend_of(leaf).name) for name, leaf in zip(full, leaves, strict=True)])
