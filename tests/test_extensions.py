"""Beyond the standard (arraylayer/api/extensions.py): NaN-aware reductions, ``pad``,
``round(x, decimals)``, ``quantile``/``nanquantile`` and ``Array.real``/``.imag`` on every backend, against NumPy's values, with
arraylayer's dtypes, lazily on dask, and with no warning for all-NaN slices."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_array
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import dtype_name, to_numpy

import arraylayer as al

REDUCTIONS = ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nanmin", "nanmax")
ARG_REDUCTIONS = ("nanargmin", "nanargmax")
CUMULATIVE = ("nancumsum", "nancumprod")

#: a 3x4 float64 matrix with NaNs: a whole NaN row, a whole NaN column, a row without NaN
DATA = np.array([[1.5, np.nan, -2.0, 4.0], [np.nan, np.nan, np.nan, np.nan], [0.5, np.nan, 3.0, -1.0]])


def _numpy(name, host, *args, **kwargs):
    """NumPy's value (its all-NaN warnings silenced; arraylayer gives the same values silently)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if "correction" in kwargs:
            kwargs["ddof"] = kwargs.pop("correction")
        return getattr(np, name)(host, *args, **kwargs)


def _close(backend, got, want, what, rtol=1e-6):
    np.testing.assert_allclose(to_numpy(backend, got).astype(np.float64), np.asarray(want, np.float64), rtol=rtol,
                               atol=1e-12, equal_nan=True, err_msg=what)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_reductions_give_numpys_values_silently(backend, name, axis, keepdims):
    x = make_array(backend, "float64" if backend != "jax" else "float32", DATA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(al, name)(x, axis=axis, keepdims=keepdims)
        values = to_numpy(backend, got)
    assert dtype_name(backend, got) == dtype_name(backend, x)
    np.testing.assert_allclose(values, _numpy(name, DATA, axis=axis, keepdims=keepdims), rtol=1e-6, equal_nan=True,
                               err_msg=f"{name} axis={axis} keepdims={keepdims}")


@pytest.mark.parametrize("name", ARG_REDUCTIONS)
def test_nan_arg_reductions_skip_nans_and_give_minus_one_for_all_nan(backend, name):
    x = make_array(backend, "float32", DATA)
    along_rows = getattr(al, name)(x, axis=1)
    want = [_numpy(name, row) if not np.isnan(row).all() else -1 for row in DATA]
    np.testing.assert_array_equal(to_numpy(backend, along_rows), want)
    assert dtype_name(backend, along_rows) == str(al.default_int_dtype())
    np.testing.assert_array_equal(to_numpy(backend, getattr(al, name)(x)), _numpy(name, DATA))


@pytest.mark.parametrize("name", CUMULATIVE)
def test_nan_cumulative_functions(backend, name):
    x = make_array(backend, "float32", DATA)
    got = getattr(al, name)(x, axis=1, include_initial=True)
    want = _numpy(name, DATA, axis=1)
    want = np.concatenate([np.full((3, 1), 0.0 if name == "nancumsum" else 1.0), want], axis=1)
    _close(backend, got, want, name)
    assert dtype_name(backend, got) == "float32"
    with pytest.raises(al.InvalidArgumentError, match=name):
        getattr(al, name)(x)  # 2-d: axis= is needed, as for cumulative_sum


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "bool"])
def test_integer_input_follows_the_standards_dtype_rules(backend, dtype):
    host = np.array([[1, 0, 1], [1, 1, 0]], dtype=dtype)
    x = make_array(backend, dtype, host)
    for nan_name, name in (("nansum", "sum"), ("nanprod", "prod"), ("nanmean", "mean"), ("nanmax", "max")):
        got, plain = getattr(al, nan_name)(x, axis=0), getattr(al, name)(x, axis=0)
        assert dtype_name(backend, got) == dtype_name(backend, plain), (nan_name, dtype)
        np.testing.assert_array_equal(to_numpy(backend, got), to_numpy(backend, plain))


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.lists(st.one_of(st.just(float("nan")), st.floats(-100, 100, width=32)), min_size=3,
                              max_size=3), min_size=1, max_size=4),
       axis=st.sampled_from([None, 0, 1, -1]), keepdims=st.booleans(), correction=st.sampled_from([0, 1]))
