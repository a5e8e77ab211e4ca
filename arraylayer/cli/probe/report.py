"""The probe against the declarations: the cells where they differ (:func:`compare`), those
cells as a table with the fix (:func:`format_differences`), and a backend's report as JSON-ready
data (:func:`probe_report`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from arraylayer.dtypes import Dtype, all_dtypes
from arraylayer.support import (
    declaration_status,
    dtype_support,
    function_table,
    kernel_unsupported_dtypes,
    matrix_functions,
)
from arraylayer.cli.probe.run import ProbeResult

__all__ = ["Difference", "compare", "format_differences", "probe_report", "load_backend"]


@dataclass(frozen=True)
class Difference:
    """One cell where the declarations and the probe disagree."""

    kernel: str
    dtype: Dtype
    declared: bool  # declared supported
    observed: bool  # supported in the probe
    why: str  # the probe's reason (for an unsupported cell)
    note: str = ""  # e.g. the declaration does not cover the installed version


def compare(result: ProbeResult) -> list[Difference]:
    """The cells where ``backend``'s declarations (at the installed version) and the probe
    disagree: declared unsupported but passing, or not declared but failing."""
    backend = result.adapter if result.adapter is not None else load_backend(result.backend)
    differences = []
    for name, cells in result.cells.items():
        status, spec = declaration_status(backend, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            declared = kernel_unsupported_dtypes(backend, name)
        note = {"covered": f"declared for {spec}", "unverified": "declaration does not cover this version",
                "undeclared": ""}[status]
        for dtype, cell in cells.items():
            if (dtype not in declared) != cell.supported:
                differences.append(Difference(name, dtype, dtype not in declared, cell.supported, cell.why, note))
    return differences


def format_differences(result: ProbeResult, differences: list[Difference]) -> str:
    """The differences as an aligned table, one line per cell, and the fix for each."""
    head = f"{result.backend} ({result.framework} {result.version})"
    if not differences:
        return f"{head}: the declarations match the probe."
    rows = [("kernel", "dtype", "declared", "probe", "")]
    for d in differences:
        rows.append((d.kernel, str(d.dtype), "supported" if d.declared else "unsupported",
                     "supported" if d.observed else "unsupported", d.why or d.note))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [f"{head}: {len(differences)} cell(s) differ between the declarations "
             f"(arraylayer/kernels/{result.backend}/) and the probe:"]
    lines += ["  " + "  ".join(f"{text:<{w}}" for text, w in zip(r[:4], widths, strict=True)) + "  " + r[4]
              for r in rows]
    add = sorted({(d.kernel, str(d.dtype)) for d in differences if d.declared})
    remove = sorted({(d.kernel, str(d.dtype)) for d in differences if not d.declared})
    if add:
        lines.append("  declare unsupported (or fix the kernel): " + _grouped(add))
    if remove:
        lines.append("  no longer unsupported (remove from the declaration): " + _grouped(remove))
    return "\n".join(lines)


def _grouped(cells: list[tuple[str, str]]) -> str:
    by_kernel: dict[str, list[str]] = {}
    for kernel, dtype in cells:
        by_kernel.setdefault(kernel, []).append(dtype)
    order = {str(d): i for i, d in enumerate(all_dtypes)}
    return "; ".join(f"{k}: {', '.join(sorted(v, key=order.__getitem__))}" for k, v in by_kernel.items())


def probe_report(result: ProbeResult) -> dict[str, Any]:
    """The JSON-ready report of one backend: per kernel the supported dtypes and the reasons of
    the unsupported ones; per public function whose kernels were all probed, what follows (see
    :func:`arraylayer.support.dtype_support`); and the cells that differ from the declarations."""
    backend = result.adapter if result.adapter is not None else load_backend(result.backend)
    kernels = {}
    for name, cells in result.cells.items():
        kernels[name] = {
            "supported": [str(d) for d, c in cells.items() if c.supported],
            "unsupported": {str(d): c.why for d, c in cells.items() if not c.supported},
        }

    def observed(_backend: Any, kernel: str) -> frozenset[Dtype]:
        return result.unsupported(kernel)

    functions = {}
    table = function_table()
    for name in matrix_functions():
        if not all(k in result.cells or k in result.missing for k in table[name].kernels):
            continue  # a kernel it uses was not probed
        cells = dtype_support(name, backend, observed)
        functions[name] = {
            "supported": [str(d) for d, c in cells.items() if c.supported],
            "unsupported": {str(d): c.status for d, c in cells.items() if not c.supported},
        }
    differences = compare(result)
    return {
        "backend": result.backend,
        "framework": result.framework,
        "version": result.version,
        "valid_dtypes": [str(d) for d in result.valid],
        "seconds": round(result.seconds, 3),
        "missing_kernels": list(result.missing),
        "kernels": kernels,
        "functions": functions,
        "differences": [
            {"kernel": d.kernel, "dtype": str(d.dtype), "declared": "supported" if d.declared else "unsupported",
             "probe": "supported" if d.observed else "unsupported", "why": d.why, "note": d.note}
            for d in differences
        ],
    }


def load_backend(name: str) -> Any:
    from arraylayer.runtime.registry import get_backend

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # frameworks warn on import
        return get_backend(name)
