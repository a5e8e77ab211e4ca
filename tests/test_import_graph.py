"""arraylayer's import graph, read from the source with ``ast``: every import counts, function-level
ones included (only imports under ``if TYPE_CHECKING:`` are left out, as they never run).

(a) The dtype core knows no backend: it imports no module that does, at any level.
(b) The graph has no import circle, except the ones listed in ``KNOWN_CYCLES``, which are being
    removed: a new circle fails, and so does a listed one that no longer exists (the list shrinks).
    A listed circle is named by the import that closes it: without the listed imports the graph
    must have no circle, and each listed import must exist and still close one.
(c) No module (Python or the C extension's) is over 500 lines.
(d) A folder per part: each folder of ``arraylayer/`` says in its ``__init__`` docstring what it owns and,
    in a paragraph ``May import: ...``, which folders it may import (besides the base modules); its
    modules import nothing else, those rules form no circle, and at most 15 modules stand directly in
    ``arraylayer/``.

An import of ``package.module`` is an edge to that module; the package's ``__init__`` that Python
runs first is not counted (every module would otherwise form a circle with ``arraylayer/__init__``).
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator
from typing import Final

ROOT: Final = pathlib.Path(__file__).resolve().parent.parent / "arraylayer"

#: The dtype core: the dtype catalogue, the lattices, the promotion policies and rules, the defaults.
DTYPE_CORE: Final = ("arraylayer.dtypes", "arraylayer.dtypes.catalogue", "arraylayer.dtypes.lattice", "arraylayer.dtypes.policies",
                     "arraylayer.dtypes.promotion", "arraylayer.dtypes.defaults", "arraylayer.dtypes.inference")

#: Modules that know backends; the dtype core must reach none of them.
BACKEND_KNOWING: Final = ("arraylayer.runtime.native", "arraylayer.runtime.registry", "arraylayer.runtime.backend",
                          "arraylayer.backends", "arraylayer.kernels")

#: Circles still open: (importer, imported, the reason, when it goes). None is left: the last one,
#: nn <-> attention, went with the split of nn (issue 24); attention imports nn's modules, not its face.
KNOWN_CYCLES: Final[list[tuple[str, str, str, str]]] = []


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: Final = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _type_checking_only(node):
            yield from (n for child in node.orelse for n in _imports_of(child))
            continue
        yield from _imports_of(node)


def _imports_of(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from _imports(node)


def _within(name: str) -> str | None:
    """``name`` if it is one of arraylayer's modules, else its longest prefix that is, else None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str) -> set[str]:
    """The arraylayer modules that ``module`` imports."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            source = (f"{base}.{node.module}" if node.module else base) if node.level else node.module or ""
            # `from package import module` imports the module; `from module import name` the module
            targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                       for alias in node.names]
        found.update(t for t in map(_within, targets) if t is not None and t != module)
    return found


GRAPH: Final = {module: imports_of(module) for module in MODULES}


def reachable(start: str) -> dict[str, str]:
    """Every module ``start`` reaches, each with the module that imports it on the way."""
    via: dict[str, str] = {}
    todo = [start]
    while todo:
        current = todo.pop()
        for target in GRAPH[current]:
            if target not in via and target != start:
                via[target] = current
                todo.append(target)
    return via


def strongly_connected() -> list[frozenset[str]]:
    """The import circles: the graph's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    return found


def _path(start: str, end: str, via: dict[str, str]) -> str:
    chain = [end]
    while chain[-1] != start:
        chain.append(via[chain[-1]])
    return " -> ".join(reversed(chain))


def _knows_backends(module: str) -> bool:
    return module in BACKEND_KNOWING or module.startswith(tuple(f"{m}." for m in BACKEND_KNOWING))


def test_the_graph_is_read():
    # the parser finds what is known to be there (an empty graph would pass everything below)
    assert {"arraylayer.dtypes", "arraylayer.dtypes.defaults", "arraylayer.api.dispatch"} <= set(MODULES)
    assert "arraylayer.dtypes.policies" in GRAPH["arraylayer.dtypes.promotion"]
    assert "arraylayer.runtime.registry" in GRAPH["arraylayer.runtime.native"]
    assert GRAPH["arraylayer.dtypes"] == {"arraylayer.errors", "arraylayer.dtypes.catalogue", "arraylayer.dtypes.numpy_face",
                                          "arraylayer.lowp.formats"}


def test_the_dtype_core_knows_no_backend():
    reached = []
    for module in DTYPE_CORE:
        via = reachable(module)
        reached += [_path(module, target, via) for target in sorted(via) if _knows_backends(target)]
    assert not reached, "the dtype core reaches modules that know backends:\n" + "\n".join(reached)


def test_dtypes_imports_nothing_of_arraylayer_but_its_errors():
    # and plain data: its catalogue (names, categories, widths) and the low-precision encodings,
    # which import nothing but those encodings and the errors either
    assert GRAPH["arraylayer.dtypes"] <= {"arraylayer.errors", "arraylayer.dtypes.catalogue", "arraylayer.lowp.formats",
                                          "arraylayer.dtypes.numpy_face"}
    assert GRAPH["arraylayer.dtypes.catalogue"] <= {"arraylayer.lowp.formats"}
    assert GRAPH["arraylayer.dtypes.numpy_face"] == set()  # how a Dtype looks to NumPy-minded code: nothing imported
    assert GRAPH["arraylayer.lowp.formats"] <= {"arraylayer.errors"}


