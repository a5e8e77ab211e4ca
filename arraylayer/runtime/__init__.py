"""The runtime: which backend a call runs on, and the machinery between a call and its kernels.

The folder ``arraylayer/runtime/`` owns the backend contract (``backend.py``) and the registry that chooses one per call
(``registry.py``: entry points, ``set_backend``/``use_backend``, ``backend_of``); devices; the memory
layouts each framework can view (``layouts.py``); the dtype functions that need a backend
(``native.py``); the compiled replay of dispatch plans and the loading of the C extensions
(``compiled_dispatch.py``, ``c_extensions.py``); torch.compile's guard filter; the quieting of
frameworks' log lines (``logs.py``); each framework's compiler by backend name, for scripts (``compilers.py``).

May import: the base modules, ``dtypes``, ``lowp.formats`` (the formats as data). Never a framework
at import.
"""
