"""Supported dtypes: version-keyed declarations, the function table, the queries
function_supported_dtypes / function_unsupported_dtypes, the error before the framework is
called, and the support matrix (arraylayer/support/)."""

from __future__ import annotations

import re
import warnings
from html.parser import HTMLParser

import numpy as np
import pytest

import arraylayer as al
from arraylayer import support
from arraylayer.backends.numpy import NumpyBackend
from arraylayer.kernels.names import ALL_KERNEL_NAMES
from arraylayer.support import (
    Uses,
    check_declarations,
    covering_range,
    declared_unsupported,
    expand_dtypes,
    function_name,
    function_table,
    kernel_domain,
    version_matches,
)

FLOATS = ("bfloat16", "float16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _never_called(*args, **kwargs):
    raise AssertionError("a query called a kernel")


@pytest.fixture
def numpy_backend():
    """A private, loaded numpy adapter whose declarations a test may change (the registry's own
    instance is left alone), with a kernel of every name (the queries only ask whether it exists)."""
    backend = NumpyBackend().load()
    backend.kernels = dict.fromkeys(ALL_KERNEL_NAMES, _never_called)
    return backend


@pytest.fixture
def declare(monkeypatch):
    """declare(backend, kernel, {"range": (names)}, kind="unsupported"): change a backend's
    declarations for one test; every cached answer is forgotten before and after."""
    touched = []

    def change(backend, kernel, ranges, kind="unsupported"):
        table = dict(getattr(backend, kind))
        table[kernel] = ranges
        monkeypatch.setattr(backend, kind, table)
        backend.unsupported_cache.clear()
        touched.append(backend)
        support.clear_caches()

    yield change
    for backend in touched:
        backend.unsupported_cache.clear()
    support.clear_caches()


# -- declarations -------------------------------------------------------------------------------
@pytest.mark.parametrize(("version", "spec", "expected"), [
    ("2.13.0+cpu", ">=2.13,<2.14", True),
    ("2.13", "==2.13.0", True),
    ("2.14.1", ">=2.13,<2.14", False),
    ("0.10.2", ">0.10.1", True),
    ("2.21.0", "!=2.21", False),
])
def test_version_ranges(version, spec, expected):
    assert version_matches(version, spec) is expected


def test_bad_ranges_and_names_are_refused():
    with pytest.raises(ValueError, match="Bad version clause"):
        version_matches("2.13", "~=2.13")
    with pytest.raises(ValueError, match="Unknown dtype or group 'floats'"):
        expand_dtypes(("floats",))
    with pytest.raises(ValueError, match="tuple of names"):
        expand_dtypes("float16")


def test_groups():
    assert expand_dtypes(("integer",)) == set(al.all_int_dtypes) | set(al.all_uint_dtypes)
    assert expand_dtypes(("unsigned", "bool")) == {al.bool, al.uint8, *map(al.Dtype, ("uint16", "uint32", "uint64"))}
    assert expand_dtypes(("numeric",)) == set(al.all_dtypes) - {al.bool}
    assert expand_dtypes(("all",)) == set(al.all_dtypes)
    assert expand_dtypes(("float", "complex")) == set(al.all_float_dtypes) | set(al.all_complex_dtypes)


def test_the_installed_version_picks_the_entry():
    ranges = {">=2.12,<2.13": ("float16",), ">=2.13,<2.14": ("bfloat16", "complex")}
    assert declared_unsupported("det", {}, {"det": ranges}, "2.12.1", "torch") == {al.float16}
    assert declared_unsupported("det", {}, {"det": ranges}, "2.13.0+cpu", "torch") == {
        al.bfloat16, al.complex64, al.Dtype("complex128")}
    assert covering_range(ranges, "2.13.5") == ">=2.13,<2.14"


def test_supported_declarations_are_the_complement():
    unsupported = declared_unsupported("sort", {"sort": {">=1": ("integer", "float")}}, {}, "1.5", "x")
    assert unsupported == {al.bool, al.complex64, al.Dtype("complex128")}


def test_declaring_both_ways_is_an_error():
    with pytest.raises(ValueError, match="both supported and unsupported"):
        declared_unsupported("abs", {"abs": {">=1": ("float",)}}, {"abs": {">=1": ("bool",)}}, "1.0", "x")


def test_an_uncovered_version_is_said_and_never_mapped_to_the_last_entry():
    ranges = {">=2.12,<2.13": ("float16",), ">=2.13,<2.14": ("bfloat16",)}
    with pytest.warns(al.UnverifiedVersionWarning, match=r"torch kernel 'det': version 2\.14\.0"):
        assert declared_unsupported("det", {}, {"det": ranges}, "2.14.0", "torch") == frozenset()
    with pytest.warns(al.UnverifiedVersionWarning, match="2.11"):
        assert declared_unsupported("det", {"det": ranges}, {}, "2.11", "torch") == frozenset()


def test_check_declarations_lists_every_problem():
    problems = check_declarations(
        {"abs": {">=1": ("float",)}, "frobnicate": {">=1": ("all",)}},
        {"abs": {">=1": ("bool",)}, "det": {">=2.1,<2.3": ("float16",), ">=2.2": ("floats",)}, "sum": {"2.1": ()}},
    )
    text = "\n".join(problems)
    assert "'abs' declares both" in text
    assert "'frobnicate' is not a kernel name" in text
    assert "Unknown dtype or group 'floats'" in text
    assert "version 2.2 is in several ranges" in text
    assert "Bad version clause '2.1'" in text
    assert check_declarations({}, {"det": {">=2.13,<2.14": ("float16",), ">=2.14": ("float",)}}) == []


def test_every_installed_backends_declarations_are_well_formed(backend):
    adapter = al.get_backend(backend)
    assert check_declarations(adapter.supported, adapter.unsupported) == []


# -- the function table -------------------------------------------------------------------------
def _public_function_names():
    names = [n for n in al.__all__ if callable(getattr(al, n)) and not isinstance(getattr(al, n), type)]
    names += ["linalg." + n for n in al.linalg.__all__ if not isinstance(getattr(al.linalg, n), type)]
    names += ["fft." + n for n in al.fft.__all__]
    names += ["nn." + n for n in al.nn.__all__]
    names += ["optim." + n for n in al.optim.__all__ if not isinstance(getattr(al.optim, n), type)]
    names += [f"layers.{n}.{field}" for n in al.layers.__all__ if not isinstance(getattr(al.layers, n), type)
              for field in getattr(al.layers, n)._fields]
    return names


def test_the_table_covers_every_public_function():
    table = function_table()
    missing = []
    for name in _public_function_names():
        try:
            resolved = function_name(name)
        except ValueError:
            missing.append(name)
            continue
        assert resolved in table
    assert not missing, (
        f"public functions without a row in arraylayer/support/table.py (FUNCTIONS, or INDEPENDENT for those "
        f"that take no arrays): {', '.join(missing)}"
    )


def test_every_row_is_well_formed_and_names_real_kernels():
    public = set(_public_function_names())
    for name, uses in function_table().items():
        assert isinstance(uses, Uses)
        assert name in public, f"{name} has a row but is not a public function"
        assert uses.rule in support.RULES, name
        assert uses.kinds and set(uses.kinds) <= set("biufc"), name
        assert set(uses.kernels) <= set(ALL_KERNEL_NAMES), name
        assert bool(uses.kernels) == (uses.rule not in ("none", "independent")), name
    used = {k for uses in function_table().values() for k in uses.kernels}
    assert used == set(ALL_KERNEL_NAMES), f"kernels no function uses: {set(ALL_KERNEL_NAMES) - used}"


def test_the_elementwise_rows_are_the_elementwise_table():
    from arraylayer.api.elementwise import BINARY, UNARY

    table = function_table()
    for name, spec in {**UNARY, **BINARY}.items():
        assert table[name].kinds == spec.kinds
        assert table[name].kernels == (name,)
        assert table[name].rule == {"inexact": "inexact", "logical": "logical"}.get(spec.rule, "same")


def test_names_and_objects():
    assert function_name(al.add) == function_name("add") == "add"
    assert function_name(al.linalg.det) == function_name("linalg.det") == "linalg.det"
    assert function_name("arraylayer.linalg.det") == "linalg.det"
    assert function_name(al.linalg.matmul) == function_name("linalg.matmul") == "matmul"
    with pytest.raises(ValueError, match="Did you mean 'linalg.det'"):
        function_name("linalg.dett")
    with pytest.raises(ValueError, match="not a public arraylayer function"):
        function_name(np.add)


def test_kernel_domains():
    assert kernel_domain("sqrt") == tuple(map(al.Dtype, FLOATS + ("complex64", "complex128")))
    assert kernel_domain("logical_and") == (al.bool,)
    assert kernel_domain("bitwise_and") == (al.bool, *map(al.Dtype, INTS))
    assert kernel_domain("sum") == al.all_dtypes  # any dtype= accumulator
    assert kernel_domain("linspace") == tuple(map(al.Dtype, FLOATS + ("complex64", "complex128")))


# -- the queries --------------------------------------------------------------------------------
def test_answers_are_cached_tuples_of_dtypes(backend):
    supported = al.function_supported_dtypes("add", backend)
    assert isinstance(supported, tuple) and all(type(d) is al.Dtype for d in supported)
    assert al.function_supported_dtypes("add", backend) is supported
    assert al.function_supported_dtypes(al.add, backend) is supported
    unsupported = al.function_unsupported_dtypes(al.linalg.det, backend)
    assert al.function_unsupported_dtypes("linalg.det", backend) is unsupported


def test_supported_and_unsupported_partition_the_dtypes(backend):
    for name in support.matrix_functions():
        supported = al.function_supported_dtypes(name, backend)
        unsupported = al.function_unsupported_dtypes(name, backend)
        assert not set(supported) & set(unsupported), name
        assert tuple(d for d in al.all_dtypes if d in supported or d in unsupported) == al.all_dtypes, name


def test_invalid_dtypes_are_never_supported(backend):
    valid = al.get_backend(backend).valid_dtypes()
    for name in ("add", "zeros", "astype", "sum", "linalg.det"):
        assert set(al.function_supported_dtypes(name, backend)) <= set(valid)


def test_the_array_api_definition_comes_first(backend):
    floating = set(map(al.Dtype, FLOATS + ("complex64", "complex128")))
    assert not set(al.function_supported_dtypes("bitwise_and", backend)) & floating
    assert set(al.function_supported_dtypes("signbit", backend)) <= set(al.all_float_dtypes)
    assert "complex64" not in al.function_supported_dtypes("argmax", backend)
    assert "bool" not in al.function_supported_dtypes("linalg.matrix_power", backend)
    assert set(al.function_supported_dtypes("linspace", backend)) <= floating


def test_dtype_independent_functions_support_every_valid_dtype(backend):
    valid = al.get_backend(backend).valid_dtypes()
    for name in ("promote_types", "set_backend", "function_supported_dtypes", "astype"):
        assert al.function_supported_dtypes(name, backend) == valid


def test_the_active_backend_answers_by_default(backend):
    with al.use_backend(backend):
        assert al.function_supported_dtypes("sqrt") is al.function_supported_dtypes("sqrt", backend)


def test_jax_64_bit_dtypes_follow_x64(x64_off):
    with_x64_off = al.function_unsupported_dtypes("add", "jax")
    assert {"int64", "uint64", "float64", "complex128"} <= set(with_x64_off)
    assert support.dtype_support("add", "jax")[al.Dtype("float64")].status == "invalid"
    import jax

    jax.config.update("jax_enable_x64", True)
    assert support.dtype_support("add", "jax")[al.Dtype("float64")].status != "invalid"
    assert al.function_unsupported_dtypes("add", "jax") is not with_x64_off  # another answer, cached apart


def test_accumulator_dtypes_decide_sum():
    """sum(uint8) accumulates in the default uint: uint32, which torch 2.13 computes in int64
    (COMPUTES_AS), so uint8 and uint32 are supported there; uint64 is stored only, and its sum
    computes that accumulator in int64 (COMPUTES_STORED) while add has no such route."""
    pytest.importorskip("torch")
    torch_backend = al.get_backend("torch")
    if al.Dtype("uint32") not in torch_backend.computes_as:
        pytest.skip(f"torch {torch_backend.version} has no declared int64 route for uint32")
    assert al.Dtype("uint32") in torch_backend.valid_dtypes()
    assert {"uint8", "uint16", "uint32"} <= set(al.function_supported_dtypes("sum", "torch"))
    assert {"uint16", "uint32"} <= set(al.function_supported_dtypes("add", "torch"))
    assert support.dtype_support("sum", "torch")[al.uint8].status == "supported"
    assert al.Dtype("uint64") not in torch_backend.valid_dtypes()  # stored only, the case at hand
    assert al.Dtype("uint64") not in support.kernel_unsupported_dtypes(torch_backend, "sum")
    assert al.Dtype("uint64") in support.kernel_unsupported_dtypes(torch_backend, "add")
    with al.use_default_uint_dtype("uint8"):
        assert "uint8" in al.function_supported_dtypes("sum", "torch")


def test_integer_inputs_follow_the_default_float_kernel(numpy_backend, declare):
    declare(numpy_backend, "sqrt", {">=1": ("float32",)})
    unsupported = al.function_unsupported_dtypes("sqrt", numpy_backend)
    assert set(unsupported) == {al.float32, al.bool, *map(al.Dtype, INTS)}
    with al.use_default_float_dtype("float64"):
        assert set(al.function_unsupported_dtypes("sqrt", numpy_backend)) == {al.float32}
    cell = support.dtype_support("sqrt", numpy_backend)[al.int8]
    assert cell.status == "unsupported" and "computes int8 input in float32" in cell.why


def test_supported_declarations_restrict_functions(numpy_backend, declare):
    declare(numpy_backend, "sort", {">=2": ("integer", "float32")}, kind="supported")
    assert al.function_supported_dtypes("sort", numpy_backend) == (
        *map(al.Dtype, INTS), al.float32)
    assert al.function_unsupported_dtypes("sort", numpy_backend)[:1] == (al.bool,)


def test_an_uncovered_version_is_said_once_and_shown_as_unverified(numpy_backend, declare):
    declare(numpy_backend, "det", {"<1": ("float16",)})
    with pytest.warns(al.UnverifiedVersionWarning, match=rf"numpy kernel 'det': version {numpy_backend.version}"):
        supported = al.function_supported_dtypes("linalg.det", numpy_backend)
    assert "float16" in supported  # unverified, not mapped to the "<1" entry
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert al.function_supported_dtypes("linalg.det", numpy_backend) is supported
    assert support.dtype_support("linalg.det", numpy_backend)[al.float16].status == "unverified"
    assert support.declaration_status(numpy_backend, "det") == ("unverified", None)


# -- the error, before the framework is called --------------------------------------------------
def test_an_unsupported_dtype_raises_before_the_framework_is_called(declare, monkeypatch):
    numpy_backend = al.get_backend("numpy")
    calls = []
    monkeypatch.setitem(numpy_backend.kernels, "det", lambda *a, **k: calls.append(a))
    declare(numpy_backend, "det", {f">={numpy_backend.version}": ("float16",)})
    x = np.eye(2, dtype=np.float16)
    with pytest.raises(al.UnsupportedDtypeError) as caught:
        al.linalg.det(x)
    message = str(caught.value)
    for part in ("det", "float16", "numpy", numpy_backend.version):
        assert part in message
    assert not calls
    assert "float16" in al.function_unsupported_dtypes("linalg.det")
    al.linalg.det(np.eye(2, dtype=np.float32))  # other dtypes still reach the kernel
    assert len(calls) == 1


def test_integer_input_raises_when_the_default_float_kernel_is_missing(declare, monkeypatch):
    numpy_backend = al.get_backend("numpy")
    calls = []
    monkeypatch.setitem(numpy_backend.kernels, "sqrt", lambda x: calls.append(x))
    declare(numpy_backend, "sqrt", {">=1": ("float32",)})
    with pytest.raises(al.UnsupportedDtypeError, match="sqrt has no float32 kernel on the numpy backend"):
        al.sqrt(np.arange(3, dtype=np.int8))
    assert not calls
    assert "int8" in al.function_unsupported_dtypes(al.sqrt)


# -- the matrix ---------------------------------------------------------------------------------
def test_matrix_rows_and_cells(backend):
    matrix = support.support_matrix(backend)
    assert [name for name, _ in matrix.rows] == list(support.matrix_functions())
    for name, cells in matrix.rows:
        assert tuple(d for d, c in zip(matrix.dtypes, cells, strict=True) if c.supported) == \
            al.function_supported_dtypes(name, backend)
    assert matrix.cell("bitwise_and", "float32").status == "undefined"


def test_text_matrix_has_aligned_columns():
    matrix = support.support_matrix("numpy", ["add", "linalg.det", "bitwise_and", "signbit"])
    text = support.render_matrix(matrix, "text")
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["b1", "i1"])
    table = lines[header: header + 5]
    assert len({len(line) for line in table}) == 1
    marks = dict((line.split()[0], line.split()[1:]) for line in table[1:])
    assert marks["add"] == ["+"] * 15
    assert marks["bitwise_and"][:9] == ["+"] * 9 and set(marks["bitwise_and"][9:]) == {"-"}
    assert "undefined" not in text and "not defined for this kind" in text