def test_no_import_circle_but_the_known_ones():
    known = {(importer, imported) for importer, imported, _, _ in KNOWN_CYCLES}
    missing = sorted(edge for edge in known if edge[1] not in GRAPH.get(edge[0], ()))
    assert not missing, f"listed imports that no longer exist (remove them from KNOWN_CYCLES): {missing}"
    open_ = sorted((a, b) for a, b in known if a not in reachable(b))
    assert not open_, f"listed imports that no longer close a circle (remove them from KNOWN_CYCLES): {open_}"
    for importer, imported in known:
        GRAPH[importer].discard(imported)
    try:
        circles = [sorted(c) for c in strongly_connected()]
    finally:
        for importer, imported in known:
            GRAPH[importer].add(imported)
    assert not circles, f"import circles not in KNOWN_CYCLES (break them): {circles}"



#: Issue 24's bound on a module of one job: a module past it is split by job, not grown.
MOST_LINES: Final = 500


def test_no_module_over_the_bound():
    """Every module of arraylayer (and of its C extension) stays a size a newcomer reads whole."""
    sources = [*MODULES.values(), *sorted(ROOT.rglob("*.c"))]
    long = {str(p.relative_to(ROOT.parent)): n for p in sources if (n := len(p.read_text().splitlines())) > MOST_LINES}
    assert not long, f"modules over {MOST_LINES} lines (split them by job): {long}"


# -- (d) the folders and what each may import ---------------------------------------------------------

#: The base modules every folder may import: the exception types, settings, argument checks, the version.
BASE: Final = ("arraylayer.errors", "arraylayer.context", "arraylayer.arguments", "arraylayer.version")
#: What the base modules themselves import: ``arguments`` checks that a value converts to a dtype.
BASE_IMPORTS: Final = {"arraylayer.errors", "arraylayer.dtypes", "arraylayer.dtypes.promotion"}
FOLDERS: Final = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
#: At most this many modules (Python or C) directly in arraylayer/ (issue 38).
MOST_TOP_LEVEL: Final = 15


def may_import(folder: str) -> set[str]:
    """The modules and folders ``folder``'s docstring allows, as dotted prefixes (``the face
    ``arraylayer`````: the package's own ``__init__``)."""
    doc = ast.get_docstring(ast.parse((ROOT / folder / "__init__.py").read_text())) or ""
    paragraph = next((p for p in doc.split("\n\n") if p.startswith("May import:")), None)
    assert paragraph is not None, f"arraylayer/{folder}/__init__.py's docstring has no 'May import:' paragraph"
    import re

    return {f"arraylayer.{name}" if name != "arraylayer" else name
            for name in re.findall(r"``([\w.]+)``", paragraph)}


def _allowed(target: str, rules: set[str]) -> bool:
    return target in BASE or any(target == r or (r != "arraylayer" and target.startswith(r + ".")) for r in rules)


def test_every_folder_imports_only_what_its_docstring_allows():
    wrong = []
    for folder in FOLDERS:
        rules, own = may_import(folder), f"arraylayer.{folder}"
        for module, targets in GRAPH.items():
            if module == own or module.startswith(own + "."):
                wrong += [f"{module} -> {t}" for t in sorted(targets)
                          if not (t == own or t.startswith(own + ".")) and not _allowed(t, rules)]
    assert not wrong, "imports a folder's docstring does not allow (move the code, or say why in 'May import:'):\n" + "\n".join(wrong)


def test_the_base_modules_import_no_folder_but_the_dtypes():
    wrong = [f"{m} -> {t}" for m in BASE for t in sorted(GRAPH[m]) if t not in BASE and t not in BASE_IMPORTS]
    assert not wrong, wrong


def test_the_folder_rules_are_layers():
    """The rules themselves form no circle: each folder sits above the ones it may import. A module
    named alone (``lowp.formats``: plain data that imports only the errors) is a leaf."""
    folder_of = {f"arraylayer.{f}": f for f in FOLDERS}
    edges = {f: {folder_of[r] for r in may_import(f) if r in folder_of} for f in FOLDERS}
    done: set[str] = set()

    def visit(folder: str, path: tuple[str, ...]) -> None:
        assert folder not in path, "the folders' rules form a circle: " + " -> ".join((*path, folder))
        if folder in done:
            return
        for target in sorted(edges.get(folder, ())):
            visit(target, (*path, folder))
        done.add(folder)

    for folder in FOLDERS:
        visit(folder, ())


def test_the_top_level_is_small():
    top = [p.name for p in ROOT.iterdir() if p.suffix in (".py", ".c")]
    assert len(top) <= MOST_TOP_LEVEL, f"{len(top)} modules directly in arraylayer/ (give the new ones a folder): {sorted(top)}"
    assert set(FOLDERS) >= {"api", "array", "backends", "cli", "dtypes", "kernels", "lowp", "models", "runtime", "support", "xp", "distributed"}
