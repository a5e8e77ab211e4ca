"""The torch kernels: ``KERNELS`` (every name of ``kernels/names.py``) and ``UNSUPPORTED``.

Each category's functions live in one module under their Array API names; ``KERNELS`` takes
them by name, so a missing one fails at import. Checked on torch 2.13 (CPU).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import torch

from arraylayer.kernels.names import collect_kernels, half_precision_decompositions_unsupported
from arraylayer.kernels.torch.elementwise import mixed_plain  # noqa: F401  (the kernel contract's mixed-dtype callables)

KERNELS: dict[str, Callable[..., Any]] = collect_kernels(__name__)

_TORCH_2_13: Final = ">=2.13,<2.14"

# torch.linalg has no CPU kernels for float16/bfloat16 factorizations (LU, Cholesky, QR, eigh,
# SVD: "not implemented for 'Half'" / "Low precision dtypes not supported"); computing in float32
# and rounding back would not be the float16 result, so these stay unsupported.
# Partly supported, so not declared: matrix_power (n >= 0 is matmul; n < 0 needs inv) and
# matrix_norm ("fro", 1, -1, inf, -inf work; 2, -2 and "nuc" need an SVD).
UNSUPPORTED: dict[str, dict[str, tuple[str, ...]]] = half_precision_decompositions_unsupported(_TORCH_2_13)
SUPPORTED: dict[str, dict[str, tuple[str, ...]]] = {}

# torch 2.13 stores uint16/uint32/uint64 but computes with almost none of them. Every kernel computes
# uint16 and uint32 in int64, which holds each of their values, and casts back (api/widened.py), so
# they are valid dtypes here. uint64 is not (int64 cannot hold its values from 2**63 on, so order,
# division and casts to float would be wrong there): it stays stored-only, and only these kernels
# compute a uint64 accumulator, exactly in int64 (wrapping arithmetic is the same bits; see
# statistical.py; trace sums with that sum), with equal/not_equal torch's own eq/ne.
# Measured on 2.13 only: another version keeps them stored-only until checked (the probe says).
COMPUTES_AS: dict[str, str] = (
    {"uint16": "int64", "uint32": "int64"} if torch.__version__.split("+")[0].startswith("2.13.") else {}
)
COMPUTES_STORED: dict[str, dict[str, tuple[str, ...]]] = {
    name: {_TORCH_2_13: ("uint64",)}
    for name in ("sum", "prod", "cumulative_sum", "cumulative_prod", "trace", "equal", "not_equal")
}
