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
