"""The toolkit's bad-input campaign (tests/toolkit_campaign.py) in CI: a fixed-seed sample of its
cases (``AL_TOOLKIT_CAMPAIGN=all`` runs every one), each refused or computed alike on every backend,
with no raw framework error, no leaked Python error and no hang."""

from __future__ import annotations

import os
import random

import pytest

from tests.toolkit_campaign import CASES, check, describe

SAMPLE = CASES if os.environ.get("AL_TOOLKIT_CAMPAIGN") == "all" else random.Random(0).sample(CASES, min(120, len(CASES)))


@pytest.mark.parametrize("case", SAMPLE, ids=describe)
def test_hostile_toolkit_arguments_are_refused_alike(case, request):
    from tests.conftest import selected_backends

    failures = check(case, tuple(selected_backends(request.config)))
    assert not failures, "\n".join(f"{backend}: {cls} {detail}" for backend, cls, detail in failures)
