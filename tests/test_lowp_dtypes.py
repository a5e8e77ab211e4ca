"""The low-precision family as arraylayer dtypes: names, widths, kinds, NumPy dtypes, finfo/iinfo, native
objects and isdtype, each against ml_dtypes (or JAX for the kind names)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al

FLOATS = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz",
          "float8_e4m3", "float8_e3m4", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn"]
INTS = ["int4", "uint4", "int2", "uint2", "int1", "uint1"]
NAMES = FLOATS + INTS
KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric"]


def test_the_family_is_catalogued_beside_the_standard_tuples():
    assert [str(d) for d in al.all_low_precision_dtypes] == NAMES
    assert [str(d) for d in al.all_low_precision_float_dtypes] == FLOATS
    assert [str(d) for d in al.all_low_precision_int_dtypes] == INTS
    assert [str(d) for d in al.all_float8_dtypes] == FLOATS[:8]
    standard = (al.all_dtypes, al.all_numeric_dtypes, al.all_int_dtypes, al.all_uint_dtypes, al.all_float_dtypes)
    assert not any(d.is_low_precision for group in standard for d in group)
    assert len(al.all_dtypes) == 15 and not any(d.is_low_precision for d in al.all_dtypes)
    with pytest.raises(al.InvalidDtypeError):  # ml_dtypes' packed/other types are not arraylayer dtypes
        al.Dtype("float4_e2m1fn_x2")


@pytest.mark.parametrize("name", NAMES)
def test_widths_kinds_and_numpy_dtype_match_ml_dtypes(name):
    dtype = al.Dtype(name)
    native = np.dtype(getattr(ml_dtypes, name))
    limits = ml_dtypes.finfo(native) if name in FLOATS else ml_dtypes.iinfo(native)
    assert dtype is getattr(al, name) and dtype == name and dtype.is_low_precision
    assert dtype.bits == limits.bits and dtype.itemsize == native.itemsize == 1
    assert dtype.kind == ("f" if name in FLOATS else "u" if name.startswith("u") else "i")
    assert dtype.char == native.char
    assert dtype.numpy_dtype == native and np.dtype(dtype) == native
    assert al.Dtype(native) is dtype and al.Dtype(native.type) is dtype
    assert al.dtype_bits(dtype) == limits.bits


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_ml_dtypes(name):
    want = ml_dtypes.finfo(getattr(ml_dtypes, name))
    got = al.finfo(name)
    assert (got.bits, got.dtype) == (want.bits, al.Dtype(name))
    for field in ("eps", "max", "min", "smallest_normal"):
        assert getattr(got, field) == float(getattr(want, field)), field
    with pytest.raises(al.InvalidDtypeError, match="iinfo"):
        al.iinfo(name)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_ml_dtypes(name):
    want = ml_dtypes.iinfo(getattr(ml_dtypes, name))
    got = al.iinfo(name)
    assert (got.bits, got.min, got.max, got.dtype) == (want.bits, int(want.min), int(want.max), al.Dtype(name))
    with pytest.raises(al.InvalidDtypeError, match="finfo"):
        al.finfo(name)


@pytest.mark.parametrize("name", NAMES)
def test_isdtype_follows_jax(name):
    jnp = pytest.importorskip("jax.numpy")
    for kind in KINDS:
        assert al.isdtype(name, kind) == bool(jnp.isdtype(getattr(jnp, name), kind)), kind
    assert al.isdtype(name, "low precision") and al.isdtype(name, ("bool", "low precision"))
    assert not any(al.isdtype(d, "low precision") for d in al.all_dtypes)


def test_framework_dtype_objects_resolve(backend):
    if backend in ("numpy", "dask"):
        names = {n: getattr(ml_dtypes, n) for n in NAMES}
    elif backend == "jax":
        jnp = pytest.importorskip("jax.numpy")
        names = {n: getattr(jnp, n) for n in NAMES} | {f"{n} ": jnp.dtype(n) for n in NAMES}
    elif backend == "torch":
        torch = pytest.importorskip("torch")
        names = {n: getattr(torch, n) for n in NAMES if isinstance(getattr(torch, n, None), torch.dtype)}
        assert set(names) >= {"float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"}
    else:
        tf = pytest.importorskip("tensorflow")
        names = {n: getattr(tf.dtypes.experimental, n) for n in NAMES if hasattr(tf.dtypes.experimental, n)}
        assert set(names) >= {"float8_e4m3fn", "float8_e5m2", "int4", "uint4"}
    for name, native in names.items():
        assert al.Dtype(native) is al.Dtype(name.strip()), (backend, name)


def test_torch_compile_traces_after_numpy_low_precision_dtypes_resolved():
    """NumPy's float8 dtype objects, once resolved, must not break torch.compile's look-ups of
    torch dtypes (Dynamo cannot compare them with the keys it looks up: a graph break)."""
    torch = pytest.importorskip("torch")
    assert al.Dtype(np.dtype(ml_dtypes.float8_e4m3fn)) is al.float8_e4m3fn
    assert al.result_type(np.zeros(2, ml_dtypes.int4), 1) is al.int4
    a = torch.ones(2, 2)
    step = torch.compile(lambda a: al.sum(al.add(al.matmul(a, a.mT), 1.0), axis=0), backend="eager", fullgraph=True)
    ones = np.ones((2, 2))
    assert step(a).tolist() == np.sum(ones @ ones.T + 1.0, axis=0).tolist()
