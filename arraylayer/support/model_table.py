"""The model toolkit's rows of the function table: ``nn.<name>``, ``layers.<name>.init`` /
``.init_state`` / ``.apply`` and ``optim.<name>``, as data in the form of :data:`~.table.FUNCTIONS`.

What a row's input dtype is, per namespace:

* ``nn.<name>``: the dtype of the data (``x``, ``logits``, ``predictions``, a convolution's input and
  kernel); integer labels, ids and lengths stay integers. ``one_hot`` and ``multi_hot``: the ``dtype=``
  of their result.
* ``layers.<name>.init`` (and ``batch_norm.init_state``): the ``dtype=`` of the parameters made;
  ``layers.<name>.apply``: the dtype of the parameters and the input.
* ``optim.<name>``: the dtype of the parameters (and gradients) that ``init`` and ``update`` take.

Real floating functions are defined for real floating input only (``kinds`` ``"f"``): other kinds are
refused with InvalidDtypeError (the toolkit's error for a kind it does not take; the standard's
namespace raises UnsupportedDtypeError there). The kernels named are those of the composition (the
convolution and pooling kernels of ``arraylayer/kernels/<backend>/nn.py`` are not in the kernel tables:
their rows name ``multiply``, whose support is theirs: every float dtype, half precision computed in
float32). tests/test_support_models.py calls every row on every dtype and backend.
"""

from __future__ import annotations

from typing import Final

from arraylayer.support.uses import Uses

__all__ = ["MODEL_FUNCTIONS", "MODEL_INDEPENDENT"]

_F: Final = "f"
_ANY: Final = "biufc"

_ACTIVATIONS: Final[dict[str, tuple[str, ...]]] = {
    "relu": ("maximum",), "relu6": ("clip",), "leaky_relu": ("greater", "where", "multiply"),
    "gelu": ("multiply", "add", "tanh"), "silu": ("exp", "divide", "multiply"), "sigmoid": ("exp", "divide"),
    "softplus": ("logaddexp",), "elu": ("expm1", "greater", "where"), "selu": ("expm1", "greater", "where", "multiply"),
    "celu": ("expm1", "divide", "maximum", "minimum", "add"), "softsign": ("abs", "add", "divide"),
    "log_sigmoid": ("logaddexp", "negative"), "hard_sigmoid": ("clip", "add", "multiply"),
    "hard_silu": ("clip", "add", "multiply"), "hard_tanh": ("clip",), "tanh_shrink": ("tanh", "subtract"),
    "soft_shrink": ("greater", "less", "where", "subtract", "add"), "hard_shrink": ("abs", "greater", "where"),
    "threshold": ("greater", "where"), "sparse_plus": ("less_equal", "greater_equal", "where", "square", "divide"),
    "sparse_sigmoid": ("clip", "add", "multiply"), "squareplus": ("square", "add", "sqrt", "divide"),
    "glu": ("take", "exp", "divide", "multiply"), "sparsemax": ("sort", "cumulative_sum", "greater", "sum", "maximum"),
}
_NN_FLOAT: Final[dict[str, tuple[str, ...]]] = {
    **_ACTIVATIONS,
    "softmax": ("max", "subtract", "exp", "sum", "divide"), "log_softmax": ("max", "subtract", "exp", "sum", "log"),
    "logsumexp": ("max", "subtract", "exp", "sum", "log", "add"),
    "cross_entropy": ("max", "exp", "sum", "log", "take_along_axis", "mean"), "mse": ("subtract", "square", "mean"),
    "binary_cross_entropy": ("log", "multiply", "subtract", "mean"),
    "categorical_cross_entropy": ("log", "multiply", "sum", "mean"),
    "sparse_categorical_cross_entropy": ("log", "take_along_axis", "mean"),
    "ctc_loss": ("logaddexp", "take_along_axis", "where", "add"),
    "ctc_decode": ("argmax", "max", "not_equal", "where"),
    "layer_norm": ("mean", "subtract", "square", "sqrt", "divide"), "rms_normalization": ("square", "mean", "sqrt", "divide"),
    "moments": ("mean", "subtract", "square"), "normalize": ("vector_norm", "maximum", "divide"),
    "batch_norm": ("subtract", "sqrt", "divide", "multiply", "add"),
    "group_norm": ("reshape", "mean", "subtract", "square", "sqrt", "divide"),
    "instance_norm": ("mean", "subtract", "square", "sqrt", "divide"),
    "dropout": ("less", "where", "divide"), "dot_product_attention": ("matmul", "max", "exp", "sum", "divide"),
    "psnr": ("subtract", "square", "mean", "log", "multiply"), "polar": ("cos", "sin", "multiply"),
    **dict.fromkeys(("conv1d", "conv2d", "conv3d", "conv_transpose", "depthwise_conv", "separable_conv", "max_pool1d",
                     "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool",
                     "adaptive_max_pool"), ("multiply",)),
}
#: nn functions that move or select elements: any dtype (``one_hot``: its result's dtype=).
_NN_ANY: Final[dict[str, tuple[str, ...]]] = {
    "one_hot": ("equal",), "embedding": ("take",),
    "depth_to_space": ("reshape", "permute_dims"), "space_to_depth": ("reshape", "permute_dims"),
    "unfold": ("take", "reshape"), "fold": ("reshape", "add"),
}

