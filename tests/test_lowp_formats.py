"""lowp.FORMATS against ml_dtypes (finfo/iinfo, the codes of NaN and inf) and NATIVE/STATUS against
the installed frameworks, measured here: a name, a cast from and to float32, a multiplication."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

from arraylayer import lowp

FLOATS = lowp.FLOAT_FORMATS
INTS = lowp.INT_FORMATS


@pytest.mark.parametrize("name", FLOATS)
def test_float_fields_match_finfo(name):
    f, info = lowp.FORMATS[name], ml_dtypes.finfo(getattr(ml_dtypes, name))
    assert (f.bits, f.exponent_bits, f.mantissa_bits) == (info.bits, info.nexp, info.nmant)
    for field in ("max", "min", "eps", "smallest_normal", "smallest_subnormal"):
        assert getattr(f, field) == float(getattr(info, field)), field


@pytest.mark.parametrize("name", FLOATS)
def test_special_codes_match_ml_dtypes(name):
    f, t = lowp.FORMATS[name], getattr(ml_dtypes, name)
    values = np.arange(1 << f.bits, dtype=np.uint8).view(t).astype(np.float64)
    assert f.has_nan == bool(np.isnan(values).any())
    assert f.has_inf == bool(np.isinf(values).any())
    with np.errstate(invalid="ignore"):
        cast = np.array([np.nan, np.inf], np.float32).astype(t).view(np.uint8)
    if f.has_nan:
        assert cast[0] == f.nan_code
    if f.has_inf:
        assert cast[1] == f.inf_code
    assert values[f.max_code] == f.max
    assert np.isfinite(values).sum() == len(np.unique(values[np.isfinite(values)])) + (f.signed and f.specials != "fnuz")  # +0/-0


@pytest.mark.parametrize("name", INTS)
def test_integer_fields_match_iinfo(name):
    f, info = lowp.FORMATS[name], ml_dtypes.iinfo(getattr(ml_dtypes, name))
    assert (f.bits, f.min, f.max) == (info.bits, info.min, info.max)


_MODULES = {"jax": "jax.numpy", "torch": "torch", "tensorflow": "tensorflow"}


def _namespace(backend):
    module = importlib.import_module(_MODULES[backend])
    return module.dtypes.experimental if backend == "tensorflow" else module


def _measure(backend: str, name: str) -> str | None:
    """What the framework does with its type called ``name``, tried here."""
    space = _namespace(backend)
    native = getattr(space, name, None)
    if native is None:
        return None
    f = lowp.FORMATS[name]
    values = np.array([1.0, 2.0, 0.5] if f.is_float else [f.min, f.max, 0.0], np.float32)
    try:
        if backend == "torch":
            import torch

            x = torch.from_numpy(values).to(native)
            back = x.to(torch.float32).numpy()
        elif backend == "jax":
            import jax.numpy as jnp

            x = jnp.asarray(values).astype(native)
            back = np.asarray(x.astype(jnp.float32))
        else:
            import tensorflow as tf

            x = tf.cast(tf.constant(values), native)
            back = tf.cast(x, tf.float32).numpy()
    except Exception:  # noqa: BLE001 - any failure of the framework means "no cast"
        return "named"
    # a cast that runs but gives other values than ml_dtypes' is no cast either (JAX's int1 reads its
    # code 1 as +1, where it stands for -1, and keeps 2 as 1 where ml_dtypes wraps it to 0)
    if not np.array_equal(back, values.astype(getattr(ml_dtypes, name)).astype(np.float32)):
        return "named"
    try:
        y = x * x
        if backend == "jax":
            y.block_until_ready()
    except Exception:  # noqa: BLE001
        return "stored"
    return "computed"


@pytest.mark.parametrize("name", tuple(lowp.FORMATS))
def test_native_names_and_status_are_measured(backend, name):
    if backend in ("numpy", "dask"):
        x = np.ones(2, np.float32).astype(getattr(ml_dtypes, name))
        assert lowp.NATIVE[backend][name] == name and (x * x).dtype == x.dtype
        return
    pytest.importorskip(_MODULES[backend])
    space = _namespace(backend)
    declared = lowp.NATIVE[backend][name]
    assert (getattr(space, name, None) is not None) == (declared is not None)
    assert lowp.STATUS[backend][name] == _measure(backend, name)
