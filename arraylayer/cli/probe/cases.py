"""The probe's cases: per kernel, how to build its arguments on a backend and what it must return.

:class:`Maker` builds sample inputs of one dtype on one backend, or the same inputs as wide
NumPy arrays (the reference); :data:`CASES` holds one :class:`Case` per kernel name. The
element-wise cases read their result kinds from the table the api layer computes with
(:mod:`arraylayer.dtypes.function_rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, NamedTuple

from arraylayer.dtypes import Dtype
from arraylayer.dtypes.function_rules import BINARY, UNARY

__all__ = ["TOLERANCE", "WIDE", "Maker", "Build", "Case", "CASES"]


_X: Final = {"b": [True, False, True], "i": [1, 2, 3], "f": [0.5, 1.25, 2.5], "c": [0.5 + 0.25j, 1.25 - 0.5j, 2.5 + 1j]}
_Y: Final = {"b": [True, True, False], "i": [2, 1, 3], "f": [2.0, 0.5, 1.25], "c": [2 - 0.5j, 0.5 + 0.25j, 1.25 + 1j]}
_VALUES: Final[dict[str, dict[str, list[Any]]]] = {
    "x": _X,
    "y": _Y,
    "unit": {**_X, "f": [0.125, 0.25, 0.5], "c": [0.125 + 0.25j, 0.25 - 0.125j, 0.5 + 0.5j]},
    "ge1": {**_X, "f": [1.5, 2.0, 3.0], "c": [1.5 + 0.5j, 2 - 0.25j, 3 + 1j]},
    "shift": {**_Y, "i": [1, 2, 0]},
    "dup": {"b": [True, False, True], "i": [2, 1, 2], "f": [1.25, 0.5, 1.25], "c": [1.25 + 1j, 0.5, 1.25 + 1j]},
    "sorted": {**_X, "b": [False, True, True]},
    "vec3b": {**_Y, "i": [3, 1, 2], "f": [2.0, 0.5, 1.25]},
    # a symmetric (Hermitian) positive-definite matrix
    "spd": {"b": [[True, False], [False, True]], "i": [[2, 1], [1, 3]], "f": [[2.0, 0.5], [0.5, 1.0]],
            "c": [[2, 0.5 + 0.25j], [0.5 - 0.25j, 1]]},
    "mat": {"b": [[True, False], [True, True]], "i": [[1, 2], [3, 1]], "f": [[1.0, 0.5], [2.0, 0.25]],
            "c": [[1 + 1j, 0.5], [2, 0.25 - 0.5j]]},
}
_LETTER: Final = {"bool": "b", "int": "i", "uint": "i", "float": "f", "complex": "c"}
_PYTHON: Final = {"bool": bool, "int": int, "uint": int, "float": float, "complex": complex}
#: the wide dtype a floating dtype's values are compared in
WIDE: Final = {"bfloat16": "float64", "float16": "float64", "float32": "float64", "float64": "float64",
                "complex64": "complex128", "complex128": "complex128"}
#: rtol (and atol) of each floating dtype's values against the wide NumPy result
TOLERANCE: Final = {"bfloat16": 3e-2, "float16": 4e-3, "float32": 3e-5, "float64": 1e-10,
                    "complex64": 3e-5, "complex128": 1e-10}


class Maker:
    """Builds a kernel's arguments on one backend: arrays of a dtype, its native dtype object,
    index arrays. The reference maker builds the same arguments as wide NumPy arrays."""

    def __init__(self, backend: Any, dtype: Dtype, reference: bool) -> None:
        import numpy as np

        self._np = np
        self.backend = backend
        self.dtype = dtype
        self.reference = reference

    def values(self, name: str = "x", dtype: Dtype | None = None) -> list[Any]:
        return _VALUES[name][_LETTER[(dtype or self.dtype).category]]

    def array(self, name: str = "x", shape: tuple[int, ...] | None = None, dtype: str | None = None) -> Any:
        """Sample ``name`` as an array of the probed dtype (or of ``dtype``)."""
        np = self._np
        of = self.dtype if dtype is None else Dtype(dtype)
        host = np.asarray(self.values(name, of), dtype=self._numpy_dtype(self._host_dtype(of)))
        if shape is not None:
            host = host.reshape(shape)
        return host if self.reference else self.backend.asarray(host, of)

    def scalar(self, value: Any) -> Any:
        """A Python scalar of the dtype's kind (what the api layer passes beside an array)."""
        return _PYTHON[self.dtype.category](value)

    def native(self) -> Any:
        return self._numpy_dtype(self._host_dtype(self.dtype)) if self.reference else \
            self.backend.as_native_dtype(self.dtype)

    def index(self, values: Any) -> Any:
        """An index array (the default index dtype; int64 for the reference)."""
        from arraylayer.api.dispatch import index_dtype

        np = self._np
        if self.reference:
            return np.asarray(values, dtype=np.int64)
        return self.backend.asarray(np.asarray(values, dtype=np.int64), index_dtype())

    def condition(self) -> Any:
        np = self._np
        host = np.asarray([True, False, True])
        return host if self.reference else self.backend.asarray(host, Dtype("bool"))

    def _host_dtype(self, dtype: Dtype) -> str:
        return WIDE.get(dtype, dtype) if self.reference else dtype

    def _numpy_dtype(self, name: str) -> Any:
        if name == "bfloat16":
            import ml_dtypes

            return self._np.dtype(ml_dtypes.bfloat16)
        return self._np.dtype(name)