def test_markdown_and_html_matrices():
    matrix = support.support_matrix("numpy", ["add", "signbit", "linalg.det"])
    markdown = support.render_matrix(matrix, "markdown")
    rows = [line for line in markdown.splitlines() if line.startswith("| `")]
    assert len(rows) == 3 and all(row.count("|") == 17 for row in rows)

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.cells = []

        def handle_starttag(self, tag, attrs):
            if tag == "td":
                self.cells.append(dict(attrs))

    parser = Cells()
    parser.feed(support.render_matrix(matrix, "html"))
    assert len(parser.cells) == 3 * 15
    # signbit: defined for real floats only; linalg.det: no float16/bfloat16 kernel (declared)
    assert {c["class"] for c in parser.cells} == {"supported", "undefined", "unsupported"}
    assert any(re.search("defined for real floating-point input only", c["title"]) for c in parser.cells)
    with pytest.raises(ValueError, match="unknown matrix format"):
        support.render_matrix(matrix, "rst")


# -- the low-precision cells (arraylayer/support/lowp.py; the calls: test_lowp_compute.py, probe_low_precision)

def _statuses(fn, backend, *names):
    cells = support.low_precision_support(fn, backend)
    return [cells[al.Dtype(n)].status for n in names]


def test_low_precision_cells_tell_computation_from_storage():
    names = ("float8_e4m3fn", "int4", "float6_e2m3fn")
    assert _statuses("add", "numpy", *names) == ["supported"] * 3
    assert _statuses("sort", "numpy", *names) == ["supported"] * 3
    assert _statuses("isin", "numpy", *names) == ["supported"] * 3  # composed of equal, any
    assert _statuses("matmul", "numpy", *names) == ["unsupported"] * 3  # stored only: refused everywhere
    assert _statuses("bitwise_and", "numpy", *names) == ["undefined", "supported", "undefined"]
    assert _statuses("nanmean", "numpy", *names) == ["unsupported", "supported", "unsupported"]
    assert _statuses("zeros", "numpy", *names) == ["supported"] * 3
    assert _statuses("add", "torch", *names) == ["supported", "invalid", "invalid"]
    assert _statuses("matmul", "tensorflow", *names) == ["unsupported", "invalid", "invalid"]
    # the why is the error's message, fix included
    assert "lowp.scaled_matmul" in support.low_precision_support("matmul", "numpy")[al.float8_e4m3fn].why
    assert "exact" in support.low_precision_support("argmax", "numpy")[al.float8_e5m2].why


