"""The numpy kernels, called directly (no api layer): every kernel on every dtype the api layer
sends it, values and result dtypes against numpy's own result on the same data.

The table of cases below is backend-neutral (tests/test_kernels_jax.py runs it on jax). The
reference is numpy on the same data, except that float16/bfloat16 are widened to float64 first
(ml_dtypes' bfloat16 loops are no reference: their mean of 10000 values 1.1 is 0.05) and a
Python scalar operand is first made a value of the array's dtype, as the contract says. A
dtype a backend declares in UNSUPPORTED must make the kernel raise instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import pytest
from oracles import assert_close, numpy_dtype, standard_floor_divide

import arraylayer as al
from arraylayer.kernels.names import ALL_KERNEL_NAMES, KERNEL_NAMES
from arraylayer.support import kernel_unsupported_dtypes

BOOL = ("bool",)
INT = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOAT = ("bfloat16", "float16", "float32", "float64")
COMPLEX = ("complex64", "complex128")
REAL = INT + FLOAT
INEXACT = FLOAT + COMPLEX
NUMERIC = REAL + COMPLEX
ALL = BOOL + NUMERIC
HALVES = ("bfloat16", "float16")
WIDE = ("float32", "float64") + COMPLEX  # no half precision: what needs a factorisation
REAL_OF = {"complex64": "float32", "complex128": "float64"}
PY_TYPE = {"bool": bool, "int": int, "uint": int, "float": float, "complex": complex}
nan, inf = float("nan"), float("inf")
T, F = True, False

_ANY = {"bool": [T, F, T, T, F, F], "int": [-7, -1, 0, 2, 5, 3], "uint": [7, 1, 0, 2, 5, 3],
        "float": [-2.5, -0.0, 0.5, 1.5, 2.5, 3.75], "complex": [1 + 2j, -0.5j, 0, 2.5 - 1j, -3 + 0.5j, 1.5]}
_NONZERO = {"bool": [T, T, F, T, F, T], "int": [2, -3, 1, -2, 4, 3], "uint": [2, 3, 1, 2, 4, 3],
            "float": [1.25, -2.0, 0.75, -0.5, 2.0, 3.0], "complex": [0.5 - 1j, 2, -1 + 1j, 1.5j, 2 - 0.5j, -1]}
_DUPS = {"bool": [T, F, T, F, F, T], "int": [2, 1, 2, 0, 1, 2], "uint": [2, 1, 2, 0, 1, 2],
         "float": [1.5, -0.5, 1.5, 0.0, -0.5, 1.5]}
# Six values per dtype kind, shaped (2, 3), inside the domain of the functions that use them.
DOMAINS: dict[str, dict[str, list[Any]]] = {
    "any": _ANY,
    "nonzero": _NONZERO,
    "special": {**_ANY, "float": [nan, inf, -inf, -0.0, 1.5, -2.0],
                "complex": [complex(nan, 0), complex(inf, 1), complex(0, nan), 0, 3 + 4j, -1j]},
    "unit": {"float": [-0.75, -0.5, 0.0, 0.25, 0.5, 0.875],
             "complex": [0.5 + 0.25j, -0.25j, 0.75, -0.5 + 0.5j, 0.25, 0.125 - 0.5j]},
    "positive": {"float": [0.25, 0.5, 1.5, 2.0, 3.0, 10.0],
                 "complex": [1 + 1j, 0.5j, 2, 3 - 1j, 0.25 + 0.5j, 10]},
    "at_least_1": {"float": [1.0, 1.5, 2.0, 3.0, 10.0, 1.25],
                   "complex": [1 + 1j, 2, 1.5 - 0.5j, 3j, 10, 1.25 + 0.25j]},
    "halves": {**_ANY, "float": [0.5, 1.5, 2.5, -0.5, -1.5, 3.25],
               "complex": [0.5 + 1.5j, 2.5 - 0.5j, -1.5, 3.25j, -0.5 - 2.5j, 1]},
    "base": {**_ANY, "float": [0.25, 0.5, 1.5, 2.0, 3.0, 10.0]},
    "exponent": {**_NONZERO, "int": [2, 3, 1, 0, 2, 1], "uint": [2, 3, 1, 0, 2, 1]},
    "shift": {"int": [0, 1, 2, 3, 1, 0], "uint": [0, 1, 2, 3, 1, 0]},
    "dups": _DUPS,
    "dupnan": {**_DUPS, "float": [nan, 1.5, nan, 1.5, -0.5, 0.0]},
}
PARTLY_HALF_ORDS = ("nuc", 2, -2)  # matrix norms that need an SVD: none in half precision
_M3 = ([[2, 1, 0.5], [-1, 3, 0.25], [0.5, -0.25, 4]], [[0.5, 0, 0.25], [0, -0.5, 0], [0.25, 0, 1]])
_H3 = ([[4, 1, 0.5], [1, 3, 0.25], [0.5, 0.25, 2]], [[0, 0.5, 0], [-0.5, 0, 0.25], [0, -0.25, 0]])


def kind(dtype: str) -> str:
    return al.Dtype(dtype).category


def arr(dtype: str, domain: str = "any", shape: tuple[int, ...] = (2, 3)) -> np.ndarray:
    """Six values of ``domain`` for ``dtype``'s kind as a numpy array of ``dtype``."""
    return np.asarray(DOMAINS[domain][kind(dtype)], dtype=numpy_dtype(dtype)).reshape(shape)


