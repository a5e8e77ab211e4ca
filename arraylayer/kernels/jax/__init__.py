"""The jax kernels (jax.numpy 0.10); see ``arraylayer/kernels/__init__.py``.

``KERNELS`` maps every name of ``names.KERNEL_NAMES`` to the function of that name in the
module of its category. Most are jax.numpy's own functions; the others are documented in their
modules (large Python ints, signed zeros, half precision computed in float32, plain tuples).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arraylayer.kernels.names import collect_kernels, half_precision_decompositions_unsupported

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(__name__)

# No float16/bfloat16 factorisations or solves (see linalg.py); everything else the api layer
# sends has a kernel on jax 0.10 (tests/test_kernels_*.py call every one).
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(">=0.10,<0.11")
