"""The kernel names every built-in backend provides, by Array API category.

The api layer builds the functions that are compositions (``zeros_like``, ``astype``,
``isdtype`` ...) from these; tests check that every backend's ``KERNELS`` has them all.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from typing import Any, Final

KERNEL_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "creation": ("arange", "empty", "eye", "full", "linspace", "meshgrid", "ones", "tril", "triu", "zeros"),
    "elementwise": (
        "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
        "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
        "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor",
        "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
        "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
        "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
        "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
        "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
    ),
    "fft": ("fft", "fftn", "hfft", "ifft", "ifftn", "ihfft", "irfft", "irfftn", "rfft", "rfftn"),
    "indexing": ("take", "take_along_axis"),
    "linear_algebra": ("matmul", "matrix_transpose", "tensordot", "vecdot"),
    "linalg": (
        "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matrix_norm",
        "matrix_power", "matrix_rank", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
        "trace", "vector_norm",
    ),
    "manipulation": (
        "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
        "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    ),
    "searching": ("argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"),
    "sets": ("unique_all", "unique_counts", "unique_inverse", "unique_values"),
    "sorting": ("argsort", "sort"),
    "statistical": ("cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"),
    "utility": ("all", "any", "diff"),
}

ALL_KERNEL_NAMES: Final[tuple[str, ...]] = tuple(n for names in KERNEL_NAMES.values() for n in names)

#: The factorisations and solves no framework computes in float16/bfloat16 (float32 work rounded
#: back would not be exact); every backend declares them unsupported for those dtypes.
DECOMPOSITIONS: Final[tuple[str, ...]] = (
    "cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matrix_rank", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
)


#: Where a kernel package keeps each category: the first of these modules that the package has.
#: A package with a module named after the category uses it; otherwise the shared module.
CATEGORY_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "creation": ("creation",), "elementwise": ("elementwise",), "fft": ("fft",),
    "indexing": ("indexing", "manipulation"), "linear_algebra": ("linalg",), "linalg": ("linalg",),
    "manipulation": ("manipulation",), "searching": ("searching",), "sets": ("sets", "searching"),
    "sorting": ("sorting", "searching"), "statistical": ("statistical",), "utility": ("utility", "statistical"),
}


def collect_kernels(package: str) -> dict[str, Callable[..., Any]]:
    """``KERNELS`` of the kernel package ``package``: every name of :data:`KERNEL_NAMES`, taken
    from the module that holds its category (:data:`CATEGORY_MODULES`). A missing kernel fails
    at import."""
    found: dict[str, Any] = {}
    for category, names in KERNEL_NAMES.items():
        module = _category_module(package, category)
        found.update({name: getattr(module, name) for name in names})
    return found


def _category_module(package: str, category: str) -> Any:
    for candidate in CATEGORY_MODULES[category]:
        if importlib.util.find_spec(f"{package}.{candidate}") is not None:
            return importlib.import_module(f"{package}.{candidate}")
    raise ImportError(f"{package} has no module for the {category} kernels (one of {CATEGORY_MODULES[category]})")


def half_precision_decompositions_unsupported(version_range: str) -> dict[str, dict[str, tuple[str, ...]]]:
    """The ``UNSUPPORTED`` entries for :data:`DECOMPOSITIONS` and the fft kernels in
    float16/bfloat16 at ``version_range`` (no complex dtype of half precision holds an fft's result)."""
    return {name: {version_range: ("bfloat16", "float16")} for name in (*DECOMPOSITIONS, *KERNEL_NAMES["fft"])}
