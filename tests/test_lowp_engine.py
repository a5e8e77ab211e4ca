"""The cast engine (arraylayer/lowp/engine.py): each registered implementation, wherever it takes a
request on this machine, gives the reference rule's bits, bit for bit, on every code of every format
(decoding; encoding every code's value, every tie, the specials and out-of-range values; the native
cast). ml_dtypes is the oracle of the reference itself. ``one_kernel.everywhere()`` sends CPU arrays
through JAX's one-kernel casts; torch's Triton kernels are checked in their own environment
(``nox -s triton``: tests/test_lowp_triton.py) and on a GPU (tests/test_gpu.py).
"""

from __future__ import annotations

import contextlib
import itertools

import ml_dtypes
import numpy as np
import pytest

from arraylayer import lowp
from arraylayer.errors import InvalidArgumentError
from arraylayer.lowp import engine, one_kernel
from arraylayer.lowp.engine import request_for
from tests.lowp_support import SPECIALS, host, native, ties

FORMATS = tuple(lowp.FORMATS)
SOURCES = ("float32", "float16", "bfloat16", "float64")
DECODE_TO = ("float32", "float16", "bfloat16", "float64")
#: which implementations took at least one request in this run: each must, on a machine like CI's
USED: set[str] = set()


def every_value(name: str) -> np.ndarray:
    """Every code's value (NaNs included), every tie between neighbours, the specials, and values far
    beyond the format's range: as float32."""
    f = lowp.FORMATS[name]
    codes = np.arange(1 << f.bits, dtype=np.uint8)
    if not f.is_float:
        values = codes.view(np.int8 if f.signed else np.uint8).astype(np.float32)
        signed = np.where(values >= 1 << (f.bits - 1), values - (1 << f.bits), values) if f.signed else values
        return np.concatenate([signed, signed + 0.5, -signed - 0.25, [17.0, -17.0, 300.0, 1e10, -1e10]]).astype(np.float32)
    values = codes.view(getattr(ml_dtypes, name)).astype(np.float32)
    return np.concatenate([values, ties(name), -ties(name), SPECIALS]).astype(np.float32)


def as_source(values: np.ndarray, source: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        return values.astype(ml_dtypes.bfloat16 if source == "bfloat16" else source)


def bits_of(values: np.ndarray) -> np.ndarray:
    return values.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[values.dtype.itemsize])


def takers(request: engine.Request) -> list:
    """Every implementation other than the reference that takes ``request``."""
    return [i for i in engine.implementations()
            if i.name != "reference" and request.op in i.operations and not i.declines(request)]


def fresh(request: engine.Request) -> engine.Request:
    """A copy of ``request`` (its widened input is computed per request)."""
    return engine.Request(request.op, request.ops, request.x, request.format, request.source, request.saturate,
                          request.dtype, request.stored, request.portable)


def compare(request: engine.Request, oracle_codes: np.ndarray | None = None) -> None:
    """Each taker's result equals the reference's, bit for bit (and the reference equals ml_dtypes')."""
    want = engine.Reference().run(fresh(request))
    want_host = host(want) if request.op != "cast" else host(lowp.decode(want, dtype="float32"))
    if oracle_codes is not None:
        np.testing.assert_array_equal(bits_of(want_host), bits_of(np.asarray(oracle_codes)), err_msg="reference vs ml_dtypes")
    for implementation in takers(request):
        got = implementation.run(fresh(request))
        if got is None:  # a kernel that could not run here: the next implementation serves
            continue
        USED.add(implementation.name)
        got_host = host(got) if request.op != "cast" else host(lowp.decode(got, dtype="float32"))
        assert got_host.dtype == want_host.dtype, implementation.name
        np.testing.assert_array_equal(bits_of(got_host), bits_of(want_host), err_msg=f"{implementation.name}: {request}")


def oracle_codes(values: np.ndarray, name: str, saturate: bool) -> np.ndarray:
    """ml_dtypes' codes of ``values`` (float32) in ``name``; integer formats wrap toward zero as documented."""
    f = lowp.FORMATS[name]
    if not f.is_float:
        if saturate:
            values = np.clip(values, f.min, f.max)
        inside = np.abs(values) < 2.0**31
        whole = np.trunc(np.where(inside, values, 0)).astype(np.int64)
        return (whole & ((1 << f.bits) - 1)).astype(np.uint8)
    if saturate:
        low = -np.inf if f.specials == "e8m0" else -f.max
        values = np.where(np.isnan(values), values, np.clip(values, low, f.max))
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(getattr(ml_dtypes, name)).view(np.uint8) & ((1 << f.bits) - 1)


def pytest_generate_tests(metafunc):
    """``engine_backend``: the selected backends but dask, whose casts run block by block through
    NumPy's (the engine never sees a dask array)."""
    if "engine_backend" in metafunc.fixturenames:
        from tests.conftest import selected_backends

        metafunc.parametrize("engine_backend", [b for b in selected_backends(metafunc.config) if b != "dask"])


def routes(backend: str):
    """Eagerly; for jax also with its CPU arrays sent through the one-kernel casts (torch's one-kernel
    casts are Triton kernels: nox -s triton; numpy and tensorflow have none)."""
    yield contextlib.nullcontext
    if backend == "jax":
        yield one_kernel.everywhere


