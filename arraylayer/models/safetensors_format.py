"""The safetensors format, read as if every file were hostile, and written so that it reads back.

A file is an 8-byte little-endian header length ``N``, ``N`` bytes of JSON (an object: each tensor's
name -> ``{"dtype", "shape", "data_offsets"}``, and an optional ``"__metadata__"`` of str -> str),
then the data, every byte of which belongs to exactly one tensor. Reading checks all of it before
a byte of data is read: the length against :data:`HEADER_LIMIT` and the file's size, the JSON's
nesting before it is parsed (no RecursionError), duplicate keys, NaN/Infinity and lone
surrogates (JSON other readers refuse), each entry's keys, dtype code, shape and byte range, and
that the ranges tile the data exactly. Every problem is a :class:`~arraylayer.errors.CheckpointError`
naming the file. Nothing here knows arraylayer's own metadata (``checkpoint.py`` does).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import struct
from typing import Any, BinaryIO, NamedTuple

from arraylayer.errors import CheckpointError

__all__ = ["FORMAT", "FROM_FORMAT", "HEADER_LIMIT", "MAX_NDIM", "METADATA", "Entry", "Header", "bad", "numpy_dtype",
           "parse_json", "read_header", "encode_header", "unicode_text"]

#: dtype name -> safetensors dtype code, for the dtypes the format holds with the same bytes
FORMAT = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16", "int32": "I32",
          "uint32": "U32", "int64": "I64", "uint64": "U64", "float16": "F16", "bfloat16": "BF16",
          "float32": "F32", "float64": "F64", "complex64": "C64", "float8_e4m3fn": "F8_E4M3",
          "float8_e5m2": "F8_E5M2", "float8_e4m3fnuz": "F8_E4M3FNUZ", "float8_e5m2fnuz": "F8_E5M2FNUZ",
          "float8_e8m0fnu": "F8_E8M0"}
FROM_FORMAT = {code: name for name, code in FORMAT.items()}
#: bytes of JSON header at most (the safetensors package allows 100 MB; 16 MiB is ~80,000 leaves
#: with arraylayer's metadata, and bounds what parsing a header costs)
HEADER_LIMIT = 16 * 2**20
#: nesting of the header's JSON: {name: {"shape": [...]}} is 3 deep
HEADER_DEPTH = 3
#: dimensions of a tensor at most (NumPy's limit)
MAX_NDIM = 64
#: a tensor's lengths (those that are not 0) times its item size stay below this (NumPy's limit)
SIZE_LIMIT = 2**63
METADATA = "__metadata__"
_ENTRY_KEYS = frozenset({"dtype", "shape", "data_offsets"})
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_SURROGATE_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


class Entry(NamedTuple):
    """A tensor as the header describes it: dtype code, stored shape, byte range in the data."""

    code: str
    shape: tuple[int, ...]
    begin: int
    end: int


class Header(NamedTuple):
    tensors: dict[str, Entry]
    metadata: dict[str, str]
    base: int  # where the data starts in the file
    raw: bytes  # the header's bytes, padding included


def bad(path: str, what: str) -> CheckpointError:
    return CheckpointError(f"{path}: {what}; the file is truncated, was changed after it was written, or is not a "
                           f"safetensors file: save it again or restore it from a copy.")


@functools.lru_cache(maxsize=64)  # names are checked against a catalogue first
def numpy_dtype(name: str) -> Any:
    """NumPy's dtype (ml_dtypes' for the low-precision types) of a dtype name."""
    import ml_dtypes
    import numpy as np

    found = getattr(ml_dtypes, name, None)
    try:
        return np.dtype(found if found is not None else name)
    except TypeError:
        raise CheckpointError(f"dtype {name!r}: neither NumPy nor ml_dtypes knows it; the file names a dtype "
                              f"this installation cannot hold.") from None


def _depth(raw: bytes) -> int:
    """How deep the JSON in ``raw`` nests, brackets in strings left out (NumPy: linear, no recursion)."""
    import numpy as np

    codes = np.frombuffer(_STRING.sub(b'""', raw), np.uint8)
    steps = np.zeros(256, np.int8)
    steps[[ord("["), ord("{")]], steps[[ord("]"), ord("}")]] = 1, -1
    moves = steps[codes]
    moves = moves[moves != 0]
    return int(np.cumsum(moves, dtype=np.int32).max(initial=0))


def unicode_text(text: str) -> bool:
    """Whether ``text`` is Unicode that UTF-8 holds (no lone surrogate, which JSON's other readers refuse)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class _Refused(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Refused("an object that has a key twice")
    return found


def _lone_surrogate(raw: bytes) -> bool:
    """Whether a string of the JSON in ``raw`` escapes half a surrogate pair (``raw`` is UTF-8, which
    holds no surrogate itself). Escaped backslashes go first, so that ``\\\\ud800`` is text."""
    return _SURROGATE.search(_SURROGATE_PAIR.sub(b"", raw.replace(b"\\\\", b""))) is not None


def _constant(name: str) -> Any:
    raise _Refused(f"{name}, which is not JSON")


def parse_json(path: str, raw: bytes, what: str, depth: int) -> Any:
    """``raw`` as strict JSON nested at most ``depth`` deep, or CheckpointError naming ``what``."""
    if (found := _depth(raw)) > depth:
        raise bad(path, f"{what} is nested {found} deep, more than the {depth} it may be")
    if _lone_surrogate(raw):
        raise bad(path, f"{what} holds a string with a lone surrogate (not Unicode)")
    try:
        return json.loads(raw.decode("utf-8"), object_pairs_hook=_pairs, parse_constant=_constant)
    except _Refused as error:
        raise bad(path, f"{what} holds {error}") from None
    except (UnicodeDecodeError, ValueError) as error:  # JSONDecodeError; ints of over 4,300 digits
        raise bad(path, f"{what} is not valid JSON ({error})") from None


def _int(value: Any) -> bool:
    return value.__class__ is int  # JSON's true and false are no lengths


def _entry(path: str, name: str, entry: Any, data: int) -> Entry:
    if not isinstance(entry, dict) or entry.keys() != _ENTRY_KEYS:
        raise bad(path, f"tensor {name!r} with {sorted(entry) if isinstance(entry, dict) else entry!r:.80} where "
                        f"the format has exactly {sorted(_ENTRY_KEYS)}")
    code, shape, offsets = entry["dtype"], entry["shape"], entry["data_offsets"]
    if not isinstance(code, str) or code not in FROM_FORMAT:
        raise bad(path, f"tensor {name!r} with dtype {code!r:.40}, none of {sorted(FROM_FORMAT)}")
    if not (isinstance(shape, list) and len(shape) <= MAX_NDIM and all(_int(n) and n >= 0 for n in shape)):
        raise bad(path, f"tensor {name!r} with shape {shape!r:.80}, not a list of at most {MAX_NDIM} lengths >= 0")
    itemsize = numpy_dtype(FROM_FORMAT[code]).itemsize
    if math.prod(n for n in shape if n) * itemsize >= SIZE_LIMIT:
        raise bad(path, f"tensor {name!r} of shape {shape!r:.80}, too large for any array")
    if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_int, offsets))
            and 0 <= offsets[0] <= offsets[1] <= data):
        raise bad(path, f"tensor {name!r} at bytes {offsets!r:.80}, outside the {data} bytes of data (or reversed)")
    if offsets[1] - offsets[0] != math.prod(shape) * itemsize:
        raise bad(path, f"tensor {name!r} of {FROM_FORMAT[code]} {shape} in {offsets[1] - offsets[0]} bytes")
    return Entry(code, tuple(shape), offsets[0], offsets[1])


