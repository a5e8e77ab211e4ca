"""Checkpoints that move between backends: a tree of arrays (parameters, optimizer state) and a
step count in a safetensors file, written on one backend and read on any other, bits unchanged.

The file is plain safetensors (``safetensors_format.py``), so other tools read it. Each leaf is
named by its path in the tree (``"params/layers/0/w"``); the tree's structure, each leaf's dtype
name and CRC-32, and the step are kept as JSON in the header's ``__metadata__["arraylayer"]``,
and ``__metadata__["arraylayer.crc32"]`` is the CRC-32 of the header itself (those 8 digits read
as zeros). A dtype the format lacks (complex128, int4, ...) is stored by its bits, as uint8 with a
last axis of the item size. Writes are atomic and keep the file's mode (``atomic_files.py``).
Reading never executes anything from the file, reads each byte of it at most once, and every
inconsistency is a :class:`~arraylayer.errors.CheckpointError` naming the file (docs/checkpoints.rst
lists the checks and limits).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import struct
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO, NamedTuple

from arraylayer import arguments
from arraylayer.api.dispatch import WRAPPERS
from arraylayer.api.interchange import to_backend
from arraylayer.dtypes import Dtype
from arraylayer.dtypes.catalogue import CATALOGUE
from arraylayer.errors import CheckpointError, InvalidArgumentTypeError, InvalidDtypeError
from arraylayer.models.atomic_files import open_regular, write_atomically
from arraylayer.models.safetensors_format import (FORMAT, FROM_FORMAT, METADATA, Entry, bad, encode_header,
                                                  numpy_dtype, parse_json, read_header, unicode_text)
from arraylayer.models.tree import Path, _keys, path_name, tree_flatten, tree_paths
from arraylayer.runtime.registry import backend_of, current_backend

__all__ = ["Checkpoint", "save", "load", "contents", "TREE_DEPTH"]

#: containers nested at most this deep (the root is the first); the metadata's JSON nests 3 per level
TREE_DEPTH = 100
_META, _META_CRC, _VERSION = "arraylayer", "arraylayer.crc32", 2
#: the metadata's keys in each version read (1: before checksums)
_META_KEYS = {1: {"version", "tree", "step", "dtypes"}, 2: {"version", "tree", "step", "dtypes", "crc32"}}
_STEPS = range(-2**63, 2**63)
_ZERO = "0" * 8
_HEX = re.compile(r"[0-9a-f]{8}")
#: dtype name -> the bytes it may hold are below this (the rest are no value of it)
_BYTE_BOUND = {"bool": 2} | {name: 2**bits for name, (_, bits) in CATALOGUE.items() if bits < 8}


class Checkpoint(NamedTuple):
    """What :func:`load` returns: the tree and the step saved with it (None if none was)."""

    tree: Any
    step: int | None


# -- structure ----------------------------------------------------------------------------------------------
def _containers(nodes: Any) -> list[Any]:
    return [n for n in nodes if type(n) not in WRAPPERS and isinstance(n, (dict, list, tuple))]


def _check_nesting(file: str, tree: Any) -> None:
    """CheckpointError if containers nest deeper than TREE_DEPTH (found level by level: no recursion)."""
    level, depth = _containers([tree]), 0
    while level:
        depth += 1
        if depth > TREE_DEPTH:
            raise CheckpointError(f"save({file!r}): the tree nests containers more than {TREE_DEPTH} deep (or holds "
                                  f"itself); checkpoints keep trees of at most {TREE_DEPTH} levels: flatten it.")
        children = (c for n in level for c in (n.values() if isinstance(n, dict) else n))
        level = list({id(c): c for c in _containers(children)}.values())


def _structure(file: str, tree: Any, path: Path) -> Any:
    """The tree as JSON: {"leaf": name}, {"dict": [[key, node], ...]}, {"list": [...]},
    {"tuple": [...]}, null (a named tuple becomes a dict of its fields)."""
    if type(tree) in WRAPPERS:
        return {"leaf": path_name(path)}
    if isinstance(tree, dict) or hasattr(tree, "_fields"):
        items = list(tree._asdict().items()) if hasattr(tree, "_fields") else [(k, tree[k]) for k in _keys(tree)]
        for key, _ in items:
            if key.__class__ not in (str, int) or (key.__class__ is str and not unicode_text(key)):
                what = "a str with a lone surrogate" if key.__class__ is str else f"a {type(key).__name__}"
                raise CheckpointError(f"save({file!r}): the key {key!r} at {path_name(path) or 'the root'} is "
                                      f"{what}; checkpoints keep str and int keys (str of Unicode, as JSON has).")
        return {"dict": [[key, _structure(file, item, (*path, key))] for key, item in items]}
    if isinstance(tree, (list, tuple)):
        kind = "list" if isinstance(tree, list) else "tuple"
        return {kind: [_structure(file, item, (*path, i)) for i, item in enumerate(tree)]}
    return None if tree is None else {"leaf": path_name(path)}


def _pairs(file: str, body: Any) -> list[tuple[Any, Any]]:
    """The [key, node] pairs of a dict node: str (Unicode) or int keys, each once."""
    if not (isinstance(body, list) and all(isinstance(p, list) and len(p) == 2 for p in body)):
        raise bad(file, "a dict in the metadata's tree that is not a list of [key, node] pairs")
    keys = [key for key, _ in body]
    valid = all(k.__class__ in (int, str) for k in keys)  # parse_json refused lone surrogates
    if not valid or len(set(keys)) != len(keys):  # set() after the check: a key may be a list
        raise bad(file, f"a dict in the metadata's tree with keys {keys!r:.80} (str or int, each once)")
    return [(key, node) for key, node in body]


def _items(file: str, body: Any) -> list[tuple[Any, Any]]:
    if not isinstance(body, list):
        raise bad(file, f"a list in the metadata's tree holding {body!r:.80}")
    return list(enumerate(body))


_CHILDREN = {"dict": _pairs, "list": _items, "tuple": _items}


def _check_tree(file: str, node: Any, name: str, depth: int, leaves: list[str]) -> None:
    """That ``node`` (at path ``name``, ``depth`` containers down) is a tree node whose leaves are
    named by their paths (collected in ``leaves``)."""
    if node is None:
        return
    if not (isinstance(node, dict) and len(node) == 1 and next(iter(node)) in ("leaf", *_CHILDREN)):
        raise bad(file, f"the metadata's tree holds {node!r:.80}, which is no node of a tree")
    (kind, body), = node.items()
    if kind == "leaf":
        if body != name:
            raise bad(file, f"the metadata's tree names the leaf at {name!r:.80} {body!r:.80}")
        leaves.append(body)
        return
    if depth >= TREE_DEPTH:
        raise bad(file, f"the metadata's tree nests more than {TREE_DEPTH} deep")
    for key, child in _CHILDREN[kind](file, body):
        _check_tree(file, child, f"{name}/{key}" if depth else str(key), depth + 1, leaves)


def _rebuild(node: Any, arrays: Any) -> Any:
    """The tree of a checked node, each leaf ``arrays[name]``."""
    if node is None:
        return None
    (kind, body), = node.items()
    if kind == "leaf":
        return arrays[body]
    if kind == "dict":
        return {key: _rebuild(child, arrays) for key, child in body}
    items = [_rebuild(child, arrays) for child in body]
    return items if kind == "list" else tuple(items)


def _subtree(node: Any, prefix: tuple[str, ...]) -> Any:
    """The node at ``prefix`` (keys compared as strings, as they appear in names)."""
    for key in prefix:
        (kind, children), = node.items() if isinstance(node, dict) else ((None, None),)
        pairs = children if kind == "dict" else enumerate(children) if kind in ("list", "tuple") else []
        match = [child for k, child in pairs if str(k) == key]
        if not match:
            raise CheckpointError(f"load: the file holds nothing under prefix {'/'.join(prefix)!r}.")
        node = match[0]
    return node


# -- writing --------------------------------------------------------------------------------------------------
def _entry(leaf: Any, name: str, file: str) -> tuple[Any, str, tuple[int, ...]]:
    """A leaf's NumPy dtype, dtype name and shape, without computing it (dask stays lazy)."""
    if not (hasattr(leaf, "dtype") and hasattr(leaf, "shape")):
        raise CheckpointError(f"save({file!r}): the leaf {name!r} is a {type(leaf).__name__}; checkpoints hold arrays "
                              f"(make it one with arraylayer.asarray).")
    try:
        dtype_name = str(Dtype(leaf.dtype))
    except InvalidDtypeError:
        dtype_name = str(_host(leaf).dtype)
    if dtype_name not in CATALOGUE:
        raise CheckpointError(f"save({file!r}): the leaf {name!r} has dtype {dtype_name}, which checkpoints do not "
                              f"hold; they hold arraylayer's dtypes ({', '.join(CATALOGUE)}): convert it first.")
    shape = tuple(leaf.shape)
    if any(not isinstance(n, int) or math.isnan(n) for n in shape):
        raise CheckpointError(f"save({file!r}): the leaf {name!r} has shape {shape} with unknown lengths; compute "
                              f"them first (dask: x.compute_chunk_sizes()).")
    return numpy_dtype(dtype_name), dtype_name, shape


