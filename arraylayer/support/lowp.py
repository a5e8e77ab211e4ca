"""Which low-precision dtypes the element-wise and statistical functions take on a backend.

Every backend computes them by one rule (arraylayer/lowp/compute.py), so the answer for a
function and a low-precision dtype is "supported" where the backend holds the dtype and the
standard defines the function for its kind, "undefined" where it does not define it (bitwise
functions of a float8), and "invalid" where the backend cannot hold the dtype (torch's int4).
Functions outside the rule (``matmul``, ``sort`` ...) refuse these dtypes on every backend.
tests/test_lowp_compute.py calls every cell and checks the answer.
"""

from __future__ import annotations

from typing import Any

from ..dtypes import Dtype, all_low_precision_dtypes
from ..function_rules import KIND_LETTER, KIND_WORDS
from .queries import Cell, resolve_backend

__all__ = ["low_precision_support"]


def low_precision_support(fn: Any, backend: Any = None) -> dict[Dtype, Cell]:
    """Every low-precision dtype's :class:`Cell` for ``fn`` (a function of the rule, or its name) on
    ``backend`` (a name, a Backend, or None for the active one)."""
    # imported when asked: it imports NumPy, and `import arraylayer` imports no framework
    from ..lowp.compute import FUNCTIONS

    name = fn if isinstance(fn, str) else getattr(fn, "__name__", "")
    kinds = FUNCTIONS.get(name)
    if kinds is None:
        from ..errors import InvalidArgumentError

        raise InvalidArgumentError(
            f"fn={fn!r}: low-precision dtypes are computed by the element-wise and statistical functions only "
            f"({', '.join(sorted(FUNCTIONS))}); every other function refuses them."
        )
    resolved = resolve_backend(backend)
    held = set(resolved.low_precision_dtypes())
    cells: dict[Dtype, Cell] = {}
    for dtype in all_low_precision_dtypes:
        if dtype not in held:
            cells[dtype] = Cell("invalid", f"{resolved.name} cannot hold {dtype}")
        elif KIND_LETTER[dtype.category] not in kinds:
            takes = " or ".join(KIND_WORDS[k] for k in kinds)
            cells[dtype] = Cell("undefined", f"{name} is defined for {takes} input only")
        else:
            wide = "float32" if dtype.category == "float" else "int32"
            cells[dtype] = Cell("supported", f"computed in {wide} and rounded once (the low-precision rule)")
    return cells