def scalar(dtype: str, domain: str = "any") -> Any:
    """The first value of ``domain`` as the Python scalar the api layer passes with ``dtype``."""
    return PY_TYPE[kind(dtype)](DOMAINS[domain][kind(dtype)][0])


def matrix(dtype: str, parts: tuple[list[Any], list[Any]]) -> np.ndarray:
    """A well-conditioned 3x3 matrix (``_M3``: general, ``_H3``: Hermitian positive definite)."""
    values = np.asarray(parts[0]) + (1j * np.asarray(parts[1]) if kind(dtype) == "complex" else 0)
    return values.astype(numpy_dtype(dtype))


class Py(NamedTuple):
    """A Python scalar operand: the kernel gets ``value``; numpy's reference a 0-d array of
    the case's dtype (the value the contract says the kernel must take it as)."""

    value: Any


@dataclass(frozen=True)
class Case:
    """One call of kernel ``name`` for each of ``dtypes``: ``make(dtype)`` gives numpy args and
    kwargs (``dtype=`` as a dtype name). ``out`` says the result dtype, per output if a tuple:
    "same" (the case's dtype), "real" (of complex), "bool", "index" (any integer) or "given"
    (the ``dtype=`` kwarg). ``exact``: values and signs of zeros must match exactly."""

    name: str
    dtypes: tuple[str, ...]
    make: Callable[[str], tuple[tuple[Any, ...], dict[str, Any]]]
    out: str | tuple[str, ...] = "same"
    ref: Callable[..., Any] | None = None
    label: str = ""
    exact: bool = False
    widen: bool = True  # compute half-precision references in float64
    check: Callable[[list[np.ndarray], np.ndarray, float], None] | None = None

    @property
    def id(self) -> str:
        return f"{self.name}[{self.label}]" if self.label else self.name


def unary(name: str, dtypes: tuple[str, ...], domain: str = "any", **options: Any) -> Case:
    return Case(name, dtypes, lambda d: ((arr(d, domain),), {}), **options)


def binary(name: str, dtypes: tuple[str, ...], d1: str = "any", d2: str = "nonzero", **options: Any) -> list[Case]:
    """Array-array (broadcasting (2, 3) with (3,)), array-scalar and scalar-array calls."""
    return [
        Case(name, dtypes, lambda d: ((arr(d, d1), arr(d, d2)[0]), {}), **options),
        Case(name, dtypes, lambda d: ((arr(d, d1), Py(scalar(d, d2))), {}), label="scalar", **options),
        Case(name, dtypes, lambda d: ((Py(scalar(d, d1)), arr(d, d2)), {}), label="scalar_left", **options),
    ]


def sort_ref(x: np.ndarray, axis: int = -1, descending: bool = False, stable: bool = True,
             indices: bool = False) -> np.ndarray:
    """Python's stable sorted() along ``axis`` (reverse=True keeps equal elements in order), NaN
    above everything: last ascending, first descending."""
    moved = np.moveaxis(x, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1]).tolist()
    order = np.array([sorted(range(len(row)), key=lambda i, r=row: (r[i] != r[i], r[i] if r[i] == r[i] else 0),
                             reverse=descending) for row in rows]).reshape(moved.shape)
    result = order if indices else np.take_along_axis(moved, order, -1)
    return np.moveaxis(result, -1, axis)


def reconstructs(rebuild: Callable[..., np.ndarray]) -> Callable[[list[np.ndarray], np.ndarray, float], None]:
    """A check for decompositions (unique only up to signs/phases): ``rebuild(*parts)`` gives x back."""

    def check(parts: list[np.ndarray], x: np.ndarray, tol: float) -> None:
        np.testing.assert_allclose(rebuild(*parts), x, rtol=4 * tol, atol=4 * tol * np.abs(x).max())

    return check


def _svd_rebuild(u: np.ndarray, s: np.ndarray, vh: np.ndarray) -> np.ndarray:
    k = s.shape[-1]
    return (u[..., :k] * s[..., None, :]) @ vh[..., :k, :]


def _eigh_rebuild(w: np.ndarray, v: np.ndarray) -> np.ndarray:
    return (v * w[..., None, :]) @ v.conj().swapaxes(-1, -2)


def _qr_rebuild(q: np.ndarray, r: np.ndarray) -> np.ndarray:
    np.testing.assert_allclose(np.tril(r, -1), 0, atol=1e-6)
    return q @ r


def _creation(name: str, dtypes: tuple[str, ...], args: Callable[[str], tuple[Any, ...]], **options: Any) -> Case:
    return Case(name, dtypes, lambda d: (args(d), {"dtype": d, "device": None}), out="given", **options)


def _acc(dtype: str) -> str:
    """The widest accumulator of dtype's kind (what the api layer passes for bool and narrow ints)."""
    return {"bool": "int64", "int": "int64", "uint": "uint64"}.get(kind(dtype), dtype)