def _host(leaf: Any) -> Any:
    import numpy as np

    return leaf if isinstance(leaf, np.ndarray) else np.asarray(to_backend(leaf, "numpy"))


def _needle(crc: str) -> bytes:
    """How the header's own CRC-32 appears in it (once: a key can only be this where it is a key)."""
    return f'"{_META_CRC}":"{crc}"'.encode()


def _encode(file: str, names: list[str], entries: list[Any], meta: dict[str, Any]) -> bytes:
    stored = {}
    for name, (dtype, dtype_name, shape) in zip(names, entries, strict=True):
        code = FORMAT.get(dtype_name)
        stored[name] = (code or "U8", shape if code else (*shape, dtype.itemsize), math.prod(shape) * dtype.itemsize)
    raw = encode_header(file, stored, {_META: json.dumps(meta, separators=(",", ":")), _META_CRC: _ZERO})
    return raw.replace(_needle(_ZERO), _needle(f"{zlib.crc32(raw):08x}"), 1)


def _refuse_names(file: str, names: list[str]) -> None:
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise CheckpointError(f"save({file!r}): the paths {twice} name two leaves each (keys containing '/'); "
                              f"rename them.")
    if METADATA in names:
        raise CheckpointError(f"save({file!r}): a leaf is named {METADATA!r}, the name the format keeps for its "
                              f"metadata; rename its key.")


