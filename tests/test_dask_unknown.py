"""dask arrays of unknown length (``x[x > 2]``: dask writes the length nan until computed): arraylayer's
shape checks let unknown lengths through where dask computes (it checks them when the graph runs),
nothing is computed while building, and the values are NumPy's once computed."""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al

da = pytest.importorskip("dask.array")
einops = pytest.importorskip("einops")
from test_bad_input import computation_counter  # noqa: E402

HOST = np.arange(6.0)
ROWS = np.arange(12.0).reshape(6, 2)


def _x():
    return al.Array(da.from_array(HOST, chunks=3))


def _selected():
    """The wrapped dask array of HOST's values above 2, its length unknown; and NumPy's."""
    x = _x()
    selected = x[x > 2]
    assert np.isnan(selected.shape[0])
    return selected, HOST[HOST > 2]


def _computed(result):
    return np.asarray(result.native.compute())


CASES = {
    "add": (lambda m: m + m, lambda h: h + h),
    "where": (lambda m: al.where(m > 3, m, 0.0), lambda h: np.where(h > 3, h, 0.0)),
    "broadcast_arrays": (lambda m: al.broadcast_arrays(m, m)[1], lambda h: h),
    "broadcast with a length-1 axis": (lambda m: al.expand_dims(m, axis=1) + al.Array(da.ones((1, 2))),
                                       lambda h: h[:, None] + np.ones((1, 2))),
    "expand_dims": (lambda m: al.expand_dims(m, axis=0), lambda h: h[None]),
    "reshape to (-1, 1)": (lambda m: al.reshape(m, (-1, 1)), lambda h: h.reshape(-1, 1)),
    "reshape (-1, 1) back": (lambda m: al.reshape(al.reshape(m, (1, -1, 1)), (-1,)), lambda h: h),
    "tile": (lambda m: al.tile(m, (2,)), lambda h: np.tile(h, 2)),
    "mask of a masked": (lambda m: m[m > 3], lambda h: h[h > 3]),
    "nanmean": (lambda m: al.nanmean(m), lambda h: np.nanmean(h)),
    "pad": (lambda m: al.pad(m, 2), lambda h: np.pad(h, 2)),
    "vecdot": (lambda m: al.vecdot(m, m), lambda h: np.vecdot(h, h)),
    "full slice and a mask": (lambda m: m[:][m[:] > 3], lambda h: h[h > 3]),
    "einsum": (lambda m: einops.einsum(m, m, "i, i -> "), lambda h: np.einsum("i,i->", h, h)),
    "rearrange": (lambda m: einops.rearrange(m, "(a b) -> a b", b=1), lambda h: h.reshape(-1, 1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_unknown_lengths_pass_the_checks_dask_computes(name):
    lazy, numpy = CASES[name]
    selected, host = _selected()
    with computation_counter() as counted:
        result = lazy(selected)
    assert counted.count == 0, f"{name} computed"
    np.testing.assert_array_equal(_computed(result), numpy(host))


def test_in_place_operators_keep_an_unknown_length():
    selected, host = _selected()
    with computation_counter() as counted:
        selected += selected
        selected *= 2
    assert counted.count == 0
    np.testing.assert_array_equal(_computed(selected), (host + host) * 2)


@pytest.mark.parametrize("values", ["all", "one", "none"])
def test_masked_assignment_of_values_of_unknown_length(values):
    x = _x()
    selected = x[x > 2]
    chosen = {"all": selected * 10, "one": selected[selected > 4], "none": selected[selected > 9]}[values]
    target_mask = {"all": x > 2, "one": x > 2, "none": x > 9}[values]
    host = HOST.copy()
    host_values = {"all": HOST[HOST > 2] * 10, "one": HOST[HOST > 4], "none": HOST[HOST > 9]}[values]
    host[{"all": HOST > 2, "one": HOST > 2, "none": HOST > 9}[values]] = host_values
    with computation_counter() as counted:
        x[target_mask] = chosen
    assert counted.count == 0
    np.testing.assert_array_equal(_computed(x), host)


def test_masked_assignment_of_rows_of_unknown_length():
    rows = al.Array(da.from_array(ROWS, chunks=(3, 1)))
    mask = al.Array(da.from_array(HOST > 2, chunks=3))
    with computation_counter() as counted:
        rows[mask] = rows[mask] * 10
    assert counted.count == 0
    host = ROWS.copy()
    host[HOST > 2] = host[HOST > 2] * 10
    np.testing.assert_array_equal(_computed(rows), host)


def test_a_value_of_the_wrong_length_fails_as_numpy_when_computed():
    x = _x()
    selected = x[x > 2]
    x[x > 2] = selected[selected > 3]  # 2 values for 3 places
    with pytest.raises(ValueError, match="cannot assign 2 input values to the 3 output values"):
        x.native.compute()


def test_known_lengths_that_differ_from_an_unknown_one_are_refused_as_dask_does():
    selected, _ = _selected()
    with pytest.raises(al.InvalidArgumentError, match="do not broadcast"):
        selected + al.Array(da.ones(3))
    with pytest.raises(al.InvalidArgumentError, match="compute_chunk_sizes"):
        al.reshape(al.Array(da.from_array(ROWS, chunks=3))[_x() > 2], (-1,))  # (nan, 2) has no known size


#: What dask refuses on an unknown length (its raw ValueError, TypeError or IndexError), each
#: refused up front with arraylayer's error naming the fix.
REFUSED = {
    "slice": lambda m: m[1:3], "reversed": lambda m: m[::-1], "int key": lambda m: m[1],
    "NumPy index array": lambda m: m[np.array([0, 1])], "flip": al.flip, "sort": al.sort, "argsort": al.argsort,
    "diff": al.diff, "argmax": al.argmax, "argmin": al.argmin, "roll": lambda m: al.roll(m, 1),
    "take": lambda m: al.take(m, al.Array(da.from_array(np.array([0, 1])))),
    "take_along_axis": lambda m: al.take_along_axis(m, al.Array(da.from_array(np.array([0, 1])))),
    "searchsorted": lambda m: al.searchsorted(m, 2.0), "unstack": al.unstack,
    "cumulative_sum": al.cumulative_sum, "cumulative_prod": al.cumulative_prod,  # dask's fail on empty chunks
    "rows: slice of the unknown axis": lambda m: al.Array(da.from_array(ROWS, chunks=3))[_x() > 2][:2],
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_dask_refuses_on_an_unknown_length_names_the_fix(name):
    selected, _ = _selected()
    with computation_counter() as counted, pytest.raises(al.InvalidArgumentError, match="compute_chunk_sizes"):
        REFUSED[name](selected)
    assert counted.count == 0


def test_broadcast_to_an_unknown_length_names_broadcast_arrays():
    selected, host = _selected()
    with pytest.raises(al.InvalidArgumentError, match="broadcast_arrays"):
        al.broadcast_to(al.Array(da.ones(1)), selected.shape)
    _, broadcast = al.broadcast_arrays(selected, al.Array(da.ones(1)))
    np.testing.assert_array_equal(_computed(broadcast), np.ones_like(host))


def test_known_axes_of_an_array_with_an_unknown_length_still_index():
    rows = al.Array(da.from_array(ROWS, chunks=3))[_x() > 2]
    with computation_counter() as counted:
        column = rows[:, 1]
        reversed_columns = rows[..., ::-1]
    assert counted.count == 0
    np.testing.assert_array_equal(_computed(column), ROWS[HOST > 2][:, 1])
    np.testing.assert_array_equal(_computed(reversed_columns), ROWS[HOST > 2][..., ::-1])