def test_any_nan_placement_matches_numpy_on_numpy_and_torch(data, axis, keepdims, correction):
    host = np.array(data, np.float64)
    for backend in ("numpy", "torch"):
        x = make_array(backend, "float64", host)
        for name in ("nanmean", "nanvar", "nanstd", "nanmin", "nansum"):
            options = {"correction": correction} if name in ("nanvar", "nanstd") else {}
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                got = getattr(al, name)(x, axis=axis, keepdims=keepdims, **options)
            _close(backend, got, _numpy(name, host, axis=axis, keepdims=keepdims, **options), name, rtol=1e-9)


def test_complex_nan_mean_and_sum(backend):
    host = np.array([1 + 2j, complex(np.nan, 0), 3 - 1j], np.complex64)
    x = make_array(backend, "complex64", host)
    for name in ("nansum", "nanmean"):
        got = getattr(al, name)(x)
        assert dtype_name(backend, got) == "complex64"
        np.testing.assert_allclose(to_numpy(backend, got), _numpy(name, host), rtol=1e-6)
    with pytest.raises(al.UnsupportedDtypeError):
        al.nanvar(x)  # as var: real input only


def test_nan_reductions_on_dask_compute_nothing():
    from test_bad_input import computation_counter

    x = make_array("dask", "float64", DATA)
    with computation_counter() as counted:
        results = {name: getattr(al, name)(x, axis=0) for name in (*REDUCTIONS, *ARG_REDUCTIONS)}
        padded = al.pad(x, ((1, 2), (0, 3)), "symmetric")
        rounded = al.round(x, 1)
    assert counted.count == 0
    for name, got in results.items():
        want = {"nanargmax": [0, -1, 2, 0], "nanargmin": [2, -1, 0, 2]}.get(name)
        _close("dask", got, _numpy(name, DATA, axis=0) if want is None else want, name)
    np.testing.assert_array_equal(padded.compute(), np.pad(DATA, ((1, 2), (0, 3)), "symmetric"))
    np.testing.assert_array_equal(rounded.compute(), np.round(DATA, 1))


# -- pad --------------------------------------------------------------------------------------------
PAD_WIDTHS = (0, 2, (1, 3), ((0, 2), (3, 1)), ((1,),), [(4, 0), (0, 5)])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap"])
@pytest.mark.parametrize("width", PAD_WIDTHS)
def test_pad_is_numpys(backend, mode, width):
    host = np.arange(6, dtype=np.int16).reshape(2, 3)
    x = make_array(backend, "int16", host)
    got = al.pad(x, width, mode)
    assert dtype_name(backend, got) == "int16"
    np.testing.assert_array_equal(to_numpy(backend, got), np.pad(host, width, mode))


def test_pad_constant_values_and_errors(backend):
    host = np.array([1.5, -2.0], np.float32)
    x = make_array(backend, "float32", host)
    np.testing.assert_array_equal(to_numpy(backend, al.pad(x, (2, 1), constant_values=7.25)),
                                  np.pad(host, (2, 1), constant_values=7.25))
    with pytest.raises(al.InvalidArgumentError, match="mode='mean'"):
        al.pad(x, 1, "mean")
    with pytest.raises(al.InvalidArgumentError, match="negative"):
        al.pad(x, -1)
    with pytest.raises(al.InvalidArgumentError, match="pairs"):
        al.pad(x, ((1, 1), (1, 1)))
    with pytest.raises(al.ScalarOverflowError):
        al.pad(make_array(backend, "int8", [1, 2]), 1, constant_values=300)
    with pytest.raises(al.InvalidArgumentError, match="length 0"):
        al.pad(make_array(backend, "float32", np.zeros(0)), 1, "edge")


# -- round --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint8", "int32", "complex64"])
@pytest.mark.parametrize("decimals", [-3, -2, -1, 0, 1, 2])
def test_round_with_decimals_is_numpys(backend, dtype, decimals):
    host = {"f": np.array([1.25, 2.675, -0.125, 1234.5678, 15.0, 25.0, np.inf, np.nan]),
            "i": np.array([15, 25, -15, 125, 35, -25, 4, 120]), "u": np.array([15, 25, 255, 5, 250, 0, 45, 95]),
            "c": np.array([1.25 + 2.675j, -0.125 - 15j])}[np.dtype(dtype).kind].astype(dtype)
    x = make_array(backend, dtype, host)
    got = al.round(x, decimals)
    assert dtype_name(backend, got) == dtype
    want = np.round(host, decimals)
    if host.dtype.kind == "f" and backend != "jax":
        np.testing.assert_array_equal(to_numpy(backend, got), want)
    elif host.dtype.kind == "f":  # XLA's CPU division is not correctly rounded: 12.0 / 10.0 is 1.2000000000000002
        np.testing.assert_allclose(to_numpy(backend, got), want, rtol=np.finfo(dtype).eps, equal_nan=True)
    else:
        np.testing.assert_allclose(to_numpy(backend, got), want, rtol=1e-6)