def _fspath(file: Any, doing: str) -> str:
    """``file`` as a path string (str, bytes or os.PathLike), else the error naming the fix."""
    try:
        path = os.fspath(file)
    except TypeError:
        raise InvalidArgumentTypeError(f"{doing}(file={file!r}): pass a path (a str or a pathlib.Path), not "
                                       f"{type(file).__name__}.") from None
    if not path:
        raise CheckpointError(f"{doing}(file=''): pass the path of a file.")
    return os.fsdecode(path)


@contextlib.contextmanager
def _file_errors(doing: str, path: str) -> Iterator[None]:
    """The operating system's refusals (no such file or directory, permission denied, no space left)
    as CheckpointError naming the file, the operation and the reason."""
    try:
        yield
    except OSError as e:
        raise CheckpointError(f"{doing}({path!r}): {e.strerror or e}"
                              f"{f' ({e.filename})' if e.filename and e.filename != path else ''}.") from e


def save(file: str | os.PathLike[str], tree: Any, *, step: int | None = None) -> None:
    """Write ``tree`` (its leaves: arrays of any backend) and ``step`` to ``file`` atomically: the
    old file, if any, stays whole until the new one is complete on disk, and the new one keeps its
    mode. Temporaries that killed writers left next to ``file`` are deleted (docs/checkpoints.rst)."""
    path = _fspath(file, "save")
    with _file_errors("save", path):
        _save(path, tree, step)