def read_header(path: str, handle: BinaryIO) -> Header:
    """The checked header of the regular file open as ``handle``."""
    size = os.fstat(handle.fileno()).st_size
    if size < 8:
        raise bad(path, f"{size} bytes, fewer than the 8 of the header length")
    handle.seek(0)
    (length,) = struct.unpack("<Q", handle.read(8))
    if length > HEADER_LIMIT:
        raise bad(path, f"a header length of {length} bytes, more than the limit of {HEADER_LIMIT}")
    if length > size - 8:
        raise bad(path, f"a header length of {length} bytes, more than the {size - 8} bytes after it")
    raw = handle.read(length)
    if len(raw) != length or not raw.startswith(b"{"):
        raise bad(path, "a header that is not a JSON object")
    header = parse_json(path, raw, "the header", HEADER_DEPTH)
    metadata = header.pop(METADATA, {})
    if not (isinstance(metadata, dict) and all(isinstance(v, str) for v in metadata.values())):
        raise bad(path, f"{METADATA} of {metadata!r:.80}, not an object of strings")
    data = size - 8 - length
    tensors = {name: _entry(path, name, entry, data) for name, entry in header.items()}
    covered = 0
    for t in sorted(tensors.values(), key=lambda t: (t.begin, t.end)):
        if t.begin != covered:
            raise bad(path, f"tensor bytes that overlap or leave a gap at byte {covered} of the data")
        covered = t.end
    if covered != data:
        raise bad(path, f"{data} bytes of data where the header describes {covered}")
    return Header(tensors, metadata, 8 + length, raw)


def encode_header(file: str, entries: dict[str, tuple[str, tuple[int, ...], int]], metadata: dict[str, str]) -> bytes:
    """The header of ``entries`` (name -> dtype code, stored shape, bytes) in their order, padded to
    8 bytes with spaces (as the safetensors package writes); CheckpointError past HEADER_LIMIT."""
    header: dict[str, Any] = {METADATA: metadata}
    offset = 0
    for name, (code, shape, size) in entries.items():
        header[name] = {"dtype": code, "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)
    if len(raw) > HEADER_LIMIT:
        raise CheckpointError(f"save({file!r}): the header would be {len(raw)} bytes, more than the {HEADER_LIMIT} "
                              f"a checkpoint's may be; save the tree in parts (one file per subtree).")
    return raw