@pytest.mark.parametrize("name", FORMATS)
@pytest.mark.parametrize("saturate", [False, True], ids=["", "saturate"])
def test_every_implementation_encodes_as_the_reference(engine_backend, name, saturate):
    backend, values = engine_backend, every_value(name)
    for route in routes(backend):
        for source in SOURCES if lowp.FORMATS[name].is_float else ("float32",):
            if source == "float64" and backend in ("jax", "torch", "tensorflow"):
                continue  # float64 sources: test_lowp_casts.py (jax needs x64 there)
            with route():
                x = native(backend, as_source(values, source))
                request = request_for("encode", x, name, saturate=saturate)
                compare(request, oracle_codes(as_source(values, source).astype(np.float32), name, saturate))


@pytest.mark.parametrize("name", FORMATS)
def test_every_implementation_decodes_as_the_reference(engine_backend, name):
    backend, f = engine_backend, lowp.FORMATS[name]
    codes = np.arange(1 << f.bits, dtype=np.uint8)
    held = lowp.STATUS[backend][name] in ("computed", "stored")
    for route, dtype in itertools.product(routes(backend), DECODE_TO if f.is_float else ("float32", "int32")):
        if dtype == "float64" and backend == "jax":
            continue  # needs jax_enable_x64: test_lowp_casts.py decodes to float64 with it
        with route():
            oracle = codes.view(getattr(ml_dtypes, name)).astype(as_source(np.zeros(1), dtype).dtype) if f.is_float else None
            compare(request_for("decode", native(backend, codes), name, dtype=dtype), oracle)
            if held:  # a native array of the format
                compare(request_for("decode", lowp.to_native(native(backend, codes), name), name, dtype=dtype), oracle)


@pytest.mark.parametrize("name", FORMATS)
def test_every_implementation_casts_as_the_reference(engine_backend, name):
    backend = engine_backend
    if lowp.STATUS[backend][name] not in ("computed", "stored"):
        pytest.skip(f"{backend} holds no {name} arrays: cast gives the codes (the encode test)")
    x = native(backend, every_value(name))
    for saturate in (False, True):
        compare(request_for("cast", x, name, saturate=saturate))


def test_each_acceleration_served_requests_here():
    """The accelerations this machine has took requests above (CI: c_tables, native, one_kernel for jax)."""
    import importlib.util

    from arraylayer.lowp import cpu_codes

    if not USED:
        pytest.skip("run with the tests above (alone, nothing has been served)")
    expected = {"native"} if importlib.util.find_spec("numpy") else set()
    if importlib.util.find_spec("torch") and cpu_codes._kernel is not None:
        expected.add("c_tables")
    if importlib.util.find_spec("jax"):
        expected.add("one_kernel")
    assert expected <= USED


def test_the_registry_is_ordered_and_ends_with_the_reference():
    names = [i.name for i in engine.implementations()]
    assert names == ["one_kernel", "c_tables", "native", "reference"]
    orders = [i.order for i in engine.implementations()]
    assert orders == sorted(orders)


def test_explain_names_the_choice_and_why_not_the_others(engine_backend):
    backend = engine_backend
    x = native(backend, np.array([1.0, 2.0], np.float32))
    text = lowp.explain(x, "float4_e2m1fn")
    first, *rest = text.splitlines()
    chosen = first.rpartition(": ")[2]
    assert first.startswith("encode float4_e2m1fn: ")
    assert chosen in ("native", "reference")  # no acceleration encodes float4 except NumPy's ml_dtypes
    assert chosen == ("native" if backend == "numpy" else "reference")
    assert all(line.startswith("  not ") and ": " in line for line in rest)
    assert len(rest) == [i.name for i in engine.implementations()].index(chosen)


def test_explain_refuses_an_unknown_operation():
    with pytest.raises(InvalidArgumentError, match="op='squash'"):
        lowp.explain(np.ones(2, np.float32), "float8_e4m3fn", op="squash")


def test_a_registered_implementation_is_tried_in_its_order():
    """A third implementation registered with an order before the others serves the requests it takes."""

    class Halves:  # the reference's bits, through NumPy's float16 first (exact for float4's values)
        name, order, operations = "halves", 5, ("encode",)

        def declines(self, request):
            return "" if request.format.name == "float4_e2m1fn" and request.ops.name == "numpy" else "float4 on NumPy only"

        def run(self, request):
            return engine.Reference().run(engine.Request("encode", request.ops, request.x.astype(np.float16),
                                                         request.format, "float16"))

    engine.register(Halves())
    try:
        values = every_value("float4_e2m1fn")
        assert lowp.explain(values, "float4_e2m1fn").splitlines()[0].endswith(": halves")
        np.testing.assert_array_equal(lowp.encode(values, "float4_e2m1fn"), oracle_codes(values, "float4_e2m1fn", False))
    finally:
        engine._REGISTERED[:] = [i for i in engine._REGISTERED if i.name != "halves"]
    assert "halves" not in [i.name for i in engine.implementations()]
