"""Which dtypes each backend's kernels support, and from them, which dtypes every public function supports.

Kernel declarations
-------------------
A backend's kernel package declares, per kernel name, *either* the dtypes it supports
(``SUPPORTED``) *or* those it does not (``UNSUPPORTED``), as
``{"<version range>": (dtype or group names)}``. A version range is comma-separated
clauses such as ``">=2.13,<2.14"``; groups are the names of :data:`GROUPS`. The installed
framework's version picks the entry. A version that no declared range covers is said
(a :class:`UnverifiedVersionWarning` naming the kernel and version) and treated as
"no known restriction": never silently mapped to another version's entry.
:func:`check_declarations` lists what is malformed in a package's declarations. On top of
the declarations, every kernel but ``astype`` is unsupported for the dtypes a backend stores
but cannot compute with (:func:`stored_only_dtypes`: torch's uint16/uint32/uint64), so the api
layer refuses them with UnsupportedDtypeError like any undeclared kernel, except where the
kernel package declares an exact route for them (``COMPUTES_STORED``, :func:`computes_stored`:
torch's sum/prod/cumulative_sum/cumulative_prod accumulate them in int64).

Function support
----------------
:func:`function_supported_dtypes` / :func:`function_unsupported_dtypes` answer for every
public function, from data, never by reading source code: :data:`FUNCTIONS` says, per
function, the dtype kinds the Array API defines it for (what the api layer refuses with
``not_defined``), the kernels it calls, and the rule that gives the dtype those kernels run
in (``inexact``: integers and bool run in the default float dtype, so ``sqrt(int8)`` is
supported exactly when the default-float ``sqrt`` kernel is). Elementwise rows come from
the elementwise module's own table. The answer for an input dtype is "supported" when the
backend holds the dtype, the function is defined for its kind, and every kernel it uses
supports the dtype the rule maps it to.

Answers are computed once per backend and kernel (and per function and context), then
served from a dict. :func:`support_matrix` and :func:`render_matrix` give the function x
dtype matrix of a backend (``python -m arraylayer support``); :mod:`arraylayer.probe`
checks the declarations against the installed frameworks.
"""

from __future__ import annotations

import operator
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from .context import replaying
from .dtypes import Dtype, all_complex_dtypes, all_dtypes, all_float_dtypes, all_int_dtypes, all_uint_dtypes

if TYPE_CHECKING:
    from .backend import Backend

__all__ = [
    "GROUPS", "UnverifiedVersionWarning", "expand_dtypes", "version_matches", "kernel_unsupported_dtypes",
    "declared_unsupported", "covering_range", "declaration_status", "check_declarations",
    "Uses", "FUNCTIONS", "RULES", "function_table", "public_functions", "function_name", "function_uses",
    "kernel_dtype", "kernel_domain", "stored_only_dtypes", "computes_stored", "function_supported_dtypes", "function_unsupported_dtypes",
    "dtype_support", "Cell", "clear_caches", "INDEPENDENT", "SupportMatrix", "matrix_functions", "support_matrix",
    "render_matrix", "MATRIX_FORMATS", "CELL_MARKS",
]

Declarations = Mapping[str, Mapping[str, tuple[str, ...]]]

#: Group names usable in declarations.
GROUPS: Final[dict[str, tuple[Dtype, ...]]] = {
    "bool": (Dtype("bool"),),
    "signed": all_int_dtypes,
    "unsigned": all_uint_dtypes,
    "integer": all_int_dtypes + all_uint_dtypes,
    "float": all_float_dtypes,
    "complex": all_complex_dtypes,
    "numeric": all_int_dtypes + all_uint_dtypes + all_float_dtypes + all_complex_dtypes,
    "all": all_dtypes,
}


class UnverifiedVersionWarning(UserWarning):
    """The installed framework's version is outside every range declared for a function."""


