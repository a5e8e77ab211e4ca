"""The model toolkit: what a backend-agnostic model is written with, over plain trees of arrays.

The folder ``arraylayer/models/`` owns ``nn/`` (activations, losses, convolution, pooling, normalisation, dropout), ``random/``
(threefry keys: the same numbers on every backend), ``layers.py`` and ``attention.py``, the
initialisers, optimisers and gradient transformations (``optim.py``, ``transforms.py``,
``scalings.py``, ``leafwise.py``, ``schedules.py``), ``mixed_precision.py``, ``checkpoint.py`` (safetensors files,
with ``safetensors_format.py`` and ``atomic_files.py``), ``autodiff.py`` (``grad``/``value_and_grad``
on each framework's own machinery), ``tree.py`` and the frameworks' fused kernels (``fused.py``,
``dropout_masks.py``).

Their public names are the package's: ``arraylayer.nn``, ``arraylayer.optim``, ``arraylayer.layers``,
``arraylayer.checkpoint``, ... (``import arraylayer.checkpoint`` keeps working). They load on first use,
so ``import arraylayer`` does not pay for them.

May import: the base modules, ``dtypes``, ``runtime``, ``kernels``, ``api``.
"""
