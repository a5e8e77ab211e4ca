"""Which backend stores which low-precision dtype, and what every other function does with them: the
stored ones are created and cast; computation raises UnsupportedDtypeError naming the cast; the
others are invalid, with UnsupportedDtypeError naming the backends that store them."""

from __future__ import annotations

import pytest

import arraylayer as al

LOW = [str(d) for d in al.all_low_precision_dtypes]
TORCH = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"]
# measured (docs/low_precision.rst): what each framework can hold and cast on the CPU
STORED = {
    "numpy": LOW,
    "dask": LOW,
    # XLA on the CPU: float6 is an "Invalid XLA PrimitiveType"; int1 casts read code 1 as +1 and uint1 does
    # not lower (jax.numpy names both)
    "jax": [n for n in LOW if not n.startswith("float6") and n not in ("int1", "uint1")],
    "torch": TORCH,  # its int1-7/uint1-7 are shells, float4_e2m1fn_x2 packs two values in a byte
    "tensorflow": ["float8_e4m3fn", "float8_e5m2"],  # its other experimental types have no CPU cast
}


def test_each_backend_stores_what_it_can(backend):
    with al.use_backend(backend):
        assert [str(d) for d in al.valid_low_precision_dtypes] == STORED[backend]
        assert [str(d) for d in al.invalid_low_precision_dtypes] == [n for n in LOW if n not in STORED[backend]]
        assert not set(map(str, al.valid_dtypes)) & set(LOW)  # the standard's tuple keeps its meaning
        for name in LOW:
            assert hasattr(al, name) == (name in STORED[backend])


def test_invalid_types_name_a_backend_that_stores_them(backend):
    for name in (n for n in LOW if n not in STORED[backend]):
        with al.use_backend(backend), pytest.raises(al.UnsupportedDtypeError, match=rf"{name}.*Use a backend that stores it \(numpy"):
            al.zeros(2, dtype=name)
        with al.use_backend(backend), pytest.raises(al.UnsupportedDtypeError, match=name):
            al.astype(al.asarray([1.0, 2.0]), name)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2"])  # stored everywhere
# element-wise, statistical, order and selection functions compute by the low-precision rule, and those that
# move elements move them (tests/test_lowp_compute.py, tests/test_lowp_compute_exact.py, tests/test_lowp_manipulation.py)
@pytest.mark.parametrize("function", ["matmul", "tensordot", "vecdot"])
def test_computation_is_refused_with_the_cast_to_write(backend, name, function):
    with al.use_backend(backend):
        x = al.ones((2, 2), dtype=name)
        call = getattr(al, function)
        with pytest.raises(al.UnsupportedDtypeError, match=r"astype\(x, 'float32'\)"):
            call(x, x)


@pytest.mark.parametrize("holder", ["numpy", "jax", "dask"])  # the backends that store int4
def test_int4_computation_is_refused_where_it_is_stored(holder):
    with al.use_backend(holder):
        x = al.astype(al.asarray([1, -2, 7]), "int4")
        with pytest.raises(al.UnsupportedDtypeError, match=r"astype\(x, 'int32'\)"):
            al.matmul(x, x)
