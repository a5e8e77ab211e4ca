"""The function table: which kernels each public function calls, and in which dtype, as data.

:data:`FUNCTIONS` says, per function, the dtype kinds the Array API defines it for (what the
api layer refuses with ``not_defined``), the kernels it calls, and the rule that gives the
dtype those kernels run in (:data:`RULES`; ``inexact``: integers and bool run in the default
float dtype, so ``sqrt(int8)`` is supported exactly when the default-float ``sqrt`` kernel
is). Element-wise rows come from the element-wise table of :mod:`arraylayer.dtypes.function_rules`,
which the api layer reads too.
"""

from __future__ import annotations

from typing import Final

from arraylayer.dtypes.defaults import default_float_dtype, default_int_dtype
from arraylayer.dtypes import Dtype, all_dtypes, all_float_dtypes
from arraylayer.dtypes.function_rules import BINARY, KIND_LETTER, UNARY, accumulator_dtype
from arraylayer.support.model_table import MODEL_FUNCTIONS, MODEL_INDEPENDENT
from arraylayer.support.uses import Uses

__all__ = ["Uses", "RULES", "FUNCTIONS", "INDEPENDENT", "function_table", "kernel_dtype", "kernel_domain"]


#: How a function's input dtype becomes the dtype its kernels are called with.
RULES: Final[dict[str, str]] = {
    "same": "the input dtype (promoted, for several inputs)",
    "inexact": "the input dtype; bool and integers run in the default float dtype",
    "complex": "the input dtype; real floating input runs in the complex dtype of its precision",
    "parts": "the input dtype; complex input runs in the real dtype of its parts (then integer codes)",
    "real": "a real float: complex input runs in the dtype of its parts, bool and integers in the default float",
    "logical": "bool (inputs are read as bool)",
    "accumulator": "the accumulator dtype of sum (bool and narrow integers: the default int or uint)",
    "index": "the index dtype (the default int): the input is cast to it first (counts)",
    "none": "no kernel: the dtype is only held or converted",
    "independent": "not an array function: no dtype restriction",
}

_REAL: Final = "biuf"
_NUMERIC: Final = "iufc"

