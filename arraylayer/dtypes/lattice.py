"""The type-promotion lattices of JAX's "Type promotion semantics" page as data, and the join
computed from them.

Nodes use that page's short codes (``b1``, ``u1`` ... ``c16``; ``i*``, ``f*``, ``c*`` for
weak Python int, float and complex). Promotion of two types is their least upper
bound (join) on the lattice. Joins are computed once, at import, by
:func:`join_table`; nothing here runs per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from arraylayer.lowp.formats import FLOAT_FORMATS, INT_FORMATS

__all__ = ["CODES", "LOW_PRECISION_CODES", "STANDARD_LATTICE", "STRICT_LATTICE", "WEAK_CODES", "upper_sets", "join_table"]

# Short code -> dtype name, or the Python type a weak code stands for.
CODES: Final[dict[str, str | type]] = {
    "b1": "bool", "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64",
    "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
    "bf": "bfloat16", "f2": "float16", "f4": "float32", "f8": "float64",
    "c8": "complex64", "c16": "complex128",
    "i*": int, "f*": float, "c*": complex,
    **{name: name for name in (*FLOAT_FORMATS, *INT_FORMATS)},  # the low-precision family: code = name
}
WEAK_CODES: Final = ("i*", "f*", "c*")
LOW_PRECISION_CODES: Final = (*FLOAT_FORMATS, *INT_FORMATS)

# Seed 000, "standard" mode: each node lists the nodes directly above it. The low-precision types
# (JAX 0.10's lattice) hang below nothing but the weak scalar of their kind, and have nothing above:
# a Python scalar (and so bool, and every type below a weak float) joins them; no other type does.
STANDARD_LATTICE: Final[dict[str, tuple[str, ...]]] = {
    "b1": ("i*",), "u1": ("u2", "i2"), "u2": ("i4", "u4"), "u4": ("u8", "i8"), "u8": ("f*",),
    "i*": ("u1", "i1", *INT_FORMATS), "i1": ("i2",), "i2": ("i4",), "i4": ("i8",), "i8": ("f*",),
    "f*": ("c*", "f2", "bf", *FLOAT_FORMATS), "bf": ("f4",), "f2": ("f4",), "f4": ("c8", "f8"), "f8": ("c16",),
    "c*": ("c8",), "c8": ("c16",), "c16": (),
    **{name: () for name in (*FLOAT_FORMATS, *INT_FORMATS)},
}

# Seed 000, "strict" mode: no edges between typed dtypes; a weak scalar still joins
# every dtype of its own kind or above (int -> ints and floats, float -> floats, ...).
STRICT_LATTICE: Final[dict[str, tuple[str, ...]]] = {
    **{code: () for code in CODES},
    "i*": ("f*", "u1", "u2", "u4", "u8", "i1", "i2", "i4", "i8", *INT_FORMATS),
    "f*": ("c*", "bf", "f2", "f4", "f8", *FLOAT_FORMATS),
    "c*": ("c8", "c16"),
}


def upper_sets(lattice: Mapping[str, tuple[str, ...]]) -> dict[str, frozenset[str]]:
    """For each node, every node reachable from it (itself included)."""
    result: dict[str, frozenset[str]] = {}

    def visit(node: str) -> frozenset[str]:
        if node not in result:
            above = {node}
            for parent in lattice[node]:
                above |= visit(parent)
            result[node] = frozenset(above)
        return result[node]

    for node in lattice:
        visit(node)
    return result


def join_table(lattice: Mapping[str, tuple[str, ...]]) -> dict[tuple[str, str], str | None]:
    """The join of every ordered pair of nodes; None where the pair has no upper bound."""
    uppers = upper_sets(lattice)
    # A least upper bound is the one node whose upper set is the common one (two nodes with one
    # upper set would each lie above the other): a dict look-up, and each pair once (it is symmetric).
    by_upper = {above: node for node, above in uppers.items()}
    nodes = list(lattice)
    table: dict[tuple[str, str], str | None] = {}
    for i, a in enumerate(nodes):
        upper_a = uppers[a]
        for b in nodes[i:]:
            table[a, b] = table[b, a] = by_upper.get(upper_a & uppers[b])
    return {(a, b): table[a, b] for a in nodes for b in nodes}