def _save(path: str, tree: Any, step: int | None) -> None:
    import numpy as np

    _check_nesting(path, tree)
    leaves, _ = tree_flatten(tree)
    names = [path_name(p) for p in tree_paths(tree)]
    _refuse_names(path, names)
    if step is not None and (step := arguments.integer(step, "step")) not in _STEPS:
        raise CheckpointError(f"save({path!r}): step={step} is outside int64; pass a smaller step.")
    entries = [_entry(leaf, name, path) for leaf, name in zip(leaves, names, strict=True)]
    meta = {"version": _VERSION, "tree": _structure(path, tree, ()), "step": step,
            "dtypes": {name: entry[1] for name, entry in zip(names, entries, strict=True)},
            "crc32": dict.fromkeys(names, _ZERO)}
    header = _encode(path, names, entries, meta)

    def write(out: BinaryIO) -> None:  # the data first, then the header with its checksums, of the same length
        out.seek(8 + len(header))
        for leaf, name, (dtype, _, shape) in zip(leaves, names, entries, strict=True):
            host = np.asarray(_host(leaf), order="C")
            if host.dtype != dtype or host.shape != shape:
                raise CheckpointError(f"save({path!r}): the leaf {name!r} became {host.dtype} {host.shape} on the "
                                      f"host, not {dtype} {shape}.")
            data = host.astype(dtype.newbyteorder("<"), copy=False).reshape(-1).view(np.uint8).data
            meta["crc32"][name] = f"{zlib.crc32(data):08x}"
            out.write(data)
        final = _encode(path, names, entries, meta)
        assert len(final) == len(header), "checksums are of fixed width"
        out.seek(0)
        out.write(struct.pack("<Q", len(final)) + final)

    write_atomically(path, write)


# -- reading --------------------------------------------------------------------------------------------------
class _Tensor(NamedTuple):
    dtype: Any  # NumPy's
    dtype_name: str
    shape: tuple[int, ...]
    begin: int
    end: int
    crc: int | None  # None in files without arraylayer's metadata or of version 1


def _metadata(path: str, metadata: dict[str, str], raw: bytes, names: set[str]) -> dict[str, Any] | None:
    """arraylayer's checked metadata (None for files other tools wrote)."""
    if _META not in metadata:
        if _META_CRC in metadata:
            raise bad(path, f"{METADATA} with arraylayer's CRC-32 but without arraylayer's metadata")
        return None
    meta = parse_json(path, metadata[_META].encode(), "arraylayer's metadata", 3 * TREE_DEPTH + 2)
    version = meta.get("version") if isinstance(meta, dict) else None
    if version.__class__ is not int or version not in _META_KEYS or meta.keys() != _META_KEYS[version]:
        raise bad(path, f"arraylayer's metadata of version {version!r:.20} with keys {sorted(meta)!r:.120}"
                        if isinstance(meta, dict) else "arraylayer's metadata that is not a JSON object")
    crc = metadata.get(_META_CRC)
    if version >= 2 and not (crc is not None and _HEX.fullmatch(crc) and raw.count(_needle(crc)) == 1
                             and zlib.crc32(raw.replace(_needle(crc), _needle(_ZERO))) == int(crc, 16)):
        raise bad(path, "a header whose bytes do not match its CRC-32")
    if version < 2 and crc is not None:
        raise bad(path, f"a CRC-32 with metadata of version {version}, which has none")
    step = meta["step"]
    if step is not None and (step.__class__ is not int or step not in _STEPS):
        raise bad(path, f"a step of {step!r:.40}, not an int64 or null")
    for key in _META_KEYS[version] & {"dtypes", "crc32"}:
        table = meta[key]
        if not (isinstance(table, dict) and table.keys() == names and all(isinstance(v, str) for v in table.values())):
            raise bad(path, f"arraylayer's metadata whose {key} do not name each tensor of the file once")
    if not all(map(_HEX.fullmatch, meta.get("crc32", {}).values())):
        raise bad(path, "a tensor's CRC-32 that is not 8 hex digits")
    leaves: list[str] = []
    _check_tree(path, meta["tree"], "", 0, leaves)
    if len(leaves) != len(names) or set(leaves) != names:
        raise bad(path, f"a tree of {len(leaves)} leaves for {len(names)} tensors (each must be one leaf)")
    return meta


