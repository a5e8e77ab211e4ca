"""The closed Array namespace of each backend (arraylayer.xp.arrays.<backend>): Arrays in, Arrays
out, creation on the namespace's backend, the namespace's dtypes are Array.dtype's objects,
__array_namespace_info__ tells the truth, device= takes the frameworks' own device objects."""

from __future__ import annotations

import importlib
import inspect
import warnings

import array_api_compat
import numpy as np
import pytest

import arraylayer as al
from arraylayer import Array


def namespace(backend):
    return importlib.import_module(f"arraylayer.xp.arrays.{backend}")


def is_array_of(value, xp):
    return type(value) is Array and value.__array_namespace__() is xp


# One call per function of the namespace, on a small float32 matrix ``a`` (and ``v``, a vector).
# Functions missing here are listed in NOT_CALLED with the reason; the closure test fails on any
# other function, so a function added to arraylayer.api is either called here or named.
def _calls(xp):
    a = xp.asarray([[1.0, 2.0], [3.0, 4.5]], dtype=xp.float32)
    v = xp.asarray([3.0, 1.0, 2.0], dtype=xp.float32)
    i = xp.asarray([2, 0, 1], dtype=xp.int32)
    b = xp.asarray([True, False, True])
    unary = {name: (a,) for name in (
        "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "conj", "cos", "cosh", "exp", "expm1",
        "floor", "imag", "isfinite", "isinf", "isnan", "log", "log1p", "log2", "log10", "logical_not",
        "negative", "positive", "real", "reciprocal", "round", "sign", "signbit", "sin", "sinh", "sqrt",
        "square", "tan", "tanh", "trunc", "all", "any", "max", "min", "mean", "prod", "std", "sum", "var",
        "argmax", "argmin", "nonzero", "argsort", "sort", "unique_all", "unique_counts", "unique_inverse",
        "unique_values", "matrix_transpose", "flip", "squeeze", "cumulative_sum", "cumulative_prod",
        "zeros_like", "ones_like", "empty_like", "tril", "triu", "diff", "count_nonzero",
    )}
    unary.update({name: (a, a) for name in (
        "add", "atan2", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal", "hypot",
        "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor", "maximum", "minimum",
        "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract", "matmul", "vecdot",
        "broadcast_arrays",
    )})
    unary.update({name: (i, i) for name in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")})
    kwargs = {"squeeze": {"axis": 0}, "cumulative_sum": {"axis": 0}, "cumulative_prod": {"axis": 0},
              "diff": {"axis": 0}, "bincount": {"length": 3}}
    squeezable = xp.asarray([[1.0, 2.0]], dtype=xp.float32)
    other = {
        "bitwise_invert": (i,), "clip": (a, 1.5, 3.0), "astype": (a, xp.int32), "full_like": (a, 2.0),
        "concat": ([a, a],), "stack": ([a, a],), "hstack": ([a, a],), "vstack": ([a, a],), "dstack": ([a, a],),
        "swapaxes": (a, 0, 1), "reshape": (a, (4,)), "permute_dims": (a, (1, 0)),
        "expand_dims": (a,), "roll": (a, 1), "pad": (a, 1), "quantile": (a, 0.5), "nanquantile": (a, [0.2, 0.8]),
        "moveaxis": (a, 0, 1), "repeat": (v, 2), "tile": (v, (2,)), "sliding_window_view": (v, 2),
        "unstack": (a,), "broadcast_to": (v, (2, 3)), "where": (b, v, 0.0), "take": (v, i),
        "take_along_axis": (v, i), "searchsorted": (xp.sort(v), v), "tensordot": (a, a),
        "meshgrid": (v, v), "isin": (v, v), "broadcast_shapes": ((2, 1), (3,)),
        "from_dlpack": (a,), "asarray": ([1, 2],), "arange": (3,), "empty": ((2,),), "eye": (2,),
        "full": ((2,), 1.0), "linspace": (0.0, 1.0, 3), "logspace": (0.0, 1.0, 3),
        "percentile": (a, 50.0), "nanpercentile": (a, [10.0, 90.0]), "bincount": (i,), "digitize": (v, xp.sort(v)),
        "correlate": (v, v), "histogram": (v,), "ones": ((2,),), "zeros": ((2,),),
    }
    other.update({name: (a, 2) for name in ("split", "array_split", "hsplit", "vsplit")})
    other.update({"dsplit": (xp.reshape(a, (1, 2, 2)), 2), "select": ([b], [v]), "argpartition": (v, 1),
                  "unravel_index": (i, (2, 3)), "ldexp": (a, 2), "gcd": (i, i), "lcm": (i, i),
                  "geomspace": (1.0, 4.0, 3), "vander": (v,), "kaiser": (4, 2.0)})
    other["squeeze"] = (squeezable,)
    return {**unary, **other}, kwargs


# Functions that return no array (dtypes, Python values, info objects).
NOT_ARRAYS = frozenset({"can_cast", "finfo", "iinfo", "isdtype", "result_type", "broadcast_shapes"})


def _public_functions(module):
    return {name: value for name, value in vars(module).items()
            if callable(value) and not name.startswith("_") and not isinstance(value, type)}


def _items_of(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _generic_call(function, xp):
    """A call of a function without a listed case: the first argument list it takes, of a float
    matrix (symmetric positive definite, for linalg), a complex vector (fft), or a length; None
    when it takes none of them."""
    a = xp.asarray([[2.0, 1.0], [1.0, 3.0]], dtype=xp.float32)
    c = xp.asarray([1.0, 2.0j, -1.0, 0.5], dtype=xp.complex64)
    for args in ((a,), (c,), (a, a), (4,)):
        try:
            return function(*args)
        except (TypeError, ValueError, al.ArrayLayerError):
            continue
    return None


def test_every_function_returns_arrays_for_arrays(backend):
    xp = namespace(backend)
    calls, kwargs = _calls(xp)
    failures, uncalled = [], []
    for name in sorted(set(_public_functions(xp)) - set(calls) - NOT_ARRAYS):  # added later (2025.12 ...)
        result = _generic_call(getattr(xp, name), xp)
        if result is None:
            uncalled.append(name)
        elif not all(is_array_of(item, xp) for item in _items_of(result)):
            failures.append((name, [type(item).__name__ for item in _items_of(result)]))
    assert not uncalled, f"functions of the namespace without a closure case: {uncalled}"
    for name, args in calls.items():
        function = getattr(xp, name, None)
        if function is None:  # a function of a newer revision, not (yet) in arraylayer.api
            continue
        try:
            result = function(*args, **kwargs.get(name, {}))
        except al.UnsupportedDtypeError:  # a dtype this backend lacks for the function: not closure's business
            continue
        if name in NOT_ARRAYS:
            continue
        items = _items_of(result)
        if not items or not all(is_array_of(item, xp) for item in items):
            failures.append((name, [type(item).__name__ for item in items]))
    assert not failures


def test_extensions_return_arrays(backend):
    """linalg, and fft where arraylayer.api has it: every function, Arrays out."""
    xp = namespace(backend)
    for extension in ("linalg", "fft"):
        module = getattr(xp, extension, None)
        if module is None:
            continue
        for name in module.__all__:
            result = _generic_call(getattr(module, name), xp)
            if result is None:
                continue  # needs arguments of its own: the named cases below cover linalg
            assert all(is_array_of(item, xp) for item in _items_of(result)), (extension, name)


def test_linalg_returns_arrays(backend):
    xp = namespace(backend)
    a = xp.asarray([[2.0, 1.0], [1.0, 3.0]], dtype=xp.float32)
    for name in ("inv", "det", "cholesky", "eigh", "eigvalsh", "qr", "svd", "svdvals", "slogdet",
                 "matrix_norm", "vector_norm", "trace", "diagonal", "matrix_rank", "pinv", "outer", "cross"):
        function = getattr(xp.linalg, name)
        args = {"outer": (a[0], a[1]), "cross": (xp.asarray([1.0, 0.0, 0.0]), xp.asarray([0.0, 1.0, 0.0]))}
        try:
            result = function(*args.get(name, (a,)))
        except al.UnsupportedDtypeError:
            continue
        items = list(result) if isinstance(result, tuple) else [result]
        assert all(is_array_of(item, xp) for item in items), name


def test_reductions_give_0d_arrays(backend):
    xp = namespace(backend)
    a = xp.asarray([1.0, 2.0, 4.0], dtype=xp.float32)
    for reduce in (xp.sum, xp.mean, xp.max, xp.prod, xp.std):
        result = reduce(a)
        assert is_array_of(result, xp) and result.shape == () and result.dtype is xp.float32
        assert not isinstance(result.native, np.generic)  # a 0-d array, never a NumPy scalar
    assert float(xp.sum(a)) == 7.0 and float(xp.mean(a)) == pytest.approx(7 / 3)


@pytest.mark.parametrize("active", ["numpy", "torch"])
def test_creation_makes_arrays_of_the_namespace_backend(backend, active):
    if active not in al.installed_backends():
        pytest.skip(f"{active} is not installed")
    xp = namespace(backend)
    with al.use_backend(active):
        for made in (xp.zeros(2), xp.ones((2,), dtype=xp.int8), xp.arange(3), xp.eye(2), xp.full(2, 1.5),
                     xp.linspace(0, 1, 3), xp.empty(2), xp.asarray([1, 2]), xp.asarray(3.5)):
            assert is_array_of(made, xp)
        assert xp.ones((2,), dtype=xp.int8).dtype is xp.int8


def test_asarray_moves_arrays_of_other_backends(backend):
    xp = namespace(backend)
    source = np.array([1.5, -2.0, 0.25], np.float32)
    import arraylayer.xp.arrays.numpy as numpy_namespace

    for given in (source, Array(source), numpy_namespace.asarray(source)):
        moved = xp.asarray(given)
        assert is_array_of(moved, xp) and moved.dtype is xp.float32
        assert np.asarray(moved).tolist() == source.tolist()
    native = al.get_backend(backend).asarray([1, 2], al.int16)
    assert xp.asarray(native).native is native  # the backend's own array: no copy, just wrapped
    assert xp.asarray(source, dtype=xp.int16).dtype is xp.int16


def test_asarray_without_copy_keeps_the_array(backend):
    """asarray(A) (copy None or False, nothing to convert) is A itself, so that later item
    assignment on A is seen through the result on every backend, JAX and TensorFlow included
    (their Arrays rebind on assignment); copy=True and a conversion give a new Array."""
    xp = namespace(backend)
    a = xp.asarray([1, 2, 3], dtype=xp.int16)
    for kw in ({}, {"copy": False}, {"copy": None, "dtype": xp.int16, "device": a.device}):
        assert xp.asarray(a, **kw) is a
    alias = xp.asarray(a, copy=False)
    a[0] = 7
    assert int(alias[0]) == 7
    copied = xp.asarray(a, copy=True)
    a[1] = 9
    assert np.asarray(copied).tolist() == [7, 2, 3]
    assert xp.asarray(a, dtype=xp.int32).dtype is xp.int32


def test_asarray_of_nested_sequences_of_0d_arrays(backend):
    """The conformance suite builds expected values so: asarray([[a[i, j] ...] ...], dtype=a.dtype)."""
    xp = namespace(backend)
    a = xp.asarray([[1.0, 2.0], [3.0, 4.5]], dtype=xp.float32)
    transposed = xp.asarray([[a[i, j] for i in range(2)] for j in range(2)], dtype=a.dtype)
    assert is_array_of(transposed, xp) and transposed.dtype is xp.float32
    assert np.asarray(transposed).tolist() == [[1.0, 3.0], [2.0, 4.5]]
    assert xp.asarray([xp.asarray(1, dtype=xp.int8), 2]).dtype is xp.int8


def test_natives_and_python_scalars_are_accepted(backend):
    xp = namespace(backend)
    native = al.get_backend(backend).asarray([1.0, 2.0], al.float32)
    assert is_array_of(xp.add(native, 1.0), xp)
    assert is_array_of(xp.multiply(2, xp.asarray([1, 2])), xp)
    total = xp.add(xp.asarray([1, 2], dtype=xp.int8), native)
    assert total.dtype is xp.float32 and np.asarray(total).tolist() == [2.0, 4.0]


def test_dtype_attributes_are_array_dtypes(backend):
    xp = namespace(backend)
    native_backend = al.get_backend(backend)
    valid = native_backend.valid_dtypes()
    for dtype in valid:
        attribute = getattr(xp, str(dtype))
        made = xp.zeros(1, dtype=attribute)
        assert made.dtype is attribute and made.dtype == attribute and hash(made.dtype) == hash(attribute)
        assert {attribute: "here"}[made.dtype] == "here"
        assert xp.isdtype(made.dtype, attribute)
    assert {str(d) for d in valid} == {str(d) for d in al.all_dtypes if hasattr(xp, str(d))}
    x = xp.asarray([1.0], dtype=xp.float32)
    assert xp.result_type(x, xp.int8) is xp.float32
    assert xp.finfo(x.dtype).dtype == xp.float32 and xp.finfo(xp.float32).dtype == x.dtype
    assert xp.iinfo(xp.int8).dtype == xp.int8
    assert xp.isdtype(x.dtype, "real floating") and not xp.isdtype(x.dtype, "integral")
    assert xp.astype(x, xp.int16).dtype is xp.int16


def test_info_tells_the_truth(backend):
    xp = namespace(backend)
    b = al.get_backend(backend)
    info = xp.__array_namespace_info__()
    dtypes = info.dtypes()
    standard = [d for d in b.valid_dtypes() if d not in ("bfloat16", "float16")]  # attributes, not the standard's
    assert set(dtypes) == {str(d) for d in standard}
    assert all(dtypes[name] is getattr(xp, name) for name in dtypes)
    assert all(hasattr(xp, name) == (name in b.valid_dtypes()) for name in ("bfloat16", "float16"))
    assert set(info.dtypes(kind="real floating")) == {str(d) for d in standard if d.category == "float"}
    assert set(info.dtypes(kind="integral")) == {str(d) for d in b.valid_dtypes() if d.category in ("int", "uint")}
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {
        str(d) for d in b.valid_dtypes() if d.category in ("bool", "complex")}
    for kind, dtype in info.default_dtypes().items():
        assert dtype is getattr(xp, str(dtype)), kind
        assert xp.zeros(1, dtype=dtype).dtype is dtype
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32",
                 "float64", "complex64", "complex128"):  # listed means it can be made; unlisted, refused
        if name in dtypes:
            assert xp.zeros(1, dtype=dtypes[name]).dtype is dtypes[name]
        else:
            with pytest.raises(al.UnsupportedDtypeError):
                xp.zeros(1, dtype=name)
    assert xp.asarray(1.5).dtype is info.default_dtypes()["real floating"]
    assert xp.arange(3).dtype is info.default_dtypes()["integral"]
    assert info.devices() == tuple(b.devices())
    assert info.default_device() in info.devices()
    x = xp.zeros(2)
    assert info.dtypes(device=x.device) == dtypes
    caps = info.capabilities()
    assert set(caps) >= {"boolean indexing", "data-dependent shapes"}


def _native_devices(backend):
    """The framework's own objects for its CPU device."""
    b = al.get_backend(backend)
    if backend == "torch":
        return [b.module.device("cpu"), b.module.device("cpu", 0)]
    if backend == "jax":
        return [b.module.devices("cpu")[0]]
    if backend == "tensorflow":
        return ["/device:CPU:0", "/job:localhost/replica:0/task:0/device:CPU:0"]
    return ["cpu"]


def test_device_accepts_framework_devices_and_x_device(backend):
    xp = namespace(backend)
    x = xp.ones(2)
    for device in [*_native_devices(backend), x.device, "cpu"]:
        for made in (xp.zeros(2, device=device), xp.asarray([1.0], device=device), xp.arange(2, device=device),
                     xp.zeros_like(x, device=device), x.to_device(device)):
            assert is_array_of(made, xp) and made.device == "cpu"
        assert xp.__array_namespace_info__().dtypes(device=device)
    with pytest.raises(al.DeviceError, match="gpu:0"):
        xp.zeros(2, device="cuda:0")


def test_array_api_compat_resolves_to_the_namespace(backend):
    xp = namespace(backend)
    x = xp.asarray([1.0, 2.0])
    assert array_api_compat.array_namespace(x) is xp
    assert array_api_compat.array_namespace(x, xp.asarray([3.0])) is xp
    assert x.__array_namespace__(api_version="2023.12") is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    assert xp.__array_api_version__ == al.__array_api_version__


def test_native_namespaces_are_unchanged(backend):
    native_xp = importlib.import_module(f"arraylayer.xp.{backend}")
    b = al.get_backend(backend)
    made = native_xp.zeros(2, dtype=native_xp.float32)
    assert isinstance(made, b.array_types) and type(made) is not Array
    assert isinstance(al.add(made, 1), b.array_types)


def test_functions_are_generated_with_the_signature(backend):
    """Each function keeps its arraylayer signature (keywords work, positional-only stays so)."""
    xp = namespace(backend)
    assert list(inspect.signature(xp.sum).parameters) == ["x", "axis", "dtype", "keepdims"]
    assert xp.sum(xp.asarray([[1, 2], [3, 4]]), axis=0, keepdims=True).shape == (1, 2)
    with pytest.raises(TypeError):
        xp.add(x1=xp.asarray(1), x2=xp.asarray(2))


# -- 64-bit dtypes on JAX without jax_enable_x64 ------------------------------------------------------
_NARROWED = {"int64": "int32", "uint64": "uint32", "float64": "float32", "complex128": "complex64"}


@pytest.fixture
def narrowing_warning_reset():
    """The one-time narrowing warning made due again, and narrow_64bit's process value restored."""
    from arraylayer.backends.jax import JaxBackend
    from arraylayer.context import NARROW_64BIT

    saved = NARROW_64BIT.process
    JaxBackend._warned_narrowing = False
    yield
    NARROW_64BIT.process = saved


def test_jax_without_x64_refuses_64bit_by_default(x64_off):
    xp = namespace("jax")
    assert not any(hasattr(xp, name) for name in _NARROWED)
    assert not set(_NARROWED) & set(xp.__array_namespace_info__().dtypes())
    with pytest.raises(al.UnsupportedDtypeError, match="set_narrow_64bit"):
        xp.zeros(2, dtype="float64")
    with pytest.raises(AttributeError, match="jax_enable_x64"):
        xp.float64  # noqa: B018


def test_jax_narrowing_serves_32bit_and_warns_once(x64_off, narrowing_warning_reset):
    xp = namespace("jax")
    with al.use_narrow_64bit():
        with pytest.warns(UserWarning, match="float64 is served as float32"):
            made = xp.zeros(2, dtype="float64")
        assert made.dtype is xp.float32
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once per process: no second warning
            for wide, narrow in _NARROWED.items():
                assert getattr(xp, wide) is getattr(xp, narrow)
                assert xp.asarray([1, 0], dtype=wide).dtype is getattr(xp, narrow)
                assert xp.astype(xp.asarray([1, 0]), getattr(xp, wide)).dtype is getattr(xp, narrow)
            assert xp.sum(xp.asarray([1, 2], dtype=xp.int8), dtype=xp.int64).dtype is xp.int32
            assert xp.asarray(np.ones(2)).dtype is xp.float32  # a NumPy float64 array comes over as float32
        # info still tells what JAX holds: no 64-bit dtype
        assert not set(_NARROWED) & set(xp.__array_namespace_info__().dtypes())
    with pytest.raises(al.UnsupportedDtypeError):  # the scope is over: refused again
        xp.zeros(2, dtype="float64")
    al.set_narrow_64bit(True)
    assert al.narrow_64bit() and xp.ones(1, dtype="int64").dtype is xp.int32
    al.set_narrow_64bit(False)
    with pytest.raises(TypeError, match="True or False"):
        al.set_narrow_64bit("yes")


def test_jax_with_x64_holds_64bit_whatever_the_setting(x64_on, narrowing_warning_reset):
    xp = namespace("jax")
    with al.use_narrow_64bit():
        for wide in _NARROWED:
            assert getattr(xp, wide) == wide and xp.zeros(1, dtype=wide).dtype is getattr(xp, wide)
        assert set(_NARROWED) <= set(xp.__array_namespace_info__().dtypes())


def test_narrowing_leaves_backends_that_hold_64bit_alone(backend, narrowing_warning_reset):
    if backend == "jax":
        pytest.skip("JAX's 64-bit dtypes depend on jax_enable_x64: the tests above")
    xp = namespace(backend)
    held = [name for name in _NARROWED if hasattr(xp, name)]
    assert "float64" in held and "int64" in held
    with al.use_narrow_64bit(), warnings.catch_warnings():
        warnings.simplefilter("error")
        for name in held:
            assert xp.zeros(1, dtype=name).dtype is getattr(xp, name) == name


def test_namespace_functions_trace_under_the_compilers(backend):
    """xp functions and Array operators inside jax.jit, tf.function, torch.compile(fullgraph=True)."""
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler")
    from test_compile_and_grad import compiler

    xp = namespace(backend)

    def f(a, b):
        return xp.sum(xp.add(a, b) * 2.0, axis=0), xp.matmul(a, b) - a

    a = xp.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=xp.float32)
    eager = f(a, a)  # warm: the first call on a backend's arrays plans outside the trace
    compiled = compiler(backend)(f)(a, a)
    for got, want in zip(compiled, eager, strict=True):
        assert is_array_of(got, xp) and got.dtype is want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))