def test_round_refuses_bool_and_non_integer_decimals(backend):
    with pytest.raises(al.UnsupportedDtypeError):
        al.round(make_array(backend, "bool", [True]), 1)
    with pytest.raises(al.InvalidArgumentTypeError):
        al.round(make_array(backend, "float32", [1.0]), 1.5)


# -- real, imag on Array ------------------------------------------------------------------------------------
def test_array_real_and_imag(backend):
    host = np.array([1 + 2j, -3.5 - 0.5j], np.complex64)
    z = al.Array(make_array(backend, "complex64", host))
    np.testing.assert_array_equal(np.asarray(z.real), host.real)
    np.testing.assert_array_equal(np.asarray(z.imag), host.imag)
    assert isinstance(z.real, al.Array) and z.real.dtype is al.float32
    real = al.Array(make_array(backend, "float32", [1.5, -2.0]))
    np.testing.assert_array_equal(np.asarray(real.real), [1.5, -2.0])
    np.testing.assert_array_equal(np.asarray(real.imag), [0.0, 0.0])
    assert real.imag.dtype is al.float32


def test_the_namespaces_have_the_extensions(backend):
    from arraylayer.api.extensions import EXTENSIONS

    native = __import__(f"arraylayer.xp.{backend}", fromlist=["x"])
    wrapped = al.Array(make_array(backend, "float32", DATA.astype(np.float32))).__array_namespace__()
    for xp in (native, wrapped):
        assert all(hasattr(xp, name) for name in EXTENSIONS)
    got = wrapped.nanmean(al.Array(make_array(backend, "float32", DATA.astype(np.float32))), axis=1)
    assert isinstance(got, al.Array)
    _close(backend, got.native, _numpy("nanmean", DATA, axis=1), "xp.nanmean", rtol=1e-6)


@pytest.mark.parametrize("compiler", ["jax", "tensorflow"])
def test_the_extensions_trace_under_jit(compiler):
    """Compositions of the standard's functions: they trace under jax.jit and tf.function."""
    host = DATA.astype(np.float32)

    def run(a):
        return (al.nanmean(a, axis=1), al.nanargmax(a, axis=1), al.pad(a, 1, "edge"), al.round(a, 1),
                al.quantile(a, [0.25, 0.75], axis=0), al.nanquantile(a, 0.5, axis=0))

    if compiler == "jax":
        jax = pytest.importorskip("jax")
        results = jax.jit(run)(make_array("jax", "float32", host))
    else:
        tf = pytest.importorskip("tensorflow")
        results = tf.function(run)(make_array("tensorflow", "float32", host))
    want = (_numpy("nanmean", host, axis=1), [3, -1, 2], np.pad(host, 1, "edge"), np.round(host, 1),
            np.quantile(host, [0.25, 0.75], axis=0), _numpy("nanquantile", host, 0.5, axis=0))
    for got, expected in zip(results, want, strict=True):
        np.testing.assert_allclose(to_numpy(compiler, got), expected, rtol=1e-6, equal_nan=True)


# -- quantile ---------------------------------------------------------------------------------------
#: a 3x5 matrix with NaNs (one row all NaN) and a 3x4x5 one without
QUANTILE_DATA = (np.array([[1.5, np.nan, -2.0, 4.0, 0.0], [np.nan] * 5, [0.5, 7.0, 3.0, -1.0, 2.0]]),
                 np.random.default_rng(0).normal(size=(3, 4, 5)))


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("q", [0.3, 1.0, [0.0, 0.25, 0.5, 0.999, 1.0], np.array([0.7, 0.1])])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_quantiles_are_numpys_linear_ones(backend, name, q, axis, keepdims):
    """NumPy's values and shapes (q's axis first), x's dtype; NaN where a slice holds a NaN
    (quantile) or only NaNs (nanquantile), silently."""
    dtype = "float64" if backend != "jax" else "float32"
    for host in QUANTILE_DATA:
        x = make_array(backend, dtype, host)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = getattr(al, name)(x, q, axis=axis, keepdims=keepdims)
            values = to_numpy(backend, got)
        want = _numpy(name, host.astype(dtype), q, axis=axis, keepdims=keepdims)
        assert values.shape == want.shape and dtype_name(backend, got) == dtype
        np.testing.assert_allclose(values, want, rtol=1e-6 if dtype == "float32" else 1e-12, atol=1e-6,
                                   equal_nan=True, err_msg=f"{name} q={q} axis={axis} keepdims={keepdims}")


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8"])
def test_quantile_of_integers_is_in_the_default_float(backend, dtype):
    host = np.array([[3, 9, 1, 4], [7, 0, 2, 2]], dtype)
    got = al.quantile(make_array(backend, dtype, host), [0.1, 0.5], axis=1)
    assert dtype_name(backend, got) == str(al.default_float_dtype())
    np.testing.assert_allclose(to_numpy(backend, got), np.quantile(host, [0.1, 0.5], axis=1), rtol=1e-6)


