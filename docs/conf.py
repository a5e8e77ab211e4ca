"""Sphinx configuration of the arraylayer documentation.

Build: ``nox -s docs`` (or ``sphinx-build -W --keep-going -b html docs docs/_build/html``
with the ``docs`` extra installed). Parts of the pages are generated from the code at
build time by ``_ext/arraylayer_docs.py`` into ``_generated/``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))  # the arraylayer of this tree, installed or not
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("MPLBACKEND", "Agg")

import arraylayer  # noqa: E402 - after the path is set

project = "arraylayer"
author = "The arraylayer developers"
copyright = "The arraylayer developers"  # noqa: A001 - Sphinx's name for it
version = release = arraylayer.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "arraylayer_docs",
]

root_doc = "index"
source_suffix = {".rst": "restructuredtext"}
exclude_patterns = ["_build", "_generated", "_ext", "Thumbs.db", ".DS_Store"]
language = "en"

# No network at build time: no intersphinx, no remote images.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = True
add_module_names = False

html_theme = "alabaster"
html_title = f"arraylayer {release}"
html_theme_options = {
    "description": "One set of dtype semantics for NumPy, JAX, PyTorch and TensorFlow",
    "page_width": "1180px",
    "sidebar_width": "230px",
    "fixed_sidebar": True,
}
html_sidebars = {"**": ["about.html", "navigation.html", "searchbox.html"]}