def expand_dtypes(names: Iterable[str]) -> frozenset[Dtype]:
    """Dtype and group names as a set of dtypes (ValueError for an unknown name)."""
    if isinstance(names, str):
        raise ValueError(f"Declare dtypes as a tuple of names, not the string {names!r} (write ({names!r},)).")
    result: set[Dtype] = set()
    for name in names:
        if name in GROUPS:
            result.update(GROUPS[name])
        elif name in all_dtypes:
            result.add(Dtype(name))
        else:
            raise ValueError(f"Unknown dtype or group {name!r} in a support declaration; groups: {', '.join(GROUPS)}.")
    return frozenset(result)


_CLAUSE: Final = re.compile(r"^\s*(>=|<=|==|!=|<|>)\s*([0-9][0-9.]*)\s*$")
_COMPARE: Final[dict[str, Callable[[object, object], bool]]] = {
    ">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
}


def _release(version: str) -> tuple[int, ...]:
    """The numeric release of a version string: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``."""
    match = re.match(r"[0-9]+(\.[0-9]+)*", version)
    if match is None:
        raise ValueError(f"Cannot read the version {version!r}.")
    return tuple(int(part) for part in match.group(0).split("."))


def version_matches(version: str, spec: str) -> bool:
    """True if ``version`` satisfies every clause of ``spec`` (``">=2.13,<2.14"``).

    Releases compare numerically, padded with zeros (``2.13`` == ``2.13.0``)."""
    have = _release(version)
    for clause in spec.split(","):
        match = _CLAUSE.match(clause)
        if match is None:
            raise ValueError(f"Bad version clause {clause!r} in {spec!r}; write e.g. '>=2.13,<2.14'.")
        want = _release(match.group(2))
        width = max(len(have), len(want))
        padded_have, padded_want = have + (0,) * (width - len(have)), want + (0,) * (width - len(want))
        if not _COMPARE[match.group(1)](padded_have, padded_want):
            return False
    return True


def covering_range(ranges: Mapping[str, Any], version: str) -> str | None:
    """The first range of ``ranges`` that ``version`` satisfies, or None."""
    for spec in ranges:
        if version_matches(version, spec):
            return spec
    return None


def _entry_for(ranges: Mapping[str, tuple[str, ...]], version: str, what: str) -> frozenset[Dtype] | None:
    """The dtypes of the range covering ``version``; None (and a warning) when none does."""
    spec = covering_range(ranges, version)
    if spec is not None:
        return expand_dtypes(ranges[spec])
    warnings.warn(
        f"{what}: version {version} is outside every declared range ({'; '.join(ranges)}); its dtype "
        f"support is unverified. Run `python -m arraylayer probe` to see what it supports.",
        UnverifiedVersionWarning,
        stacklevel=4,
    )
    return None


def declared_unsupported(
    name: str, supported: Declarations, unsupported: Declarations, version: str, backend_name: str
) -> frozenset[Dtype]:
    """The dtypes kernel ``name`` does not support at ``version``, from either kind of declaration."""
    what = f"{backend_name} kernel {name!r}"
    if name in supported and name in unsupported:
        raise ValueError(f"The {what} declares both supported and unsupported dtypes; keep one.")
    if name in supported:
        allowed = _entry_for(supported[name], version, what)
        return frozenset() if allowed is None else frozenset(all_dtypes) - allowed
    if name in unsupported:
        return _entry_for(unsupported[name], version, what) or frozenset()
    return frozenset()


def kernel_unsupported_dtypes(backend: Backend, name: str) -> frozenset[Dtype]:
    """The dtypes for which ``backend``'s kernel ``name`` has no implementation at the installed
    version: the declared ones and, for every kernel but ``astype``, the dtypes the backend stores
    but cannot compute with (:func:`stored_only_dtypes`; one rule for every function, see
    docs/errors.rst), less those its backend computes exactly anyway (:func:`computes_stored`). The api layer refuses these before the framework is called. Cached per backend."""
    if replaying():  # under Dynamo a cache read is a guard, a cache write a recompile: compute it
        return _unsupported(backend, name)
    cache = backend.unsupported_cache
    found = cache.get(name)
    if found is None:
        backend.load()
        found = cache[name] = _unsupported(backend, name)
    return found


