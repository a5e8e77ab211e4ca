"""keras.ops' last three names: ``rearrange`` (einops' patterns), ``view`` (NumPy's ``x.view(dtype)``)
and ``vectorize`` (``np.vectorize``), on every backend against einops, NumPy and np.vectorize on NumPy
arrays: values, result dtype and shape, and the errors."""

from __future__ import annotations

import einops
import ml_dtypes
import numpy as np
import pytest
from oracles import to_numpy

import arraylayer as al
from arraylayer.errors import InvalidArgumentError, InvalidArgumentTypeError, InvalidDtypeError, UnsupportedDtypeError

RNG = np.random.default_rng(11)


def _on(backend: str, host: np.ndarray):
    return al.to_backend(host, backend)


def _same(backend: str, got, want: np.ndarray) -> None:
    got = to_numpy(backend, got)
    assert got.dtype == want.dtype and got.shape == want.shape
    # bytes compared (NaN payloads, -0.0): as 1-d uint8 of C-ordered copies
    np.testing.assert_array_equal(np.ascontiguousarray(got).reshape(-1).view(np.uint8),
                                  np.ascontiguousarray(want).reshape(-1).view(np.uint8))


# -- rearrange ------------------------------------------------------------------------------------------

PATTERNS = [
    ("b h w c -> b c h w", (2, 3, 4, 5), {}),
    ("b (h w) c -> b h w c", (2, 12, 5), {"h": 3}),
    ("b (h w) c -> b h w c", (2, 12, 5), {"w": 4}),
    ("b h w c -> b (h w c)", (2, 3, 4, 5), {}),
    ("b h w c -> (b h) (w c)", (2, 3, 4, 5), {}),
    ("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", (2, 3, 4, 6), {"p1": 2, "p2": 3}),
    ("... c -> c ...", (2, 3, 4), {}),
    ("b ... -> b (...)", (2, 3, 4), {}),
    ("b ... c -> ... b c", (2, 3, 4, 5), {}),
    ("a 1 b -> a b", (3, 1, 4), {}),
    ("a b -> a 1 b ()", (3, 4), {}),
    ("a b -> a b", (3, 4), {}),
    ("x -> x", (0,), {}),
    (" -> ", (), {}),
    ("(a b) -> b a", (6,), {"a": 2}),
]


@pytest.mark.parametrize(("pattern", "shape", "lengths"), PATTERNS, ids=[p[0] for p in PATTERNS])
def test_rearrange_is_einops(backend, pattern, shape, lengths):
    host = RNG.standard_normal(shape).astype(np.float32)
    got = al.rearrange(_on(backend, host), pattern, **lengths)
    _same(backend, got, einops.rearrange(host, pattern, **lengths))


def test_rearrange_keeps_integer_dtypes_and_takes_arrays(backend):
    host = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    got = al.rearrange(al.Array(_on(backend, host)), "a b c -> c (a b)")
    assert isinstance(got, al.Array)
    _same(backend, got._native, einops.rearrange(host, "a b c -> c (a b)"))


BAD_PATTERNS = [
    ("a b c", (2, 3), {}, "one '->'"),
    ("a b -> a", (2, 3), {}, "only on the left"),
    ("a b -> a b c", (2, 3), {}, "only on the right"),
    ("a a -> a", (2, 2), {}, "more than once"),
    ("(a (b)) -> a b", (6,), {}, "do not nest"),
    ("a b) -> a b", (2, 3), {}, "closes no group"),
    ("(a b -> a b", (6,), {}, "never closed"),
    ("a b -> a b", (2, 3, 4), {}, "x has 3"),
    ("(a b) -> a b", (6,), {}, "unknown"),
    ("(a b) -> a b", (7,), {"a": 2}, "does not divide"),
    ("a b -> b a", (2, 3), {"a": 5}, "not 5"),
    ("a b -> b a", (2, 3), {"z": 5}, "names no axis"),
    ("a 2 -> a", (3, 2), {}, "only 1"),
    ("a + b -> a b", (3, 2), {}, "'\\+' is not an axis name"),
    ("(a ...) -> a ...", (3, 2), {}, "inside a group"),
    ("a ... -> a", (3, 2), {}, "only on the left"),
]