#: The public functions that are not in the elementwise table, by qualified name
#: (``linalg.<name>`` for the extension). Kinds mirror what the api layer refuses. A new public
#: function needs a row here or in INDEPENDENT (tests/test_support.py checks that every one has).
FUNCTIONS: Final[dict[str, Uses]] = {
    # creation: the dtype is the created array's
    "arange": Uses(("arange",)),
    "asarray": Uses((), rule="none"),
    "empty": Uses(("empty",)),
    "empty_like": Uses(("empty",)),
    "eye": Uses(("eye",)),
    "from_dlpack": Uses((), rule="none"),
    "full": Uses(("full",)),
    "full_like": Uses(("full",)),
    "linspace": Uses(("linspace",), "fc"),
    "meshgrid": Uses(("meshgrid",)),
    "ones": Uses(("ones",)),
    "ones_like": Uses(("ones",)),
    "tril": Uses(("tril",)),
    "triu": Uses(("triu",)),
    "zeros": Uses(("zeros",)),
    "zeros_like": Uses(("zeros",)),
    # data types
    "astype": Uses((), rule="none"),
    "can_cast": Uses((), rule="none"),
    "finfo": Uses((), "fc", "none"),
    "iinfo": Uses((), "iu", "none"),
    "isdtype": Uses((), rule="none"),
    "result_type": Uses((), rule="none"),
    # elementwise, outside the table
    "clip": Uses(("clip",), "iuf"),
    # indexing: the dtype is x's
    "take": Uses(("take",)),
    "take_along_axis": Uses(("take_along_axis",)),
    # linear algebra
    "matmul": Uses(("matmul",), _NUMERIC),
    "matrix_transpose": Uses(("matrix_transpose",)),
    "tensordot": Uses(("tensordot",), _NUMERIC),
    "vecdot": Uses(("vecdot",), _NUMERIC),
    # manipulation
    "broadcast_arrays": Uses(("broadcast_arrays",)),
    "broadcast_shapes": Uses((), rule="independent"),
    "broadcast_to": Uses(("broadcast_to",)),
    "concat": Uses(("concat",)),
    "expand_dims": Uses(("expand_dims",)),
    "flip": Uses(("flip",)),
    "moveaxis": Uses(("moveaxis",)),
    "permute_dims": Uses(("permute_dims",)),
    "transpose": Uses(("permute_dims",)),
    "repeat": Uses(("repeat",)),
    "reshape": Uses(("reshape",)),
    "roll": Uses(("roll",)),
    "squeeze": Uses(("squeeze",)),
    "stack": Uses(("stack",)),
    "tile": Uses(("tile",)),
    "unstack": Uses(("unstack",)),
    # searching: the dtype is x's (for where: x1's and x2's, promoted)
    "argmax": Uses(("argmax",), _REAL),
    "argmin": Uses(("argmin",), _REAL),
    "count_nonzero": Uses(("count_nonzero",)),
    "nonzero": Uses(("nonzero",)),
    "searchsorted": Uses(("searchsorted",), _REAL),
    "where": Uses(("where",)),
    # sets, sorting
    "isin": Uses(("equal",), _REAL),  # then any and logical_not of the bool comparison
    "unique_all": Uses(("unique_all",), rule="parts"),
    "unique_counts": Uses(("unique_counts",), rule="parts"),
    "unique_inverse": Uses(("unique_inverse",), rule="parts"),
    "unique_values": Uses(("unique_values",), rule="parts"),
    "argsort": Uses(("argsort",), _REAL),
    "sort": Uses(("sort",), _REAL),
    # statistical
    "cumulative_prod": Uses(("cumulative_prod",), rule="accumulator"),
    "cumulative_sum": Uses(("cumulative_sum",), rule="accumulator"),
    "max": Uses(("max",), _REAL),
    "mean": Uses(("mean",), rule="inexact"),
    "min": Uses(("min",), _REAL),
    "prod": Uses(("prod",), rule="accumulator"),
    "std": Uses(("std",), _REAL, "inexact"),
    "sum": Uses(("sum",), rule="accumulator"),
    "var": Uses(("var",), _REAL, "inexact"),
    # beyond the standard (arraylayer/api/extensions.py): compositions of the standard's kernels
    "nansum": Uses(("isnan", "where", "sum"), rule="accumulator"),
    "nanprod": Uses(("isnan", "where", "prod"), rule="accumulator"),
    "nancumsum": Uses(("isnan", "where", "cumulative_sum"), rule="accumulator"),
    "nancumprod": Uses(("isnan", "where", "cumulative_prod"), rule="accumulator"),
    "nanmean": Uses(("isnan", "where", "sum", "divide"), rule="inexact"),
    "nanvar": Uses(("isnan", "where", "sum", "divide", "subtract", "multiply"), _REAL, "inexact"),
    "nanstd": Uses(("isnan", "where", "sum", "divide", "subtract", "multiply", "sqrt"), _REAL, "inexact"),
    "nanmax": Uses(("isnan", "where", "max", "all"), _REAL),
    "nanmin": Uses(("isnan", "where", "min", "all"), _REAL),
    "nanargmax": Uses(("isnan", "where", "argmax", "all"), _REAL),
    "nanargmin": Uses(("isnan", "where", "argmin", "all"), _REAL),
    "pad": Uses(("full", "concat", "take")),
    "sliding_window_view": Uses(("take", "reshape", "moveaxis", "zeros")),
    "quantile": Uses(("isnan", "sort", "take_along_axis", "where", "any"), _REAL, "inexact"),
    "nanquantile": Uses(("isnan", "where", "sum", "sort", "take_along_axis"), _REAL, "inexact"),
    # keras.ops' small NumPy names (arraylayer/api/numpy_more.py): compositions of the standard's kernels
    "exp2": Uses(("pow",), "biufc", "inexact"),
    "deg2rad": Uses(("multiply",), _REAL, "inexact"),
    "rad2deg": Uses(("divide",), _REAL, "inexact"),
    "fmax": Uses(("isnan", "where", "maximum"), "iuf"),
    "fmin": Uses(("isnan", "where", "minimum"), "iuf"),
    "heaviside": Uses(("greater", "less", "isnan", "where"), "iuf"),
    "isposinf": Uses(("isinf", "greater"), "iuf"),
    "isneginf": Uses(("isinf", "less"), "iuf"),
    "isreal": Uses(("imag", "equal")),
    "logaddexp2": Uses(("multiply", "logaddexp", "divide"), "iuf", "inexact"),
    "divide_no_nan": Uses(("equal", "where", "divide", "multiply"), _NUMERIC, "inexact"),
    "flipud": Uses(("flip",)),
    "fliplr": Uses(("flip",)),
    "rot90": Uses(("flip", "permute_dims")),
    "hstack": Uses(("concat",)),
    "vstack": Uses(("reshape", "concat")),
    "dstack": Uses(("reshape", "expand_dims", "concat")),
    "ravel": Uses(("reshape",)),
    "swapaxes": Uses(("permute_dims",)),
    "ptp": Uses(("max", "min", "subtract"), "iuf"),
    "identity": Uses(("eye",)),
    "tri": Uses(("ones", "tril")),
    "logspace": Uses(("linspace", "pow"), "fc"),
    # NumPy's names (arraylayer/api/numpy_style.py, numpy_stats.py): compositions of the standard's kernels
    # (isclose's less_equal compares absolute values, nan_to_num's greater/less the real parts: their
    # real dtype, not listed; corrcoef clips the real parts likewise)
    "isclose": Uses(("isfinite", "where", "subtract", "abs", "multiply", "add", "equal"), rule="inexact"),
    "allclose": Uses(("isfinite", "where", "subtract", "abs", "multiply", "add", "equal", "all"), rule="inexact"),
    "nan_to_num": Uses(("isnan", "isinf", "where")),
    "diag": Uses(("zeros", "eye", "concat", "reshape", "where", "diagonal")),
    "diagflat": Uses(("zeros", "eye", "concat", "reshape", "where")),
    "diagonal": Uses(("moveaxis", "diagonal")),
    "trace": Uses(("moveaxis", "diagonal", "sum"), rule="accumulator"),
    "outer": Uses(("reshape", "multiply")),
    "inner": Uses(("tensordot",), _NUMERIC),
    "kron": Uses(("reshape", "multiply")),
    "vdot": Uses(("reshape", "vecdot", "any")),
    "median": Uses(("isnan", "sort", "take_along_axis", "where", "any"), _REAL, "inexact"),
    "percentile": Uses(("isnan", "sort", "take_along_axis", "where", "any"), _REAL, "inexact"),
    "nanmedian": Uses(("isnan", "where", "sum", "sort", "take_along_axis"), _REAL, "inexact"),
    "nanpercentile": Uses(("isnan", "where", "sum", "sort", "take_along_axis"), _REAL, "inexact"),
    "average": Uses(("mean", "multiply", "sum", "divide"), rule="inexact"),
    "bincount": Uses(("sort", "searchsorted", "subtract", "equal"), "biu", "index"),
    "histogram": Uses(("min", "max", "sort", "searchsorted", "where", "equal", "sum"), _REAL, "inexact"),
    "digitize": Uses(("searchsorted", "flip", "where"), _REAL),
    "corrcoef": Uses(("mean", "subtract", "matmul", "diagonal", "sqrt", "divide"), rule="inexact"),
    "correlate": Uses(("zeros", "concat", "take", "matmul", "any")),
    # the rest of keras.ops' numpy group (arraylayer/api/numpy_extra.py, numpy_windows.py): compositions
    "split": Uses(("take",)),
    "array_split": Uses(("take",)),
    "hsplit": Uses(("take",)),
    "vsplit": Uses(("take",)),
    "dsplit": Uses(("take",)),
    "append": Uses(("reshape", "concat")),
    "angle": Uses(("imag", "real", "atan2", "multiply"), "biufc", "real"),
    "cbrt": Uses(("abs", "pow", "isfinite", "greater", "where", "multiply", "divide", "subtract", "add", "copysign"),
                 _REAL, "inexact"),
    "fabs": Uses(("abs",), _REAL, "inexact"),
    "fmod": Uses(("remainder", "not_equal", "less", "where", "subtract", "abs"), "iuf"),
    "gcd": Uses(("abs", "equal", "where", "remainder"), "iu"),
    "lcm": Uses(("abs", "equal", "where", "remainder", "floor_divide", "multiply"), "iu"),
    "ldexp": Uses(("floor_divide", "subtract", "pow", "multiply"), _REAL, "inexact"),
    "sinc": Uses(("equal", "where", "multiply", "sin", "divide"), _REAL, "inexact"),
    "i0": Uses(("abs", "minimum", "maximum", "multiply", "add", "square", "divide", "exp", "reciprocal", "sqrt",
                "greater", "isinf", "where"), _REAL, "inexact"),
    "bartlett": Uses(("arange", "divide", "abs", "subtract"), "f"),
    "blackman": Uses(("arange", "divide", "multiply", "cos", "add"), "f"),
    "hamming": Uses(("arange", "divide", "multiply", "cos", "add"), "f"),
    "hanning": Uses(("arange", "divide", "multiply", "cos", "add"), "f"),
    "kaiser": Uses(("arange", "divide", "square", "subtract", "maximum", "sqrt", "full", "multiply", "add", "exp",
                    "reciprocal", "minimum", "greater", "isinf", "where"), "f"),
    "geomspace": Uses(("linspace", "pow", "multiply", "arange", "equal", "where"), "iuf", "inexact"),
    "vander": Uses(("expand_dims", "broadcast_to", "cumulative_prod", "flip"), "iufc"),
    "trapezoid": Uses(("take", "diff", "reshape", "add", "multiply", "divide", "sum"), _REAL, "inexact"),
    "unravel_index": Uses(("less", "add", "where", "clip", "remainder", "floor_divide"), "iu"),
    "select": Uses(("where",)),
    "argpartition": Uses(("argsort",), _REAL),
    # keras.ops' math group and core scatter family (arraylayer/models/mathops/): compositions; erf,
    # erfc and erfinv call the backends' nn kernels, which the kernel tables do not list: their row names
    # multiply, whose support (every float dtype: half and low precision compute in float32) is theirs
    "top_k": Uses(("argsort", "take_along_axis"), _REAL),
    "in_top_k": Uses(("take_along_axis", "greater", "sum"), "iuf"),
    "segment_sum": Uses(("equal", "where", "sum"), _NUMERIC),
    "segment_prod": Uses(("equal", "where", "prod"), _NUMERIC),
    "segment_max": Uses(("equal", "where", "max"), "iuf"),
    "segment_min": Uses(("equal", "where", "min"), "iuf"),
    "rsqrt": Uses(("sqrt", "divide"), _REAL, "inexact"),
    "erf": Uses(("multiply",), _REAL, "inexact"),
    "erfc": Uses(("multiply",), _REAL, "inexact"),
    "erfinv": Uses(("multiply",), _REAL, "inexact"),
    "logdet": Uses(("slogdet",), _NUMERIC, "inexact"),
    "stft": Uses(("take", "multiply", "rfft"), "f"),
    "istft": Uses(("irfft", "multiply", "divide"), "c"),
    "scatter": Uses(("equal", "where", "sum"), _NUMERIC),
    "scatter_update": Uses(("equal", "where", "take")),
    "slice_update": Uses(("take", "where")),
    # keras' core saturate_cast/slice, einsum and math cdist/extract_sequences/view_as_* (models/mathops/):
    # einsum and view_as_complex call the backends' nn kernels; their rows name the kernels of the same dtypes
    # saturate_cast: bool input is a plain cast; numbers are clipped, but the row leaves clip out so that
    # bool stays out of clip's domain (clip has no bool kernel on torch and tensorflow, and is never called
    # with one); isnan and where, which every number also goes through, bound the answer
    "saturate_cast": Uses(("isnan", "where"), _REAL),
    "slice": Uses(("take",)),
    "einsum": Uses(("tensordot",)),
    "cdist": Uses(("subtract", "vector_norm"), _NUMERIC, "inexact"),
    "extract_sequences": Uses(("take", "reshape")),
    "view_as_complex": Uses(("real", "imag"), "iuf", "inexact", ("bfloat16", "float16")),
    "view_as_real": Uses(("real", "imag", "stack"), "c"),
    # keras' numpy view (a reinterpretation of the bytes: no kernel computes) and core rearrange
    "view": Uses((), rule="none"),
    "rearrange": Uses(("reshape", "permute_dims")),
    # utility
    "all": Uses(("all",)),
    "any": Uses(("any",)),
    "diff": Uses(("diff",)),
    # inspection
    "__array_namespace_info__": Uses((), rule="independent"),
    # the linalg extension (matmul, matrix_transpose, tensordot, vecdot are the main namespace's); the
    # floating-valued ones take integers (in the default float) but not bool, as the api layer refuses
    "linalg.cholesky": Uses(("cholesky",), _NUMERIC, "inexact"),
    "linalg.cross": Uses(("cross",), _NUMERIC),
    "linalg.det": Uses(("det",), _NUMERIC, "inexact"),
    "linalg.diagonal": Uses(("diagonal",)),
    "linalg.eig": Uses(("eig",), _NUMERIC, "inexact"),
    "linalg.eigvals": Uses(("eigvals",), _NUMERIC, "inexact"),
    "linalg.eigh": Uses(("eigh",), _NUMERIC, "inexact"),
    "linalg.eigvalsh": Uses(("eigvalsh",), _NUMERIC, "inexact"),
    "linalg.inv": Uses(("inv",), _NUMERIC, "inexact"),
    "linalg.matrix_norm": Uses(("matrix_norm",), _NUMERIC, "inexact"),
    "linalg.matrix_power": Uses(("matrix_power",), _NUMERIC),
    "linalg.matrix_rank": Uses(("matrix_rank",), _NUMERIC, "inexact"),
    "linalg.outer": Uses(("outer",), _NUMERIC),
    "linalg.pinv": Uses(("pinv",), _NUMERIC, "inexact"),
    "linalg.qr": Uses(("qr",), _NUMERIC, "inexact"),
    "linalg.slogdet": Uses(("slogdet",), _NUMERIC, "inexact"),
    "linalg.solve": Uses(("solve",), _NUMERIC, "inexact"),
    "linalg.svd": Uses(("svd",), _NUMERIC, "inexact"),
    "linalg.svdvals": Uses(("svdvals",), _NUMERIC, "inexact"),
    "linalg.trace": Uses(("trace",), rule="accumulator"),
    "linalg.vector_norm": Uses(("vector_norm",), _NUMERIC, "inexact"),
    # keras.ops' linalg names beyond the standard (arraylayer/api/linalg_more.py): compositions
    "linalg.solve_triangular": Uses(("tril", "triu", "solve"), _NUMERIC, "inexact"),
    "linalg.lstsq": Uses(("pinv", "matmul"), _NUMERIC, "inexact"),
    "linalg.lu_factor": Uses(("take_along_axis", "where", "divide", "multiply", "subtract"), _NUMERIC, "inexact"),  # (argmax: of magnitudes)
    "linalg.cholesky_inverse": Uses(("tril", "triu", "inv", "matmul"), _NUMERIC, "inexact"),
    "linalg.norm": Uses(("vector_norm", "matrix_norm"), _NUMERIC, "inexact"),
    # the fft extension: complex transforms take real input as its complex dtype (see api/fft.py)
    "fft.fft": Uses(("fft",), "fc", "complex"),
    "fft.ifft": Uses(("ifft",), "fc", "complex"),
    "fft.fftn": Uses(("fftn",), "fc", "complex"),
    "fft.ifftn": Uses(("ifftn",), "fc", "complex"),
    "fft.rfft": Uses(("rfft",), "f"),
    "fft.rfftn": Uses(("rfftn",), "f"),
    "fft.ihfft": Uses(("ihfft",), "f"),
    "fft.irfft": Uses(("irfft",), "c"),
    "fft.irfftn": Uses(("irfftn",), "c"),
    "fft.hfft": Uses(("hfft",), "c"),
    "fft.fftfreq": Uses((), "f", "none"),
    "fft.rfftfreq": Uses((), "f", "none"),
    "fft.fft2": Uses(("fftn",), "fc", "complex"),
    "fft.ifft2": Uses(("ifftn",), "fc", "complex"),
    "fft.rfft2": Uses(("rfftn",), "f"),
    "fft.irfft2": Uses(("irfftn",), "c"),
    "fft.fftshift": Uses(("roll",)),
    "fft.ifftshift": Uses(("roll",)),
}