def test_low_precision_cells_outside_the_measured_versions_are_unverified(monkeypatch):
    from arraylayer.support import lowp

    monkeypatch.setitem(lowp.MEASURED, "numpy", "<1.0")
    cells = support.low_precision_support("add", "numpy")
    assert {c.status for c in cells.values()} == {"unverified"}
    assert "run `arraylayer probe`" in cells[al.int4].why
    assert al.int4 in al.function_supported_dtypes("add", "numpy", low_precision=True)  # unverified: as far as known


def test_supported_dtype_queries_add_the_low_precision_dtypes_on_request(backend):
    held = al.get_backend(backend).low_precision_dtypes()
    standard = al.function_supported_dtypes("sort", backend)
    assert not any(d.is_low_precision for d in standard)
    with_lowp = al.function_supported_dtypes("sort", backend, low_precision=True)
    assert with_lowp[:len(standard)] == standard and set(with_lowp[len(standard):]) == set(held)
    refused = al.function_unsupported_dtypes("matmul", backend, low_precision=True)
    assert set(al.all_low_precision_dtypes) <= set(refused)


def test_the_matrix_shows_the_low_precision_columns_on_request():
    matrix = support.support_matrix("torch", ["add", "matmul"], low_precision=True)
    assert matrix.dtypes[15:] == al.all_low_precision_dtypes
    assert matrix.cell("add", "float8_e4m3fn").status == "supported"
    assert matrix.cell("matmul", "float8_e4m3fn").status == "unsupported"
    assert matrix.cell("add", "int4").status == "invalid"
    text = support.render_matrix(matrix, "text")
    header = next(line for line in text.splitlines() if line.split()[:2] == ["b1", "i1"])
    assert header.split()[15:] == ["e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz", "e4m3b11fnuz", "e4m3", "e3m4",
                                   "e8m0fnu", "f6e2m3fn", "f6e3m2fn", "f4e2m1fn", "int4", "uint4", "int2", "uint2",
                                   "int1", "uint1"]
    rows = {line.split()[0]: line.split()[1:] for line in text.splitlines() if line.startswith(("add ", "matmul "))}
    assert rows["add"][15:] == ["+"] * 4 + ["."] * 3 + ["+"] + ["."] * 9
    assert rows["matmul"][15:] == ["x"] * 4 + ["."] * 3 + ["x"] + ["."] * 9
    assert len(support.support_matrix("torch", ["add"]).dtypes) == 15  # the default leaves them out