def test_quantile_refuses_what_it_cannot_compute(backend):
    x = make_array(backend, "float32", [[1.0, 2.0], [3.0, 4.0]])
    for q in (1.5, -0.1, [0.5, 2.0], [[0.5]]):
        with pytest.raises(al.InvalidArgumentError, match="q="):
            al.quantile(x, q)
    with pytest.raises(al.InvalidArgumentError, match="q="):
        al.quantile(x, al.Array(x))  # on the host only: q is checked before any computation
    with pytest.raises(al.InvalidArgumentError, match="method='nearest'"):
        al.nanquantile(x, 0.5, method="nearest")
    with pytest.raises(al.InvalidArgumentError, match="no values"):
        al.quantile(make_array(backend, "float32", np.zeros((2, 0))), 0.5, axis=1)
    with pytest.raises(al.UnsupportedDtypeError):
        al.quantile(make_array(backend, "complex64", [1j, 2.0]), 0.5)


def test_quantiles_on_dask_compute_nothing():
    from test_bad_input import computation_counter

    host = np.random.default_rng(2).normal(size=(7, 9))
    host[2, 3] = np.nan
    x = make_array("dask", "float64", host).rechunk((3, 4))
    with computation_counter() as counted:
        results = {name: getattr(al, name)(x, [0.2, 0.9], axis=0) for name in ("quantile", "nanquantile")}
    assert counted.count == 0
    for name, got in results.items():
        _close("dask", got, _numpy(name, host, [0.2, 0.9], axis=0), name, rtol=1e-12)


# -- unsigned accumulations (issue 20): torch computes its stored-only uint accumulators in int64 ------
ACCUMULATING = ("sum", "prod", "cumulative_sum", "cumulative_prod", "nansum", "nancumsum")
#: wraps: uint8 sums pass 255, products pass 2**32 (uint32) and 2**64 (uint64, by 2**63 + ...)
WRAPS = {"uint8": [[200, 100, 7, 255], [255, 3, 128, 254], [255, 250, 9, 1]],
         "int8": [[-128, 100, 7, 127], [-1, 3, -128, 126], [127, 127, 9, -5]],
         "uint16": [[65535, 40000, 7, 2], [65535, 3, 60000, 9], [65000, 65001, 9, 2]]}


def _host_result(name, host, axis, dtype, keepdims):
    """NumPy's value in arraylayer's accumulator dtype (NumPy's default uint/int is 64-bit)."""
    want_dtype = dtype or str(al.default_uint_dtype() if host.dtype.kind == "u" else al.default_int_dtype())
    if name.startswith("cumulative") or name == "nancumsum":
        fn = {"cumulative_sum": np.cumulative_sum, "cumulative_prod": np.cumulative_prod, "nancumsum": np.nancumsum}
        return fn[name](host, axis=axis, dtype=want_dtype), want_dtype
    return getattr(np, name)(host, axis=axis, dtype=want_dtype, keepdims=keepdims), want_dtype