def _unsupported(backend: Backend, name: str) -> frozenset[Dtype]:
    declared = declared_unsupported(name, backend.supported, backend.unsupported, backend.version, backend.name)
    if name in _ANY_STORED_DTYPE:
        return declared
    return declared | (stored_only_dtypes(backend) - computes_stored(backend, name))


def computes_stored(backend: Backend, name: str) -> frozenset[Dtype]:
    """The stored-only dtypes kernel ``name`` computes with anyway, by an exact route its kernel
    package declares in ``COMPUTES_STORED`` (torch's sum/prod/cumulative_*: in int64, cast back)."""
    declared = backend.computes_stored  # read at load(), so nothing is imported while Dynamo traces
    if name not in declared:
        return frozenset()
    return _entry_for(declared[name], backend.version, f"{backend.name} kernel {name!r}") or frozenset()


#: Backends whose valid dtypes follow a setting read per call (JAX: ``jax_enable_x64``); their
#: ``check_valid`` decides, so their stored-only dtypes are not cached here.
_CONFIGURED_VALIDITY: Final = frozenset({"jax"})
#: Kernels that run on every dtype a backend stores, computable or not: ``astype`` is the way out.
_ANY_STORED_DTYPE: Final = frozenset({"astype"})


def stored_only_dtypes(backend: Backend) -> frozenset[Dtype]:
    """The dtypes ``backend`` stores (arrays of them exist) but cannot compute with: torch's
    uint16/uint32/uint64, TensorFlow's dtypes without CPU kernels (see ``valid_dtypes``)."""
    if backend.name in _CONFIGURED_VALIDITY:
        return frozenset()
    backend.load()
    return frozenset(backend.native_dtypes) - frozenset(backend.valid_dtypes())


def declaration_status(backend: Backend, name: str) -> tuple[str, str | None]:
    """How ``backend`` declares kernel ``name`` at the installed version: ``("undeclared", None)``,
    ``("covered", range)`` or ``("unverified", None)`` (declared, but for other versions only)."""
    backend.load()
    ranges = backend.supported.get(name) or backend.unsupported.get(name)
    if not ranges:
        return ("undeclared", None)
    spec = covering_range(ranges, backend.version)
    return ("unverified", None) if spec is None else ("covered", spec)


def check_declarations(
    supported: Declarations, unsupported: Declarations, kernel_names: Iterable[str] | None = None
) -> list[str]:
    """Everything malformed in a kernel package's declarations, one sentence each (empty: fine).

    Checks that no kernel declares both ways, that every name is a kernel (of
    ``kernel_names``, default: :data:`~arraylayer.kernels.names.ALL_KERNEL_NAMES`), that every
    range parses, that no two ranges of one kernel overlap at their boundaries, and that every
    dtype or group name exists."""
    if kernel_names is None:
        from .kernels.names import ALL_KERNEL_NAMES

        kernel_names = ALL_KERNEL_NAMES
    known = set(kernel_names)
    problems = [f"kernel {name!r} declares both SUPPORTED and UNSUPPORTED dtypes"
                for name in sorted(set(supported) & set(unsupported))]
    for kind, declarations in (("SUPPORTED", supported), ("UNSUPPORTED", unsupported)):
        for name, ranges in declarations.items():
            where = f"{kind}[{name!r}]"
            if name not in known:
                problems.append(f"{where}: {name!r} is not a kernel name")
            if not isinstance(ranges, Mapping) or not ranges:
                problems.append(f"{where}: expected a non-empty {{'<version range>': (dtype names)}} dict")
                continue
            bounds: set[str] = set()
            for spec, names in ranges.items():
                try:
                    version_matches("0", spec)
                    bounds.update(_CLAUSE.match(c).group(2) for c in spec.split(","))  # type: ignore[union-attr]
                except ValueError as error:
                    problems.append(f"{where}: {error}")
                    continue
                try:
                    expand_dtypes(names)
                except ValueError as error:
                    problems.append(f"{where}[{spec!r}]: {error}")
            for bound in sorted(bounds):
                for version in (bound, bound + ".0.0.1"):
                    try:
                        matching = [spec for spec in ranges if version_matches(version, spec)]
                    except ValueError:
                        break
                    if len(matching) > 1:
                        problems.append(f"{where}: version {version} is in several ranges ({'; '.join(matching)})")
                        break
    return problems