@pytest.mark.parametrize(("pattern", "shape", "lengths", "message"), BAD_PATTERNS, ids=[p[0] for p in BAD_PATTERNS])
def test_rearrange_mistakes_are_named(backend, pattern, shape, lengths, message):
    with pytest.raises(InvalidArgumentError, match=message):
        al.rearrange(_on(backend, np.zeros(shape, np.float32)), pattern, **lengths)


def test_rearrange_argument_types(backend):
    x = _on(backend, np.zeros((2, 3), np.float32))
    with pytest.raises(InvalidArgumentTypeError, match="must be a str"):
        al.rearrange(x, 3)
    with pytest.raises(InvalidArgumentTypeError, match="positive int"):
        al.rearrange(_on(backend, np.zeros(6, np.float32)), "(a b) -> a b", a=2.0)


# -- view -----------------------------------------------------------------------------------------------

VIEWS = [("float32", "int32", (2, 4)), ("float32", "uint8", (2, 4)), ("uint8", "float32", (2, 8)),
         ("int16", "bfloat16", (3, 2)), ("float16", "uint16", (5,)), ("float64", "uint32", (2, 3)),
         ("uint32", "float64", (4,)), ("int64", "float64", ()), ("complex64", "float32", (2, 3)),
         ("float32", "complex64", (3, 4)), ("complex64", "int64", (2,)), ("complex128", "complex64", (2,)),
         ("int64", "complex64", ()), ("bool", "uint8", (2, 3)), ("bool", "int16", (4,)),
         ("float8_e4m3fn", "uint8", (2, 3)), ("uint8", "float8_e5m2", (6,)), ("float8_e5m2", "int8", (3,)),
         ("uint8", "uint8", (3,))]


def _host(name: str, shape: tuple[int, ...]) -> np.ndarray:
    codes = RNG.integers(0, 256, size=(*shape, np.dtype(_numpy(name)).itemsize), dtype=np.uint8)
    if name == "bool":
        return (codes[..., 0] % 2).astype(bool)
    host = codes.view(_numpy(name)).reshape(shape)
    if np.dtype(_numpy(name)).kind in "fc":  # no NaN payloads: frameworks may canonicalize them when moving
        host = np.where(np.isnan(host), np.zeros((), host.dtype), host)
    return host


def _numpy(name: str):
    return getattr(ml_dtypes, name) if name.startswith(("float8", "bfloat16")) else np.dtype(name)


def _held(backend: str, *names: str) -> None:
    valid = {d.name for d in al.get_backend(backend).valid_dtypes()}
    valid |= {n for n, status in al.lowp.STATUS[backend].items() if status in ("computed", "stored")}
    missing = [n for n in names if n not in valid]
    if missing:
        pytest.skip(f"{backend} as configured cannot hold {', '.join(missing)}")


@pytest.mark.parametrize(("source", "into", "shape"), VIEWS, ids=[f"{s}->{t}-{len(sh)}d" for s, t, sh in VIEWS])
def test_view_is_numpys(backend, source, into, shape):
    _held(backend, source, into)
    host = _host(source, shape)
    if backend == "tensorflow" and "float8" in source + into:
        with pytest.raises(UnsupportedDtypeError, match="lowp.encode"):
            al.view(_on(backend, host), into)
        return
    _same(backend, al.view(_on(backend, host), into), host.view(_numpy(into)))


def test_view_of_a_transposed_array_reads_its_elements_in_order(backend):
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = al.view(al.permute_dims(_on(backend, host), (1, 0)), "uint8")
    _same(backend, got, np.ascontiguousarray(host.T).view(np.uint8))


def test_view_none_and_the_same_dtype_give_x(backend):
    x = _on(backend, np.arange(3, dtype=np.int32))
    assert al.view(x) is x and al.view(x, "int32") is x


@pytest.mark.parametrize(("source", "into", "shape", "error", "message"), [
    ("uint8", "bool", (3,), InvalidDtypeError, "compare instead"),
    ("float32", "int64", (3,), InvalidArgumentError, "do not divide"),
    ("float32", "int64", (), InvalidArgumentError, "0-d"),
    ("int8", "int4", (3,), UnsupportedDtypeError, "int4"),  # (torch and tensorflow cannot hold int4 at all)
])
def test_view_refusals(backend, source, into, shape, error, message):
    _held(backend, source, *([] if into == "int4" else [into]))
    with pytest.raises(error, match=message):
        al.view(_on(backend, _host(source, shape)), into)


