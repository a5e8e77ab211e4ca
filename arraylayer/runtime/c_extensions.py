"""Loading arraylayer's optional C extensions (``_dispatch``, ``_threefry``, ``_codes``; built by
setup.py where a compiler exists), each replaced by its pure-Python path where it is missing or where
``ARRAYLAYER_PURE_PYTHON=1`` asks for that path (as CI's tests of both paths do)."""

from __future__ import annotations

import importlib
import os
from typing import Any


def optional_extension(name: str) -> Any:
    """The extension module ``arraylayer.<name>``, or None (not built, or pure Python asked for).

    Imported by name: the extensions import nothing of arraylayer's, and an import statement would
    read, in tests/test_import_graph.py, as one of the package's modules."""
    if os.environ.get("ARRAYLAYER_PURE_PYTHON", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(f"arraylayer.{name}")
    except ImportError:
        return None