def _tensor(path: str, name: str, entry: Entry, meta: dict[str, Any] | None) -> _Tensor:
    dtype_name = meta["dtypes"][name] if meta else FROM_FORMAT[entry.code]
    if dtype_name not in CATALOGUE:
        raise bad(path, f"tensor {name!r} of dtype {dtype_name!r:.40}, which is none of arraylayer's")
    dtype, code, shape = numpy_dtype(dtype_name), FORMAT.get(dtype_name, "U8"), entry.shape
    if dtype_name not in FORMAT:  # stored by its bits: uint8 with a last axis of the item size
        shape = shape[:-1] if shape and shape[-1] == dtype.itemsize else None
    if entry.code != code or shape is None:
        raise bad(path, f"tensor {name!r} of {dtype_name} stored as {entry.code} {list(entry.shape)}")
    crc = int(meta["crc32"][name], 16) if meta and "crc32" in meta else None
    return _Tensor(dtype, dtype_name, shape, entry.begin, entry.end, crc)


def _open(path: str, handle: BinaryIO) -> tuple[dict[str, _Tensor], dict[str, Any] | None, int]:
    """The checked tensors, arraylayer's metadata (None for files other tools wrote) and where the data starts."""
    header = read_header(path, handle)
    meta = _metadata(path, header.metadata, header.raw, set(header.tensors))
    return {name: _tensor(path, name, entry, meta) for name, entry in header.tensors.items()}, meta, header.base


def _read(path: str, handle: BinaryIO, base: int, name: str, t: _Tensor) -> Any:
    """Tensor ``name``'s bytes as a NumPy array, its CRC-32 and bytes checked."""
    import numpy as np

    handle.seek(base + t.begin)
    raw = bytearray(t.end - t.begin)
    if handle.readinto(raw) != len(raw):
        raise bad(path, f"tensor {name!r} cut short")
    if t.crc is not None and zlib.crc32(raw) != t.crc:
        raise bad(path, f"tensor {name!r} whose bytes do not match their CRC-32")
    bound = _BYTE_BOUND.get(t.dtype_name)
    if bound and raw and (top := int(np.frombuffer(raw, np.uint8).max())) >= bound:
        raise bad(path, f"tensor {name!r} of {t.dtype_name} holding the byte {top:#04x}, which is no {t.dtype_name} "
                        f"(its bytes are below {bound})")
    return np.frombuffer(raw, dtype=t.dtype.newbyteorder("<")).astype(t.dtype, copy=False).reshape(t.shape)


def contents(file: str | os.PathLike[str]) -> dict[str, tuple[str, tuple[int, ...]]]:
    """The name, dtype name and shape of every tensor in ``file``, without reading the data."""
    path = _fspath(file, "contents")
    with _file_errors("contents", path), open_regular(path) as handle:
        tensors, _, _ = _open(path, handle)
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
    else the active one) places every leaf. Only regular files are read (CheckpointError for a
    FIFO or a device), and each tensor at most once."""
    path, keys = _fspath(file, "load"), _prefix(prefix)
    start = "/".join(keys)
    with _file_errors("load", path), open_regular(path) as handle:
        tensors, meta, base = _open(path, handle)
        step = meta["step"] if meta else None

        def read(name: str, target: str) -> Any:
            host = _read(path, handle, base, name, tensors[name])
            return host if target == "numpy" else to_backend(host, target)

        if like is not None:
            return Checkpoint(_into(path, like, start, tensors, read, backend), step)
        target = backend or current_backend()
        if meta is None:
            chosen = {n: read(n, target) for n in sorted(tensors) if not start or n == start or
                      n.startswith(start + "/")}
            return Checkpoint(chosen, None)
        node = _subtree(meta["tree"], keys)
        arrays = _Lazy(lambda name: read(name, target))
        return Checkpoint(_rebuild(node, arrays), step)


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
            dtype_name, shape = str(_entry(leaf, name, path)[1]), tuple(leaf.shape)
            t = tensors[name]
            if (t.dtype_name, t.shape) != (dtype_name, shape):
                problems.append(f"{name!r} is {t.dtype_name} {list(t.shape)} in the file, {dtype_name} "
                                f"{list(shape)} in the template")
    if problems:
        raise CheckpointError(f"load({path!r}): the file does not match the template: {'; '.join(problems)}. Load "
                              f"without a template to see what it holds, or pass prefix= for a part of it.")
    return rebuild([read(name, backend or backend_of(leaf).name) for name, leaf in zip(full, leaves, strict=True)])