def test_view_of_a_dtype_the_backend_cannot_hold_is_refused(backend):
    held = {d.name for d in al.get_backend(backend).valid_dtypes()}
    if "float64" in held:
        pytest.skip(f"{backend} as configured holds float64")
    with pytest.raises(al.ArrayLayerError):
        al.view(_on(backend, np.zeros(2, np.int32)), "float64")


# -- vectorize ------------------------------------------------------------------------------------------

def test_vectorize_elementwise_broadcasts_as_numpy(backend):
    a = RNG.standard_normal((3, 1)).astype(np.float32)
    b = RNG.standard_normal((4,)).astype(np.float32)
    f = al.vectorize(lambda x, y: al.add(al.multiply(x, 2.0), al.square(y)))
    want = np.vectorize(lambda x, y: np.float32(x * np.float32(2.0) + y * y))(a, b).astype(np.float32)
    got = to_numpy(backend, f(_on(backend, a), _on(backend, b)))
    assert got.shape == (3, 4) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_vectorize_with_a_signature_loops_over_the_leading_axes(backend):
    m = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    v = RNG.standard_normal((3,)).astype(np.float32)
    got = al.vectorize(al.matmul, signature="(m,n),(n)->(m)")(_on(backend, m), _on(backend, v))
    want = np.vectorize(np.matmul, signature="(m,n),(n)->(m)")(m, v)
    out = to_numpy(backend, got)
    assert out.shape == want.shape == (5, 2) and out.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_vectorize_with_several_outputs_excluded_and_keywords(backend):
    def moments(x, scale, *, shift):
        return al.multiply(al.mean(x), scale), al.add(al.max(x), shift)

    x = RNG.standard_normal((4, 6)).astype(np.float32)
    f = al.vectorize(moments, excluded={1}, signature="(n),()->(),()")
    mean, top = f(_on(backend, x), 3.0, shift=_on(backend, np.float32([1, 2, 3, 4])))
    np.testing.assert_allclose(to_numpy(backend, mean), x.mean(axis=1) * 3.0, rtol=1e-5)
    np.testing.assert_allclose(to_numpy(backend, top), x.max(axis=1) + np.float32([1, 2, 3, 4]), rtol=1e-6)


@pytest.mark.parametrize(("signature", "shapes", "message"), [
    ("(n)->()", [(2, 3), (3,)], "names 1 input"),
    ("(n),(n)->()", [(2, 3), (4,)], "lengths? 3 and 4|length 3 and 4"),
    ("(m,n)->()", [(3,)], "at least 2"),
    ("(n)->(n)", [(2, 3)], r"core \(n\) has 1"),
    ("(n)->(),()", [(2, 3)], "returned 1 output"),
    ("()->()", [(0,)], "empty"),
])
def test_vectorize_mistakes_are_named(backend, signature, shapes, message):
    f = al.vectorize(lambda *xs: al.sum(xs[0]), signature=signature)
    with pytest.raises(InvalidArgumentError, match=message):
        f(*[_on(backend, np.ones(s, np.float32)) for s in shapes])


def test_vectorize_output_core_lengths_must_match_the_inputs(backend):
    f = al.vectorize(lambda x: al.concat([x, x]), signature="(n)->(n)")
    with pytest.raises(InvalidArgumentError, match="core dimension n has length 6"):
        f(_on(backend, np.ones((2, 3), np.float32)))


def test_vectorize_argument_types():
    with pytest.raises(InvalidArgumentError, match="not a generalized ufunc signature"):
        al.vectorize(abs, signature="n->()")
    with pytest.raises(al.ArrayLayerError):
        al.vectorize(3)
    with pytest.raises(InvalidArgumentTypeError, match="excluded"):
        al.vectorize(abs, excluded=[1.5])


def test_vectorize_takes_and_gives_arraylayer_arrays(backend):
    seen = []

    def f(v):
        seen.append(type(v))
        return al.sum(al.square(v))

    x = al.Array(_on(backend, np.arange(6, dtype=np.float32).reshape(2, 3)))
    got = al.vectorize(f, signature="(n)->()")(x)
    assert isinstance(got, al.Array) and seen and all(t is al.Array for t in seen)
    np.testing.assert_allclose(to_numpy(backend, got._native), [5.0, 50.0])
