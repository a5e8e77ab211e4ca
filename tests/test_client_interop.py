"""What client libraries (scikit-learn, array-api-extra) do with arraylayer's arrays, outside
tests/clients so that it runs in the default suite without the clients installed: a native
tensor's own ``.shape`` given back as a shape, and NumPy importing an Array through DLPack with
``device="cpu"`` (scikit-learn's ``move_to``)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import arraylayer as al
from tests.conftest import make_array

VALUES = np.arange(6, dtype=np.float32).reshape(2, 3)


def test_native_shape_object_is_a_shape(backend):
    # TensorFlow's .shape is a TensorShape, PyTorch's a torch.Size: array-api-extra's kron passes
    # `(1, 1) + a.shape` to broadcast_to and isin passes `a.shape` to reshape.
    x = make_array(backend, "float32", VALUES)
    xp = importlib.import_module(f"arraylayer.xp.{backend}")
    assert np.asarray(xp.reshape(xp.reshape(x, (6,)), x.shape)).tolist() == VALUES.tolist()
    assert tuple(xp.broadcast_to(x, (1, 1) + x.shape).shape) == (1, 1, 2, 3)
    assert tuple(xp.zeros(x.shape).shape) == (2, 3)
    assert tuple(al.reshape(al.Array(x), x.shape).shape) == (2, 3)


def test_shape_with_unknown_length_is_refused():
    tf = pytest.importorskip("tensorflow")
    with pytest.raises(al.InvalidArgumentTypeError, match=r"shape\[0\]=None"):
        al.zeros(tf.TensorShape([None, 2]))
    with pytest.raises(al.InvalidArgumentTypeError, match="is not a shape"):
        al.zeros(tf.TensorShape(None))


@pytest.mark.parametrize("copy", [None, True])
def test_numpy_imports_array_through_dlpack_on_cpu(backend, copy):
    source = al.Array(make_array(backend, "float32", VALUES.copy()))
    result = np.from_dlpack(source, device="cpu", copy=copy)
    assert type(result) is np.ndarray and result.dtype == np.float32
    np.testing.assert_array_equal(result, VALUES)
    if copy:  # a copy: writing to the source (in place on NumPy and PyTorch) leaves it as it was
        source[0, 0] = -1.0
        assert float(result[0, 0]) == 0.0 and float(np.asarray(source)[0, 0]) == -1.0


# Every operator on 0-d Arrays: NumPy's ufuncs give NumPy scalars for 0-d inputs, which would
# leave a scalar inside the Array (SciPy's f_oneway then failed assigning into one).
OPERATORS = {
    "a + b": lambda a, b: a + b, "a - 1.5": lambda a, b: a - 1.5, "2.0 / a": lambda a, b: 2.0 / a,
    "a ** 2.0": lambda a, b: a ** 2.0, "-a": lambda a, b: -a, "abs(a)": lambda a, b: abs(a),
    "a > b": lambda a, b: a > b, "a == 1.0": lambda a, b: a == 1.0, "v @ v": lambda a, b: b @ b,
}


@pytest.mark.parametrize("name", list(OPERATORS))
def test_operators_on_0d_arrays_give_0d_arrays(backend, name):
    a = al.Array(make_array(backend, "float32", 2.0))
    vector = al.Array(make_array(backend, "float32", [1.0, 2.0]))
    result = OPERATORS[name](a, vector if name == "v @ v" else al.Array(make_array(backend, "float32", 3.0)))
    native_backend = al.runtime.registry.get_backend(backend)
    assert isinstance(result.native, native_backend.array_types) and not isinstance(result.native, np.generic)
    assert tuple(result.shape) == ()
    expected = OPERATORS[name](np.float32(2.0), np.array([1.0, 2.0], np.float32) if name == "v @ v" else np.float32(3.0))
    assert np.asarray(result).item() == pytest.approx(float(expected))


def test_in_place_operator_on_0d_array_keeps_an_array(backend):
    a = al.Array(make_array(backend, "float32", 2.0))
    a += 1.0
    assert not isinstance(a.native, np.generic) and tuple(a.shape) == () and float(a) == 3.0


@pytest.mark.parametrize("where", ["prepend", "append", "both"])
def test_diff_with_prepend_and_append(backend, where):
    # SciPy's rankdata calls xp.diff(indices, append=...)
    x = make_array(backend, "int32", [1, 4, 9, 16])
    edges = {"prepend": [0], "append": [30]}
    options = {k: make_array(backend, "int32", v) for k, v in edges.items() if where in (k, "both")}
    expected = np.diff(np.array([1, 4, 9, 16], np.int32), **{k: np.array(v, np.int32) for k, v in edges.items()
                                                              if where in (k, "both")})
    result = al.diff(x, **options)
    assert np.asarray(result).tolist() == expected.tolist() and str(al.runtime.registry.backend_of(result).dtype_of(result)) == "int32"
    with pytest.raises(al.InvalidArgumentError, match="must match x's shape"):
        al.diff(x, append=make_array(backend, "int32", [[1, 2]]))


@pytest.mark.parametrize("key", [0, (1,), -1, (Ellipsis, 2)], ids=str)
def test_integer_index_gives_a_0d_array(backend, key):
    # NumPy gives a NumPy scalar for x[0]; the standard (and every other backend) a 0-d array,
    # which can then be assigned into and exported like any Array.
    x = al.Array(make_array(backend, "float32", [1.0, 2.0, 3.0]))
    item = x[key]
    assert not isinstance(item.native, np.generic) and tuple(item.shape) == ()
    assert float(item) == float(np.array([1.0, 2.0, 3.0])[key])
    item[()] = 7.0
    assert float(item) == 7.0 and np.from_dlpack(item).shape == ()
