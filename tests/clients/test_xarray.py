"""xarray on ``arraylayer.Array``: ``DataArray`` and ``Variable`` wrap Arrays of every backend as
duck arrays (xarray finds their namespace through ``__array_namespace__``), and arithmetic, NaN
reductions, ``where``, ``concat``, indexing, ``rolling``, ``groupby``, ``weighted`` and the rest
give Arrays of the same backend with the values xarray computes on NumPy arrays."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

xr = pytest.importorskip("xarray")

RNG = np.random.default_rng(5)
X = np.round(RNG.normal(size=(4, 6)), 3)
X_NAN = X.copy()
X_NAN[1, 2] = X_NAN[3, 0] = X_NAN[3, 5] = np.nan
Y = RNG.normal(size=6)
WEIGHTS = np.array([1.0, 2.0, 0.5, 3.0])
XS = np.array([10.0, 30.0, 20.0, 0.0])  # unsorted coordinate of dim "x"
LABELS = np.array(["a", "b", "a", "b"])

Case = Callable[[Callable[[Any], Any]], Any]


def _da(a: Callable[[Any], Any], values: np.ndarray = X) -> Any:
    """``values`` as a DataArray over ``a(values)``, dims ("x", "y"), coordinates on both."""
    return xr.DataArray(a(values), dims=("x", "y"), coords={"x": XS, "y": np.arange(6), "label": ("x", LABELS)})


def _data(f: Callable[[Any], Any], values: np.ndarray = X) -> Case:
    """A case: ``f`` of the DataArray over ``values``; what comes back is its data."""
    return lambda a: f(_da(a, values)).data


def _var(a: Callable[[Any], Any], values: np.ndarray = X) -> Any:
    return xr.Variable(("x", "y"), a(values))


CASES: dict[str, Case] = {
    "arithmetic": lambda a: ((_da(a) * 2 - xr.DataArray(a(Y), dims="y")) / 3 + 1).data,
    "arithmetic-power-neg": _data(lambda d: -abs(d) ** 2),
    "comparison": _data(lambda d: (d > 0) & (d < 1)),
    "mean-skipna": _data(lambda d: d.mean("y", skipna=True), X_NAN),
    "mean-noskip": _data(lambda d: d.mean("y", skipna=False), X_NAN),
    "sum-skipna": _data(lambda d: d.sum("x", skipna=True), X_NAN),
    "sum-all": _data(lambda d: d.sum(), X),
    "min-skipna": _data(lambda d: d.min("y", skipna=True), X_NAN),
    "max-skipna": _data(lambda d: d.max("x", skipna=True), X_NAN),
    "std": _data(lambda d: d.std("y", ddof=1), X),
    "where": _data(lambda d: d.where(d > 0)),
    "where-other": _data(lambda d: d.where(d > 0, -1.0)),
    "xr.where": _data(lambda d: xr.where(d > 0, d, 0.0)),
    "concat": lambda a: xr.concat([_da(a), _da(a, X * 2)], dim="x").data,
    "isel": _data(lambda d: d.isel(x=[0, 2], y=slice(1, 5))),
    "isel-scalar": _data(lambda d: d.isel(x=1)),
    "sel": _data(lambda d: d.sel(x=20.0)),
    "transpose": _data(lambda d: d.T),
    "rolling-mean": _data(lambda d: d.rolling(y=3).mean()),
    "rolling-sum-center": _data(lambda d: d.rolling(x=2, center=True).sum()),
    "idxmax": _data(lambda d: d.idxmax("x")),
    "idxmin-nan": _data(lambda d: d.idxmin("y"), X_NAN),
    "argmax": _data(lambda d: d.argmax("y")),
    "groupby-mean": _data(lambda d: d.groupby("label").mean()),
    "groupby-sum": _data(lambda d: d.groupby("label").sum()),
    "shift": _data(lambda d: d.shift(x=1)),
    "weighted-mean": lambda a: _da(a).weighted(xr.DataArray(a(WEIGHTS), dims="x")).mean("x").data,
    "weighted-sum": lambda a: _da(a).weighted(xr.DataArray(a(WEIGHTS), dims="x")).sum("x").data,
    "sortby": _data(lambda d: d.sortby("x")),
    "sortby-descending": _data(lambda d: d.sortby("x", ascending=False)),
    "pad": _data(lambda d: d.pad(x=1, constant_values=0.0)),
    "round": _data(lambda d: d.round(1)),
    "quantile": _data(lambda d: d.quantile(0.3, dim="y")),
    "cumsum": _data(lambda d: d.cumsum("y")),
    "diff": _data(lambda d: d.diff("y")),
    "clip": _data(lambda d: d.clip(-0.5, 0.5)),
    "astype": _data(lambda d: d.astype(np.float32)),
    "isnull": _data(lambda d: d.isnull(), X_NAN),
    "fillna": _data(lambda d: d.fillna(0.0), X_NAN),
    "Variable-arithmetic": lambda a: (_var(a) * 2 + 1).data,
    "Variable-mean": lambda a: _var(a, X_NAN).mean("x").data,
    "Variable-isel": lambda a: _var(a).isel(y=[4, 1]).data,
    "Variable-transpose": lambda a: _var(a).transpose("y", "x").data,
    "Variable-concat": lambda a: xr.Variable.concat([_var(a), _var(a)], dim="x").data,
}

# Cases that fail because of xarray itself, per (case, client or "*"), with the reason.
CLIENT_BUGS: dict[tuple[str, str], str] = {}

# Gaps of arraylayer that work under way closes (keys of conftest's PENDING), per (case, client or "*").
PENDING: dict[tuple[str, str], str] = {}


@pytest.mark.parametrize("name", list(CASES))
def test_xarray(name: str, client: Any) -> None:
    client.xfail_client_bug(CLIENT_BUGS, name)
    client.xfail_pending(PENDING, name)
    case = CASES[name]
    expected = case(client.host)
    result = case(client.array)
    client.close(result, expected)
