"""Cases the official Array API suite found wrong, fixed in arraylayer, checked on every backend.

Oracles: the standard's special values (C99 Annex G for complex input), which NumPy gives for
every case below but those of expm1 and log1p (nan + nanj: arraylayer builds them from exp and log)
and tanh(+-inf + yj) (C99 signs the zero as sin(2y), the standard as y); NumPy's ``diff`` for prepend/append; the 2025.12 signature of ``devices()``.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

import arraylayer as al

INF, NAN = math.inf, math.nan
HALF_PI = math.pi / 2

# (function, input, the standard's result): the special cases XLA's complex functions got wrong
# (nan + nanj) before arraylayer's jax kernels replaced them; NaN means "NaN, either sign", and a
# None component means the standard leaves it unspecified beyond what the test says
COMPLEX_CASES = [
    ("exp", complex(-INF, INF), complex(0.0, 0.0)),
    ("exp", complex(-INF, NAN), complex(0.0, 0.0)),
    ("exp", complex(INF, INF), complex(INF, NAN)),
    ("exp", complex(INF, NAN), complex(INF, NAN)),
    ("expm1", complex(-INF, INF), complex(-1.0, 0.0)),
    ("expm1", complex(INF, NAN), complex(INF, NAN)),
    ("expm1", complex(-0.0, 0.0), complex(0.0, 0.0)),  # NumPy, torch, TensorFlow: -0 + 0j
    ("acos", complex(0.0, 0.0), complex(HALF_PI, -0.0)),  # torch: pi/2 + 0j
    ("acos", complex(-0.0, 0.0), complex(HALF_PI, -0.0)),
    ("log", complex(INF, NAN), complex(INF, NAN)),
    ("log", complex(-INF, NAN), complex(INF, NAN)),
    ("log", complex(NAN, INF), complex(INF, NAN)),
    ("log1p", complex(-INF, NAN), complex(INF, NAN)),
    ("log1p", complex(-1.0, 0.0), complex(-INF, 0.0)),  # TensorFlow: -inf + nanj
    ("log", complex(0.0, 0.0), complex(-INF, 0.0)),
    ("log", complex(-0.0, 0.0), complex(-INF, math.pi)),
    ("log1p", complex(NAN, INF), complex(INF, NAN)),
    ("sqrt", complex(INF, NAN), complex(INF, NAN)),
    ("sqrt", complex(-INF, NAN), complex(NAN, INF)),
    ("sinh", complex(0.0, INF), complex(0.0, NAN)),
    ("sinh", complex(0.0, NAN), complex(0.0, NAN)),
    ("sinh", complex(INF, INF), complex(INF, NAN)),
    ("sinh", complex(INF, NAN), complex(INF, NAN)),
    ("cosh", complex(0.0, INF), complex(NAN, 0.0)),
    ("cosh", complex(0.0, NAN), complex(NAN, 0.0)),
    ("cosh", complex(INF, INF), complex(INF, NAN)),
    ("cosh", complex(INF, NAN), complex(INF, NAN)),
    ("tanh", complex(0.0, INF), complex(0.0, NAN)),
    ("tanh", complex(0.0, NAN), complex(0.0, NAN)),
    # the standard's 1 + 0j for +inf + yj, finite y > 0 (odd and conjugate-symmetric beyond it);
    # C99 (NumPy, every framework) signs the zero as sin(2y): -0 at y = 2
    ("tanh", complex(INF, 2.0), complex(1.0, 0.0)),
    ("tanh", complex(INF, 1.0), complex(1.0, 0.0)),
    ("tanh", complex(INF, -2.0), complex(1.0, -0.0)),
    ("tanh", complex(-INF, 2.0), complex(-1.0, 0.0)),
    ("tanh", complex(-INF, -1.0), complex(-1.0, -0.0)),
    ("acos", complex(0.0, NAN), complex(HALF_PI, NAN)),
    ("acos", complex(-0.0, NAN), complex(HALF_PI, NAN)),
    ("acosh", complex(0.0, NAN), complex(NAN, HALF_PI)),
    ("acosh", complex(-4.7e18, NAN), complex(NAN, NAN)),  # jax: a number, from its large-argument formula
    ("acosh", complex(NAN, INF), complex(INF, NAN)),
    ("acos", complex(3e18, NAN), complex(NAN, NAN)),
    ("asinh", complex(INF, NAN), complex(INF, NAN)),
    ("sqrt", complex(NAN, INF), complex(INF, INF)),
    ("sqrt", complex(NAN, -INF), complex(INF, -INF)),
    ("asinh", complex(NAN, 0.0), complex(NAN, 0.0)),
    ("atanh", complex(0.0, NAN), complex(0.0, NAN)),
    ("atanh", complex(1.5, NAN), complex(NAN, NAN)),
    ("atanh", complex(INF, NAN), complex(0.0, NAN)),
    ("atanh", complex(NAN, 1.0), complex(NAN, NAN)),
    ("atanh", complex(NAN, NAN), complex(NAN, NAN)),
]
# the standard leaves these components' signs unspecified
UNSIGNED = {("exp", complex(-INF, INF)), ("exp", complex(-INF, NAN)), ("cosh", complex(0.0, INF)),
            ("cosh", complex(0.0, NAN)), ("acosh", complex(0.0, NAN)), ("sqrt", complex(-INF, NAN))}


def same_component(got: float, want: float, signed: bool) -> bool:
    """NaN for NaN; the same infinity or zero (with its sign where the standard gives one); a
    finite value to complex64's precision."""
    if math.isnan(want):
        return math.isnan(got)
    if not signed:
        got, want = abs(got), abs(want)
    if want == 0 or math.isinf(want):
        return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
    return math.isclose(got, want, rel_tol=1e-6)


