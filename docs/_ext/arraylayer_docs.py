"""Sphinx extension: the pages of the arraylayer docs that are generated from the code.

At ``builder-inited`` (before any source is read) it writes, into ``docs/_generated/``
(git-ignored, rewritten only when the content changes so that Sphinx rebuilds only
what changed):

``api.rst.inc``                 the API reference: every name of ``arraylayer.__all__``, grouped
                                by the module that defines it, so new public names appear by
                                themselves
``promotion_tables.rst.inc``    each policy's promotion table (``arraylayer.cli``'s renderer)
``policy_comparison.rst.inc``   a few pairs under every policy, side by side
``lattice_standard.svg``,
``lattice_strict.svg``          the lattices of ``arraylayer.dtypes.lattice``, drawn with networkx
                                and matplotlib
``cli_help.rst.inc``            ``arraylayer --help`` and each command's help
``support.rst.inc``             the kernel support matrix, from ``arraylayer.support`` if
                                that module exists
``benchmarks.rst.inc``          the tables of ``benchmarks/results/*.json``, if any

A failure to generate is a Sphinx warning, so ``sphinx-build -W`` fails on it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import io
import json
import os
import re
import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx
from sphinx.util import logging

from architecture import architecture  # docs/_ext is on the path (conf.py)
from keras_map import keras_ops_page

logger = logging.getLogger(__name__)

DOCS = Path(__file__).resolve().parents[1]
ROOT = DOCS.parent
GENERATED = DOCS / "_generated"
BENCHMARK_RESULTS = ROOT / "benchmarks" / "results"


# ---------------------------------------------------------------------------------------------
# small reStructuredText helpers
# ---------------------------------------------------------------------------------------------
def heading(text: str, underline: str) -> list[str]:
    return [text, underline * len(text), ""]


def literal(text: object) -> str:
    """``text`` as an inline literal (or escaped plain text where a literal cannot hold it)."""
    value = str(text)
    if not value:
        return ""
    if "`" in value or value != value.strip():
        return value.replace("\\", "\\\\").replace("*", "\\*").replace("`", "\\`").replace("_", "\\_")
    return f"``{value}``"


def list_table(header: list[str], rows: Iterable[list[str]], *, widths: str = "auto", stub: bool = False) -> list[str]:
    lines = [".. list-table::", "   :header-rows: 1", f"   :widths: {widths}"]
    if stub:
        lines.append("   :stub-columns: 1")
    lines.append("")
    for row in [header, *rows]:
        lines.append(f"   * - {row[0] or ' '}")
        lines += [f"     - {cell or ' '}" for cell in row[1:]]
    return lines + [""]


def indented(text: str, prefix: str = "   ") -> list[str]:
    return [prefix + line if line else "" for line in text.splitlines()]


# ---------------------------------------------------------------------------------------------
# API reference
# ---------------------------------------------------------------------------------------------
# Defining module -> section title, in page order. Modules not listed here (new ones) follow,
# titled after their name; arraylayer.api.<category> gets "Array API: <category>".
API_SECTIONS = {
    "arraylayer.dtypes": "Dtypes",
    "arraylayer.dtypes.promotion": "Type promotion",
    "arraylayer.dtypes.defaults": "Default dtypes",
    "arraylayer.dtypes.inference": "Dtype inference",
    "arraylayer.runtime.registry": "Backends",
    "arraylayer.runtime.native": "Native dtypes",
    "arraylayer.runtime.devices": "Devices",
    "arraylayer.api.interchange": "Arrays across backends and devices",
}
API_LAST = {"arraylayer.errors": "Errors"}
ARRAY_API_CATEGORIES = {
    "creation": "creation functions",
    "data_type": "data type functions",
    "data_types": "data type functions",
    "elementwise": "element-wise functions",
    "indexing": "indexing functions",
    "linear_algebra": "linear algebra functions",
    "linalg": "the linalg extension",
    "fft": "the fft extension",
    "info": "inspection utilities",
    "manipulation": "manipulation functions",
    "searching": "searching functions",
    "set": "set functions",
    "sets": "set functions",
    "sorting": "sorting functions",
    "statistical": "statistical functions",
    "utility": "utility functions",
    "extensions": "beyond the standard (NaN-aware reductions, pad, round with decimals)",
}


def _defining_module(name: str, obj: Any) -> str:
    """The arraylayer module that defines ``obj`` (data objects: the module listing it in __all__)."""
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and module.startswith("arraylayer.") and (
        inspect.isclass(obj) or inspect.isroutine(obj) or callable(obj)
    ):
        return module
    for module_name, mod in sorted(sys.modules.items()):
        if module_name.startswith("arraylayer.") and name in getattr(mod, "__all__", ()) and (
            getattr(mod, name, None) is obj
        ):
            return module_name
    return "arraylayer"


def _section_title(module: str) -> str:
    if module in API_SECTIONS:
        return API_SECTIONS[module]
    if module in API_LAST:
        return API_LAST[module]
    parts = module.split(".")
    if parts[:2] == ["arraylayer", "api"]:
        category = parts[2].lstrip("_") if len(parts) > 2 else ""
        return f"Array API: {ARRAY_API_CATEGORIES.get(category, category.replace('_', ' ') + ' functions')}" \
            if category else "Array API functions"
    return parts[-1].replace("_", " ").capitalize() if module != "arraylayer" else "Module attributes"


def _section_order(module: str) -> tuple[int, str]:
    if module in API_SECTIONS:
        return (0, f"{list(API_SECTIONS).index(module):03d}")
    if module.startswith("arraylayer.api"):
        return (1, module)
    if module in API_LAST:
        return (3, module)
    return (2, module)


def _directive(name: str, obj: Any) -> list[str]:
    """The autodoc directive for ``obj``, documented as ``name`` (relative to arraylayer)."""
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return [f".. autoexception:: {name}", ""]
    if inspect.isclass(obj):
        return [f".. autoclass:: {name}", "   :members:", ""]
    if callable(obj):
        return [f".. autofunction:: {name}", ""]
    if isinstance(obj, tuple) and all(isinstance(item, str) for item in obj):
        shown = ", ".join(obj) if obj else "empty"
        return [f".. data:: {name}", "", f"   A tuple of {len(obj)}: {shown}.", ""]
    return [f".. data:: {name}", "", f"   {literal(repr(obj))}", ""]


def _exported_module(name: str, module: Any, top: dict[str, Any]) -> list[str]:
    """A section for a submodule exported by name (``al.linalg``): the members that are not
    top-level names themselves, documented as ``arraylayer.<name>.<member>``."""
    members = list(getattr(module, "__all__", [m for m in vars(module) if not m.startswith("_")]))
    shared = [m for m in members if any(getattr(module, m, None) is obj for obj in top.values())]
    own = [m for m in members if m not in shared]
    if not own:
        return []  # everything in it is documented at the top level (arraylayer.errors)
    category = module.__name__.rsplit(".", 1)[-1]
    title = ARRAY_API_CATEGORIES.get(category, f"the {name} module")
    lines = heading(f"Array API: {title}" if module.__name__.startswith("arraylayer.api") else title.capitalize(), "-")
    lines += [f"These names are attributes of ``arraylayer.{name}``, not of the top-level package.", ""]
    if shared:
        lines += [f"``arraylayer.{name}`` also holds " + ", ".join(
            f":func:`{m} <arraylayer.{m}>`" if callable(getattr(module, m)) else literal(m) for m in shared
        ) + ", the same objects as the top-level names.", ""]
    for member in own:
        lines += _directive(f"arraylayer.{name}.{member}", getattr(module, member))
    return lines


def api_reference() -> str:
    import arraylayer as al
    from arraylayer.dtypes import Dtype

    sections: dict[str, list[tuple[str, Any]]] = {}
    modules: list[str] = []
    dtypes: list[str] = []
    missing: list[str] = []
    for name in al.__all__:
        try:
            obj = getattr(al, name)
        except AttributeError:
            missing.append(name)
            continue
        if inspect.ismodule(obj):
            modules.append(name)
        elif isinstance(obj, Dtype):
            dtypes.append(name)
        else:
            sections.setdefault(_defining_module(name, obj), []).append((name, obj))
    if missing:
        logger.warning("arraylayer.__all__ lists names the package does not have: %s", ", ".join(missing))

    lines = [".. currentmodule:: arraylayer", ""]
    lines += [
        f"Everything below is importable from the top-level package (``import arraylayer as al``): "
        f"the {len(al.__all__)} names of ``arraylayer.__all__``, grouped by the module that defines "
        "them. This page is generated from ``arraylayer.__all__`` each time the documentation is built.",
        "",
    ]
    top = {name: getattr(al, name) for name in al.__all__ if name not in missing and name not in modules}
    if modules:
        lines += [f"The submodule{'s' if len(modules) > 1 else ''} "
                  f"{', '.join(literal('arraylayer.' + m) for m in modules)} "
                  f"{'are' if len(modules) > 1 else 'is'} exported by name as well.", ""]

    lines += heading("Dtype objects", "-")
    backend_dependent = [str(d) for d in al.all_dtypes if str(d) not in al.__all__]
    lines += ["Each dtype is a :class:`Dtype` instance, a ``str`` equal to its name. The ones marked "
              "*backend-dependent* are looked up when accessed: they raise ``AttributeError``, "
              "naming the remedy, while the active backend cannot hold them (see "
              ":doc:`concepts`).", ""]
    rows = []
    for dtype in al.all_dtypes:
        where = "backend-dependent" if str(dtype) in backend_dependent else "always"
        rows.append([literal(f"arraylayer.{dtype}"), dtype.category, str(dtype.bits), where])
    lines += list_table(["name", "kind", "bits", "attribute"], rows, widths="30 20 10 40")
    unexpected = [d for d in dtypes if d not in {str(x) for x in al.all_dtypes}]
    if unexpected:
        logger.warning("arraylayer.__all__ exports Dtype objects outside all_dtypes: %s", ", ".join(unexpected))

    lines += heading("Backend-dependent names", "^")
    lines += [
        "These module attributes are computed for the backend active in the current context "
        "(:func:`use_backend`, :func:`set_backend`; numpy when none was chosen):",
        "",
        "``valid_dtypes``, ``valid_numeric_dtypes``, ``valid_int_dtypes``, ``valid_uint_dtypes``, "
        "``valid_float_dtypes``, ``valid_complex_dtypes``",
        "    The dtypes of each group the backend can hold and compute with, as installed and configured.",
        "",
        "``invalid_dtypes`` and the same ``invalid_*`` groups",
        "    The rest of each group.",
        "",
        "``NativeDtype``",
        "    The framework's dtype class (``numpy.dtype``, ``torch.dtype``, ...); :class:`Dtype` before "
        "any backend was chosen.",
        "",
        "``native_int8`` ... ``native_complex128``",
        "    The framework's dtype object for each dtype (raises ``AttributeError`` for an invalid one).",
        "",
    ]

    for module in sorted(sections, key=_section_order):
        lines += heading(_section_title(module), "-")
        if module not in API_SECTIONS and module not in API_LAST and module != "arraylayer":
            lines += [f"Defined in ``{module}``.", ""]
        for name, obj in sections[module]:
            lines += _directive(name, obj)
    for name in modules:
        lines += _exported_module(name, getattr(al, name), top)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# promotion tables and the policy comparison
# ---------------------------------------------------------------------------------------------
def promotion_tables() -> str:
    import arraylayer as al
    from arraylayer.cli.promotion_table import TABLE_CSS, promotion_table, render_html, render_text

    lines = [".. raw:: html", ""] + indented(f"<style>\n{TABLE_CSS}\n</style>") + [""]
    for policy in al.promotion_policies():
        table = promotion_table(policy)
        lines += heading(f"{policy}", "-")
        lines += [f"{table.summary[0].upper()}{table.summary[1:]}.", ""]
        lines += [".. raw:: html", ""] + indented(render_html(table, style=False)) + [""]
        lines += [".. only:: not html", "", "   ::", ""] + indented(render_text(table), "      ") + [""]
    return "\n".join(lines) + "\n"


COMPARED_PAIRS: list[tuple[Any, Any]] = [
    ("int8", "uint8"), ("uint16", "int16"), ("int32", "float32"), ("int64", "uint64"),
    ("bool", "int8"), ("bfloat16", "float16"), ("float32", "float64"), ("float16", "complex64"),
    ("uint8", int), ("bool", int), ("int8", float), ("float32", complex), (int, float),
]


def _operand(x: Any) -> str:
    return f"Python {x.__name__}" if isinstance(x, type) else str(x)


def policy_comparison() -> str:
    import arraylayer as al

    policies = list(al.promotion_policies())
    rows = []
    for a, b in COMPARED_PAIRS:
        row = [f"{_operand(a)} + {_operand(b)}"]
        for policy in policies:
            with al.dtype_promotion(policy):
                try:
                    dtype, weak = al.lattice_result_type(a, b)
                except al.TypePromotionError:
                    row.append("error")
                else:
                    row.append(f"{dtype} (weak)" if weak else str(dtype))
        rows.append(row)
    lines = list_table(["operands", *[literal(p) for p in policies]], rows, stub=True)
    lines += ["*error*: ``TypePromotionError``; *(weak)*: a weak result, shown materialised to the "
              "default dtype of its kind (int32, float32, complex64 out of the box; Paddle's own "
              "defaults under ``paddle``).", ""]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# lattice diagrams
# ---------------------------------------------------------------------------------------------
KIND_COLOURS = {"bool": "#d9d9d9", "uint": "#c6dbef", "int": "#9ecae1", "weak": "#fff2b3",
                "float": "#c7e9c0", "complex": "#fdd0a2"}
# Vertical lane of each kind: unsigned below, signed and complex above, bool/floats between.
KIND_LANES = {"bool": 1.0, "uint": 0.0, "int": 2.0, "float": 1.0, "complex": 2.0}
WEAK_LANES = {"i*": 1.0, "f*": 1.0, "c*": 2.0}


def _kind(code: str) -> str:
    from arraylayer.dtypes import Dtype
    from arraylayer.dtypes.lattice import CODES

    target = CODES[code]
    return "weak" if isinstance(target, type) else Dtype(target).category


def lattice_positions(lattice: dict[str, tuple[str, ...]]) -> dict[str, tuple[float, float]]:
    """x: the longest chain of promotions below a node; y: its kind's lane. Nodes that share a
    spot are spread vertically."""
    depth: dict[str, int] = {}
    below: dict[str, list[str]] = {code: [] for code in lattice}
    for code, parents in lattice.items():
        for parent in parents:
            below[parent].append(code)

    def depth_of(code: str) -> int:
        if code not in depth:
            depth[code] = 1 + max((depth_of(child) for child in below[code]), default=-1)
        return depth[code]

    spots: dict[tuple[int, float], list[str]] = {}
    for code in lattice:
        lane = WEAK_LANES.get(code, KIND_LANES.get(_kind(code), 1.0))
        spots.setdefault((depth_of(code), lane), []).append(code)
    positions = {}
    for (x, lane), codes in spots.items():
        for i, code in enumerate(codes):
            offset = (i - (len(codes) - 1) / 2) * 0.8
            positions[code] = (float(x), lane + offset)
    return positions


def _runs_through_a_node(edge: tuple[str, str], positions: dict[str, tuple[float, float]]) -> bool:
    """True if the straight edge passes over another node (strict's ``f*`` -> ``f8`` over ``f4``)."""
    (x1, y1), (x2, y2) = positions[edge[0]], positions[edge[1]]
    dx, dy = x2 - x1, y2 - y1
    for node, (x, y) in positions.items():
        if node in edge:
            continue
        t = ((x - x1) * dx + (y - y1) * dy) / (dx * dx + dy * dy)
        if 0 < t < 1 and ((x1 + t * dx - x) ** 2 + (y1 + t * dy - y) ** 2) ** 0.5 < 0.2:
            return True
    return False


def draw_lattice(lattice: dict[str, tuple[str, ...]], positions: dict[str, tuple[float, float]],
                 path: Path) -> None:
    """Draw ``lattice`` as SVG at ``path``: an arrow from each type to each type directly above.
    An edge that would run over another node is drawn as an arc."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.patches import Patch

    graph = nx.DiGraph()
    graph.add_nodes_from(lattice)
    graph.add_edges_from((code, parent) for code, parents in lattice.items() for parent in parents)
    colours = [KIND_COLOURS[_kind(code)] for code in graph.nodes]
    with plt.rc_context({"svg.hashsalt": "arraylayer-docs", "svg.fonttype": "none"}):
        fig, ax = plt.subplots(figsize=(9.5, 3.0))
        nx.draw_networkx_nodes(graph, pos=positions, ax=ax, node_color=colours, node_size=700,
                               edgecolors="#555555")
        nx.draw_networkx_labels(graph, pos=positions, ax=ax, font_size=9)
        arcs = [edge for edge in graph.edges if _runs_through_a_node(edge, positions)]
        for edges, style in (([e for e in graph.edges if e not in arcs], "arc3"), (arcs, "arc3,rad=-0.3")):
            nx.draw_networkx_edges(
                graph, pos=positions, ax=ax, edgelist=edges, arrows=True, arrowstyle="-|>", arrowsize=10,
                edge_color="#555555", node_size=700, connectionstyle=style,
            )
        legend = [Patch(facecolor=colour, edgecolor="#555555", label=kind) for kind, colour in KIND_COLOURS.items()]
        ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.02), ncol=len(legend),
                  frameon=False, fontsize=8)
        ax.set_axis_off()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
        plt.close(fig)
    write_if_changed(path, buffer.getvalue())


def lattices() -> None:
    from arraylayer.dtypes.lattice import STANDARD_LATTICE, STRICT_LATTICE

    positions = lattice_positions(STANDARD_LATTICE)  # the same places in both, for comparison
    draw_lattice(STANDARD_LATTICE, positions, GENERATED / "lattice_standard.svg")
    draw_lattice(STRICT_LATTICE, positions, GENERATED / "lattice_strict.svg")


# ---------------------------------------------------------------------------------------------
# command-line help
# ---------------------------------------------------------------------------------------------
def cli_help() -> str:
    from arraylayer import cli

    def help_of(argv: list[str]) -> str:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), _columns(88):
            cli.main(argv)
        return out.getvalue().rstrip()

    lines: list[str] = []
    lines += ["::", ""] + indented("$ arraylayer --help\n" + help_of(["--help"])) + [""]
    for name in cli.COMMANDS:
        lines += heading(f"arraylayer {name}", "^")
        lines += ["::", ""] + indented(f"$ arraylayer {name} --help\n" + help_of([name, "--help"])) + [""]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def _columns(width: int):
    """argparse wraps help at $COLUMNS: fix it, so the page does not depend on the terminal."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


# ---------------------------------------------------------------------------------------------
# support matrix
# ---------------------------------------------------------------------------------------------
def _loaded_backends() -> list[Any]:
    import arraylayer as al

    from arraylayer.runtime.logs import quiet_framework_logs

    backends = []
    for name in al.installed_backends():
        try:
            with warnings.catch_warnings(), quiet_framework_logs():  # no framework start-up lines in the build
                warnings.simplefilter("ignore")
                backends.append(al.get_backend(name))
        except Exception as error:  # noqa: BLE001 - a backend that cannot load is left out, and said
            logger.warning("backend %s cannot be loaded for the support matrix: %s", name, error)
    return backends


SUPPORT_CSS = """\
table.al-support { border-collapse: collapse; font-family: monospace; font-size: 90%; margin: 0.5em 0 1em; }
table.al-support caption { caption-side: top; text-align: left; padding-bottom: 0.3em; font-family: sans-serif; }
table.al-support th, table.al-support td { border: 1px solid #d0d0d0; padding: 1px 4px; text-align: center; }
table.al-support th { background: #f0f0f0; }
table.al-support th[scope=row] { text-align: left; }
table.al-support td.supported { background: #e3f4e3; }
table.al-support td.unsupported { background: #f7d9d9; color: #8b1a1a; }
table.al-support td.missing { background: #f2c6c6; color: #8b1a1a; font-weight: bold; }
table.al-support td.unverified { background: #fff2b3; }
table.al-support td.invalid, table.al-support td.undefined { background: #f4f4f4; color: #888; }"""

SUPPORT_INTRO = (
    "Which dtypes each backend supports for each function, as declared in each backend's kernel "
    "package (``SUPPORTED`` / ``UNSUPPORTED`` in ``arraylayer/kernels/<backend>/``) and resolved by "
    "``arraylayer.support`` for the framework versions installed where these pages were built."
)


def support_matrix() -> str:
    if importlib.util.find_spec("arraylayer.support") is None:
        return (
            "This section is generated from ``arraylayer.support``, the module that answers which "
            "dtypes each backend's kernels support. That module is not part of the arraylayer these "
            "pages were built from, so there is no matrix here; it appears when the documentation is "
            "built from a version that has it.\n"
        )
    support = importlib.import_module("arraylayer.support")
    from arraylayer.cli import COMMANDS

    lines = [SUPPORT_INTRO, ""]
    if "probe" in COMMANDS:
        lines += ["``arraylayer probe`` runs the kernels on the installed frameworks to check the "
                  "declarations against what they really do.", ""]
    backends = _loaded_backends()
    if hasattr(support, "support_matrix") and hasattr(support, "render_matrix"):
        lines += _function_matrices(support, backends)
    elif hasattr(support, "kernel_unsupported_dtypes"):
        lines += _kernel_matrix(support, backends)
    else:
        logger.warning(
            "arraylayer.support has neither support_matrix/render_matrix nor kernel_unsupported_dtypes; "
            "update support_matrix() in docs/_ext/arraylayer_docs.py to its interface"
        )
    return "\n".join(lines) + "\n"


def _function_matrices(support: Any, backends: list[Any]) -> list[str]:
    """One function x dtype matrix per backend, rendered by arraylayer.support itself."""
    lines = [".. raw:: html", ""] + indented(f"<style>\n{SUPPORT_CSS}\n</style>") + [""]
    for backend in backends:
        matrix = support.support_matrix(backend.name)
        lines += heading(f"{backend.name} ({backend.version})", "-")
        lines += [".. raw:: html", ""] + indented(support.render_matrix(matrix, "html")) + [""]
        lines += [".. only:: not html", "", "   ::", ""]
        lines += indented(support.render_matrix(matrix, "text"), "      ") + [""]
    return lines


def _kernel_matrix(support: Any, backends: list[Any]) -> list[str]:
    """Kernel x backend, each cell the dtypes the kernel does not support there."""
    import arraylayer as al
    from arraylayer.kernels.names import KERNEL_NAMES

    query = support.kernel_unsupported_dtypes
    lines = ["Versions: " + ", ".join(f"{b.name} {literal(b.version)}" for b in backends) + ".", ""]
    if not any(b.kernels for b in backends):
        return lines + ["No installed backend provides any kernel yet (every ``KERNELS`` table is empty), "
                        "so there is no matrix to show.", ""]
    lines += ["Each cell lists the dtypes a backend's kernel does *not* support; *all dtypes* means "
              "none is excluded; *no kernel* means the backend has no implementation; *unverified* "
              "means the installed version is outside every range the declaration covers.", ""]
    unverified = getattr(support, "UnverifiedVersionWarning", Warning)
    every = frozenset(al.all_dtypes)
    for category, names in KERNEL_NAMES.items():
        lines += heading(category.replace("_", " ").capitalize(), "-")
        rows = []
        for name in names:
            row = [literal(name)]
            for backend in backends:
                if name not in backend.kernels:
                    row.append("no kernel")
                    continue
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    unsupported = frozenset(query(backend, name))
                if any(issubclass(w.category, unverified) for w in caught):
                    row.append(f"unverified at {backend.version}")
                elif not unsupported:
                    row.append("all dtypes")
                elif unsupported >= every:
                    row.append("none")
                else:
                    row.append("all but " + ", ".join(str(d) for d in al.all_dtypes if d in unsupported))
            rows.append(row)
        lines += list_table(["function", *[b.name for b in backends]], rows, stub=True)
    return lines


# ---------------------------------------------------------------------------------------------
# benchmark results
# ---------------------------------------------------------------------------------------------
def _column_title(key: str) -> str:
    for suffix, unit in (("_ns", "ns"), ("_us", "µs"), ("_ms", "ms"), ("_s", "s")):
        if key.endswith(suffix):
            return f"{key[: -len(suffix)].replace('_', ' ')} ({unit})"
    return key.replace("_", " ")


def _value(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return literal(json.dumps(value))
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 1000 else f"{value:.4g}"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(_value(v) for v in value) if value else "none"
    if isinstance(value, str):
        return literal(" ".join(value.split()).replace("`", "'"))  # one line, no reST markup inside
    return literal(" ".join(json.dumps(value, sort_keys=True).split()).replace("`", "'"))


def _benchmark_file(path: Path) -> list[str]:
    data = json.loads(path.read_text())
    lines = heading(f"{path.stem}", "-")
    lines += [f"From ``benchmarks/results/{path.name}``.", ""]
    if not isinstance(data, dict):
        return lines + ["::", ""] + indented(json.dumps(data, indent=2)) + [""]
    scalars = {k: v for k, v in data.items() if not isinstance(v, (dict, list))}
    if scalars:
        lines += ["Measured with " + ", ".join(f"{k} {_value(v)}" for k, v in scalars.items()) + ".", ""]
    for key, value in data.items():
        if key == "details":  # free-form notes of bench_ops.py: the README and JSON carry them
            continue
        if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
            columns = list(dict.fromkeys(k for row in value for k in row))
            lines += [f"**{_column_title(key)}**", ""]
            lines += list_table([_column_title(c) for c in columns],
                                [[_value(row.get(c, "")) if c in row else "" for c in columns] for row in value])
        elif isinstance(value, dict):
            lines += [f"**{_column_title(key)}**", ""]
            lines += list_table(["measure", "value"], [[_column_title(k), _value(v)] for k, v in value.items()])
        elif isinstance(value, list):
            lines += [f"**{_column_title(key)}**: {_value(value)}", ""]
    return lines


def benchmark_tables() -> str:
    files = sorted(BENCHMARK_RESULTS.glob("*.json")) if BENCHMARK_RESULTS.is_dir() else []
    if not files:
        return ("There are no benchmark results in ``benchmarks/results/`` of the tree these pages "
                "were built from. ``nox -s bench`` (or ``python benchmarks/bench_core.py``) measures "
                "and writes them there; the next documentation build shows them.\n")
    lines = []
    for path in files:
        try:
            lines += _benchmark_file(path)
        except (OSError, ValueError) as error:
            logger.warning("cannot read benchmark results %s: %s", path, error)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# docstrings
# ---------------------------------------------------------------------------------------------
# Outside inline literals, ``|x|`` in a docstring means an absolute value; to docutils it is a
# substitution reference (an error, as no docstring defines substitutions). Escape the bars.
_INLINE_LITERAL = re.compile(r"(``.+?``)")
_BARS = re.compile(r"(?<![\\|])\|(?=[^\s|])([^|`]*?[^\s|\\])\|(?![|\w])")


def escape_bars(line: str) -> str:
    parts = _INLINE_LITERAL.split(line)
    return "".join(part if i % 2 else _BARS.sub(r"\\|\1\\|", part) for i, part in enumerate(parts))


def process_docstring(app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    if name.startswith("arraylayer"):
        lines[:] = [escape_bars(line) for line in lines]


# ---------------------------------------------------------------------------------------------
def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


GENERATORS: dict[str, Callable[[], str]] = {
    "api.rst.inc": api_reference,
    "promotion_tables.rst.inc": promotion_tables,
    "policy_comparison.rst.inc": policy_comparison,
    "cli_help.rst.inc": cli_help,
    "support.rst.inc": support_matrix,
    "benchmarks.rst.inc": benchmark_tables,
    "architecture.rst.inc": architecture,
    "keras_ops.rst.inc": keras_ops_page,
}


def generate(app: Sphinx) -> None:
    GENERATED.mkdir(exist_ok=True)
    for filename, make in GENERATORS.items():
        try:
            text = make()
        except Exception as error:  # noqa: BLE001 - said as a Sphinx warning: -W fails the build
            logger.warning("cannot generate docs/_generated/%s: %s: %s", filename, type(error).__name__, error)
            text = ""
        write_if_changed(GENERATED / filename, text)
    try:
        lattices()
    except Exception as error:  # noqa: BLE001
        logger.warning("cannot draw the lattice diagrams: %s: %s", type(error).__name__, error)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    app.connect("autodoc-process-docstring", process_docstring)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
