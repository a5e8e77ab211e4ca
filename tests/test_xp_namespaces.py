"""The per-backend Array API namespaces (arraylayer.xp.<backend>)."""

from __future__ import annotations

import importlib

import arraylayer as al
from arraylayer.kernels.names import KERNEL_NAMES

# The standard's main-namespace functions beyond the kernels (compositions in the api layer).
EXTRA = ("asarray", "empty_like", "from_dlpack", "full_like", "ones_like", "zeros_like", "astype", "can_cast",
         "finfo", "iinfo", "isdtype", "result_type", "__array_namespace_info__")


def test_namespace_is_bound_to_its_backend(backend):
    xp = importlib.import_module(f"arraylayer.xp.{backend}")
    assert xp.__array_api_version__ == "2025.12"
    native = al.get_backend(backend)
    with al.use_backend("numpy"):
        x = xp.zeros(3, dtype=xp.float32)
        assert al.backend_of(x) is native
        assert al.backend_of(xp.arange(3)) is native
        assert al.backend_of(xp.asarray([1, 2])) is native
        import numpy as np

        moved = xp.asarray(np.arange(3, dtype=np.int16))  # another backend's array comes over
        assert al.backend_of(moved) is native and str(al.backend_of(moved).dtype_of(moved)) == "int16"
        assert xp.__array_namespace_info__().devices() == tuple(native.devices())
        assert al.backend_of(xp.fft.fftfreq(4)) is native  # takes no array: made on the namespace's backend
    assert xp.float32 == native.as_native_dtype("float32")
    y = xp.add(x, 1)
    assert al.backend_of(y) is native and al.Dtype(y.dtype) == "float32"
    for category, names in KERNEL_NAMES.items():
        holder = {"linalg": xp.linalg, "fft": xp.fft}.get(category, xp)
        assert all(hasattr(holder, n) for n in names), category
    assert all(hasattr(xp, n) for n in EXTRA)
    assert all(hasattr(xp.linalg, n) for n in ("matmul", "tensordot", "vecdot", "matrix_transpose"))
    assert xp.pi > 3 and xp.newaxis is None