#: Public functions that are not array functions (dtypes, promotion, defaults, backends,
#: devices, and these queries): no kernel, no dtype restriction.
INDEPENDENT: Final[tuple[str, ...]] = (
    "narrow_64bit", "set_narrow_64bit", "use_narrow_64bit",
    "checked_scalars", "set_checked_scalars", "use_checked_scalars", "torch_guard_filter",
    "grad", "value_and_grad",
    # control flow and transforms: they run the user's functions, whose calls carry their own dtypes
    "scan", "map", "fori_loop", "while_loop", "cond", "switch", "associative_scan", "vmap", "stop_gradient",
    "custom_gradient", "jvp", "is_tensor", "vectorize",
    "tree_map", "tree_leaves", "tree_paths", "tree_map_with_path", "as_dtype", "register_dtype_alias", "is_bool_dtype", "is_int_dtype", "is_uint_dtype", "is_float_dtype",
    "is_complex_dtype", "is_numeric_dtype", "dtype_bits", "promote_types", "lattice_result_type",
    "promote_types_of_inputs", "set_dtype_promotion", "get_dtype_promotion", "dtype_promotion",
    "promotion_policies", "default_int_dtype", "default_uint_dtype", "default_float_dtype",
    "default_complex_dtype", "set_default_int_dtype", "set_default_uint_dtype", "set_default_float_dtype",
    "set_default_complex_dtype", "use_default_int_dtype", "use_default_uint_dtype", "use_default_float_dtype",
    "use_default_complex_dtype", "use_default_dtypes", "default_dtype", "infer_dtype", "available_backends",
    "installed_backends", "register_backend", "get_backend", "set_backend", "use_backend", "current_backend",
    "backend_of", "as_native_dtype", "as_arraylayer_dtype", "to_backend", "dev", "to_device", "default_device",
    "set_default_device", "use_device", "function_supported_dtypes", "function_unsupported_dtypes",
)

