"""einops on ``arraylayer.Array`` through arraylayer's einops backend
(arraylayer/integrations/einops.py): rearrange, reduce, repeat, pack/unpack and einsum give
Arrays of the input's backend with the values einops computes on NumPy arrays; so do the
functions of ``einops.array_api``, which compute through the inputs' ``__array_namespace__``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

einops = pytest.importorskip("einops")
import einops.array_api as einops_xp  # noqa: E402  (einops' functions on any Array API namespace)

RNG = np.random.default_rng(3)
T = RNG.normal(size=(2, 3, 4, 6))
A = RNG.normal(size=(3, 4))
B = RNG.normal(size=(4, 5))
INTS = np.arange(24, dtype=np.int32).reshape(2, 3, 4)

CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "rearrange-transpose": (lambda x: einops.rearrange(x, "b c h w -> b h w c"), (T,)),
    "rearrange-merge": (lambda x: einops.rearrange(x, "b c h w -> (b h) (c w)"), (T,)),
    "rearrange-split": (lambda x: einops.rearrange(x, "b c h (w2 w) -> b w2 c h w", w2=2), (T,)),
    "rearrange-space-to-depth": (lambda x: einops.rearrange(x, "b c (h h2) (w w2) -> b (c h2 w2) h w", h2=2, w2=2),
                                 (T,)),
    "rearrange-list": (lambda x: einops.rearrange([x[0], x[1]], "n c h w -> c n h w"), (T,)),
    "reduce-mean": (lambda x: einops.reduce(x, "b c h w -> b c", "mean"), (T,)),
    "reduce-max-pool": (lambda x: einops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max"), (T,)),
    "reduce-sum-int": (lambda x: einops.reduce(x, "a b c -> c", "sum"), (INTS,)),
    "reduce-min": (lambda x: einops.reduce(x, "b c h w -> h", "min"), (T,)),
    "reduce-prod": (lambda x: einops.reduce(x, "a b -> b", "prod"), (A,)),
    "repeat-new-axis": (lambda x: einops.repeat(x, "h w -> h w c", c=3), (A,)),
    "repeat-tile": (lambda x: einops.repeat(x, "h w -> (r h) (w s)", r=2, s=3), (A,)),
    "pack-unpack": (lambda x, y: einops.unpack(*einops.pack([x, y], "* w"), "* w")[1], (A, B.T)),
    "einsum-matmul": (lambda x, y: einops.einsum(x, y, "i j, j k -> i k"), (A, B)),
    "einsum-trace-batch": (lambda x: einops.einsum(x, "b c h h2 -> b c", ), (T[:, :, :, :4],)),
    "reduce-any": (lambda x: einops.reduce(x > 10, "a b c -> a c", "any"), (INTS,)),
    "reduce-all": (lambda x: einops.reduce(x > 2, "a b c -> b", "all"), (INTS,)),
    "parse_shape": (lambda x: tuple(einops.parse_shape(x, "b c _ w").values()), (T,)),
    "array_api-rearrange": (lambda x: einops_xp.rearrange(x, "b c h (w2 w) -> (b w2) c h w", w2=3), (T,)),
    "array_api-reduce": (lambda x: einops_xp.reduce(x, "b c h w -> c w", "mean"), (T,)),
    "array_api-repeat": (lambda x: einops_xp.repeat(x, "h w -> h (w r)", r=2), (A,)),
    "array_api-pack": (lambda x, y: einops_xp.pack([x, y], "h *")[0], (A, B.T[:3])),
    "einsum-mixed-dtypes": (lambda x, y: einops.einsum(x, y, "a b c, a b c -> a"), (INTS.astype(np.int8),
                                                                                   INTS.astype(np.int16))),
}


# Gaps of arraylayer that work under way closes (keys of conftest's PENDING), per (case, client or "*").
PENDING: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", list(CASES))
def test_einops(name: str, client: Any) -> None:
    client.xfail_pending(PENDING, name)
    call, arguments = CASES[name]
    expected = call(*(client.host(a) for a in arguments))
    client.close(call(*(client.array(a) for a in arguments)), expected)


def test_backend_is_found_for_array(client: Any) -> None:
    from einops._backends import get_backend

    from arraylayer.integrations.einops import ArrayBackend

    assert isinstance(get_backend(client.array(A)), ArrayBackend)


@pytest.mark.parametrize("first", ["einops", "arraylayer"])
def test_backend_registered_whichever_is_imported_first(first: str) -> None:
    """The backend is defined right after einops is imported when arraylayer came first (which
    imports no einops itself), and at arraylayer's import when einops came first."""
    import subprocess
    import sys

    imports = {"einops": "import einops", "arraylayer": "import arraylayer as al"}
    second = "arraylayer" if first == "einops" else "einops"
    script = "; ".join([
        "import sys, numpy as np", imports[first],
        f"assert {second!r} not in sys.modules", imports[second],
        "out = einops.rearrange(al.Array(np.arange(6).reshape(2, 3)), 'a b -> (b a)')",
        "print(type(out).__name__, out.shape)",
    ])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Array", "(6,)"]