@pytest.mark.parametrize("name", ACCUMULATING)
@pytest.mark.parametrize("source", sorted(WRAPS))
def test_narrow_integer_accumulations_are_numpys_wrap_included(backend, name, source):
    """uint8/int8/uint16 accumulate in the default (u)int or dtype=, NumPy's values (wrap-around
    modulo 2**32 for uint32), on torch too, where uint16/32/64 are stored only (computed in int64)."""
    host = np.array(WRAPS[source], source)
    x = make_array(backend, source, host)
    cumulative = name.startswith("cumulative") or name == "nancumsum"
    for dtype in (None, "uint32", "uint64", "int64"):
        for axis, keepdims in ((1, False), (0, True), (None, False)):
            if cumulative and (axis is None or keepdims):
                continue
            kwargs = {"dtype": dtype} if dtype else {}
            if not cumulative:
                kwargs["keepdims"] = keepdims
            got = getattr(al, name)(x, axis=axis, **kwargs)
            want, want_dtype = _host_result(name, host, axis, dtype, keepdims)
            what = f"{name}({source}, axis={axis}, dtype={dtype}, keepdims={keepdims})"
            assert dtype_name(backend, got) == want_dtype, what
            np.testing.assert_array_equal(to_numpy(backend, got), want, err_msg=what)


@pytest.mark.parametrize("name", ["sum", "prod", "cumulative_sum", "cumulative_prod"])
@pytest.mark.parametrize("source", ["uint32", "uint64"])
def test_wide_unsigned_inputs_wrap_as_numpys_near_2_to_the_63(backend, name, source):
    """uint32 and uint64 inputs (stored only on torch) accumulate exactly: int64 arithmetic wraps
    modulo 2**64 like NumPy's uint64, values past 2**63 included."""
    big = [2**63 + 5, 2**63 + 7, 2**64 - 1, 3] if source == "uint64" else [2**32 - 1, 2**31 + 3, 7, 2**32 - 5]
    host = np.array(big, source)
    if backend == "torch":  # torch.tensor refuses ints past 2**63: the same bits, viewed as unsigned
        torch = al.get_backend("torch").module
        x = torch.from_numpy(host.astype(np.uint64).view(np.int64)).to(getattr(torch, source))
    else:
        try:
            x = make_array(backend, source, host)
        except al.UnsupportedDtypeError:
            pytest.skip(f"the {backend} backend here cannot hold {source}")
    got = getattr(al, name)(x)
    want = getattr(np, name)(host, dtype=source)  # NumPy widens uint32 to uint64; the standard keeps it
    assert dtype_name(backend, got) == source
    np.testing.assert_array_equal(to_numpy(backend, got), want, err_msg=f"{name}({source})")


def test_uint8_sums_through_the_array_wrapper_and_einops_are_numpys(backend):
    einops = pytest.importorskip("einops")
    host = np.array(WRAPS["uint8"], np.uint8)
    wrapped = al.Array(make_array(backend, "uint8", host))
    for got, want in ((wrapped.__array_namespace__().sum(wrapped, axis=0), host.sum(axis=0, dtype=np.uint32)),
                      (al.cumulative_prod(wrapped, axis=1), np.cumulative_prod(host, axis=1, dtype=np.uint32)),
                      (einops.reduce(wrapped, "b h -> b", "sum"), host.sum(axis=1, dtype=np.uint32)),
                      (einops.reduce(wrapped, "b h -> h", "prod"), host.prod(axis=0, dtype=np.uint32))):
        assert isinstance(got, al.Array) and dtype_name(backend, got.native) == "uint32"
        np.testing.assert_array_equal(to_numpy(backend, got.native), want)


# -- NumPy's keywords on the nan-reductions: dtype=, ddof= ----------------------------------------------
DTYPE_KEYWORD = ("nansum", "nanprod", "nanmean", "nanvar", "nanstd", "nancumsum", "nancumprod")


@pytest.mark.parametrize("name", DTYPE_KEYWORD)
def test_nan_reductions_compute_and_return_in_dtype(backend, name):
    wide = "float32" if backend == "jax" else "float64"  # the jax backend here holds no float64
    host = DATA.astype(np.float32)
    got = getattr(al, name)(make_array(backend, "float32", host), axis=1, dtype=wide)
    assert dtype_name(backend, got) == wide
    _close(backend, got, _numpy(name, host, axis=1, dtype=wide), f"{name} dtype={wide}")
    integers = np.array([[3, -7, 2], [120, 5, -1]], np.int8)
    got = getattr(al, name)(make_array(backend, "int8", integers), axis=1, dtype="float32")
    assert dtype_name(backend, got) == "float32"
    _close(backend, got, _numpy(name, integers, axis=1, dtype="float32"), f"{name} of int8 in float32")


