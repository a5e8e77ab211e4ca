"""The TensorFlow kernels (see ``arraylayer/kernels/__init__.py`` for the contract).

One module per Array API category (``linalg`` holds both linear-algebra categories);
``KERNELS`` maps every name of :data:`~arraylayer.kernels.names.KERNEL_NAMES` to the
function of that name in its category's module. Where TensorFlow 2.21 lacks a kernel for
a valid dtype, the module computes the same values from ops it has (bool arithmetic as
logic, unsigned and 8/16-bit integers in a wider or same-width signed dtype, float16 and
bfloat16 decompositions in float32, rounded once), so nothing is declared unsupported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arraylayer.kernels.names import collect_kernels, half_precision_decompositions_unsupported

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(__name__)

# TF has no float16/bfloat16 decompositions; float32 work rounded back would not be exact.
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(">=2.21,<2.22")
