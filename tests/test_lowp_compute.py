"""The computation rule (arraylayer.lowp.compute): every element-wise and statistical function of the
standard, on arrays of a low-precision format, gives on every backend that holds the format exactly the
bits of the oracle ``ml_dtypes(NumPy's float32 result)`` (int32 and a wrapping cast for the integer
formats; NaN results are the format's positive NaN, the documented rule), or the same
UnsupportedDtypeError.

The oracle calls NumPy's own functions on float32 (int32) copies, never arraylayer. CI's run takes a
sample of formats and of input pairs; ``AL_LOWP_EXHAUSTIVE=1`` (``nox -s lowp``) runs every format
and every pair of codes.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al
from arraylayer import lowp
from arraylayer.errors import ScalarOverflowError, TypePromotionError, UnsupportedDtypeError
from arraylayer.dtypes.function_rules import BINARY, UNARY
from arraylayer.lowp import compute
from tests import lowp_support
from tests.lowp_support import EXHAUSTIVE, host

SAMPLE = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1fn", "int4")
FORMATS = tuple(lowp.FORMATS) if EXHAUSTIVE else SAMPLE
PAIRS = None if EXHAUSTIVE else 300  # random pairs of codes per binary function (all pairs when exhaustive)

# NumPy's name where it differs from the standard's
NUMPY_NAME = {"bitwise_invert": "invert", "pow": "power"}


def _floor_divide(x1, x2):
    """NumPy's floor_divide, and at infinities the standard's floor of the true quotient (NumPy gives NaN)."""
    infinite = np.isinf(x1) | np.isinf(x2)
    return np.where(infinite, np.floor(x1 / x2), np.floor_divide(x1, x2)) if x1.dtype.kind == "f" else np.floor_divide(x1, x2)


STANDARD = {"floor_divide": _floor_divide}


def _ml(name):
    return getattr(ml_dtypes, name)


def _holds(backend, name):
    return lowp.STATUS[backend][name] in ("computed", "stored")


def native(backend, values):
    """An ml_dtypes NumPy array as ``backend``'s own array of that format."""
    name = values.dtype.name
    if backend == "numpy":
        return values
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.asarray(values)
    if backend == "torch":
        import torch

        return torch.from_numpy(values.view(np.uint8).copy()).view(getattr(torch, name))
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.cast(tf.constant(values.astype(np.float32)), getattr(tf.dtypes.experimental, name))
    import dask.array as da

    return da.from_array(values, chunks=max(1, len(values) // 3))


def result_host(y, name):
    """A result as NumPy: the format's codes (uint8) for an array of the format, else the values."""
    if lowp.format_of(y) == name:
        if type(y).__module__.startswith("tensorflow"):
            return host(lowp.encode(lowp.decode(y), name))  # TensorFlow cannot view its float8 as bytes
        if type(y).__module__.startswith("torch"):
            import torch

            return y.view(torch.uint8).numpy()
        return host(y).view(np.uint8) if lowp.FORMATS[name].is_float else host(y).astype(np.int8)
    return host(y)


def oracle(fn_name, name, *xs, **kwargs):
    """NumPy's function on float32 (int32) copies, then one NaN and the cast to the format where the
    function keeps the input's type."""
    f = lowp.FORMATS[name]
    wide = np.float32 if f.is_float else np.int32
    spec = UNARY.get(fn_name) or BINARY.get(fn_name)
    inexact = (spec is not None and spec.rule == "inexact") or fn_name in ("mean", "std", "var")
    # integers in an inexact function: the default float (float32), as for int8
    args = [x.astype(np.float32 if inexact else wide) if isinstance(x, np.ndarray) else x for x in xs]
    if fn_name == "nextafter" and f.is_float:  # the standard: the next value of the array's dtype
        args = [np.nextafter(*xs).astype(np.float32)]
        fn_name = "positive"
    with np.errstate(all="ignore"):
        y = np.asarray(STANDARD.get(fn_name, getattr(np, NUMPY_NAME.get(fn_name, fn_name)))(*args, **kwargs))
    if y.dtype != wide or (not f.is_float and fn_name in compute.ACCUMULATING):
        return y
    if f.is_float:
        return np.where(np.isnan(y), np.float32(np.nan), y).astype(_ml(name)).view(np.uint8)
    return y.astype(_ml(name)).astype(np.int8)


def all_values(name):
    f = lowp.FORMATS[name]
    return np.arange(1 << f.bits, dtype=np.uint8).view(_ml(name)) if f.is_float else \
        np.arange(int(f.min), int(f.max) + 1).astype(_ml(name))


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype.kind == "f":
        return got.shape == want.shape and bool((got.view(np.uint32 if got.itemsize == 4 else np.uint64)
                                                 == want.astype(got.dtype).view(np.uint32 if got.itemsize == 4 else np.uint64)).all())
    return got.shape == want.shape and bool((got == want).all())


def _kind(name):
    f = lowp.FORMATS[name]
    return "f" if f.is_float else "i" if f.signed else "u"


def _defined(spec_kinds, name):
    return _kind(name) in spec_kinds


def _public(fn_name, *args, **kwargs):
    return getattr(al, fn_name)(*args, **kwargs)


def _check(fn_name, name, backend, *xs, call=_public, **kwargs):
    """The mismatch (a short string) of one call of ``call(fn_name, ...)``, or None."""
    try:
        want = oracle(fn_name, name, *xs, **kwargs)
    except Exception as e:  # NumPy refuses (integer pow with negative exponents): arraylayer decides
        want = e
    args = [native(backend, x) if isinstance(x, np.ndarray) else x for x in xs]
    try:
        got = result_host(call(fn_name, *args, **kwargs), name)
    except UnsupportedDtypeError as e:
        return None if isinstance(want, Exception) else f"{fn_name}: raised {e}"
    if isinstance(want, Exception):
        return None  # NumPy refused: compared across backends by test_same_bits_on_every_backend
    return None if _same(got, want) else f"{fn_name}: {np.count_nonzero(got != want)} of {got.size} differ"


def _formats_held(backend):
    return [n for n in FORMATS if _holds(backend, n)]


def _pairs(name, seed):
    values = all_values(name)
    if PAIRS is None:
        return np.repeat(values, len(values)), np.tile(values, len(values))
    rng = np.random.default_rng(seed)
    return rng.choice(values, PAIRS), rng.choice(values, PAIRS)


@pytest.mark.parametrize("name", FORMATS)
def test_unary_functions_give_the_oracle_bits(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    x = all_values(name)
    failures = [m for fn, spec in UNARY.items() if _defined(spec.kinds, name) and (m := _check(fn, name, backend, x))]
    assert not failures, failures


@pytest.mark.parametrize("name", FORMATS)
def test_binary_functions_give_the_oracle_bits(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    failures = []
    for i, (fn, spec) in enumerate(BINARY.items()):
        if not _defined(spec.kinds, name):
            continue
        x1, x2 = _pairs(name, i)
        if fn.startswith("bitwise_") and "shift" in fn:
            x2 = np.abs(x2.astype(np.int32)).astype(x2.dtype)  # negative shifts are undefined
        m = _check(fn, name, backend, x1, x2)
        if m:
            failures.append(m)
    assert not failures, failures


# values whose float32 sums and products are exact, so that any order of accumulation gives one result
_STAT_VALUES = {
    "f": np.array([0.5, -1.25, 3.0, 1.5, -0.375, 2.0, 0.75, -2.5, 1.0, 1.75, -0.5, 1.125], np.float32),
    "i": np.array([1, -2, 3, 1, -1, 2, 1, -2, 1, 2, -1, 1], np.int32),
    "u": np.array([1, 2, 3, 1, 1, 2, 1, 2, 1, 2, 1, 1], np.int32),
}
_STATISTICAL = {"sum": {}, "prod": {}, "max": {}, "min": {}, "mean": {}, "std": {}, "var": {}}
#: Defined by the standard for floating dtypes only: of an integer format, arraylayer's extension computes
#: them as for int32 arrays, by each framework's own float32 reduction (within 2 ulp of NumPy's, not its bits).
_FLOAT_ONLY = ("std", "var")


@pytest.mark.parametrize("name", FORMATS)
def test_statistical_functions_give_the_oracle_bits(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    f = lowp.FORMATS[name]
    values = _STAT_VALUES[_kind(name)]
    if f.specials == "e8m0":
        values = np.abs(values) + 0.25
    x = np.clip(values, f.min, f.max).astype(_ml(name))
    exact = _STATISTICAL if f.is_float else {fn: kw for fn, kw in _STATISTICAL.items() if fn not in _FLOAT_ONLY}
    failures = [m for fn in exact if (m := _check(fn, name, backend, x))]
    for fn in set(_STATISTICAL) - set(exact):  # each framework's own float32 std/var of the int32 values
        got = np.asarray(result_host(_public(fn, native(backend, x)), name), np.float32)
        np.testing.assert_allclose(got, oracle(fn, name, x), rtol=2 * np.finfo(np.float32).eps, err_msg=fn)
    wide = np.float32 if f.is_float else np.int32
    for fn, numpy_fn in (("cumulative_sum", np.cumsum), ("cumulative_prod", np.cumprod)):
        want = numpy_fn(x.astype(wide))
        if f.is_float:
            want = want.astype(_ml(name)).view(np.uint8)
        got = result_host(_public(fn, native(backend, x)), name)
        if not _same(got, want):
            failures.append(fn)
    assert not failures, failures


def _diff_oracle(name, x, axis, n, prepend=None, append=None):
    """numpy.diff by the subtract oracle: n passes over the later and earlier elements of x (joined
    with prepend/append first), each result cast to the format before the next pass."""
    x = np.concatenate([p for p in (prepend, x, append) if p is not None], axis=axis)
    is_float = lowp.FORMATS[name].is_float
    want = x.view(np.uint8) if is_float else x.astype(np.int8)
    for _ in range(n):
        size = x.shape[axis]
        want = oracle("subtract", name, np.take(x, range(1, size), axis=axis), np.take(x, range(size - 1), axis=axis))
        x = want.view(_ml(name)) if is_float else want.astype(_ml(name))
    return want


@pytest.mark.parametrize("name", FORMATS)
def test_diff_rounds_each_difference_as_subtract_does(backend, name):
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    rng = np.random.default_rng(7)
    values = all_values(name)
    x, before, after = rng.choice(values, (5, 9)), rng.choice(values, (5, 2)), rng.choice(values, (1, 9))
    cases = [{"axis": 1, "n": 1}, {"axis": 1, "n": 3, "prepend": before}, {"axis": 0, "n": 2, "append": after},
             {"axis": -1, "n": 2, "prepend": before, "append": before[:, :1]}, {"axis": 0, "n": 9}]
    failures = []
    for kwargs in cases:
        got = al.diff(native(backend, x), **{k: native(backend, v) if isinstance(v, np.ndarray) else v
                                             for k, v in kwargs.items()})
        if not _same(result_host(got, name), _diff_oracle(name, x, **kwargs)):
            failures.append(kwargs)
    assert not failures, failures


def test_reductions_accumulate_in_float32_not_in_the_format():
    """100 ones sum to 100 (JAX's own float8 sum gives 64) and the mean of 100 ones is 1."""
    ones = np.ones(100, ml_dtypes.float8_e4m3fn)
    assert float(_public("sum", ones).astype(np.float32)) == 96.0  # 100 rounds to 96 in e4m3fn
    assert float(_public("mean", ones).astype(np.float32)) == 1.0
    assert _public("sum", ones).dtype == ones.dtype


def test_int4_arithmetic_wraps_and_sums_in_the_default_int():
    x = np.array([7, -8, 3], ml_dtypes.int4)
    y = np.array([1, -1, 7], ml_dtypes.int4)
    assert _public("add", x, y).astype(np.int32).tolist() == [-8, 7, -6]  # as JAX and ml_dtypes
    total = _public("sum", x)
    assert total.dtype == np.int32 and int(total) == 2
    assert _public("sqrt", np.array([4, 2], ml_dtypes.int4)).dtype == np.float32


def test_python_scalars_are_rounded_to_the_format_first():
    x = np.zeros(1, ml_dtypes.float8_e4m3fn)
    assert float(_public("add", x, 0.1).astype(np.float32)[0]) == 0.1015625  # as JAX
    with pytest.raises(ScalarOverflowError, match="does not fit int4"):
        _public("add", np.zeros(1, ml_dtypes.int4), 8)


def test_mixed_dtypes_do_not_promote():
    x = np.zeros(2, ml_dtypes.float8_e4m3fn)
    with pytest.raises(TypePromotionError, match="astype"):
        _public("add", x, np.zeros(2, np.float32))
    with pytest.raises(TypePromotionError, match="astype"):
        _public("add", x, np.zeros(2, ml_dtypes.float8_e5m2))


@pytest.mark.parametrize("fn", ["bitwise_and", "bitwise_invert", "bitwise_left_shift"])
def test_functions_undefined_for_floats_raise_the_same_error_everywhere(backend, fn):
    x = native(backend, np.ones(3, ml_dtypes.float8_e4m3fn))
    args = (x,) if fn in UNARY else (x, x)
    with pytest.raises(UnsupportedDtypeError, match=f"{fn} is not defined for float8_e4m3fn"):
        _public(fn, *args)


def test_same_bits_on_every_backend(backend):
    """Where NumPy refuses (integer pow with negative exponents), every backend still agrees with NumPy's
    arraylayer (raise or the same values)."""
    x1, x2 = np.array([2, -3, 1, 0], ml_dtypes.int4), np.array([-1, 2, -2, 3], ml_dtypes.int4)
    if not _holds(backend, "int4"):
        pytest.skip(f"{backend} cannot hold int4 (lowp.STATUS)")

    def outcome(b):
        try:
            return result_host(_public("pow", native(b, x1), native(b, x2)), "int4").tolist()
        except UnsupportedDtypeError as e:
            return type(e).__name__

    assert outcome(backend) == outcome("numpy")


@pytest.mark.parametrize("name", ["float8_e4m3fn", "int4"])
def test_public_functions_follow_the_rule(backend, name):
    """arraylayer.add, .exp, .sum ... on a low-precision array: the api layer's kernel is the rule's
    (arraylayer.api.dispatch.kernel), planned once and then served from the plan cache."""
    if not _holds(backend, name):
        pytest.skip(f"{backend} cannot hold {name} (lowp.STATUS)")
    x1, x2 = _pairs(name, 99)
    failures = []
    for fn in ("exp", "sqrt", "floor", "abs", "isnan", "negative"):
        if _defined(UNARY[fn].kinds, name):
            failures += [m for _ in range(2) if (m := _check(fn, name, backend, x1, call=_public))]
    for fn in ("add", "multiply", "divide", "hypot", "equal", "maximum", "nextafter"):
        failures += [m for _ in range(2) if (m := _check(fn, name, backend, x1, x2, call=_public))]
    x = np.clip(_STAT_VALUES[_kind(name)], lowp.FORMATS[name].min, lowp.FORMATS[name].max).astype(_ml(name))
    failures += [m for fn in ("sum", "mean", "max", "prod") if (m := _check(fn, name, backend, x, call=_public))]
    assert not failures, failures


def test_public_functions_refuse_what_the_rule_does_not_run(backend):
    if not _holds(backend, "float8_e4m3fn"):
        pytest.skip(f"{backend} cannot hold float8_e4m3fn")
    x = native(backend, np.ones(3, ml_dtypes.float8_e4m3fn))
    with pytest.raises(UnsupportedDtypeError, match="bitwise_and is not defined for float8_e4m3fn"):
        al.bitwise_and(x, x)
    with pytest.raises(TypePromotionError):
        al.add(x, lowp_support.native(backend, np.ones(3, np.float32)))


@pytest.mark.parametrize("compiler", ["jax", "tensorflow"])
def test_the_rule_under_a_compiler_gives_the_eager_bits(compiler):
    """jax.jit and tf.function trace the table gathers and the float32 reductions (torch.compile is not
    tested here: its compilation takes minutes on the CI machine)."""
    pytest.importorskip(compiler)
    values = np.array([1.0, 2.5, 448.0, -3.0, 0.0, -0.001953125], ml_dtypes.float8_e4m3fn)
    x = native(compiler, values)
    if compiler == "jax":
        import jax

        compile_ = jax.jit
    else:
        import tensorflow as tf

        def compile_(fn):
            return tf.function(fn, autograph=False)
    for fn in ("add", "exp", "sum", "maximum", "less", "sort", "argmax"):  # unique_values: no static shape
        call = getattr(al, fn)
        args = (x, x) if fn in BINARY else (x,)
        eager, traced = call(*args), compile_(call)(*args)
        assert _same(result_host(traced, "float8_e4m3fn"), result_host(eager, "float8_e4m3fn")), fn


def test_the_support_declaration_matches_every_call(backend):
    """arraylayer.support.low_precision_support against calls (arraylayer.cli.probe.probe_low_precision): every
    probed function on a sample of low-precision dtypes (every one with AL_LOWP_EXHAUSTIVE=1) computes
    where the cell says "supported", raises UnsupportedDtypeError where it says "unsupported" or
    "undefined", and astype refuses the dtypes the backend cannot hold ("invalid")."""
    from arraylayer.cli.probe import probe_low_precision

    dtypes = None if EXHAUSTIVE else ("float8_e4m3fn", "float8_e8m0fnu", "int4", "float6_e2m3fn")
    count, differences = probe_low_precision(backend, dtypes=dtypes)
    assert count >= 4 * 100 and not differences, differences


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])
def test_tensorflow_eager_and_graph_gather_the_same_bits_for_every_code(name):
    """Eager TensorFlow on the CPU gathers through NumPy (the array's bytes), tf.function through
    TensorFlow's float16 keys: every pair of codes gives the same bits both ways."""
    tf = pytest.importorskip("tensorflow")
    codes = np.arange(256, dtype=np.uint8).view(_ml(name))
    a, b = native("tensorflow", np.repeat(codes, 256)), native("tensorflow", np.tile(codes, 256))
    for fn in ("add", "multiply", "exp", "less"):
        call = getattr(al, fn)
        args = (a, b) if fn in BINARY else (a,)
        eager, traced = call(*args), tf.function(call, autograph=False)(*args)
        assert _same(result_host(traced, name), result_host(eager, name)), fn


def test_torch_traced_gather_gives_the_host_bits_for_every_code():
    """Eager torch on the CPU gathers through NumPy (the tensor's bytes); traced by Dynamo
    (``torch.compile``, its plain ``eager`` backend here: no compiler run), through torch's
    ``index_select``: every pair of float8_e4m3fn codes gives the same bits both ways."""
    torch = pytest.importorskip("torch")
    codes = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn)
    a, b = native("torch", np.repeat(codes, 256)), native("torch", np.tile(codes, 256))
    for fn in ("add", "exp"):
        call = getattr(al, fn)
        args = (a, b) if fn in BINARY else (a,)
        traced = torch.compile(call, backend="eager")(*args)
        assert _same(result_host(traced, "float8_e4m3fn"), result_host(call(*args), "float8_e4m3fn")), fn
