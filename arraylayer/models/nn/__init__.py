"""Functions models need beyond the Array API: activations, softmax and losses, normalisation,
dropout, convolution, pooling and embeddings, with one dtype semantics on every backend.

Everything but convolution, pooling and ``erf`` is composed of arraylayer's own functions, so
promotion, weak Python scalars, errors and gradients are those of the rest of arraylayer
(``al.grad`` differentiates them on JAX, PyTorch and TensorFlow). Convolution and pooling call
each framework's own operation (``arraylayer/kernels/<backend>/nn.py``; dask runs NumPy's lazily,
per block of whole images), after arraylayer has checked the arguments and resolved the padding
to explicit pairs (TensorFlow's ``"SAME"`` arithmetic on every backend).

Inputs are native arrays of any backend or ``arraylayer.Array``; results are of the same kind.
Floating functions take floating inputs: an integer array raises ``InvalidDtypeError`` (no
silent conversion to a float of the caller's choosing).

One job per module: ``common`` (what they share), ``activations`` (and ``activations_more``, the
rest of keras.ops.nn's), ``softmax_family``, ``losses`` (and ``probabilistic_losses``: binary and
categorical cross-entropies from logits or probabilities; ``ctc``: the CTC loss),
``normalization`` (and ``norms``: batch, group and instance norms), ``regularization`` (dropout),
``lookup`` (embedding), ``convolution`` (1 to 3-d, grouped, depthwise, separable), ``transposed``
(conv_transpose), ``pooling`` (1 to 3-d, adaptive), ``blocks`` (depth_to_space,
space_to_depth, unfold, fold), ``measures`` (psnr, polar; rms_normalization is in ``normalization``); ``dot_product_attention`` lives in ``arraylayer/models/attention.py``, which imports these
modules, not this face.
"""

from __future__ import annotations

from arraylayer.models.attention import dot_product_attention
from arraylayer.models.nn.activations import gelu, relu, sigmoid, silu, softplus
from arraylayer.models.nn.activations_more import (
    celu, elu, glu, hard_shrink, hard_sigmoid, hard_silu, hard_tanh, leaky_relu, log_sigmoid, relu6, selu, soft_shrink,
    softsign, sparse_plus, sparse_sigmoid, sparsemax, squareplus, tanh_shrink, threshold,
)
from arraylayer.models.nn.blocks import depth_to_space, fold, space_to_depth, unfold
from arraylayer.models.nn.ctc import ctc_loss
from arraylayer.models.nn.ctc_decode import ctc_decode
from arraylayer.models.nn.measures import polar, psnr
from arraylayer.models.nn.norms import batch_norm, group_norm, instance_norm
from arraylayer.models.nn.convolution import conv1d, conv2d, conv3d, depthwise_conv, separable_conv
from arraylayer.models.nn.pooling import (
    adaptive_avg_pool, adaptive_max_pool, avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d,
)
from arraylayer.models.nn.transposed import conv_transpose
from arraylayer.models.nn.lookup import embedding
from arraylayer.models.nn.losses import cross_entropy, mse
from arraylayer.models.nn.normalization import layer_norm, moments, normalize, rms_normalization
from arraylayer.models.nn.probabilistic_losses import (
    binary_cross_entropy, categorical_cross_entropy, sparse_categorical_cross_entropy,
)
from arraylayer.models.nn.regularization import dropout
from arraylayer.models.nn.softmax_family import log_softmax, logsumexp, multi_hot, one_hot, softmax

__all__ = [
    "relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "logsumexp", "one_hot",
    "cross_entropy", "mse", "layer_norm", "dropout", "conv2d", "max_pool2d", "avg_pool2d", "embedding",
    "dot_product_attention",
    # the rest of keras.ops.nn's activations
    "relu6", "leaky_relu", "elu", "selu", "celu", "softsign", "log_sigmoid", "hard_sigmoid", "hard_silu", "hard_tanh",
    "tanh_shrink", "soft_shrink", "hard_shrink", "threshold", "sparse_plus", "sparse_sigmoid", "squareplus", "glu",
    "sparsemax",
    # losses and statistics
    "binary_cross_entropy", "categorical_cross_entropy", "sparse_categorical_cross_entropy", "ctc_loss", "moments",
    "normalize", "multi_hot",
    # convolution, pooling and normalisation in 1 to 3 spatial dimensions
    "conv1d", "conv3d", "conv_transpose", "depthwise_conv", "separable_conv", "max_pool1d", "avg_pool1d",
    "max_pool3d", "avg_pool3d", "adaptive_avg_pool", "adaptive_max_pool", "batch_norm", "group_norm",
    "instance_norm",
    # space and channels, blocks, measures
    "depth_to_space", "space_to_depth", "unfold", "fold", "rms_normalization", "psnr", "polar", "ctc_decode",
]