ELEMENTWISE: list[Case] = [
    unary("abs", NUMERIC, "special", out="real"),
    *(unary(n, INEXACT, "unit") for n in ("acos", "asin", "atanh")),
    unary("acosh", INEXACT, "at_least_1"),
    *(unary(n, INEXACT) for n in ("asinh", "atan", "cos", "cosh", "exp", "expm1", "sin", "sinh", "tan", "tanh")),
    *(unary(n, INEXACT, "positive") for n in ("log", "log1p", "log2", "log10", "sqrt")),
    unary("reciprocal", INEXACT, "nonzero"),
    *(unary(n, REAL, "halves", exact=True) for n in ("ceil", "floor", "trunc")),
    unary("round", NUMERIC, "halves", exact=True),
    unary("conj", NUMERIC, exact=True),
    unary("real", NUMERIC, out="real", exact=True),
    unary("imag", NUMERIC, out="real", exact=True),
    *(unary(n, ALL, "special", out="bool") for n in ("isfinite", "isinf", "isnan")),
    unary("signbit", FLOAT, "special", out="bool"),
    unary("logical_not", BOOL),
    unary("bitwise_invert", BOOL + INT),
    unary("negative", NUMERIC, "special", exact=True),
    unary("positive", NUMERIC, "special"),
    unary("sign", NUMERIC, "special"),
    unary("square", NUMERIC),
    *binary("add", ALL),
    *binary("subtract", NUMERIC),
    *binary("multiply", ALL),
    *binary("maximum", BOOL + REAL, "special", "any"),
    *binary("minimum", BOOL + REAL, "special", "any"),
    *binary("pow", NUMERIC, "base", "exponent"),
    *binary("floor_divide", REAL, "special", exact=True, ref=standard_floor_divide),
    *binary("remainder", REAL, "special", exact=True),
    *(Case(n, INT, lambda d: ((arr(d), np.zeros(3, numpy_dtype(d))), {}), label="by_zero", exact=True)
      for n in ("floor_divide", "remainder")),  # unspecified by the Array API; 0 as numpy gives
    *binary("divide", INEXACT),
    *(case for n in ("atan2", "hypot", "logaddexp") for case in binary(n, FLOAT)),
    *binary("copysign", FLOAT, "special", "any", exact=True),
    *binary("nextafter", FLOAT, "special", "nonzero", exact=True, widen=False),
    *(case for n in ("equal", "not_equal") for case in binary(n, ALL, "special", "any", out="bool")),
    *(case for n in ("greater", "greater_equal", "less", "less_equal")
      for case in binary(n, BOOL + REAL, "special", "any", out="bool")),
    *(case for n in ("logical_and", "logical_or", "logical_xor") for case in binary(n, BOOL)),
    *(case for n in ("bitwise_and", "bitwise_or", "bitwise_xor") for case in binary(n, BOOL + INT)),
    *binary("bitwise_left_shift", INT, "any", "shift"),
    *binary("bitwise_right_shift", INT, "any", "shift"),
    Case("clip", REAL, lambda d: ((arr(d, "special"),), {"min": Py(scalar(d, "halves")), "max": None}),
         label="min", ref=lambda x, min, max: np.maximum(x, min)),
    Case("clip", REAL, lambda d: ((arr(d, "special"), None, Py(scalar(d, "nonzero"))), {}), label="max",
         ref=lambda x, min, max: np.minimum(x, max)),
    Case("clip", REAL, lambda d: ((arr(d, "special"), arr(d, "dups")[1], arr(d, "dups")[0]), {}), label="arrays",
         ref=lambda x, min, max: np.minimum(np.maximum(x, min), max)),
    Case("clip", REAL, lambda d: ((arr(d),), {}), label="none", ref=lambda x: x),
]

CREATION: list[Case] = [
    _creation("arange", NUMERIC, lambda d: (1, 7, 2) if kind(d) != "float" else (0.5, 3.0, 0.5)),
    _creation("arange", NUMERIC, lambda d: (5,), label="stop"),
    _creation("arange", BOOL, lambda d: (0, 2), label="bool"),  # numpy makes at most 2 bools
    _creation("linspace", INEXACT, lambda d: (PY_TYPE[kind(d)](0), PY_TYPE[kind(d)](2), 5)),
    Case("linspace", INEXACT, lambda d: ((-1.0, 1.0), {"num": 4, "endpoint": False, "dtype": d, "device": None}),
         out="given", label="no_endpoint"),
    _creation("eye", ALL, lambda d: (3, 4)),
    Case("eye", ALL, lambda d: ((3, None), {"k": -1, "dtype": d, "device": None}), out="given", label="k"),
    _creation("full", ALL, lambda d: ((2, 3), scalar(d, "nonzero"))),
    *(_creation(n, ALL, lambda d: ((2, 3),)) for n in ("ones", "zeros")),
    _creation("empty", ALL, lambda d: ((2, 3),), check=lambda parts, x, tol: None),
    Case("meshgrid", ALL, lambda d: ((arr(d)[0], arr(d)[1, :2]), {"indexing": "xy"})),
    Case("meshgrid", ALL, lambda d: ((arr(d)[0], arr(d)[1, :2]), {"indexing": "ij"}), label="ij"),
    *(Case(n, ALL, lambda d, k=k: ((arr(d),), {"k": k}), label=f"k={k}") for n in ("tril", "triu") for k in (0, 1)),
]