# The elementwise table's rules, as the kernel-dtype rules above.
_ELEMENTWISE_RULES: Final = {"same": "same", "bool": "same", "real": "same", "inexact": "inexact",
                             "logical": "logical"}
_TABLE: dict[str, Uses] = {}
_COMPLEX_OF: Final = {Dtype("float32"): Dtype("complex64"), Dtype("float64"): Dtype("complex128")}
_PART_OF: Final = {c: f for f, c in _COMPLEX_OF.items()}


def function_table() -> dict[str, Uses]:
    """Every public function's :class:`Uses`, by qualified name: the elementwise module's table,
    :data:`FUNCTIONS`, :data:`INDEPENDENT` and the model toolkit's rows
    (:mod:`~arraylayer.support.model_table`; built once)."""
    if not _TABLE:
        table = {name: Uses((name,), spec.kinds, _ELEMENTWISE_RULES[spec.rule])
                 for name, spec in {**UNARY, **BINARY}.items()}
        table.update(FUNCTIONS)
        table.update((name, Uses((), rule="independent")) for name in INDEPENDENT)
        table.update(MODEL_FUNCTIONS)
        table.update((name, Uses((), rule="independent")) for name in MODEL_INDEPENDENT)
        _TABLE.update(table)
    return _TABLE


def kernel_dtype(rule: str, dtype: Dtype) -> Dtype:
    """The dtype a function of ``rule`` calls its kernels with for an input of ``dtype`` (under
    the default dtypes in force)."""
    if rule == "inexact":
        if dtype.category in ("bool", "int", "uint"):
            return default_float_dtype()
        return dtype
    if rule == "complex":
        return _COMPLEX_OF.get(dtype, dtype)
    if rule == "parts":
        return _PART_OF.get(dtype, dtype)
    if rule == "real":
        return default_float_dtype() if dtype.category in ("bool", "int", "uint") else _PART_OF.get(dtype, dtype)
    if rule == "logical":
        return Dtype("bool")
    if rule == "accumulator":
        return accumulator_dtype(dtype, None)
    if rule == "index":
        return default_int_dtype()
    return dtype