@pytest.fixture
def on(backend, request):
    if backend == "jax":  # complex128 needs 64-bit mode
        request.getfixturevalue("x64_on")
    with al.use_backend(backend):
        yield backend


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(("name", "z", "want"), COMPLEX_CASES, ids=lambda v: str(v))
def test_complex_special_values_follow_the_standard(on, dtype, name, z, want):
    got = complex(np.asarray(al.to_backend(getattr(al, name)(al.asarray([z], dtype=dtype)), "numpy"))[0])
    signed = (name, z) not in UNSIGNED
    assert same_component(got.real, want.real, signed) and same_component(got.imag, want.imag, signed), got
    if name in ("expm1", "log1p") or (name == "tanh" and math.isinf(z.real) and math.isfinite(z.imag)):
        return  # NumPy's are not the standard's here
    oracle = complex(getattr(np, {"acos": "arccos", "acosh": "arccosh", "asinh": "arcsinh",
                                  "atanh": "arctanh"}.get(name, name))(np.asarray([z], dtype=dtype))[0])
    assert same_component(oracle.real, want.real, signed) and same_component(oracle.imag, want.imag, signed)


def test_finite_complex_input_keeps_its_values(on):
    z = np.asarray([0.5 + 1.0j, -2.0 + 0.25j, 3.0 - 4.0j], dtype=np.complex128)
    for name, reference in [("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sinh", np.sinh),
                            ("cosh", np.cosh), ("tanh", np.tanh), ("acos", np.arccos), ("acosh", np.arccosh),
                            ("asinh", np.arcsinh), ("atanh", np.arctanh), ("expm1", np.expm1), ("log1p", np.log1p)]:
        got = np.asarray(al.to_backend(getattr(al, name)(al.asarray(z)), "numpy"))
        np.testing.assert_allclose(got, reference(z), rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_sign_of_a_signed_zero_is_plus_zero(on, dtype):
    x = al.asarray([-0.0, 0.0, -2.0, 3.0] if dtype.startswith("float") else [-0.0 - 0.0j, 0.0 - 0.0j, -2.0, 3.0j],
                   dtype=dtype)
    got = np.asarray(al.to_backend(al.sign(x), "numpy"))
    assert not np.signbit(got.real[:2]).any() and not np.signbit(got.imag[:2]).any()
    assert got.tolist() == (np.sign(np.asarray(al.to_backend(x, "numpy")))).tolist()


def test_diff_joins_prepend_and_append(on):
    x = al.asarray([[1, 4, 9], [2, 3, 5]], dtype="uint8")
    first, last = al.asarray([[0, 0, 0]], dtype="uint8"), al.asarray([[9, 9, 9], [1, 1, 1]], dtype="uint8")
    got = al.diff(x, axis=0, prepend=first, append=last)
    host = [np.asarray(al.to_backend(a, "numpy")) for a in (x, first, last)]
    assert np.asarray(al.to_backend(got, "numpy")).tolist() == np.diff(host[0], axis=0, prepend=host[1],
                                                                       append=host[2]).tolist()
    with pytest.raises(al.InvalidArgumentError, match="except along axis 0"):
        al.diff(x, axis=0, append=al.asarray([[1, 2]], dtype="uint8"))


def test_diff_in_the_array_namespace_takes_arrays_for_prepend_and_append(backend):
    xp = importlib.import_module(f"arraylayer.xp.arrays.{backend}")
    x = xp.asarray([0], dtype=xp.uint8)
    assert np.asarray(xp.diff(x, axis=0, prepend=x, append=x + 3)).tolist() == [0, 3]


@pytest.mark.parametrize("module", ["arraylayer", "arraylayer.xp.{}", "arraylayer.xp.arrays.{}"])
def test_devices_is_a_tuple_as_2025_12_says(backend, module):
    xp = importlib.import_module(module.format(backend))
    with al.use_backend(backend):
        info = xp.__array_namespace_info__()
        devices = info.devices()
    assert type(devices) is tuple and info.default_device() in devices


@pytest.mark.parametrize("value", [-0.0, complex(-0.0, 0.0), complex(0.0, -0.0), complex(2.0, -0.0)])
def test_a_python_scalar_with_a_negative_zero_keeps_its_sign(on, value):
    """TensorFlow's cache of scalar constants takes -0.0 for +0.0 (they compare equal); a cached
    +0 made first must not come back for a -0 asked next."""
    dtype = "float32" if type(value) is float else "complex64"
    al.asarray(abs(value.real) + (abs(value.imag) * 1j if type(value) is complex else 0), dtype=dtype)
    got = complex(np.asarray(al.to_backend(al.asarray(value, dtype=dtype), "numpy")))
    want = complex(value)
    assert np.signbit(got.real) == np.signbit(want.real) and np.signbit(got.imag) == np.signbit(want.imag)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["log", "log2", "log10"])
def test_complex_log_far_from_one_keeps_its_real_part(on, dtype, name):
    """|z|**2 beyond the dtype's range (TensorFlow's complex log gave a NaN real part there); the
    values are the ones the suite drew at 50 examples (seed 33129), scaled to each dtype's range."""
    big, tiny = (1.6e19, 1e-30) if dtype == "complex64" else (1.6e160, 1e-200)
    z = np.asarray([complex(big, 0.9 * big), complex(66.8, -big), complex(tiny, tiny), complex(-big, big)], dtype=dtype)
    got = np.asarray(al.to_backend(getattr(al, name)(al.asarray(z)), "numpy"))
    np.testing.assert_allclose(got, getattr(np, name)(z), rtol=1e-6 if dtype == "complex64" else 1e-12)