MANIPULATION: list[Case] = [
    Case("broadcast_arrays", ALL, lambda d: ((arr(d), arr(d, "nonzero")[:1]), {})),
    Case("broadcast_to", ALL, lambda d: ((arr(d)[0],), {"shape": (2, 3)})),
    Case("concat", ALL, lambda d: (([arr(d), arr(d, "nonzero")],), {"axis": 1})),
    Case("concat", ALL, lambda d: (([arr(d), arr(d)[0]],), {"axis": None}), label="flat"),
    Case("expand_dims", ALL, lambda d: ((arr(d),), {"axis": 1})),
    Case("flip", ALL, lambda d: ((arr(d),), {})),
    Case("flip", ALL, lambda d: ((arr(d),), {"axis": 1}), label="axis"),
    Case("moveaxis", ALL, lambda d: ((arr(d, shape=(1, 2, 3)), 0, -1), {})),
    Case("permute_dims", ALL, lambda d: ((arr(d, shape=(1, 2, 3)),), {"axes": (2, 0, 1)})),
    Case("repeat", ALL, lambda d: ((arr(d), 2), {"axis": 1})),
    Case("repeat", ALL, lambda d: ((arr(d), np.array([1, 0, 2])), {"axis": 1}), label="array"),
    Case("repeat", ALL, lambda d: ((arr(d), 2), {}), label="flat"),
    Case("reshape", ALL, lambda d: ((arr(d),), {"shape": (3, 2)})),
    Case("reshape", ALL, lambda d: ((arr(d),), {"shape": (-1,), "copy": None}), label="copy"),
    Case("roll", ALL, lambda d: ((arr(d),), {"shift": 1, "axis": 1})),
    Case("roll", ALL, lambda d: ((arr(d),), {"shift": -2}), label="flat"),
    Case("squeeze", ALL, lambda d: ((arr(d, shape=(2, 1, 3)),), {"axis": 1})),
    Case("stack", ALL, lambda d: (([arr(d), arr(d, "nonzero")],), {"axis": 1})),
    Case("tile", ALL, lambda d: ((arr(d), (2, 1)), {})),
    Case("unstack", ALL, lambda d: ((arr(d),), {"axis": 1})),
    Case("take", ALL, lambda d: ((arr(d), np.array([0, 2, -1])), {"axis": 1})),
    Case("take", ALL, lambda d: ((arr(d)[1], np.array([1, -3])), {"axis": None}), label="1d"),
    Case("take_along_axis", ALL, lambda d: ((arr(d), np.array([[2, 0], [1, -1]])), {"axis": 1})),
    Case("take_along_axis", ALL, lambda d: ((arr(d), np.array([[1, 0, 1]])), {"axis": 0}), label="axis0"),
]

SEARCHING: list[Case] = [
    *(Case(n, BOOL + REAL, lambda d: ((arr(d, "dups"),), {}), out="index") for n in ("argmax", "argmin")),
    *(Case(n, BOOL + REAL, lambda d: ((arr(d, "dups"),), {"axis": 1, "keepdims": True}), out="index",
           label="axis") for n in ("argmax", "argmin")),
    Case("count_nonzero", ALL, lambda d: ((arr(d, "special"),), {}), out="index"),
    Case("count_nonzero", ALL, lambda d: ((arr(d, "special"),), {"axis": 1, "keepdims": True}), out="index",
         label="axis"),
    Case("nonzero", ALL, lambda d: ((arr(d, "special"),), {}), out="index"),
    *(Case("searchsorted", BOOL + REAL, lambda d, s=s: ((np.sort(arr(d, "dups")[0]), arr(d, "dups")), {"side": s}),
           out="index", label=s) for s in ("left", "right")),
    Case("searchsorted", BOOL + REAL, lambda d: ((arr(d, "dups")[0], arr(d)),
                                                 {"sorter": np.argsort(arr(d, "dups")[0], stable=True)}),
         out="index", label="sorter"),
    Case("where", ALL, lambda d: ((arr("bool"), arr(d), arr(d, "nonzero")[0]), {})),
    Case("where", ALL, lambda d: ((arr("bool"), arr(d), Py(scalar(d, "nonzero"))), {}), label="scalar"),
    Case("where", ALL, lambda d: ((arr("bool"), Py(scalar(d)), arr(d, "nonzero")), {}), label="scalar_left"),
    *(Case(n, BOOL + REAL, lambda d, k=kw: ((arr(d, "dups"),), k), ref=lambda x, i=index, **k: sort_ref(x, **k, indices=i),
           out="index" if index else "same", label=",".join(f"{a}={v}" for a, v in kw.items()))
      for n, index in (("sort", False), ("argsort", True))
      for kw in ({}, {"descending": True}, {"axis": 0, "descending": True, "stable": True},
                 {"axis": 0, "descending": False})),
    *(Case(n, FLOAT, lambda d, k=kw: ((arr(d, "dupnan"),), k), ref=lambda x, i=index, **k: sort_ref(x, **k, indices=i),
           out="index" if index else "same", label="nan," + ",".join(f"{a}={v}" for a, v in kw.items()))
      for n, index in (("sort", False), ("argsort", True)) for kw in ({}, {"descending": True})),
    Case("unique_all", BOOL + REAL, lambda d: ((arr(d, "dupnan"),), {}), out=("same", "index", "index", "index")),
    Case("unique_counts", BOOL + REAL, lambda d: ((arr(d, "dupnan"),), {}), out=("same", "index")),
    Case("unique_inverse", BOOL + REAL, lambda d: ((arr(d, "dupnan"),), {}), out=("same", "index")),
    Case("unique_values", BOOL + REAL, lambda d: ((arr(d, "dupnan"),), {})),
]

