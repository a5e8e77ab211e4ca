"""Which low-precision dtypes each public function takes on a backend: computed, stored only, or not held.

Every backend computes with them by one rule (arraylayer/lowp/compute.py), so a cell does not depend on
a framework's kernels but on three facts: whether the backend holds the dtype (``low_precision_dtypes``,
from the storage measured per framework version in ``lowp.STATUS``), whether the function is one the
rule runs, moves elements or only makes or converts arrays, and whether the standard defines it for the kind:

- "supported": computed by the rule (element-wise functions as tables, reductions in float32 or int32,
  order and selection exactly), moved with the elements' bits (``reshape``, ``concat``, ``take`` ...:
  lowp/moving.py), or made/converted through the casts (``zeros``, ``arange``, ``asarray``, ``astype``);
- "undefined": the standard does not define the function for the kind (``bitwise_and`` of a float8);
- "unsupported": stored only: the function refuses the dtype with UnsupportedDtypeError on every backend
  that holds it, naming the ``astype`` to write (``matmul``: ``lowp.scaled_matmul``; ``eye``, ``tril``
  and ``triu`` of float8_e8m0fnu, which has no zero);
- "invalid": the backend cannot hold the dtype (torch's int4);
- "unverified": the backend holds the dtype at the framework versions the storage was measured at
  (:data:`MEASURED`), and the installed version is outside them: run ``arraylayer probe``.

:func:`arraylayer.cli.probe.probe_low_precision` calls a sample of the cells (all of them with
``AL_LOWP_EXHAUSTIVE=1``) and reports every cell whose call does not do what it says.
"""

from __future__ import annotations

from typing import Any, Final

from arraylayer.dtypes import Dtype, all_low_precision_dtypes
from arraylayer.dtypes.function_rules import KIND_LETTER, KIND_WORDS
from arraylayer.support.cells import Cell, resolve_backend
from arraylayer.support.declarations import covering_range
from arraylayer.support.names import function_name
from arraylayer.support.table import function_table

__all__ = ["low_precision_support", "COMPOSED", "CONVERTED", "MEASURED", "NEEDS_ZERO", "REFUSED_KINDS"]

#: Functions that make or convert arrays of a low-precision dtype through the casts (lowp/convert.py),
#: beside those whose table rule is "none"/"independent" (``can_cast``, ``finfo``, ``result_type`` ...).
CONVERTED: Final = frozenset({"arange", "asarray", "astype", "empty", "empty_like", "eye", "full", "full_like", "ones",
                              "ones_like", "zeros", "zeros_like", "from_dlpack"})
#: Functions that fill with 1, and the formats that have no 1 (int1 holds -1 and 0).
_ONES: Final = frozenset({"ones", "ones_like", "eye"})
_WITHOUT_ONE: Final = frozenset({"int1"})
#: Kernels a composition calls on bool arrays only (``nanmax``'s ``all``), never on the format.
_ON_BOOL: Final = frozenset({"all", "any"})
#: Kernels a composition reaches through the public creation functions (``pad``'s ``full``): made by the casts.
_MADE: Final = frozenset({"empty", "full", "ones", "zeros"})
#: Compositions of the rule's functions that refuse some kinds anyway (kind letters): the NaN-aware mean,
#: var and std of a float format would divide the format by a float32 count, and the quantiles would
#: interpolate in it (api/extensions.py).
REFUSED_KINDS: Final[dict[str, str]] = {"nanmean": "f", "nanvar": "f", "nanstd": "f", "quantile": "f",
                                        "nanquantile": "f"}
#: Functions whose api layer composes other public functions for the formats instead of calling its
#: kernel: ``diff`` is n passes of ``subtract`` of elements moved by ``take`` (api/utility.py).
COMPOSED: Final[dict[str, tuple[str, ...]]] = {"diff": ("subtract", "take", "concat")}
#: Functions that write zeros: they refuse the formats without one (float8_e8m0fnu).
NEEDS_ZERO: Final = frozenset({"eye", "tril", "triu"})
#: The framework versions at which each backend's low-precision storage (``lowp.STATUS``) was measured;
#: another version's cells are "unverified" (numpy and dask: ml_dtypes' types, whatever NumPy).
MEASURED: Final[dict[str, str]] = {"numpy": ">=1.26", "dask": ">=2024.1", "jax": ">=0.10,<0.11",
                                   "torch": ">=2.13,<2.14", "tensorflow": ">=2.21,<2.22"}


