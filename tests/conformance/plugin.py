"""pytest plugin for the official Array API suite (``-p tests.conformance.plugin``).

After the suite has registered its hypothesis profile (max examples, derandomize, deadline from
the command line), load a copy of it without the ``shrink`` and ``explain`` phases and without an
example database: every test keeps its outcome, but a failing test no longer spends minutes
shrinking its example, and nothing is written next to the suite (``.hypothesis``).

``ARRAYLAYER_NARROW_64BIT=1`` (the ``jax-no-x64`` configuration) turns on
``arraylayer.set_narrow_64bit`` before the suite imports the namespace: JAX without x64 then
serves the 64-bit dtypes the suite asks for in 32 bits, the documented path for such clients.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import Phase, settings

_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target)

if os.environ.get("ARRAYLAYER_NARROW_64BIT") == "1":  # -p plugins load before the suite's conftest
    import arraylayer

    arraylayer.set_narrow_64bit(True)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    settings.register_profile("arraylayer-conformance", settings(settings.default, phases=_PHASES, database=None))
    settings.load_profile("arraylayer-conformance")