Build = Callable[[Maker], tuple[tuple[Any, ...], dict[str, Any]]]


class Case(NamedTuple):
    """How to call one kernel and what it must return.

    ``build(maker)``: the positional and keyword arguments; ``also``: (what, build) of more calls
    that must pass too (accumulating kernels also take bool input, as ``sum(bool_array)`` sends
    them). ``result``: ``"same"`` (the dtype
    the kernel was called with), ``"bool"``, ``"real"`` (the real dtype of a complex one),
    ``"complex"`` (the complex dtype of a real one), ``"index"`` (any integer dtype), a tuple of those for a tuple result, or ``"*<spec>"`` for
    a sequence of any length. A spec ending in ``~`` checks dtype and shape only (results that
    are not unique, such as eigenvectors). ``verify(result, reference_args)``: an extra check
    on the wide NumPy values of the result, for those.
    """

    build: Build
    result: Any = "same"
    verify: Callable[[Any, Any], bool] | None = None
    also: tuple[tuple[str, Build], ...] = ()

    @property
    def builds(self) -> tuple[Build, ...]:
        return (self.build, *(build for _, build in self.also))


def _unary(values: str = "x") -> Build:
    return lambda m: ((m.array(values),), {})


def _binary(second: str = "y") -> Build:
    return lambda m: ((m.array("x"), m.array(second)), {})


def _qr_ok(result: Any, args: Any) -> bool:
    import numpy as np

    q, r = result
    return bool(np.allclose(q @ r, args[0][0], rtol=3e-2, atol=3e-2))


def _accumulating(options: dict[str, Any]) -> Case:
    """sum, prod, cumulative_*: x and the accumulator in the probed dtype, and bool x
    accumulated in it (what ``sum`` of bool and narrow integers sends)."""
    return Case(lambda m: ((m.array(),), {"dtype": m.native(), **options}),
                also=(("bool input", lambda m: ((m.array(dtype="bool"),), {"dtype": m.native(), **options})),))


#: the result of an element-wise kernel, by the rule of its row in the element-wise table
_RESULT_OF_RULE: Final = {"bool": "bool", "logical": "bool", "real": "real"}
_UNARY_VALUES: Final = {"acos": "unit", "asin": "unit", "atanh": "unit", "acosh": "ge1"}
_SHIFTS: Final = ("bitwise_left_shift", "bitwise_right_shift")


