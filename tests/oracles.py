"""Independent answers the api tests compare arraylayer with: JAX's promotion (x64 on) for
dtypes, NumPy (with ml_dtypes) for values, and per-dtype tolerances."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import arraylayer as al

FLOAT_TOLERANCE = {"bfloat16": 2e-2, "float16": 2e-3, "float32": 2e-5, "float64": 1e-12,
                   "complex64": 2e-5, "complex128": 1e-12}


def numpy_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def jax_promote(a: str, b: str) -> str:
    """JAX's promotion of two concrete dtypes (the standard policy's oracle). A weak result
    (int64 with uint64 is JAX's weak float) is arraylayer's default dtype of that kind."""
    import jax

    jax.config.update("jax_enable_x64", True)
    from jax._src import dtypes as jax_dtypes

    lattice = getattr(jax_dtypes, "lattice_result_type", None) or jax_dtypes._lattice_result_type
    dtype, weak = lattice(numpy_dtype(a), numpy_dtype(b))
    dtype = np.dtype(dtype)
    if weak:
        return str(al.infer_dtype(None, {"i": 1, "u": 1, "f": 1.0, "c": 1j, "b": True}[dtype.kind]))
    return dtype.name


def valid_dtypes(backend: str) -> list[str]:
    if backend == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    return [str(d) for d in al.get_backend(backend).load().valid_dtypes()]


def to_numpy(backend: str, x):
    return al.get_backend(backend).to_numpy(x)


def dtype_name(backend: str, x) -> str:
    return str(al.get_backend(backend).dtype_of(x))


def assert_close(actual: np.ndarray, expected: np.ndarray, dtype: str, what: str) -> None:
    """Values equal (integers, bool) or within the dtype's tolerance (floats); NaNs and infinities
    must match."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if dtype in FLOAT_TOLERANCE:
        kind = np.complex128 if dtype.startswith("complex") else np.float64
        np.testing.assert_allclose(actual.astype(kind), expected.astype(kind), rtol=FLOAT_TOLERANCE[dtype],
                                   atol=FLOAT_TOLERANCE[dtype], equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def standard_floor_divide(a, b):
    """The standard's floor_divide: Python's ``//`` (numpy's) for finite operands; where either is
    infinite, the floor of the true quotient (``inf // 2`` is inf, ``-5 // inf`` is -0.0)."""
    with np.errstate(all="ignore"):
        quotient = np.floor_divide(a, b)
        if np.asarray(quotient).dtype.kind in "biu":
            return quotient
        return np.where(np.isinf(a) | np.isinf(b), np.floor(np.true_divide(a, b)), quotient).astype(quotient.dtype)