STATISTICAL: list[Case] = [
    *(Case(n, BOOL + NUMERIC, lambda d: ((arr(d),), {"dtype": _acc(d)}), out="given") for n in ("sum", "prod")),
    *(Case(n, NUMERIC, lambda d: ((arr(d),), {"axis": 1, "keepdims": True, "dtype": d}), out="given",
           label="own_dtype") for n in ("sum", "prod")),
    *(Case(n, BOOL + NUMERIC, lambda d, a=a: ((arr(d, shape=(1, 2, 3)),), {"axis": a, "dtype": _acc(d)}),
           out="given", label=f"axis={a}") for n in ("sum", "prod") for a in ((), (0, 2))),
    *(Case(n, BOOL + NUMERIC, lambda d: ((arr(d)[1],), {"dtype": _acc(d)}), out="given")
      for n in ("cumulative_sum", "cumulative_prod")),
    *(Case(n, BOOL + NUMERIC, lambda d: ((arr(d),), {"axis": 1, "dtype": _acc(d), "include_initial": True}),
           out="given", label="initial") for n in ("cumulative_sum", "cumulative_prod")),
    *(Case(n, BOOL + REAL, lambda d: ((arr(d, "special"),), {})) for n in ("max", "min")),
    *(Case(n, BOOL + REAL, lambda d: ((arr(d, "dups"),), {"axis": 0, "keepdims": True}), label="axis")
      for n in ("max", "min")),
    Case("mean", INEXACT, lambda d: ((arr(d),), {})),
    Case("mean", INEXACT, lambda d: ((arr(d),), {"axis": 1, "keepdims": True}), label="axis"),
    *(Case(n, FLOAT, lambda d: ((arr(d),), {})) for n in ("std", "var")),
    *(Case(n, FLOAT, lambda d: ((arr(d),), {"axis": 1, "correction": 1, "keepdims": True}), label="axis")
      for n in ("std", "var")),
    # long half-precision accumulations: bfloat16 loops that accumulate in bfloat16 sum 1000 ones to 256
    *(Case(n, FLOAT, lambda d, v=v: ((np.full(1000, v, numpy_dtype(d)),), {"dtype": d}), out="given", label="long")
      for n, v in (("sum", 1.1), ("prod", 1.0078125), ("cumulative_sum", 1.1), ("cumulative_prod", 1.0078125))),
    *(Case(n, FLOAT, lambda d: ((np.linspace(0, 10, 1000).astype(numpy_dtype(d)),), {}), label="long")
      for n in ("mean", "std", "var")),
    *(Case(n, ALL, lambda d: ((arr(d, "dups" if kind(d) != "complex" else "any"),), {"axis": 1, "keepdims": True}),
           out="bool", label="axis") for n in ("all", "any")),
    Case("diff", ALL, lambda d: ((arr(d),), {})),
    Case("diff", ALL, lambda d: ((arr(d),), {"axis": 0, "n": 1}), label="axis"),
    Case("diff", ALL, lambda d: ((arr(d),), {"n": 2, "prepend": arr(d, "nonzero")[:, :1],
                                             "append": arr(d, "nonzero")[:, 1:]}), label="pend"),
    Case("diff", ALL, lambda d: ((arr(d),), {"append": arr(d, "nonzero")[:, :2]}), label="append"),
]

