"""Hypothesis' Array API strategies (``hypothesis.extra.array_api.make_strategies_namespace``) on
the Array namespace of every backend: arrays of every dtype the namespace lists and of drawn
shapes, scalars of each dtype, and drawn indices, each checked against NumPy (dtype, shape,
values after a round trip through NumPy, the element an index selects)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.array_api import make_strategies_namespace  # noqa: E402

EXAMPLES = settings(max_examples=8, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _namespaces(client: Any) -> tuple[Any, Any, list[Any]]:
    """The Array namespace of ``client``, Hypothesis' strategies over it, and its dtypes."""
    import warnings

    xp = client.array(np.zeros(1, np.float32)).__array_namespace__()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Hypothesis warns when a namespace is not one it knows
        xps = make_strategies_namespace(xp)
    dtypes = list(xp.__array_namespace_info__().dtypes().values())
    assert dtypes
    return xp, xps, dtypes


def _draw_and_check(check: Any) -> None:
    """Run ``check(data)`` on Hypothesis' draws (a few derandomised examples)."""
    EXAMPLES(given(data=st.data())(check))()


def _as_numpy(x: Any) -> np.ndarray:
    from arraylayer import Array

    assert isinstance(x, Array), f"expected an arraylayer.Array, got {type(x).__qualname__}"
    return np.asarray(x)


def test_arrays_of_every_dtype(client: Any) -> None:
    xp, xps, dtypes = _namespaces(client)

    def check(data: Any) -> None:
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        shape = data.draw(xps.array_shapes(min_dims=0, max_dims=3, max_side=4), label="shape")
        x = data.draw(xps.arrays(dtype=dtype, shape=shape), label="x")
        assert x.dtype == dtype
        assert tuple(x.shape) == shape
        host = _as_numpy(x)
        assert host.shape == shape
        assert host.dtype.name == str(dtype)
        back = xp.asarray(host)
        assert back.dtype == dtype
        np.testing.assert_array_equal(_as_numpy(back), host)

    for dtype in dtypes:  # every dtype at least once, whatever Hypothesis draws
        x = xp.zeros((2, 3), dtype=dtype)
        assert x.dtype == dtype and _as_numpy(x).dtype.name == str(dtype)
    _draw_and_check(check)


def test_scalars_of_every_dtype(client: Any) -> None:
    xp, xps, dtypes = _namespaces(client)

    def check(data: Any) -> None:
        dtype = data.draw(st.sampled_from(dtypes), label="dtype")
        value = data.draw(xps.from_dtype(dtype), label="value")
        x = xp.asarray(value, dtype=dtype)
        assert x.dtype == dtype and x.shape == ()
        expected = np.asarray(value, dtype=str(dtype))
        np.testing.assert_array_equal(_as_numpy(x), expected)

    _draw_and_check(check)


def test_indices_select_numpys_elements(client: Any) -> None:
    xp, xps, _ = _namespaces(client)

    def check(data: Any) -> None:
        shape = data.draw(xps.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), label="shape")
        host = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
        index = data.draw(xps.indices(shape), label="index")
        got = xp.asarray(host)[index]
        np.testing.assert_array_equal(np.asarray(got), host[index])

    _draw_and_check(check)


def test_broadcastable_shapes_broadcast_as_numpy(client: Any) -> None:
    xp, xps, _ = _namespaces(client)

    def check(data: Any) -> None:
        shapes = data.draw(xps.mutually_broadcastable_shapes(2, min_dims=0, max_dims=3, max_side=3), label="shapes")
        a, b = (np.ones(s, np.float32) * (i + 1) for i, s in enumerate(shapes.input_shapes))
        got = xp.asarray(a) + xp.asarray(b)
        assert tuple(got.shape) == shapes.result_shape
        np.testing.assert_array_equal(_as_numpy(got), a + b)

    _draw_and_check(check)