def _cases() -> dict[str, Case]:
    cases: dict[str, Case] = {}
    for name, spec in UNARY.items():
        cases[name] = Case(_unary(_UNARY_VALUES.get(name, "x")), _RESULT_OF_RULE.get(spec.rule, "same"))
    for name, spec in BINARY.items():
        cases[name] = Case(_binary("shift" if name in _SHIFTS else "y"), _RESULT_OF_RULE.get(spec.rule, "same"))
    created = {"device": None}
    cases.update({
        "clip": Case(lambda m: ((m.array(), m.scalar(0.75 if m.dtype.category in ("float", "complex") else 2),
                                 m.scalar(2.0 if m.dtype.category in ("float", "complex") else 2)), {})),
        # creation
        "zeros": Case(lambda m: (((2, 3),), {"dtype": m.native(), **created})),
        "ones": Case(lambda m: (((2, 3),), {"dtype": m.native(), **created})),
        "empty": Case(lambda m: (((2, 3),), {"dtype": m.native(), **created}), "same~"),
        "full": Case(lambda m: (((2,), m.scalar({"b": True, "i": 2, "f": 1.25, "c": 1.25 + 0.5j}[
            _LETTER[m.dtype.category]])), {"dtype": m.native(), **created})),
        "arange": Case(lambda m: ({"b": (0, 1, 1), "i": (1, 7, 2), "f": (0.5, 2.5, 0.5), "c": (0, 3, 1)}[
            _LETTER[m.dtype.category]], {"dtype": m.native(), **created})),
        "linspace": Case(lambda m: ((0.0, 1.0 if m.dtype.category != "complex" else 1 + 1j, 5),
                                    {"dtype": m.native(), "endpoint": True, **created})),
        "eye": Case(lambda m: ((2, 3), {"k": 1, "dtype": m.native(), **created})),
        "meshgrid": Case(lambda m: ((m.array(), m.array("y")[:2]), {"indexing": "xy"}), "*same"),
        "tril": Case(lambda m: ((m.array("mat"),), {"k": 0})),
        "triu": Case(lambda m: ((m.array("mat"),), {"k": 0})),
        # fft: one axis (cropped to n=2), several axes (padded)
        **{name: Case(lambda m: ((m.array("mat"),), {"n": 2, "axis": 0, "norm": "ortho"}), result)
           for name, result in (("fft", "same"), ("ifft", "same"), ("rfft", "complex"), ("ihfft", "complex"),
                                ("irfft", "real"), ("hfft", "real"))},
        **{name: Case(lambda m: ((m.array("mat"),), {"s": (3, 4), "axes": (0, 1), "norm": "backward"}), result)
           for name, result in (("fftn", "same"), ("ifftn", "same"), ("rfftn", "complex"), ("irfftn", "real"))},
        # indexing
        "take": Case(lambda m: ((m.array(), m.index([2, 0])), {"axis": 0})),
        "take_along_axis": Case(lambda m: ((m.array("mat"), m.index([[1, 0], [0, 1]])), {"axis": -1})),
        # linear algebra
        "matmul": Case(lambda m: ((m.array("mat"), m.array("spd")), {})),
        "matrix_transpose": Case(lambda m: ((m.array("mat"),), {})),
        "tensordot": Case(lambda m: ((m.array("mat"), m.array("spd")), {"axes": 1})),
        "vecdot": Case(lambda m: ((m.array("mat"), m.array("spd")), {"axis": -1})),
        "cholesky": Case(lambda m: ((m.array("spd"),), {"upper": False})),
        "cross": Case(lambda m: ((m.array(), m.array("vec3b")), {"axis": -1})),
        "det": Case(lambda m: ((m.array("spd"),), {})),
        "diagonal": Case(lambda m: ((m.array("mat"),), {"offset": 0})),
        "eig": Case(lambda m: ((m.array("spd"),), {}), ("complex~", "complex~")),
        "eigvals": Case(lambda m: ((m.array("spd"),), {}), "complex~"),
        "eigh": Case(lambda m: ((m.array("spd"),), {}), ("real", "same~")),
        "eigvalsh": Case(lambda m: ((m.array("spd"),), {}), "real"),
        "inv": Case(lambda m: ((m.array("spd"),), {})),
        "matrix_norm": Case(lambda m: ((m.array("mat"),), {"keepdims": False, "ord": "fro"}), "real"),
        "matrix_power": Case(lambda m: ((m.array("spd"), 2), {})),
        "matrix_rank": Case(lambda m: ((m.array("spd"),), {"rtol": None}), "index"),
        "outer": Case(lambda m: ((m.array(), m.array("y")), {})),
        "pinv": Case(lambda m: ((m.array("spd"),), {"rtol": None})),
        "qr": Case(lambda m: ((m.array("mat"),), {"mode": "reduced"}), ("same~", "same~"), _qr_ok),
        "slogdet": Case(lambda m: ((m.array("spd"),), {}), ("same", "real")),
        "solve": Case(lambda m: ((m.array("spd"), m.array("mat")), {})),
        "svd": Case(lambda m: ((m.array("mat"),), {"full_matrices": True}), ("same~", "real", "same~")),
        "svdvals": Case(lambda m: ((m.array("mat"),), {}), "real"),
        "trace": Case(lambda m: ((m.array("mat"),), {"offset": 0, "dtype": m.native()}),
                      also=(("bool input", lambda m: ((m.array("mat", dtype="bool"),),
                                                      {"offset": 0, "dtype": m.native()})),)),
        "vector_norm": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False, "ord": 2}), "real"),
        # manipulation
        "broadcast_arrays": Case(lambda m: ((m.array(), m.array("y")[:1]), {}), "*same"),
        "broadcast_to": Case(lambda m: ((m.array(), (2, 3)), {})),
        "concat": Case(lambda m: (([m.array(), m.array("y")],), {"axis": 0})),
        "expand_dims": Case(lambda m: ((m.array(),), {"axis": 0})),
        "flip": Case(lambda m: ((m.array(),), {"axis": None})),
        "moveaxis": Case(lambda m: ((m.array("mat"), 0, 1), {})),
        "permute_dims": Case(lambda m: ((m.array("mat"), (1, 0)), {})),
        "repeat": Case(lambda m: ((m.array(), 2), {"axis": None})),
        "reshape": Case(lambda m: ((m.array(), (3, 1)), {"copy": None})),
        "roll": Case(lambda m: ((m.array(), 1), {"axis": None})),
        "squeeze": Case(lambda m: ((m.array("x", (1, 3)),), {"axis": 0})),
        "stack": Case(lambda m: (([m.array(), m.array("y")],), {"axis": 0})),
        "tile": Case(lambda m: ((m.array(), (2,)), {})),
        "unstack": Case(lambda m: ((m.array("mat"),), {"axis": 0}), "*same"),
        # searching
        "argmax": Case(lambda m: ((m.array("dup"),), {"axis": None, "keepdims": False}), "index"),
        "argmin": Case(lambda m: ((m.array("dup"),), {"axis": None, "keepdims": False}), "index"),
        "count_nonzero": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False}), "index"),
        "nonzero": Case(lambda m: ((m.array("mat"),), {}), "*index"),
        "searchsorted": Case(lambda m: ((m.array("sorted"), m.array("y")), {"side": "left", "sorter": None}),
                             "index"),
        "where": Case(lambda m: ((m.condition(), m.array(), m.array("y")), {})),
        # sets, sorting
        "unique_all": Case(_unary("dup"), ("same", "index", "index", "index")),
        "unique_counts": Case(_unary("dup"), ("same", "index")),
        "unique_inverse": Case(_unary("dup"), ("same", "index")),
        "unique_values": Case(_unary("dup")),
        "argsort": Case(lambda m: ((m.array("dup"),), {"axis": -1, "descending": False, "stable": True}), "index"),
        "sort": Case(lambda m: ((m.array("dup"),), {"axis": -1, "descending": False, "stable": True})),
        # statistical, utility
        "sum": _accumulating({"axis": None, "keepdims": False}),
        "prod": _accumulating({"axis": None, "keepdims": False}),
        "cumulative_sum": _accumulating({"axis": 0, "include_initial": False}),
        "cumulative_prod": _accumulating({"axis": 0, "include_initial": False}),
        "max": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False})),
        "min": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False})),
        "mean": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False})),
        "std": Case(lambda m: ((m.array(),), {"axis": None, "correction": 0.0, "keepdims": False})),
        "var": Case(lambda m: ((m.array(),), {"axis": None, "correction": 0.0, "keepdims": False})),
        "all": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False}), "bool"),
        "any": Case(lambda m: ((m.array(),), {"axis": None, "keepdims": False}), "bool"),
        "diff": Case(lambda m: ((m.array(),), {"axis": -1, "n": 1, "prepend": None, "append": None})),
    })
    return cases


#: kernel name -> its :class:`Case` (every name of ``arraylayer/kernels/names.py``)
CASES: Final[dict[str, Case]] = _cases()