#: layers.<name>.apply: the kernels of the apply (the init of every layer with parameters makes
#: floating arrays: kinds "f"; pooling layers have none to make).
_LAYERS_APPLY: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "dense": (("matmul", "add"), "iufc"), "embedding": (("take",), _ANY),
    **dict.fromkeys(("conv1d", "conv2d", "conv3d", "conv_transpose", "depthwise_conv", "separable_conv", "max_pool",
                     "avg_pool", "adaptive_avg_pool", "adaptive_max_pool"), (("multiply", "add"), _F)),
    **dict.fromkeys(("layer_norm", "rms_norm", "batch_norm", "group_norm"), (("mean", "sqrt", "divide", "multiply"), _F)),
    "mlp": (("matmul", "add", "multiply", "tanh"), _F),
    **dict.fromkeys(("attention", "transformer_block"), (("matmul", "exp", "sum", "divide"), _F)),
    **dict.fromkeys(("gru", "gru_cell", "lstm", "lstm_cell"), (("matmul", "add", "exp", "divide", "tanh"), _F)),
}
_PARAMETERLESS: Final = ("max_pool", "avg_pool", "adaptive_avg_pool", "adaptive_max_pool")

#: optim.<name>: floating parameters (lamb's trust ratio and adafactor's RMS: real floating only).
_OPTIMIZERS: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "sgd": (("multiply", "add"), "fc"), "adam": (("multiply", "add", "square", "sqrt", "divide"), "fc"),
    "adamw": (("multiply", "add", "square", "sqrt", "divide"), "fc"),
    "rmsprop": (("multiply", "add", "square", "sqrt", "divide"), "fc"),
    "adagrad": (("add", "square", "sqrt", "divide", "multiply"), "fc"),
    "lion": (("multiply", "add", "sign"), "fc"),
    "lamb": (("multiply", "add", "square", "sqrt", "divide", "vector_norm", "where"), _F),
    "adafactor": (("square", "mean", "sqrt", "divide", "maximum", "minimum", "multiply"), _F),
}

#: Every model toolkit row, by qualified name.
MODEL_FUNCTIONS: Final[dict[str, Uses]] = {
    **{f"nn.{name}": Uses(kernels, _F) for name, kernels in _NN_FLOAT.items()},
    **{f"nn.{name}": Uses(kernels, _ANY) for name, kernels in _NN_ANY.items()},
    "nn.multi_hot": Uses(("equal", "max"), "biuf"),  # (the max over the labels' axis: no complex result)
    **{f"layers.{name}.init": Uses(("multiply", "zeros", "ones"), _F)
       for name in _LAYERS_APPLY if name not in _PARAMETERLESS},
    "layers.batch_norm.init_state": Uses(("zeros", "ones"), _F),
    **{f"layers.{name}.apply": Uses(kernels, kinds) for name, (kernels, kinds) in _LAYERS_APPLY.items()},
    **{f"optim.{name}": Uses(kernels, kinds) for name, (kernels, kinds) in _OPTIMIZERS.items()},
}
#: Model toolkit functions that take no arrays of a dtype of their own: the pooling layers' init (no
#: parameters) and ``optim.from_transforms`` (it takes transformations).
MODEL_INDEPENDENT: Final[tuple[str, ...]] = (
    *(f"layers.{name}.init" for name in _PARAMETERLESS), "optim.from_transforms",
)
