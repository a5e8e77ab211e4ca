"""What the built-in backends share: their naming rule, and NumPy-style casts.

A built-in backend's kernels live in ``arraylayer.kernels.<name>``; its framework module, its pip
extra and the root of its array types' modules are its name unless its class body says otherwise
(``framework = "dask.array"``, ``extra = "all"``, ``type_roots = ("jax", "jaxlib")``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from arraylayer.dtypes import Dtype
from arraylayer.runtime.backend import Backend

__all__ = ["AstypeCasts", "BuiltinBackend"]


class BuiltinBackend(Backend):
    """A backend shipped with arraylayer: the attributes its name implies filled in (for the classes of
    ``arraylayer.backends`` only: a third party's subclass inherits its parent's)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.__module__.startswith("arraylayer.backends."):
            return  # a third party's subclass (of NumpyBackend, say) keeps what it inherits
        own = vars(cls)  # a subclass (dask's of numpy's) does not inherit its parent's defaults
        cls.kernel_module = f"arraylayer.kernels.{cls.name}"
        for attribute, default in (("framework", cls.name), ("extra", cls.name), ("type_roots", (cls.name,))):
            if attribute not in own:
                setattr(cls, attribute, default)


class AstypeCasts:
    """Casts by the arrays' own ``astype`` method (NumPy's, JAX's)."""

    as_native_dtype: Callable[[Dtype], Any]

    def astype(self, x: Any, dtype: Dtype) -> Any:
        native = self.as_native_dtype(dtype)
        return x if x.dtype == native else x.astype(native)

    def caster(self, dtype: Dtype) -> Callable[[Any], Any]:
        return operator.methodcaller("astype", self.as_native_dtype(dtype))
