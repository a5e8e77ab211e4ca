"""Every code example in README.md and docs/*.rst runs, and its printed results are true.

The convention (the same for every page):

- README.md examples are ```python fences; docs/*.rst examples are ``.. code-block:: python``.
- All examples of one file run in order in one namespace, which starts empty: the page's
  first examples import what they use (``import arraylayer as al``, ``import numpy as np``),
  so that each page can be pasted into a new interpreter as written.
- Each example pastes into the standard Python REPL: no blank line inside a top-level
  ``with``/``for``/``if``/``def`` ..., and a blank line after its body before the next statement.
- A trailing comment on an expression statement whose value is not None is a checked
  result, written as the REPL shows it: ``x  # <expected repr(value)>`` (``arraylayer.int16``,
  ``'torch'``, ``dtype('int32')``).
- A statement that raises ends with ``# ErrorName: start of message`` (or ``# ErrorName``);
  ErrorName is the exception's class or one of its bases.
- Commentary goes on its own line (a trailing comment anywhere else is reported).

Each file runs in a fresh interpreter (examples call ``set_backend``; frameworks log), which
prints one JSON result per block; each block is one test, named ``file:line``. A block that
imports or names a backend that is not installed (or not selected with ``--backend``) is
skipped with that reason, and so is a later block that fails on a name only a skipped block
defined.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = {"jax": "jax", "torch": "torch", "tensorflow": "tensorflow"}
_ERROR = re.compile(r"^(?P<name>[A-Z]\w*(?:Error|Exception|Exit|Interrupt))\b(?::\s*(?P<start>.*))?$")
_RST_BLOCK = re.compile(r"^(?P<indent>\s*)\.\. code-block:: python\s*$")
_BACKEND_CALLS = {"set_backend", "use_backend", "get_backend", "to_backend"}


@dataclass
class Block:
    path: str  # relative to the repository root
    line: int  # line of the first code line in the file
    code: str

    @property
    def id(self) -> str:
        return f"{self.path}:{self.line}"


# -- finding the examples --------------------------------------------------------------------------
def markdown_blocks(path: Path) -> list[Block]:
    lines, blocks, start = path.read_text().splitlines(), [], None
    for number, line in enumerate(lines, 1):
        if start is None and line.strip() == "```python":
            start = number + 1
        elif start is not None and line.strip() == "```":
            blocks.append(Block(_relative(path), start, "\n".join(lines[start - 1:number - 1])))
            start = None
    return blocks


def rst_blocks(path: Path) -> list[Block]:
    lines, blocks = path.read_text().splitlines(), []
    for number, line in enumerate(lines, 1):
        match = _RST_BLOCK.match(line)
        if not match:
            continue
        indent, body, first = len(match["indent"]), [], None
        for index in range(number, len(lines)):  # lines after the directive (0-based index)
            text = lines[index]
            if text.strip() and len(text) - len(text.lstrip()) <= indent:
                break
            if first is None and (not text.strip() or text.strip().startswith(":")):
                continue  # the blank line and options before the content
            first = index + 1 if first is None else first
            body.append(text)
        if first is not None:
            blocks.append(Block(_relative(path), first, textwrap.dedent("\n".join(body)).rstrip()))
    return blocks


def all_blocks() -> list[Block]:
    blocks = markdown_blocks(ROOT / "README.md")
    for page in sorted((ROOT / "docs").glob("*.rst")):
        blocks += rst_blocks(page)
    return blocks


def _relative(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


# -- what a block needs ------------------------------------------------------------------------------
def backends_needed(code: str) -> set[str]:
    """The frameworks a block imports, or names in set_backend/use_backend/get_backend/to_backend."""
    needed: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            needed |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            needed.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in _BACKEND_CALLS:
            needed |= {a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}
    return needed & set(FRAMEWORKS)


def defined_names(code: str) -> set[str]:
    return {node.id for node in ast.walk(ast.parse(code))
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}


# -- running one block ------------------------------------------------------------------------------
class ExampleFailure(AssertionError):
    """An example whose result or error is not the one its comment states."""


def trailing_comments(code: str) -> dict[int, str]:
    """line -> text of a comment that follows code on that line."""
    comments, code_lines = {}, set()
    for token in tokenize.generate_tokens(io.StringIO(code).readline):
        if token.type == tokenize.COMMENT:
            if token.start[0] in code_lines:
                comments[token.start[0]] = token.string[1:].strip()
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                                tokenize.ENDMARKER):
            code_lines.add(token.start[0])
    return comments


class _Expect:
    """Checks made by the rewritten example; ``where`` is ``file:line``."""

    @staticmethod
    def value(value: object, expected: str, where: str) -> None:
        if value is None:
            raise ExampleFailure(f"{where}: the expression is None, so its trailing comment {expected!r} "
                                 "is not a result (commentary goes on its own line)")
        if repr(value) != expected:
            raise ExampleFailure(f"{where}: the comment says {expected!r}, the REPL shows {repr(value)!r}")

    class raises:
        def __init__(self, name: str, start: str, where: str) -> None:
            self.name, self.start, self.where = name, start, where

        def __enter__(self) -> None:
            return None

        def __exit__(self, kind, error, traceback) -> bool:
            if error is None:
                raise ExampleFailure(f"{self.where}: expected {self.name}, nothing was raised")
            names = [cls.__name__ for cls in kind.__mro__]
            if self.name not in names:
                return False  # the unexpected error itself is the report
            if not str(error).startswith(self.start):
                raise ExampleFailure(f"{self.where}: {self.name} raised, but its message does not start "
                                     f"with {self.start!r}: {str(error)[:300]!r}")
            return True


class _Rewrite(ast.NodeTransformer):
    """Turns checked results into ``__expect__.value(...)`` and raising lines into
    ``with __expect__.raises(...)``; any other trailing comment is reported."""

    def __init__(self, comments: dict[int, str], block: Block) -> None:
        self.comments, self.block = comments, block

    def where(self, node: ast.AST) -> str:
        return f"{self.block.path}:{self.block.line + node.end_lineno - 1}"

    def generic_visit(self, node: ast.AST) -> ast.AST:
        node = super().generic_visit(node)
        if not isinstance(node, ast.stmt) or node.end_lineno not in self.comments:
            return node
        if any(isinstance(child, ast.stmt) for child in ast.iter_child_nodes(node)):
            # a compound statement: its own header line's comment is checked below
            return node
        comment = self.comments.pop(node.end_lineno)
        error = _ERROR.match(comment)
        if error:
            check = ast.parse(f"with __expect__.raises({error['name']!r}, {error['start'] or ''!r}, "
                              f"{self.where(node)!r}): pass").body[0]
            check.body = [node]
        elif isinstance(node, ast.Expr):
            check = ast.parse(f"__expect__.value(None, {comment!r}, {self.where(node)!r})").body[0]
            check.value.args[0] = node.value
        else:
            raise ExampleFailure(f"{self.where(node)}: trailing comment {comment!r} on a statement that is not "
                                 "an expression (commentary goes on its own line)")
        return ast.fix_missing_locations(ast.copy_location(check, node))


def repl_problems(block: Block) -> list[str]:
    """Where pasting ``block`` into the standard REPL would break: a blank line inside a top-level
    compound statement (it ends the statement there), or none after one that is followed by more code
    (the REPL reads the next line as part of the body and raises SyntaxError)."""
    lines = block.code.splitlines()
    body = ast.parse(block.code).body
    problems = []
    for node, following in zip(body, body[1:] + [None], strict=True):
        if not any(isinstance(child, ast.stmt) for child in ast.iter_child_nodes(node)):
            continue
        inside = range(node.lineno, node.end_lineno)  # 0-based indexes of its lines after the first
        if any(not lines[i].strip() for i in inside):
            problems.append(f"{block.path}:{block.line + node.lineno - 1}: a blank line inside this statement "
                            "ends it when pasted into the REPL")
        if following is not None and lines[node.end_lineno].strip():
            problems.append(f"{block.path}:{block.line + node.end_lineno - 1}: no blank line after this "
                            "statement's body (the REPL needs one before the next statement)")
    return problems


def run_block(block: Block, namespace: dict) -> None:
    problems = repl_problems(block)
    if problems:
        raise ExampleFailure("; ".join(problems))
    tree = ast.parse(block.code)
    comments = trailing_comments(block.code)
    tree = _Rewrite(comments, block).visit(tree)
    if comments:  # left over: on the header of a with/for/if, or inside a multi-line statement
        line, comment = next(iter(comments.items()))
        raise ExampleFailure(f"{block.path}:{block.line + line - 1}: trailing comment {comment!r} is not on "
                             "an expression (commentary goes on its own line)")
    ast.increment_lineno(tree, block.line - 1)
    namespace["__expect__"] = _Expect
    exec(compile(tree, block.path, "exec"), namespace)


def run_file(path: str, skip: dict[str, str]) -> list[dict]:
    """Runs the blocks of one file in order; ``skip``: backends not to use -> why."""
    namespace: dict = {"__name__": "__docs__"}
    results, missing_names = [], {}
    for block in all_blocks():
        if block.path != path:
            continue
        absent = sorted(b for b in backends_needed(block.code) if b in skip)
        if absent:
            reason = f"needs the {', '.join(absent)} backend ({skip[absent[0]]})"
            results.append({"id": block.id, "status": "skip", "message": reason})
            missing_names.update(dict.fromkeys(defined_names(block.code), reason))
            continue
        try:
            run_block(block, namespace)
        except NameError as error:
            reason = missing_names.get(error.name)
            status = "skip" if reason else "fail"
            results.append({"id": block.id, "status": status,
                            "message": f"uses {error.name!r} from a skipped block that {reason}" if reason
                            else _report(block, error)})
        except BaseException as error:  # the report is the test's failure
            results.append({"id": block.id, "status": "fail", "message": _report(block, error)})
        else:
            results.append({"id": block.id, "status": "ok", "message": ""})
    return results


def _report(block: Block, error: BaseException) -> str:
    if isinstance(error, ExampleFailure):
        return str(error)
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == block.path]
    where = f"{block.path}:{frames[-1].lineno}" if frames else block.id
    return f"{where}: {type(error).__name__}: {error}"


if __name__ == "__main__":  # python tests/test_docs_examples.py FILE '{"torch": "reason", ...}'
    sys.path.insert(0, str(ROOT))
    print("\n" + json.dumps(run_file(sys.argv[1], json.loads(sys.argv[2]))))
    sys.exit(0)


# -- the tests ----------------------------------------------------------------------------------------
import pytest  # noqa: E402
from conftest import selected_backends  # noqa: E402

_BLOCKS = all_blocks()
_RESULTS: dict[str, dict[str, dict]] = {}


def _skipped(config: pytest.Config) -> dict[str, str]:
    chosen = set(selected_backends(config))
    return {name: ("not installed" if importlib.util.find_spec(module) is None else "not selected with --backend")
            for name, module in FRAMEWORKS.items()
            if name not in chosen or importlib.util.find_spec(module) is None}


def _file_results(path: str, config: pytest.Config) -> dict[str, dict]:
    if path not in _RESULTS:
        out = subprocess.run([sys.executable, __file__, path, json.dumps(_skipped(config))], cwd=ROOT,
                             capture_output=True, text=True, timeout=600,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])})
        assert out.returncode == 0, f"{path}: the example runner crashed:\n{out.stderr[-3000:]}"
        _RESULTS[path] = {r["id"]: r for r in json.loads(out.stdout.strip().splitlines()[-1])}
    return _RESULTS[path]


@pytest.mark.parametrize("block", _BLOCKS, ids=[b.id for b in _BLOCKS])
def test_example(block: Block, request: pytest.FixtureRequest) -> None:
    result = _file_results(block.path, request.config)[block.id]
    if result["status"] == "skip":
        pytest.skip(result["message"])
    assert result["status"] == "ok", result["message"]


def test_every_page_is_searched() -> None:
    """The README and at least the getting-started page have examples (the parsers find them)."""
    paths = {b.path for b in _BLOCKS}
    assert {"README.md", "docs/getting_started.rst", "docs/concepts.rst"} <= paths


# -- the runner itself, on examples written here -----------------------------------------------------
def _run(code: str) -> dict:
    namespace: dict = {"al": __import__("arraylayer"), "np": __import__("numpy")}
    run_block(Block("example.md", 1, textwrap.dedent(code)), namespace)
    return namespace


def test_a_true_result_passes_and_a_false_one_names_the_line() -> None:
    _run("al.promote_types('int8', 'uint8')  # arraylayer.int16")
    _run("al.current_backend()  # 'numpy'")
    _run("np.ones(2, np.int32).dtype  # dtype('int32')")
    with pytest.raises(ExampleFailure, match=r"example.md:2: the comment says 'arraylayer.int8', the REPL shows "
                                              r"'arraylayer.int16'"):
        _run("x = 1\nal.promote_types('int8', 'uint8')  # arraylayer.int8")
    # str() is not what the REPL shows: a comment written from it is wrong
    with pytest.raises(ExampleFailure, match="the REPL shows \"'numpy'\""):
        _run("al.current_backend()  # numpy")


def test_a_stated_error_must_be_raised_with_that_message() -> None:
    _run("al.result_type(np.ones(3, np.int8), 1000)  # ScalarOverflowError")
    _run("al.result_type(np.ones(3, np.int8), 1000)  # OverflowError")  # a base class counts
    with pytest.raises(ExampleFailure, match="expected TypeError, nothing was raised"):
        _run("y = al.promote_types('int8', 'int8')  # TypeError")
    with pytest.raises(ExampleFailure, match="does not start with 'no such words'"):
        _run("al.result_type(np.ones(3, np.int8), 1000)  # ScalarOverflowError: no such words")
    with pytest.raises(ZeroDivisionError):  # another error is reported as itself
        _run("1 / 0  # TypeError")


def test_checks_reach_inside_with_blocks_and_commentary_must_stand_alone() -> None:
    _run("with al.dtype_promotion('strict'):\n    al.promote_types('float32', int)  # arraylayer.float32")
    with pytest.raises(ExampleFailure, match="commentary goes on its own line"):
        _run("x = al.promote_types('int8', 'int8')  # the same dtype")
    with pytest.raises(ExampleFailure, match="commentary goes on its own line"):
        _run("print('x')  # x")
    with pytest.raises(ExampleFailure, match="example.md:1: trailing comment"):
        _run("with al.dtype_promotion('strict'):  # or paddle\n    pass")


def test_examples_must_paste_into_the_repl() -> None:
    """The standard REPL ends a compound statement at a blank line and needs one before the next
    statement: both mistakes are reported with their line."""
    _run("with al.use_backend('numpy'):\n    x = 1\n    # commentary\n    y = 2\n\nx + y  # 3")
    with pytest.raises(ExampleFailure, match="example.md:2: no blank line after this statement's body"):
        _run("with al.use_backend('numpy'):\n    x = 1\nx  # 1")
    with pytest.raises(ExampleFailure, match="example.md:1: a blank line inside this statement"):
        _run("for i in range(2):\n    x = i\n\n    y = i")


def test_rst_and_markdown_blocks_are_found_with_their_lines(tmp_path: Path) -> None:
    page = tmp_path / "page.rst"
    page.write_text("Title\n\n.. code-block:: python\n   :caption: c\n\n   a = 1\n\n   a  # 1\n\ntext\n")
    md = tmp_path / "page.md"
    md.write_text("x\n```python\nb = 2\n```\n```bash\nls\n```\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        [rst], [fence] = rst_blocks(page), markdown_blocks(md)
    finally:
        ROOT = saved
    assert (rst.id, rst.code) == ("page.rst:6", "a = 1\n\na  # 1")
    assert (fence.id, fence.code) == ("page.md:3", "b = 2")
    assert backends_needed("import torch\nal.set_backend('jax')\nal.asarray([1])") == {"torch", "jax"}


def test_missing_source_documents_skip_with_one_line(tmp_path: Path) -> None:
    """Without the seed documents (a plain clone) the tests that need them skip, each module with
    one line that says what is missing and which variable to set, and nothing else is said."""
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "tests/test_promotion_seed000.py"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "ARRAYLAYER_SEEDS": str(tmp_path / "absent")})
    assert out.returncode in (0, 5), out.stdout[-2000:]  # 5: every test skipped, none collected
    skips = [line for line in out.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 1 and "ARRAYLAYER_SEEDS" in skips[0] and str(tmp_path / "absent") in skips[0], out.stdout
    assert "!!!" not in out.stdout and "WARNING" not in out.stdout