LINALG: list[Case] = [
    Case("matmul", BOOL + NUMERIC, lambda d: ((arr(d), arr(d, "nonzero").T), {})),
    Case("matmul", BOOL + NUMERIC, lambda d: ((arr(d)[0], arr(d, "nonzero").T), {}), label="vector"),
    Case("matrix_transpose", ALL, lambda d: ((arr(d, shape=(1, 2, 3)),), {})),
    Case("tensordot", BOOL + NUMERIC, lambda d: ((arr(d), arr(d, "nonzero").T), {"axes": 1})),
    Case("tensordot", BOOL + NUMERIC, lambda d: ((arr(d), arr(d, "nonzero")), {}), label="2"),
    Case("vecdot", BOOL + NUMERIC, lambda d: ((arr(d), arr(d, "nonzero")), {})),
    Case("vecdot", BOOL + NUMERIC, lambda d: ((arr(d), arr(d, "nonzero")[:, :1]), {"axis": 0}), label="axis"),
    Case("outer", BOOL + NUMERIC, lambda d: ((arr(d)[0], arr(d, "nonzero")[1]), {})),
    Case("cross", NUMERIC, lambda d: ((arr(d), arr(d, "nonzero")), {})),
    Case("cross", NUMERIC, lambda d: ((arr(d).T, arr(d, "nonzero")[0][:, None]), {"axis": 0}), label="axis"),
    Case("diagonal", ALL, lambda d: ((arr(d),), {})),
    Case("diagonal", ALL, lambda d: ((arr(d, shape=(1, 2, 3)),), {"offset": 1}), label="offset"),
    Case("trace", NUMERIC, lambda d: ((arr(d),), {"dtype": d}), out="given"),
    Case("trace", BOOL + NUMERIC, lambda d: ((arr(d, shape=(1, 2, 3)),), {"offset": -1, "dtype": _acc(d)}),
         out="given", label="offset"),
    Case("trace", FLOAT, lambda d: (((np.eye(1000) * 1.1).astype(numpy_dtype(d)),), {"dtype": d}), out="given",
         label="long"),
    Case("det", INEXACT, lambda d: ((matrix(d, _M3),), {})),
    Case("det", INEXACT, lambda d: ((np.stack([matrix(d, _M3), matrix(d, _H3)]),), {}), label="stack"),
    Case("slogdet", INEXACT, lambda d: ((matrix(d, _M3),), {}), out=("same", "real")),
    Case("inv", INEXACT, lambda d: ((matrix(d, _M3),), {})),
    Case("solve", INEXACT, lambda d: ((matrix(d, _M3), matrix(d, _H3)[0]), {})),
    Case("solve", INEXACT, lambda d: ((matrix(d, _M3), matrix(d, _H3)[:, :2]), {}), label="matrix"),
    *(Case("matrix_power", INEXACT if n >= 0 else WIDE, lambda d, n=n: ((matrix(d, _M3), n), {}), label=str(n))
      for n in (3, 0, -2)),
    *(Case("matrix_power", INT, lambda d, n=n: ((np.asarray([[1, 1, 0], [0, 1, 1], [1, 0, 1]], numpy_dtype(d)), n), {}),
           label=f"integer,{n}") for n in (3, 0)),  # the api layer refuses n < 0 for integers
    Case("pinv", INEXACT, lambda d: ((matrix(d, _M3)[:, :2],), {})),
    Case("pinv", INEXACT, lambda d: ((matrix(d, _M3),), {"rtol": 0.6}), label="rtol"),
    Case("matrix_rank", INEXACT, lambda d: ((matrix(d, _M3),), {}), out="index"),
    Case("matrix_rank", INEXACT, lambda d: ((np.stack([matrix(d, _H3), np.outer(*matrix(d, _M3)[:2])]),), {}),
         out="index", label="deficient"),
    Case("svdvals", INEXACT, lambda d: ((matrix(d, _M3)[:2],), {}), out="real"),
    *(Case("svd", INEXACT, lambda d, f=full: ((matrix(d, _M3)[:, :2],), {"full_matrices": f}),
           out=("same", "real", "same"), check=reconstructs(_svd_rebuild), label=f"full={full}")
      for full in (True, False)),
    *(Case("qr", INEXACT, lambda d, m=mode: ((matrix(d, _M3)[:, :2],), {"mode": m}), check=reconstructs(_qr_rebuild),
           label=mode) for mode in ("reduced", "complete")),
    Case("eigh", INEXACT, lambda d: ((matrix(d, _H3),), {}), out=("real", "same"), check=reconstructs(_eigh_rebuild)),
    Case("eigvalsh", INEXACT, lambda d: ((matrix(d, _H3),), {}), out="real"),
    Case("cholesky", INEXACT, lambda d: ((matrix(d, _H3),), {})),
    Case("cholesky", INEXACT, lambda d: ((matrix(d, _H3),), {"upper": True}), label="upper"),
    *(Case("matrix_norm", WIDE if o in PARTLY_HALF_ORDS else INEXACT, lambda d, o=o: ((matrix(d, _M3),), {"ord": o}),
           out="real", label=str(o)) for o in ("fro", "nuc", 2, -2, 1, inf)),
    Case("matrix_norm", INEXACT, lambda d: ((matrix(d, _M3),), {"keepdims": True}), out="real", label="keepdims"),
    *(Case("vector_norm", INEXACT, lambda d, o=o: ((arr(d),), {"ord": o}), out="real", label=str(o))
      for o in (2, 1, inf, 0)),
    Case("vector_norm", INEXACT, lambda d: ((arr(d),), {"axis": 1, "keepdims": True}), out="real", label="axis"),
    Case("vector_norm", INEXACT, lambda d: ((np.full(3, 300, numpy_dtype(d)),), {}), out="real", label="large"),
]

_COMPLEX_OF = {"float32": "complex64", "float64": "complex128"}
_DIAGONAL = [[2.0, 1.0, 0.0], [0.0, -1.0, 0.5], [0.0, 0.0, 3.0]]  # triangular: eigenvalues in diagonal order
LINALG += [
    *(Case("eigvals", (d,), lambda d: ((np.asarray(_DIAGONAL, numpy_dtype(d)),), {}), out=_COMPLEX_OF[d], label=d)
      for d in ("float32", "float64")),
    Case("eigvals", COMPLEX, lambda d: ((np.asarray(_DIAGONAL, numpy_dtype(d)),), {})),
    *(Case("eig", (d,), lambda d: ((np.asarray(_DIAGONAL, numpy_dtype(d)),), {}), out=(_COMPLEX_OF[d],) * 2,
           ref=lambda x: tuple(np.asarray(r, np.complex128) for r in np.linalg.eig(x)), label=d) for d in ("float32", "float64")),
]
# The fft kernels: complex transforms on complex input; rfft-like on real floats, the inverses on complex.
_FFT_KW = ({}, {"n": 4, "norm": "ortho"}, {"n": 2, "norm": "forward"})
_FFT_1D = {"n": None, "axis": 1, "norm": "backward"}
_FFTN_KW = ({"s": None, "axes": (0, 1)}, {"s": (3, 4), "axes": (1, 0), "norm": "ortho"})
FFT: list[Case] = [
    *(Case(name, COMPLEX, lambda d, kw=kw: ((arr(d),), {**_FFT_1D, **kw}), ref=getattr(np.fft, name), label=str(kw))
      for name in ("fft", "ifft") for kw in _FFT_KW),
    *(Case(name, COMPLEX, lambda d, kw=kw: ((arr(d),), {"norm": "backward", **kw}), ref=getattr(np.fft, name),
           label=str(kw)) for name in ("fftn", "ifftn") for kw in _FFTN_KW),
    *(Case(name, (d,), lambda d, kw=kw: ((arr(d),), {**_FFT_1D, **kw}), out=_COMPLEX_OF[d], ref=getattr(np.fft, name),
           label=f"{d},{kw}") for name in ("rfft", "ihfft") for d in ("float32", "float64") for kw in _FFT_KW),
    *(Case("rfftn", (d,), lambda d, kw=kw: ((arr(d),), {"norm": "backward", **kw}), out=_COMPLEX_OF[d],
           ref=np.fft.rfftn, label=f"{d},{kw}") for d in ("float32", "float64") for kw in _FFTN_KW),
    *(Case(name, COMPLEX, lambda d, kw=kw: ((arr(d),), {**_FFT_1D, **kw}), out="real", ref=getattr(np.fft, name),
           label=str(kw)) for name in ("irfft", "hfft") for kw in _FFT_KW),
    *(Case("irfftn", COMPLEX, lambda d, kw=kw: ((arr(d),), {"norm": "backward", **kw}), out="real",
           ref=np.fft.irfftn, label=str(kw)) for kw in _FFTN_KW),
]

