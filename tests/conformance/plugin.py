"""pytest plugin for the official Array API suite (``-p tests.conformance.plugin``).

After the suite has registered its hypothesis profile (max examples, derandomize, deadline from
the command line), load a copy of it without the ``shrink`` and ``explain`` phases and without an
example database: every test keeps its outcome, but a failing test no longer spends minutes
shrinking its example, and nothing is written next to the suite (``.hypothesis``).
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, settings

_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    settings.register_profile("arraylayer-conformance", settings(settings.default, phases=_PHASES, database=None))
    settings.load_profile("arraylayer-conformance")