# ---------------------------------------------------------------------------------------------
# Functions: the data that says which kernels each public function uses
# ---------------------------------------------------------------------------------------------
class Uses(NamedTuple):
    """What a public function needs, as data.

    ``kinds``: the kind letters (b i u f c) the Array API defines it for; other kinds are
    refused by the api layer on every backend. ``kernels``: the kernel names it calls.
    ``rule``: the dtype those kernels run in, for an input dtype (see :data:`RULES`).
    """

    kernels: tuple[str, ...]
    kinds: str = "biufc"
    rule: str = "same"


#: How a function's input dtype becomes the dtype its kernels are called with.
RULES: Final[dict[str, str]] = {
    "same": "the input dtype (promoted, for several inputs)",
    "inexact": "the input dtype; bool and integers run in the default float dtype",
    "complex": "the input dtype; real floating input runs in the complex dtype of its precision",
    "logical": "bool (inputs are read as bool)",
    "accumulator": "the accumulator dtype of sum (bool and narrow integers: the default int or uint)",
    "none": "no kernel: the dtype is only held or converted",
    "independent": "not an array function: no dtype restriction",
}

_ALL: Final = "biufc"
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
    "unique_all": Uses(("unique_all",), _REAL),
    "unique_counts": Uses(("unique_counts",), _REAL),
    "unique_inverse": Uses(("unique_inverse",), _REAL),
    "unique_values": Uses(("unique_values",), _REAL),
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
    # utility
    "all": Uses(("all",)),
    "any": Uses(("any",)),
    "diff": Uses(("diff",)),
    # inspection
    "__array_namespace_info__": Uses((), rule="independent"),
    # the linalg extension (matmul, matrix_transpose, tensordot, vecdot are the main namespace's)
    "linalg.cholesky": Uses(("cholesky",), rule="inexact"),
    "linalg.cross": Uses(("cross",), _NUMERIC),
    "linalg.det": Uses(("det",), rule="inexact"),
    "linalg.diagonal": Uses(("diagonal",)),
    "linalg.eig": Uses(("eig",), rule="inexact"),
    "linalg.eigvals": Uses(("eigvals",), rule="inexact"),
    "linalg.eigh": Uses(("eigh",), rule="inexact"),
    "linalg.eigvalsh": Uses(("eigvalsh",), rule="inexact"),
    "linalg.inv": Uses(("inv",), rule="inexact"),
    "linalg.matrix_norm": Uses(("matrix_norm",), rule="inexact"),
    "linalg.matrix_power": Uses(("matrix_power",), _NUMERIC),
    "linalg.matrix_rank": Uses(("matrix_rank",), rule="inexact"),
    "linalg.outer": Uses(("outer",), _NUMERIC),
    "linalg.pinv": Uses(("pinv",), rule="inexact"),
    "linalg.qr": Uses(("qr",), rule="inexact"),
    "linalg.slogdet": Uses(("slogdet",), rule="inexact"),
    "linalg.solve": Uses(("solve",), rule="inexact"),
    "linalg.svd": Uses(("svd",), rule="inexact"),
    "linalg.svdvals": Uses(("svdvals",), rule="inexact"),
    "linalg.trace": Uses(("trace",), rule="accumulator"),
    "linalg.vector_norm": Uses(("vector_norm",), rule="inexact"),
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
    "fft.fftshift": Uses(("roll",)),
    "fft.ifftshift": Uses(("roll",)),
}

