"""Edge values give NumPy's result on every backend: the same dtype, the same bits for signed
zeros and finite values, NaN where NumPy has NaN.

Property tests (hypothesis) over float64 and float32 values that include signed zeros,
subnormals, inf, NaN and the largest finite values, for ``floor_divide`` and ``remainder``
(NumPy's results, and the standard's where NumPy departs from it: ``floor_divide`` at infinities
is the floor of the true quotient), the logical functions on complex input, and complex
``add``/``multiply``. Integer edge cases (division by zero gives 0, ``min // -1`` wraps) are a
table. One documented difference is excluded on JAX and TensorFlow: their CPU kernels run with
the processor's flush-to-zero mode, so subnormal operands read as zero and subnormal results are
written as zero; and PyTorch adds complex numbers as ``x1 + 1 * x2``, so an infinite part of
``x2`` makes the other part NaN (``0j + infj`` is ``nan+infj``, ``0j + nanj`` is ``nan+nanj``):
and a zero part can lose its sign (``(-0-0j) + (-0-0j)`` is ``0-0j``): complex sums with an
infinite or NaN part, or a zero part, are not compared on PyTorch (see docs/errors.rst, "Edge values").
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import arraylayer as al
from tests.conftest import make_array

FLUSHING = ("jax", "tensorflow")  # XLA's and TF's CPU kernels flush subnormals to zero
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _edges(width: int) -> list[float]:
    info = np.finfo(np.float32 if width == 32 else np.float64)
    tiny, smallest = float(info.tiny), float(info.smallest_subnormal)
    return [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, float(info.max), -float(info.max), tiny, -tiny,
            smallest, -smallest, 1e-300 if width == 64 else 1e-38, 3.0, -5.0, 0.5]


def _floats(width: int):
    return st.one_of(st.sampled_from(_edges(width)), st.floats(width=width, allow_subnormal=True))


def _pairs(width: int):
    return st.lists(st.tuples(_floats(width), _floats(width)), min_size=1, max_size=12)


def _host(result) -> np.ndarray:
    result = result.compute() if hasattr(result, "dask") else result
    return np.asarray(result)


def _subnormal(values: np.ndarray) -> np.ndarray:
    """Where a value (or either part of a complex value) is subnormal."""
    out = np.zeros(values.shape, bool)
    if values.dtype.kind not in "fc":
        return out
    parts = [values.real, values.imag] if values.dtype.kind == "c" else [values]
    for part in parts:
        out |= (part != 0) & (np.abs(part) < np.finfo(part.dtype).tiny)
    return out


def _same(got: np.ndarray, want: np.ndarray, keep: np.ndarray) -> list[int]:
    """Indices (where ``keep``) whose values differ: bits for numbers, NaN-ness for NaN (and for
    complex, each part)."""
    bad = []
    for i in np.flatnonzero(keep):
        g, w = got.reshape(-1)[i], want.reshape(-1)[i]
        for gp, wp in ([(g.real, w.real), (g.imag, w.imag)] if want.dtype.kind == "c" else [(g, w)]):
            if want.dtype.kind == "b" or not np.isnan(wp):
                if np.asarray(gp).tobytes() != np.asarray(wp).tobytes():
                    bad.append(i)
            elif not np.isnan(gp):
                bad.append(i)
    return bad


def _check(backend: str, name: str, operands: list[np.ndarray], want: np.ndarray,
           keep: np.ndarray | None = None) -> None:
    got = _host(getattr(al, name)(*[make_array(backend, str(a.dtype), a) for a in operands]))
    assert got.dtype == want.dtype, f"{name} on {backend}: dtype {got.dtype}, NumPy {want.dtype}"
    keep = np.ones(want.shape, bool) if keep is None else keep
    if backend in FLUSHING:
        keep = keep & ~(_subnormal(want) | np.logical_or.reduce([_subnormal(a) for a in operands]))
    bad = _same(got, want, keep.reshape(-1))
    assert not bad, (f"{name} on {backend} differs from NumPy at "
                     f"{[(tuple(a.reshape(-1)[i] for a in operands), got.reshape(-1)[i], want.reshape(-1)[i]) for i in bad]}")


def _floor_divide_oracle(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """NumPy's floor_divide, and the standard's floor of the true quotient where x or y is infinite."""
    with np.errstate(all="ignore"):
        return np.where(np.isinf(x) | np.isinf(y), np.floor(x / y), np.floor_divide(x, y)).astype(x.dtype)


@pytest.mark.parametrize("width", [64, 32])
def test_floor_divide_and_remainder_agree_with_numpy(backend, width):
    dtype = np.float64 if width == 64 else np.float32

    @SETTINGS
    @given(_pairs(width))
    @example([(9478175081853292.0, 3.0), (-9478175081853292.0, 3.0), (2.5, 1.0)])  # (x - fmod) / y a half above
    def run(pairs):
        x = np.array([p[0] for p in pairs], dtype)
        y = np.array([p[1] for p in pairs], dtype)
        with np.errstate(all="ignore"):
            # XLA and TF flush subnormal intermediates too: fmod(x, y) below the normal range
            # (x=-1.4230204e-33, y=1.1754944e-38 in float32) moves the floor by one there
            keep = ~_subnormal(np.fmod(x, y)) if backend in FLUSHING else None
        _check(backend, "floor_divide", [x, y], _floor_divide_oracle(x, y), keep)
        with np.errstate(all="ignore"):
            _check(backend, "remainder", [x, y], np.remainder(x, y), keep)

    run()


def _complexes(width: int):
    part = _floats(width)
    return st.lists(st.tuples(part, part, part, part), min_size=1, max_size=12)


def _complex_arrays(quads, width: int) -> tuple[np.ndarray, np.ndarray]:
    dtype = np.complex128 if width == 64 else np.complex64
    x = np.array([complex(a, b) for a, b, _, _ in quads], dtype)
    y = np.array([complex(c, d) for _, _, c, d in quads], dtype)
    return x, y


@pytest.mark.parametrize("width", [64, 32])
def test_logical_functions_and_add_on_complex_agree_with_numpy(backend, width):
    @SETTINGS
    @given(_complexes(width))
    def run(quads):
        x, y = _complex_arrays(quads, width)
        for name in ("logical_and", "logical_or", "logical_xor"):
            _check(backend, name, [x, y], getattr(np, name)(x, y))
        _check(backend, "logical_not", [x], np.logical_not(x))
        with np.errstate(all="ignore"):
            want = np.add(x, y)
        keep = np.ones(x.shape, bool)
        if backend == "torch":  # torch computes x + 1 * y: see the module's docstring
            keep = np.isfinite(x) & np.isfinite(y) & (want.real != 0) & (want.imag != 0)
        _check(backend, "add", [x, y], want, keep)

    run()


@pytest.mark.parametrize("width", [64, 32])
def test_complex_multiply_agrees_with_numpy_where_no_product_overflows(backend, width):
    """Where a partial product overflows, NumPy itself has no single answer (its scalar and array
    loops differ: nan+infj against -inf+infj for (1e308+1e308j)**2, as fused multiply-add is used
    or not); there every backend's result is not finite, as NumPy's."""
    @SETTINGS
    @given(_complexes(width))
    def run(quads):
        x, y = _complex_arrays(quads, width)
        with np.errstate(all="ignore"):
            want = np.multiply(x, y)
            parts = [x.real * y.real, x.imag * y.imag, x.real * y.imag, x.imag * y.real]
        got = _host(al.multiply(make_array(backend, str(x.dtype), x), make_array(backend, str(y.dtype), y)))
        assert got.dtype == want.dtype
        overflow = np.logical_or.reduce([np.isinf(p) for p in parts]) & np.isfinite(x) & np.isfinite(y)
        assert not np.isfinite(got[overflow]).any()
        keep = ~overflow & ~np.logical_or.reduce([_subnormal(p) for p in parts])  # exact products only
        keep &= np.isfinite(x) & np.isfinite(y)  # inf * finite: parts follow each framework's Annex G choices
        if backend in FLUSHING:
            keep &= ~(_subnormal(want) | _subnormal(x) | _subnormal(y))
        close = np.isclose(got[keep], want[keep], rtol=4 * np.finfo(got.real.dtype).eps, atol=0, equal_nan=True)
        assert close.all(), (x[keep][~close], y[keep][~close], got[keep][~close], want[keep][~close])

    run()


INT_MIN = np.iinfo(np.int64).min
#: (x, y, x // y, x % y): NumPy's results (a zero divisor gives 0 where NumPy also warns;
#: int min // -1 wraps to int min and its remainder is 0)
INTEGER_EDGES = [(7, 0, 0, 0), (-7, 0, 0, 0), (0, 0, 0, 0), (INT_MIN, -1, INT_MIN, 0), (INT_MIN, 0, 0, 0),
                 (-7, 2, -4, 1), (7, -2, -4, -1), (INT_MIN, 3, INT_MIN // 3, INT_MIN % 3)]


@pytest.mark.parametrize(("x", "y", "quotient", "remainder"), INTEGER_EDGES)
def test_integer_division_edges(backend, x, y, quotient, remainder):
    with np.errstate(all="ignore"):
        assert np.floor_divide(np.int64(x), np.int64(y)) == quotient  # the oracle says so
        assert np.remainder(np.int64(x), np.int64(y)) == remainder
    a, b = make_array(backend, "int64", [x]), make_array(backend, "int64", [y])
    assert _host(al.floor_divide(a, b)).tolist() == [quotient]
    assert _host(al.remainder(a, b)).tolist() == [remainder]


@pytest.mark.parametrize("value", [5e-324, -5e-324j, complex(-0.0, 5e-324)])
def test_subnormals_read_as_nonzero_where_the_framework_does_not_flush(backend, value):
    """The difference this module excludes on JAX and TensorFlow, stated: there a subnormal reads
    as zero (XLA's and TensorFlow's CPU kernels flush subnormals); elsewhere it is true."""
    x = make_array(backend, "complex128" if isinstance(value, complex) else "float64", [value])
    got = _host(al.logical_not(x)).tolist()
    assert got == ([True] if backend in FLUSHING else [False])
