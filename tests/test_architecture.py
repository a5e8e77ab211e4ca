"""docs/architecture.rst's map against the tree: the map is generated from the folders' and modules'
docstrings (docs/_ext/architecture.py), so what is checked here is that it covers everything, that each
module says what it is, and that the map's layer order keeps the folders' import rules."""

from __future__ import annotations

import importlib.util
import pathlib

from test_import_graph import FOLDERS, may_import

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("architecture", ROOT / "docs" / "_ext" / "architecture.py")
architecture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(architecture)
PAGE = architecture.architecture()


def test_every_folder_is_a_layer_of_the_map():
    assert sorted(architecture.LAYERS) == FOLDERS


def test_the_layer_order_keeps_the_import_rules():
    """A folder comes after every folder its docstring lets it import (the map reads bottom-up)."""
    position = {name: index for index, name in enumerate(architecture.LAYERS)}
    late = [(folder, rule) for folder in FOLDERS for rule in may_import(folder)
            if rule.count(".") == 1 and (target := rule.split(".")[1]) in position and position[target] > position[folder]]
    assert not late, f"folders listed before folders they import: {late}"


def test_the_map_names_every_module_and_subfolder():
    missing = []
    for folder in FOLDERS:
        for child in sorted((ROOT / "arraylayer" / folder).iterdir()):
            if child.suffix == ".py" and child.name != "__init__.py":
                name = f"``{folder}/{child.name}``"
            elif (child / "__init__.py").is_file():
                name = f"``{folder}/{child.name}/``"
            else:
                continue
            if name not in PAGE:
                missing.append(name)
    assert not missing, f"not on the architecture page: {missing}"


def test_every_top_level_module_is_the_base_or_the_face():
    top = {p.name for p in (ROOT / "arraylayer").glob("*.py")}
    assert top == set(architecture.BASE) | set(architecture.FACE)
    assert all(f"``{name}``" in PAGE for name in architecture.BASE)


def test_every_module_says_what_it_is():
    """Each row of the map has a sentence: every module and package of arraylayer has a docstring."""
    silent = [str(p.relative_to(ROOT)) for p in sorted((ROOT / "arraylayer").rglob("*.py"))
              if not architecture.first_sentence(architecture.docstring(p))]
    assert not silent, f"modules without a docstring: {silent}"


def test_the_page_includes_the_map():
    text = (ROOT / "docs" / "architecture.rst").read_text()
    assert ".. include:: _generated/architecture.rst.inc" in text
    assert "architecture" in (ROOT / "docs" / "index.rst").read_text()


def test_a_first_sentence_is_cut_at_its_end():
    assert architecture.first_sentence("One job. Then more.\n\nLater.") == "One job."
    assert architecture.first_sentence("No stop here\nstill the same sentence") == "No stop here still the same sentence"