#: Public functions that are not array functions (dtypes, promotion, defaults, backends,
#: devices, and these queries): no kernel, no dtype restriction.
INDEPENDENT: Final[tuple[str, ...]] = (
    "narrow_64bit", "set_narrow_64bit", "use_narrow_64bit",
    "checked_scalars", "set_checked_scalars", "use_checked_scalars",
    "grad", "value_and_grad", "tree_map", "tree_leaves", "as_dtype", "register_dtype_alias", "is_bool_dtype", "is_int_dtype", "is_uint_dtype", "is_float_dtype",
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


def function_table() -> dict[str, Uses]:
    """Every public function's :class:`Uses`, by qualified name: the elementwise module's table,
    :data:`FUNCTIONS` and :data:`INDEPENDENT` (built once)."""
    if not _TABLE:
        from .api.elementwise import BINARY, UNARY

        table = {name: Uses((name,), spec.kinds, _ELEMENTWISE_RULES[spec.rule])
                 for name, spec in {**UNARY, **BINARY}.items()}
        table.update(FUNCTIONS)
        table.update((name, Uses((), rule="independent")) for name in INDEPENDENT)
        _TABLE.update(table)
    return _TABLE


_PUBLIC: dict[str, Callable[..., Any]] = {}
_NAME_OF: dict[int, str] = {}


def public_functions() -> dict[str, Callable[..., Any]]:
    """Every public function by qualified name: the callables of ``arraylayer.__all__`` (classes
    left out) and of ``arraylayer.linalg.__all__`` as ``linalg.<name>``."""
    if not _PUBLIC:
        import arraylayer

        from .api import fft, linalg

        found: dict[str, Callable[..., Any]] = {}
        for prefix, module in (("", arraylayer), ("linalg.", linalg), ("fft.", fft)):
            for name in module.__all__:
                obj = getattr(module, name)
                if callable(obj) and not isinstance(obj, type):
                    found[prefix + name] = obj
        for name, obj in found.items():
            _NAME_OF.setdefault(id(obj), name)  # linalg.matmul is matmul: the main name wins
        _PUBLIC.update(found)
    return _PUBLIC


def function_name(fn: Any) -> str:
    """The qualified name of a public function, given the function itself or its name
    (``"add"``, ``"linalg.det"``, ``"arraylayer.linalg.det"``); ValueError for anything else."""
    table = function_table()
    functions = public_functions()
    if isinstance(fn, str):
        name = fn.removeprefix("arraylayer.")
        if name in table:
            return name
        if name not in functions:
            import difflib

            close = difflib.get_close_matches(name, list(table), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{fn!r} is not a public arraylayer function.{hint}")
        name = _NAME_OF[id(functions[name])]
    else:
        name = _NAME_OF.get(id(fn))  # type: ignore[assignment]
        if name is None or functions[name] is not fn:
            shown = getattr(fn, "__qualname__", None) or repr(fn)
            raise ValueError(
                f"{shown} is not a public arraylayer function; dtype support is known for arraylayer's own "
                f"functions (arraylayer.<name> and arraylayer.linalg.<name>)."
            )
    if name not in table:
        raise ValueError(f"arraylayer.{name} has no row in the table of arraylayer/support.py (FUNCTIONS, or "
                         f"INDEPENDENT for a function that takes no arrays): its dtype support is unknown.")
    return name


def function_uses(fn: Any) -> Uses:
    """The :class:`Uses` row of a public function (the function or its name)."""
    return function_table()[function_name(fn)]


def kernel_dtype(rule: str, dtype: Dtype) -> Dtype:
    """The dtype a function of ``rule`` calls its kernels with for an input of ``dtype`` (under
    the default dtypes in force)."""
    if rule == "inexact":
        if dtype.category in ("bool", "int", "uint"):
            from .defaults import default_float_dtype

            return default_float_dtype()
        return dtype
    if rule == "complex":
        return _COMPLEX_OF.get(dtype, dtype)
    if rule == "logical":
        return Dtype("bool")
    if rule == "accumulator":
        from .api.statistical import accumulator_dtype

        return accumulator_dtype(dtype, None)
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
            if _KIND_LETTER[dtype.category] not in uses.kinds:
                continue
            if uses.rule == "logical":
                reached.add(Dtype("bool"))
            elif uses.rule == "inexact" and dtype.category in ("bool", "int", "uint"):
                reached.update(all_float_dtypes)  # the default float: any float dtype
            elif uses.rule == "complex":
                reached.add(_COMPLEX_OF.get(dtype, dtype))
            else:
                reached.add(dtype)
    if not used:
        return all_dtypes
    return tuple(d for d in all_dtypes if d in reached)


_COMPLEX_OF: Final = {Dtype("float32"): Dtype("complex64"), Dtype("float64"): Dtype("complex128")}
_KIND_LETTER: Final = {"bool": "b", "int": "i", "uint": "u", "float": "f", "complex": "c"}
_KIND_WORDS: Final = {"b": "bool", "i": "signed integer", "u": "unsigned integer", "f": "real floating-point",
                      "c": "complex"}


# ---------------------------------------------------------------------------------------------
# The queries
# ---------------------------------------------------------------------------------------------
class Cell(NamedTuple):
    """The support of one function for one input dtype on one backend.

    ``status``: ``"supported"``, ``"unverified"`` (supported as far as arraylayer knows, but
    the installed version is outside a declaration's ranges), ``"invalid"`` (the backend
    cannot hold the dtype as configured), ``"undefined"`` (the Array API does not define the
    function for the kind), ``"unsupported"`` (a kernel has no implementation) or
    ``"missing"`` (the backend provides no such kernel). ``why``: one sentence.
    """

    status: str
    why: str = ""

    @property
    def supported(self) -> bool:
        return self.status in ("supported", "unverified")


_SUPPORTED: Final = Cell("supported")


def _backend_of(backend: Any) -> Backend:
    from .backend import Backend
    from .registry import get_backend

    if isinstance(backend, Backend):
        return backend.load()
    return get_backend(backend)


def dtype_support(
    fn: Any, backend: Any = None, kernel_unsupported: Callable[[Backend, str], frozenset[Dtype]] | None = None
) -> dict[Dtype, Cell]:
    """Every dtype's :class:`Cell` for public function ``fn`` on ``backend`` (a name, a Backend,
    or None for the active one). ``kernel_unsupported(backend, kernel)`` answers for the kernels
    (default: the declarations, :func:`kernel_unsupported_dtypes`; the probe passes what it
    observed)."""
    name = function_name(fn)
    uses = function_table()[name]
    resolved = _backend_of(backend)
    declared = kernel_unsupported is None
    query = kernel_unsupported_dtypes if kernel_unsupported is None else kernel_unsupported
    valid = resolved.valid_dtypes()
    unverified = set()
    if declared:
        unverified = {k for k in uses.kernels if declaration_status(resolved, k)[0] == "unverified"}
    cells: dict[Dtype, Cell] = {}
    stored_only = stored_only_dtypes(resolved)
    for dtype in all_dtypes:
        if dtype not in valid:  # stored-only inputs too: the table answers for computable dtypes
            cells[dtype] = Cell("invalid", f"{resolved.name} cannot hold {dtype} as installed and configured")
            continue
        if uses.rule == "independent":
            cells[dtype] = _SUPPORTED
            continue
        if _KIND_LETTER[dtype.category] not in uses.kinds:
            takes = " or ".join(_KIND_WORDS[k] for k in uses.kinds)
            cells[dtype] = Cell("undefined", f"{name} is defined for {takes} input only")
            continue
        target = kernel_dtype(uses.rule, dtype)
        cell = _SUPPORTED
        via = "" if target is dtype else f" ({name} computes {dtype} input in {target})"
        for kernel in uses.kernels:
            if kernel not in resolved.kernels:
                cell = Cell("missing", f"the {resolved.name} backend has no {kernel!r} kernel")
                break
            if target not in valid and target not in stored_only:
                cell = Cell("unsupported", f"{name} computes {dtype} input in {target}, which the "
                                           f"{resolved.name} backend cannot hold as configured")
                break
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UnverifiedVersionWarning)
                missing = target in query(resolved, kernel)
            if missing:
                cell = Cell("unsupported", f"the {resolved.name} {kernel!r} kernel has no {target} "
                                           f"implementation{via}")
                break
            if kernel in unverified:
                cell = Cell("unverified", f"{resolved.framework} {resolved.version} is outside the ranges "
                                          f"declared for the {kernel!r} kernel")
        cells[dtype] = cell
    return cells


# (qualified name, Backend, its valid dtypes now, default dtypes) -> (supported, unsupported)
_ANSWERS: dict[tuple[Any, ...], tuple[tuple[Dtype, ...], tuple[Dtype, ...]]] = {}


def _answer(fn: Any, backend: Any) -> tuple[tuple[Dtype, ...], tuple[Dtype, ...]]:
    from .defaults import default_float_dtype, default_int_dtype, default_uint_dtype

    name = fn if isinstance(fn, str) and fn in _TABLE else function_name(fn)
    resolved = _backend_of(backend)
    key = (name, resolved, resolved.valid_dtypes(), default_float_dtype(), default_int_dtype(), default_uint_dtype())
    found = _ANSWERS.get(key)
    if found is None:
        uses = function_table()[name]
        for kernel in uses.kernels:  # said once, where it applies: outside a declared version range
            if kernel in resolved.kernels:
                kernel_unsupported_dtypes(resolved, kernel)
        cells = dtype_support(name, resolved)
        found = (tuple(d for d, c in cells.items() if c.supported),
                 tuple(d for d, c in cells.items() if not c.supported))
        _ANSWERS[key] = found
    return found


def function_supported_dtypes(fn: Any, backend: Any = None) -> tuple[Dtype, ...]:
    """The input dtypes public function ``fn`` (the function, or its name: ``"add"``,
    ``"linalg.det"``) supports on ``backend`` (a name; None: the active backend), as
    installed and configured now, under the default dtypes in force.

    A dtype is supported when the backend holds it, the Array API defines ``fn`` for its
    kind, and every kernel ``fn`` uses supports the dtype it runs in (``sqrt(int8)`` runs in
    the default float dtype). For several inputs, the dtype is their promoted dtype. The same
    tuple object is returned on every call with the same backend and defaults."""
    return _answer(fn, backend)[0]


def function_unsupported_dtypes(fn: Any, backend: Any = None) -> tuple[Dtype, ...]:
    """The dtypes :func:`function_supported_dtypes` leaves out (invalid on the backend,
    undefined for the function, or without a kernel); together they are all fifteen."""
    return _answer(fn, backend)[1]


def clear_caches() -> None:
    """Forget every computed answer (after changing a backend's declarations at run time)."""
    from .registry import _INSTANCES

    _ANSWERS.clear()
    for backend in list(_INSTANCES.values()):
        backend.unsupported_cache.clear()


# ---------------------------------------------------------------------------------------------
# The support matrix
# ---------------------------------------------------------------------------------------------
#: The mark of each cell status in the matrix, and what it means.
CELL_MARKS: Final[dict[str, tuple[str, str]]] = {
    "supported": ("+", "supported"),
    "unverified": ("?", "no declaration covers the installed version: unverified (run `arraylayer probe`)"),
    "unsupported": ("x", "no kernel for this dtype on this backend: UnsupportedDtypeError"),
    "missing": ("!", "the backend provides no kernel for this function"),
    "undefined": ("-", "not defined for this kind by the Array API, on any backend"),
    "invalid": (".", "the backend cannot hold this dtype as installed and configured"),
}
MATRIX_FORMATS: Final = ("text", "markdown", "html")


class SupportMatrix(NamedTuple):
    """Function x dtype support on one backend, from the declarations."""

    backend: str
    framework: str
    version: str
    dtypes: tuple[Dtype, ...]
    #: (qualified function name, one Cell per dtype of ``dtypes``)
    rows: tuple[tuple[str, tuple[Cell, ...]], ...]

    def cell(self, function: str, dtype: str) -> Cell:
        for name, cells in self.rows:
            if name == function:
                return cells[self.dtypes.index(Dtype(dtype))]
        raise KeyError(function)


def matrix_functions() -> tuple[str, ...]:
    """The array functions of the matrix, sorted (``linalg.*`` last): everything of the table
    but the dtype-independent ones."""
    names = [name for name, uses in function_table().items() if uses.rule != "independent"]
    return tuple(sorted(names, key=lambda n: (n.startswith("linalg."), n)))


def support_matrix(backend: Any = None, functions: Iterable[Any] | None = None) -> SupportMatrix:
    """The support matrix of ``backend`` (a name; None: the active one) for ``functions``
    (default: every array function), from the declarations and the defaults in force."""
    resolved = _backend_of(backend)
    names = matrix_functions() if functions is None else tuple(function_name(f) for f in functions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnverifiedVersionWarning)  # shown in the cells as "?"
        rows = tuple((name, tuple(dtype_support(name, resolved).values())) for name in names)
    return SupportMatrix(resolved.name, resolved.framework, resolved.version, all_dtypes, rows)


def _short(dtype: Dtype) -> str:
    from .lattice import CODES

    return next(code for code, name in CODES.items() if name == dtype)


def _title(matrix: SupportMatrix) -> str:
    return (f"Dtype support on the {matrix.backend} backend ({matrix.framework} {matrix.version}), "
            f"from the declarations; rows: functions, columns: input dtypes.")


def _legend_items(matrix: SupportMatrix) -> list[tuple[str, str]]:
    used = {cell.status for _, cells in matrix.rows for cell in cells}
    items = [(mark, meaning) for status, (mark, meaning) in CELL_MARKS.items() if status in used]
    codes = ", ".join(f"{_short(d)} {d}" for d in matrix.dtypes)
    return items + [("codes", codes)]


def render_matrix(matrix: SupportMatrix, fmt: str = "text") -> str:
    """``matrix`` as aligned text, a Markdown table, or an HTML fragment (a ``<table>`` with
    each cell's reason in its ``title``)."""
    codes = [_short(d) for d in matrix.dtypes]
    if fmt == "text":
        width = max(len(name) for name, _ in matrix.rows) if matrix.rows else 8
        cw = max(len(c) for c in codes) + 1
        lines = [_title(matrix), ""]
        lines.append(" " * width + "".join(f"{c:>{cw}}" for c in codes))
        for name, cells in matrix.rows:
            lines.append(f"{name:<{width}}" + "".join(f"{CELL_MARKS[c.status][0]:>{cw}}" for c in cells))
        lines.append("")
        lines += [f"  {mark:<5} {meaning}" for mark, meaning in _legend_items(matrix)]
        return "\n".join(lines)
    if fmt == "markdown":
        def escape(text: str) -> str:
            return text.replace("|", r"\|").replace("*", r"\*").replace("_", r"\_")

        lines = [_title(matrix), "", "| function | " + " | ".join(codes) + " |",
                 "|:--|" + "|".join(":-:" for _ in codes) + "|"]
        for name, cells in matrix.rows:
            marks = " | ".join(escape(CELL_MARKS[c.status][0]) for c in cells)
            lines.append(f"| `{name}` | {marks} |")
        lines.append("")
        lines += [f"- `{mark}`: {escape(meaning)}" for mark, meaning in _legend_items(matrix)]
        return "\n".join(lines)
    if fmt == "html":
        import html

        parts = ['<table class="al-support">', f"<caption>{html.escape(_title(matrix))}</caption>",
                 "<thead><tr><th></th>"
                 + "".join(f'<th scope="col" title="{d}">{c}</th>' for c, d in zip(codes, matrix.dtypes, strict=True))
                 + "</tr></thead>", "<tbody>"]
        for name, cells in matrix.rows:
            tds = "".join(
                f'<td class="{c.status}" title="{html.escape(c.why or c.status)}">'
                f"{html.escape(CELL_MARKS[c.status][0])}</td>" for c in cells)
            parts.append(f'<tr><th scope="row">{html.escape(name)}</th>{tds}</tr>')
        parts += ["</tbody>", "</table>", '<ul class="al-legend">']
        parts += [f"<li><code>{html.escape(mark)}</code> {html.escape(meaning)}</li>"
                  for mark, meaning in _legend_items(matrix)]
        parts.append("</ul>")
        return "\n".join(parts)
    raise ValueError(f"unknown matrix format {fmt!r}; choose one of {', '.join(MATRIX_FORMATS)}")
