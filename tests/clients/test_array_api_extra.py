"""array-api-extra's functions on every backend, two ways: on Arrays (the namespace found from
the inputs, Arrays expected back), and on native arrays with ``xp=arraylayer.xp.<backend>``
(arraylayer's namespace for native arrays). Values are compared with the same call on NumPy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

xpx = pytest.importorskip("array_api_extra")
# 0.11.5 deprecates its expand_dims (the standard's takes tuple axes since 2025.12); still tested.
pytestmark = pytest.mark.filterwarnings("ignore:`xpx.expand_dims` is deprecated:DeprecationWarning")

RNG = np.random.default_rng(2)
V = RNG.normal(size=7)
M = RNG.normal(size=(3, 5))
S = np.array([[1.0, 2.0], [3.0, 4.0]])
I = np.array([3, 1, 4, 1, 5, 9, 2, 6, 5, 3])  # noqa: E741
J = np.array([1, 5, 7, 3])
NANS = np.array([1.0, np.nan, 3.0, -np.inf, 2.0])
COMPLEX = np.array([1 + 1j, -2.0 + 0.5j, 0.0 - 3j])

def _namespace(x: Any, options: dict[str, Any]) -> Any:
    """The namespace a case computes with: ``xp=`` when given, else the input's own (NumPy's for
    NumPy arrays). Indexing a native tf.Tensor with an integer array is no part of TensorFlow."""
    return options.get("xp") or (np if isinstance(x, np.ndarray) else x.__array_namespace__())


# name -> (call(xpx function arguments..., **xp), NumPy arguments)
CASES: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "atleast_nd": (lambda x, **k: xpx.atleast_nd(x, ndim=3, **k), (V,)),
    "cov": (lambda x, **k: xpx.cov(x, **k), (M,)),
    "create_diagonal": (lambda x, **k: xpx.create_diagonal(x, offset=1, **k), (V,)),
    "expand_dims": (lambda x, **k: xpx.expand_dims(x, axis=(0, -1), **k), (M,)),
    "kron": (lambda a, b, **k: xpx.kron(a, b, **k), (S, M)),
    "nunique": (lambda x, **k: xpx.nunique(x, **k), (I,)),
    "pad": (lambda x, **k: xpx.pad(x, ((1, 0), (2, 1)), constant_values=-1.5, **k), (M,)),
    "setdiff1d": (lambda a, b, **k: xpx.setdiff1d(a, b, **k), (I, J)),
    "union1d": (lambda a, b, **k: xpx.union1d(a, b, **k), (I, J)),
    "isin": (lambda a, b, **k: xpx.isin(a, b, **k), (I, J)),
    "sinc": (lambda x, **k: xpx.sinc(x, **k), (V,)),
    "isclose": (lambda a, b, **k: xpx.isclose(a, b, rtol=0.1, **k), (V, V * 1.05)),
    "one_hot": (lambda x, **k: xpx.one_hot(x, 10, **k), (I,)),
    "nan_to_num": (lambda x, **k: xpx.nan_to_num(x, fill_value=-7.0, **k), (NANS,)),
    "nansum": (lambda x, **k: xpx.nansum(x, **k), (NANS[[0, 1, 2, 4]],)),
    "nanmean": (lambda x, **k: xpx.nanmean(x, **k), (NANS[[0, 1, 2, 4]],)),
    "nanmax": (lambda x, **k: xpx.nanmax(x, **k), (NANS,)),
    "nanmin": (lambda x, **k: xpx.nanmin(x, **k), (NANS,)),
    "rad2deg": (lambda x, **k: xpx.rad2deg(x, **k), (V,)),
    "broadcast_shapes": (lambda x, **k: xpx.broadcast_shapes(x.shape, (4, 1, 5)), (M,)),
    "tril_indices": (lambda x, **k: xpx.tril_indices(4, offset=1, m=5, xp=_namespace(x, k)), (V,)),
    "triu_indices": (lambda x, **k: xpx.triu_indices(4, offset=-1, xp=_namespace(x, k)), (V,)),
    "diag_indices": (lambda x, **k: xpx.diag_indices(3, ndim=3, xp=_namespace(x, k)), (V,)),
    "lazy_apply": (lambda x, **k: xpx.lazy_apply(lambda v: np.cumsum(v) * 2, x, shape=x.shape, dtype=x.dtype,
                                                 as_numpy=True, **k), (V,)),
    "angle": (lambda x, **k: xpx.angle(x, deg=True, **k), (COMPLEX,)),
    "deg2rad": (lambda x, **k: xpx.deg2rad(x, **k), (V,)),
    "partition": (lambda x, **k: xpx.partition(x, 4, **k)[4], (I,)),
    "argpartition": (lambda x, **k: _namespace(x, k).take(x, xpx.argpartition(x, 4, **k))[4], (I,)),
    "searchsorted": (lambda a, b, **k: xpx.searchsorted(a, b, side="right", **k), (np.sort(I), J)),
    "unravel_index": (lambda x, **k: xpx.unravel_index(x, (2, 5), **k), (I,)),
    "apply_where": (lambda x, **k: xpx.apply_where(x > 0, x, lambda v: v ** 0.5, fill_value=-1.0, **k), (V,)),
    "at-set": (lambda x, **k: xpx.at(x, (slice(None), 1)).set(0.5, **k), (M,)),
    "at-add-mask": (lambda x, **k: xpx.at(x, x > 0).add(10.0, **k), (M,)),
    "at-multiply": (lambda x, **k: xpx.at(x, 2).multiply(-3.0, **k), (V,)),
    "at-min": (lambda x, **k: xpx.at(x, slice(1, 4)).min(0.0, **k), (V,)),
}

# Cases that fail because of array-api-extra (or array-api-compat under it) itself, per (case, client).
_NO_TF = ("array-api-compat 1.16 does not know tf.Tensor (array_namespace/device/is_writeable_array raise "
          "'EagerTensor is not a supported array type'); on TensorFlow pass arraylayer.Array instead")
_AT_IMMUTABLE = ("array-api-extra 0.11.5 at[] updates immutable arrays functionally only for JAX; for any other "
                 "it copies with xp.asarray and assumes the copy is writeable (_at.py), which a tf.Tensor never is")
_NUNIQUE_JAX = ("array-api-extra 0.11.5 nunique calls xp.unique_counts(x, size=...) whenever x is a JAX array "
                "(_set.py), assuming the xp= given is jax.numpy; size= is not in the standard")
ARRAY_CLIENT_BUGS: dict[tuple[str, str], str] = {}
NATIVE_CLIENT_BUGS: dict[tuple[str, str], str] = {
    **{(name, "tensorflow"): _NO_TF for name in ("create_diagonal", "pad", "isclose", "apply_where")},
    **{(name, "tensorflow"): _AT_IMMUTABLE for name in ("at-set", "at-add-mask", "at-multiply", "at-min")},
    ("nunique", "jax"): _NUNIQUE_JAX,
    ("nunique", "jax32"): _NUNIQUE_JAX,
}

# Gaps of arraylayer that work under way closes (keys of conftest's PENDING), per (case, client or "*").
PENDING: dict[tuple[str, str], str] = dict.fromkeys([(name, "dask") for name in ("setdiff1d",)], "dask-lengths")
# the native dask namespace (arraylayer.xp.dask, dask arrays in and out) still misses these
NATIVE_PENDING: dict[tuple[str, str], str] = dict.fromkeys(
    [(name, "dask") for name in ("apply_where", "at-add-mask", "isclose", "setdiff1d")], "dask-lengths")


def _case(name: str, client: Any, bugs: dict[tuple[str, str], str],
          pending: dict[tuple[str, str], str]) -> tuple[Callable[..., Any], tuple[Any, ...], Any]:
    """Case ``name``'s call, its arguments and its result on NumPy copies, once the known client
    bugs and arraylayer's pending gaps are marked xfail."""
    client.xfail_client_bug(bugs, name)
    client.xfail_pending(pending, name)
    call, arguments = CASES[name]
    return call, arguments, call(*(client.host(a).copy() for a in arguments))


@pytest.mark.parametrize("name", list(CASES))
def test_on_arrays(name: str, client: Any) -> None:
    call, arguments, expected = _case(name, client, ARRAY_CLIENT_BUGS, PENDING)
    client.close(call(*(client.array(a) for a in arguments)), expected)


@pytest.mark.parametrize("name", list(CASES))
def test_with_native_namespace(name: str, client: Any) -> None:
    call, arguments, expected = _case(name, client, NATIVE_CLIENT_BUGS, NATIVE_PENDING)
    result = call(*(client.native(a) for a in arguments), xp=client.native_xp)
    client.close(result, expected, arrays_out=False)
