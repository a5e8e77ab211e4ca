"""docs/keras_ops.rst's data (docs/_ext/keras_map.py) against the installed keras and arraylayer: the
frozen list of keras.ops names is keras' own, every rename names a public arraylayer function, and the
share of keras.ops arraylayer covers does not fall below :data:`COVERED_AT_LEAST`."""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("keras_map", ROOT / "docs" / "_ext" / "keras_map.py")
keras_map = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(keras_map)

#: the share of keras.ops' names covered (issue 40 asks for 0.90); it only moves up
COVERED_AT_LEAST = 0.95

_KERAS_NAMES = """
import importlib, json, keras
ops = keras.ops
names = {}
for group in ("core", "image", "linalg", "math", "nn", "numpy"):
    if group in ("image", "linalg"):
        found = [n for n in dir(getattr(ops, group)) if not n.startswith("_")]
    else:
        module = importlib.import_module("keras.src.ops." + group)
        found = [n for n in dir(ops) if not n.startswith("_") and callable(getattr(module, n, None))
                 and not isinstance(getattr(module, n), type)]
    names[group] = sorted(found)
names["nn"] = sorted(names["nn"] + ["hard_swish", "swish"])
names["core"] = sorted(names["core"] + ["rearrange"])
grouped = {n for v in names.values() for n in v}
print(json.dumps({"version": keras.__version__, "names": names,
                  "ungrouped": sorted(n for n in dir(ops) if not n.startswith("_") and n not in grouped
                                      and n not in ("image", "linalg", "nn", "numpy"))}))
"""


def test_the_frozen_names_are_the_installed_keras_ones():
    pytest.importorskip("keras", reason="keras comes with tensorflow (pinned in constraints.txt)")
    env = {**os.environ, "KERAS_BACKEND": "numpy", "TF_CPP_MIN_LOG_LEVEL": "3"}
    out = subprocess.run([sys.executable, "-c", _KERAS_NAMES], capture_output=True, text=True, env=env, check=True)
    installed = json.loads(out.stdout.strip().splitlines()[-1])
    if installed["version"] != keras_map.KERAS_VERSION:
        pytest.skip(f"keras {installed['version']} installed; the table is of {keras_map.KERAS_VERSION}")
    assert installed["ungrouped"] == []
    assert {g: list(v) for g, v in keras_map.KERAS_NAMES.items()} == installed["names"]


def test_every_rename_and_attribute_names_something_real():
    known = {f"{g}.{n}" for g, names in keras_map.KERAS_NAMES.items() for n in names}
    assert set(keras_map.RENAMED) <= known and set(keras_map.ATTRIBUTES) <= known
    stale = [key for key, (target, _) in keras_map.RENAMED.items() if keras_map._public(target) is None]
    assert stale == [], f"renames to names arraylayer does not have: {stale}"


def test_a_missing_name_counts_as_missing():
    assert keras_map._public("nn.no_such_op") is None and keras_map._public("Any") is None  # not in __all__
    assert keras_map._public("nn.relu") is not None


def test_coverage_does_not_fall():
    covered, total = keras_map.coverage()["all"]
    assert total == sum(map(len, keras_map.KERAS_NAMES.values())) == 353
    assert covered / total >= COVERED_AT_LEAST, f"{covered} of {total} keras.ops names covered"