def _computed(name: str) -> tuple[str, str] | None:
    """(kinds, how) where the rule computes ``name``, or moves its elements, or does either in every
    kernel it calls (``isin`` is ``equal``; ``pad`` is ``full``, ``concat`` and ``take``), else None."""
    from arraylayer.lowp.compute import FUNCTIONS, STATISTICAL
    from arraylayer.lowp.exact import EXACT, ZERO_TESTS
    from arraylayer.lowp.moving import MOVING

    kinds = FUNCTIONS.get(name)
    if kinds is None:
        uses = function_table()[name]
        kernels = COMPOSED.get(name, uses.kernels)
        if kernels and all(k in MOVING for k in kernels):
            return uses.kinds, "moved exactly: no value is made, the elements keep their bits (lowp/moving.py)"
        if any(k in FUNCTIONS or k in MOVING for k in kernels) and all(
                k in FUNCTIONS or k in MOVING or k in _ON_BOOL or k in _MADE for k in kernels):
            return uses.kinds, f"composed of {', '.join(kernels)}, each by the low-precision rule or moved exactly"
        return None
    if name in ZERO_TESTS:
        return kinds, "exact: read from the codes (-0.0 is zero, NaN is not)"
    if name in EXACT:
        return kinds, "exact: decoded to {wide}, computed, encoded back (the low-precision rule)"
    if name in STATISTICAL:
        return kinds, "accumulated in {wide} and rounded once (the low-precision rule)"
    return kinds, "a table of NumPy's {wide} results rounded once (the low-precision rule)"


def low_precision_support(fn: Any, backend: Any = None) -> dict[Dtype, Cell]:
    """Every low-precision dtype's :class:`Cell` for the public function ``fn`` (the function or its
    qualified name) on ``backend`` (a name, a Backend, or None for the active one)."""
    name = function_name(fn)
    uses = function_table()[name]
    resolved = resolve_backend(backend)
    held = set(resolved.low_precision_dtypes())
    spec = MEASURED.get(resolved.name)
    measured = spec is not None and covering_range({spec: ()}, resolved.version) is not None
    from arraylayer.lowp.exact import refusal
    from arraylayer.lowp.moving import has_zero, zero_refusal

    computed = _computed(name)
    made = name in CONVERTED or uses.rule in ("none", "independent")
    kinds = computed[0] if computed else uses.kinds
    cells: dict[Dtype, Cell] = {}
    for dtype in all_low_precision_dtypes:
        wide = "float32" if dtype.category == "float" else "int32"
        if dtype not in held:
            cells[dtype] = Cell("invalid", f"{resolved.name} cannot hold {dtype}")
        elif not measured:
            cells[dtype] = Cell("unverified", f"{resolved.name}'s storage of {dtype} was measured at {resolved.framework} "
                                              f"{spec or '(no version)'}, not {resolved.version}: run `arraylayer probe`")
        elif name in _ONES and dtype.name in _WITHOUT_ONE:
            cells[dtype] = Cell("undefined", f"{dtype} holds -1 and 0 only: {name} raises ScalarOverflowError, "
                                             f"as full(shape, 1, dtype={dtype.name!r}) does (it would wrap to -1)")
        elif KIND_LETTER[dtype.category] not in kinds:
            takes = " or ".join(KIND_WORDS[k] for k in kinds)
            cells[dtype] = Cell("undefined", f"{name} is defined for {takes} input only")
        elif name in NEEDS_ZERO and not has_zero(dtype.name):
            cells[dtype] = Cell("unsupported", zero_refusal(name, dtype.name))
        elif computed and KIND_LETTER[dtype.category] in REFUSED_KINDS.get(name, ""):
            cells[dtype] = Cell("unsupported", f"{name} refuses {dtype} on every backend (UnsupportedDtypeError); "
                                               f"cast to {wide} first")
        elif computed:
            cells[dtype] = Cell("supported", computed[1].format(wide=wide))
        elif made:
            cells[dtype] = Cell("supported", f"made or converted through the casts (in {wide}, rounded once)")
        else:
            cells[dtype] = Cell("unsupported", f"stored only: {refusal(name, dtype.name, wide)}")
    return cells