def test_nan_mean_dtype_must_be_floating_and_keep_complex(backend):
    x = make_array(backend, "float32", DATA.astype(np.float32))
    for name, dtype in (("nanmean", "int32"), ("nanvar", "int16"), ("nanstd", "bool"), ("nanvar", "complex64")):
        with pytest.raises(al.TypePromotionError, match=f"{name} dtype='{dtype}'"):
            getattr(al, name)(x, dtype=dtype)
    with pytest.raises(al.TypePromotionError, match="complex"):
        al.nanmean(make_array(backend, "complex64", np.array([1j, 2], np.complex64)), dtype="float32")


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_ddof_is_numpys_name_for_correction(backend, name):
    host = DATA.astype(np.float32)
    x = make_array(backend, "float32", host)
    got = getattr(al, name)(x, axis=1, ddof=1)
    _close(backend, got, _numpy(name, host, axis=1, ddof=1), f"{name} ddof=1")
    np.testing.assert_array_equal(to_numpy(backend, got), to_numpy(backend, getattr(al, name)(x, axis=1, correction=1)))
    with pytest.raises(al.InvalidArgumentError, match="correction=1 and ddof=0"):
        getattr(al, name)(x, correction=1, ddof=0)
    with pytest.raises(al.InvalidArgumentTypeError, match="correction=-1"):
        getattr(al, name)(x, ddof=-1)


# -- sliding_window_view --------------------------------------------------------------------------------
WINDOWS = ((3, 1), (2, 0), (2, -1), ((2, 3), None), ((2, 2), (1, 1)), ((1, 2), (1, 0)), (5, 1), (0, 1), ((0, 2), None))


@pytest.mark.parametrize(("window_shape", "axis"), WINDOWS)
def test_sliding_window_view_is_numpys(backend, window_shape, axis):
    host = np.arange(15, dtype=np.int16).reshape(3, 5) * 3 - 7
    got = al.sliding_window_view(make_array(backend, "int16", host), window_shape, axis=axis)
    want = np.lib.stride_tricks.sliding_window_view(host, window_shape, axis=axis)
    assert dtype_name(backend, got) == "int16"
    assert tuple(int(n) for n in got.shape) == want.shape
    np.testing.assert_array_equal(to_numpy(backend, got), want)


def test_sliding_window_view_errors(backend):
    x = make_array(backend, "float32", np.zeros((3, 4), np.float32))
    for window_shape, axis, match in ((5, 1, "longer than that axis"), (-1, 0, "negative"), (2, None, "one per axis"),
                                      ((2, 2), 0, "differ in length")):
        with pytest.raises(al.InvalidArgumentError, match=match):
            al.sliding_window_view(x, window_shape, axis=axis)
    with pytest.raises(al.AxisError):
        al.sliding_window_view(x, 2, axis=2)


def test_sliding_window_view_is_where_xarray_looks(backend):
    """``xp.lib.stride_tricks.sliding_window_view``, NumPy's place, on both namespaces."""
    host = DATA.astype(np.float32)
    want = np.lib.stride_tricks.sliding_window_view(host, 3, axis=1)
    native = __import__(f"arraylayer.xp.{backend}", fromlist=["x"])
    np.testing.assert_array_equal(
        to_numpy(backend, native.lib.stride_tricks.sliding_window_view(make_array(backend, "float32", host), 3, 1)), want)
    wrapped = al.Array(make_array(backend, "float32", host))
    got = wrapped.__array_namespace__().lib.stride_tricks.sliding_window_view(wrapped, 3, axis=1)
    assert isinstance(got, al.Array)
    np.testing.assert_array_equal(to_numpy(backend, got.native), want)


def test_sliding_window_view_on_dask_computes_nothing():
    from test_bad_input import computation_counter

    x = make_array("dask", "float64", DATA)
    with computation_counter() as counted:
        got = al.sliding_window_view(x, (2, 3))
    assert counted.count == 0
    np.testing.assert_array_equal(got.compute(), np.lib.stride_tricks.sliding_window_view(DATA, (2, 3)))


# -- Array.round ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("decimals", [None, -1, 1, 2])
def test_array_round_method_is_numpys(backend, decimals):
    host = np.array([1.25, -2.675, 15.0, 0.125], np.float32)
    a = al.Array(make_array(backend, "float32", host))
    got = a.round() if decimals is None else a.round(decimals)
    assert isinstance(got, al.Array) and got.dtype is al.float32
    want = np.round(host, decimals or 0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=np.finfo(np.float32).eps)
    zero_d = al.Array(make_array(backend, "float32", np.float32(2.5))).round()
    assert isinstance(zero_d, al.Array) and zero_d.shape == () and float(zero_d) == 2.0