# float16/bfloat16 are declared unsupported for the fft kernels and the general eigen-solvers: they raise.
FFT += [Case(name, HALVES, lambda d: ((arr(d),), {**_FFT_1D}), label="half") for name in
        ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")]
FFT += [Case(name, HALVES, lambda d: ((arr(d),), {"s": None, "axes": (0, 1), "norm": "backward"}), label="half")
        for name in ("fftn", "ifftn", "rfftn", "irfftn")]
LINALG += [Case(name, HALVES, lambda d: ((np.asarray(_DIAGONAL, numpy_dtype(d)),), {}), label="half")
           for name in ("eig", "eigvals")]

FAMILIES: dict[str, list[Case]] = {"elementwise": ELEMENTWISE, "creation": CREATION, "manipulation": MANIPULATION,
                                   "searching": SEARCHING, "statistical": STATISTICAL, "linalg": LINALG, "fft": FFT}
_LINALG_NAMES = frozenset(KERNEL_NAMES["linalg"])


def params(family: str) -> list[Any]:
    return [pytest.param(case, dtype, id=f"{case.id}-{dtype}") for case in FAMILIES[family] for dtype in case.dtypes]


# -- running a case ---------------------------------------------------------------------------
def _native(backend: Any, value: Any) -> Any:
    if isinstance(value, Py):
        return value.value
    if isinstance(value, np.ndarray):
        return backend.asarray(value, al.Dtype(value.dtype))
    if isinstance(value, list | tuple) and value and isinstance(value[0], np.ndarray):
        return type(value)(_native(backend, v) for v in value)
    return value


def _reference_value(value: Any, dtype: str, widen: bool) -> Any:
    if isinstance(value, Py):
        value = np.asarray(value.value, dtype=numpy_dtype(dtype))
    if isinstance(value, list):
        return [_reference_value(v, dtype, widen) for v in value]
    if widen and isinstance(value, np.ndarray) and value.dtype == numpy_dtype(dtype):
        return value.astype(np.float64)
    return value


def reference(case: Case, dtype: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """numpy's result on the same data (half precision widened to float64 unless ``case.widen`` is off)."""
    widen = case.widen and dtype in HALVES
    fn = case.ref or getattr(np.linalg if case.name in _LINALG_NAMES else np, case.name)
    ref_args = [_reference_value(a, dtype, widen) for a in args]
    ref_kwargs = {k: _reference_value(v, dtype, widen) for k, v in kwargs.items()}
    if "dtype" in kwargs:
        ref_kwargs["dtype"] = np.float64 if widen and kwargs["dtype"] in HALVES else numpy_dtype(kwargs["dtype"])
    return fn(*ref_args, **ref_kwargs)


def _expected_dtype(rule: str, dtype: str, kwargs: dict[str, Any]) -> str:
    return {"same": dtype, "real": REAL_OF.get(dtype, dtype), "bool": "bool", "given": kwargs.get("dtype")}.get(rule, rule)


def _check_output(backend: Any, case: Case, rule: str, dtype: str, kwargs: dict[str, Any], actual: Any,
                  expected: Any, what: str) -> None:
    got = str(backend.dtype_of(actual))
    assert not getattr(actual, "weak_type", False), f"{what}: weakly typed result"
    values = backend.to_numpy(actual)
    if rule == "index":
        assert got in INT, f"{what}: index result of dtype {got}"
        np.testing.assert_array_equal(values, np.asarray(expected), err_msg=what)
        return
    want = _expected_dtype(rule, dtype, kwargs)
    assert got == want, f"{what}: result dtype {got}, expected {want}"
    if case.check is not None:
        return
    expected = np.asarray(expected).astype(numpy_dtype(want))
    if case.exact:
        wide = {"float": np.float64, "complex": np.complex128}.get(kind(want))
        np.testing.assert_array_equal(values.astype(wide), expected.astype(wide), err_msg=what)
        if wide is np.float64:
            signed = ~np.isnan(expected.astype(wide))  # the sign of a NaN means nothing
            np.testing.assert_array_equal(np.signbit(values)[signed], np.signbit(expected)[signed],
                                          err_msg=f"{what}: signs of zeros")
    else:
        assert_close(values, expected, want, what)


def prepare(backend: Any, case: Case, dtype: str) -> tuple[tuple[Any, ...], dict[str, Any], list[Any], dict[str, Any]]:
    """The case's numpy args and kwargs for ``dtype``, and the native ones the kernel gets."""
    args, kwargs = case.make(dtype)
    native_args = [_native(backend, a) for a in args]
    native_kwargs = {k: backend.as_native_dtype(v) if k == "dtype" else _native(backend, v) for k, v in kwargs.items()}
    return args, kwargs, native_args, native_kwargs


def run(backend_name: str, case: Case, dtype: str, computed: dict[str, Any] | None = None) -> None:
    """Call the kernel on the case's data for ``dtype`` (or take its result from ``computed``,
    keyed by case id) and compare with numpy's reference; a dtype the backend declares
    unsupported must raise instead."""
    backend = al.get_backend(backend_name).load()
    kernel = backend.kernels[case.name]
    args, kwargs, native_args, native_kwargs = prepare(backend, case, dtype)
    what = f"{backend_name} {case.id} {dtype}"
    if dtype in kernel_unsupported_dtypes(backend, case.name):
        with pytest.raises(Exception):  # noqa: B017 (whatever the framework raises)
            kernel(*native_args, **native_kwargs)
        return
    with np.errstate(all="ignore"):
        if computed is not None and case.id in computed:
            result = computed[case.id]
        else:
            result = kernel(*native_args, **native_kwargs)
        expected = reference(case, dtype, args, kwargs)
    if isinstance(expected, tuple | list):
        assert isinstance(result, tuple | list) and len(result) == len(expected), f"{what}: {type(result)}"
        rules = case.out if isinstance(case.out, tuple) else (case.out,) * len(expected)
        for i, (rule, r, e) in enumerate(zip(rules, result, expected, strict=True)):
            _check_output(backend, case, rule, dtype, kwargs, r, e, f"{what} output {i}")
    else:
        assert not isinstance(result, tuple | list), f"{what}: {type(result)}"
        _check_output(backend, case, case.out, dtype, kwargs, result, expected, what)
    if case.check is not None:
        outputs = result if isinstance(result, tuple | list) else (result,)
        parts = [np.asarray(backend.to_numpy(r)).astype(np.complex128) for r in outputs]
        tol = {"bfloat16": 2e-2, "float16": 2e-3}.get(dtype, 2e-5)
        case.check(parts, np.asarray(args[0]).astype(np.complex128), tol)


BACKEND = "numpy"


@pytest.mark.parametrize(("case", "dtype"), params("elementwise"))
def test_elementwise(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


@pytest.mark.parametrize(("case", "dtype"), params("creation"))
def test_creation(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


@pytest.mark.parametrize(("case", "dtype"), params("manipulation"))
def test_manipulation_and_indexing(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


@pytest.mark.parametrize(("case", "dtype"), params("searching"))
def test_searching_sorting_sets(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


@pytest.mark.parametrize(("case", "dtype"), params("statistical"))
def test_statistical_and_utility(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


@pytest.mark.parametrize(("case", "dtype"), params("linalg"))
def test_linalg(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


@pytest.mark.parametrize(("case", "dtype"), params("fft"))
def test_fft(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype)


def test_kernel_names_and_cases_cover_every_kernel() -> None:
    backend = al.get_backend(BACKEND).load()
    assert set(backend.kernels) == set(ALL_KERNEL_NAMES)
    assert {case.name for cases in FAMILIES.values() for case in cases} == set(ALL_KERNEL_NAMES)
    ids = [case.id for cases in FAMILIES.values() for case in cases]
    assert len(ids) == len(set(ids)), "case ids must be unique"


def test_unsupported_declarations_are_tested() -> None:
    """Every declared (kernel, dtype) is one the cases call, so ``run`` sees it raise."""
    backend = al.get_backend(BACKEND).load()
    assert not backend.supported, "declare UNSUPPORTED only"
    tested = {(case.name, dtype) for cases in FAMILIES.values() for case in cases for dtype in case.dtypes}
    for name in backend.unsupported:
        # the stored-only low-precision dtypes are refused by every kernel but astype: test_lowp_backends
        declared = {(name, d) for d in kernel_unsupported_dtypes(backend, name) if not d.is_low_precision}
        assert declared <= tested, name


def check_no_half_factorisations(backend_name: str) -> None:
    """What needs a factorisation raises for float16/bfloat16 also where the declarations cannot
    say so (they name kernels, not arguments): the SVD matrix norms, negative matrix powers."""
    backend = al.get_backend(backend_name).load()
    for dtype in HALVES:
        x = backend.asarray(matrix(dtype, _M3), dtype)
        with pytest.raises((TypeError, NotImplementedError)):
            backend.kernels["matrix_power"](x, -1)
        for ord in PARTLY_HALF_ORDS:
            with pytest.raises((TypeError, NotImplementedError)):
                backend.kernels["matrix_norm"](x, ord=ord)


def test_no_half_precision_factorisations() -> None:
    check_no_half_factorisations(BACKEND)


def test_bfloat16_python_scalars_are_values_of_the_array_dtype() -> None:
    """ml_dtypes promotes a Python float beside bfloat16 to float32; the kernels must not."""
    kernels = al.get_backend(BACKEND).load().kernels
    x = np.asarray([1.0, 256.0], dtype=ml_dtypes.bfloat16)
    assert kernels["equal"](x, 1.001).tolist() == [True, False]  # 1.001 is 1.0 in bfloat16
    assert kernels["less"](257.0, x).tolist() == [False, False]  # 257.0 is 256.0 in bfloat16
    for result in (kernels["add"](x, 0.5), kernels["where"](x > 1, x, 0.5), kernels["clip"](x, 0.5, 2.5)):
        assert result.dtype == x.dtype