def kernel_domain(name: str) -> tuple[Dtype, ...]:
    """The dtypes the api layer may call kernel ``name`` with: what the functions using it
    reach through their rules, under any default dtypes. Accumulating kernels take any dtype
    (``sum(x, dtype=...)``); a kernel no function uses, every dtype."""
    reached: set[Dtype] = set()
    used = False
    for uses in function_table().values():
        if name not in uses.kernels:
            continue
        used = True
        if uses.rule == "accumulator":
            return all_dtypes
        for dtype in all_dtypes:
            if KIND_LETTER[dtype.category] not in uses.kinds:
                continue
            if uses.rule == "logical":
                reached.add(Dtype("bool"))
            elif uses.rule in ("inexact", "real") and dtype.category in ("bool", "int", "uint"):
                reached.update(all_float_dtypes)  # the default float: any float dtype
            elif uses.rule == "complex":
                reached.add(_COMPLEX_OF.get(dtype, dtype))
            elif uses.rule in ("parts", "real"):
                reached.add(_PART_OF.get(dtype, dtype))
            elif uses.rule == "index":
                reached.update((Dtype("int32"), Dtype("int64")))  # the default int, either one
            else:
                reached.add(dtype)
    if not used:
        return all_dtypes
    return tuple(d for d in all_dtypes if d in reached)
