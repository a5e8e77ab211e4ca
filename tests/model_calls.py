"""Valid calls of the model toolkit's public functions (``nn.*``, ``layers.<name>.init/apply``,
``optim.<name>``), of the math ops beyond the standard and of the control flow, as abstract values.

One table, read by two suites: tests/test_support_models.py (each function on every dtype: the
support answer of arraylayer/support/model_table.py must be what happens) and tests/test_bad_input.py
(each parameter corrupted by role). Abstract values, materialised per backend by :func:`materialise`:

* ``("A", dtype, values)``: an array (the probe retypes the ``"float32"`` ones, the data, to the dtype
  it checks; integer labels, ids and lengths stay integers);
* ``("K", seed)``: a random key;
* ``("P", layer, init_args, init_kwargs)``: the parameters ``layers.<layer>.init`` makes (a key of seed 0).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Final

import numpy as np

import arraylayer as al


def A(values: Any, dtype: str = "float32") -> tuple[str, str, Any]:  # noqa: N802 - an abstract array
    return ("A", dtype, values)


def _grid(*shape: int) -> list[Any]:
    return (np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 5 / 4 + 0.25).tolist()


X: Final = A([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
PROBS: Final = A([[0.25, 0.75], [0.5, 0.5]])
LABELS: Final = A([1, 0], "int32")
KEY: Final = ("K", 0)


def P(layer: str, *args: Any, **kwargs: Any) -> tuple[str, str, tuple[Any, ...], dict[str, Any]]:  # noqa: N802
    return ("P", layer, args, kwargs)


#: name -> (positional args, keyword args) of one valid call of ``nn.<name>``.
NN: Final[dict[str, tuple[list[Any], dict[str, Any]]]] = {
    **{name: ([X], {}) for name in (
        "relu", "gelu", "silu", "sigmoid", "softplus", "softmax", "log_softmax", "logsumexp", "relu6", "leaky_relu",
        "elu", "selu", "celu", "softsign", "log_sigmoid", "hard_sigmoid", "hard_silu", "hard_tanh", "tanh_shrink",
        "soft_shrink", "hard_shrink", "sparse_plus", "sparse_sigmoid", "squareplus", "sparsemax", "layer_norm",
        "normalize", "rms_normalization")},
    "threshold": ([X, 0.5, 0.0], {}),
    "glu": ([A(_grid(2, 4))], {}),
    "one_hot": ([LABELS, 3], {}),
    "multi_hot": ([A([[0, 2], [1, 1]], "int32"), 3], {}),
    "cross_entropy": ([X, LABELS], {}),
    "mse": ([X, X], {}),
    "dropout": ([KEY, X, 0.5], {}),
    "embedding": ([X, LABELS], {}),
    "dot_product_attention": ([A(_grid(1, 2, 1, 3)), A(_grid(1, 2, 1, 3)), A(_grid(1, 2, 1, 3))], {}),
    "binary_cross_entropy": ([PROBS, PROBS], {}),
    "categorical_cross_entropy": ([PROBS, PROBS], {}),
    "sparse_categorical_cross_entropy": ([PROBS, LABELS], {}),
    "ctc_loss": ([A([[1, 2]], "int32"), A(_grid(1, 4, 3)), A([2], "int32"), A([4], "int32")], {}),
    "moments": ([X, 0], {}),
    "conv1d": ([A(_grid(1, 4, 1)), A(_grid(2, 1, 1))], {}),
    "conv2d": ([A(_grid(1, 3, 3, 1)), A(_grid(2, 2, 1, 1))], {}),
    "conv3d": ([A(_grid(1, 2, 2, 2, 1)), A(_grid(1, 1, 1, 1, 1))], {}),
    "conv_transpose": ([A(_grid(1, 3, 3, 1)), A(_grid(2, 2, 1, 1))], {}),
    "depthwise_conv": ([A(_grid(1, 3, 3, 1)), A(_grid(2, 2, 1, 1))], {}),
    "separable_conv": ([A(_grid(1, 3, 3, 1)), A(_grid(2, 2, 1, 1)), A(_grid(1, 1, 1, 2))], {}),
    "max_pool1d": ([A(_grid(1, 4, 1)), 2], {}),
    "avg_pool1d": ([A(_grid(1, 4, 1)), 2], {}),
    "max_pool2d": ([A(_grid(1, 4, 4, 1)), 2], {}),
    "avg_pool2d": ([A(_grid(1, 4, 4, 1)), 2], {}),
    "max_pool3d": ([A(_grid(1, 2, 2, 2, 1)), 2], {}),
    "avg_pool3d": ([A(_grid(1, 2, 2, 2, 1)), 2], {}),
    "adaptive_avg_pool": ([A(_grid(1, 4, 4, 1)), 2], {}),
    "adaptive_max_pool": ([A(_grid(1, 4, 4, 1)), 2], {}),
    "batch_norm": ([A(_grid(2, 3)), A([0.5, 0.5, 0.5]), A([1.0, 1.0, 1.0])], {}),
    "group_norm": ([A(_grid(2, 4)), 2], {}),
    "instance_norm": ([A(_grid(1, 3, 2))], {}),
    "depth_to_space": ([A(_grid(1, 1, 1, 4)), 2], {}),
    "space_to_depth": ([A(_grid(1, 2, 2, 1)), 2], {}),
    "unfold": ([A(_grid(1, 1, 3, 3)), 2], {}),
    "fold": ([A(_grid(1, 4, 4)), 3, 2], {}),
    "psnr": ([X, X, 1.0], {}),
    "polar": ([X, X], {}),
    "ctc_decode": ([A(_grid(1, 4, 3)), A([4], "int32")], {}),
}

#: name -> (init args after the key, init kwargs, apply args after params, apply kwargs) of ``layers.<name>``.
LAYERS: Final[dict[str, tuple[tuple[Any, ...], dict[str, Any], list[Any], dict[str, Any]]]] = {
    "dense": ((3, 2), {}, [X], {}),
    "embedding": ((4, 2), {}, [LABELS], {}),
    "conv2d": ((1, 2, 2), {}, [A(_grid(1, 3, 3, 1))], {}),
    "layer_norm": ((3,), {}, [X], {}),
    "rms_norm": ((3,), {}, [X], {}),
    "mlp": ((3, 4), {}, [X], {}),
    "attention": ((4, 2), {}, [A(_grid(1, 2, 4))], {"heads": 2}),
    "transformer_block": ((4, 2), {}, [A(_grid(1, 2, 4))], {"heads": 2}),
    "gru": ((3, 2), {}, [A(_grid(1, 2, 3))], {}),
    "gru_cell": ((3, 2), {}, [X], {}),
    "lstm": ((3, 2), {}, [A(_grid(1, 2, 3))], {}),
    "lstm_cell": ((3, 2), {}, [X], {}),
    "conv1d": ((1, 2, 2), {}, [A(_grid(1, 4, 1))], {}),
    "conv3d": ((1, 1, 1), {}, [A(_grid(1, 2, 2, 2, 1))], {}),
    "conv_transpose": ((1, 1, 2), {}, [A(_grid(1, 3, 3, 1))], {}),
    "depthwise_conv": ((1, 2), {}, [A(_grid(1, 3, 3, 1))], {}),
    "separable_conv": ((1, 2, 2), {}, [A(_grid(1, 3, 3, 1))], {}),
    "max_pool": ((), {}, [A(_grid(1, 4, 4, 1))], {}),
    "avg_pool": ((), {}, [A(_grid(1, 4, 4, 1))], {}),
    "adaptive_avg_pool": ((), {}, [A(_grid(1, 4, 4, 1))], {}),
    "adaptive_max_pool": ((), {}, [A(_grid(1, 4, 4, 1))], {}),
    "batch_norm": ((3,), {}, [("S", "batch_norm", (3,)), A(_grid(2, 3))], {"training": True}),
    "group_norm": ((4,), {}, [A(_grid(2, 4))], {"groups": 2}),
}

#: Optimizers whose factory takes a required argument.
OPTIM_ARGS: Final[dict[str, dict[str, Any]]] = {"sgd": {"learning_rate": 0.1}}
#: The parameter tree every optimizer step updates (a matrix, whose factored moments adafactor uses).
OPTIM_PARAMS: Final = {"w": A(_grid(2, 3)), "b": A([0.5, -0.5, 0.25])}


#: The math ops beyond the standard (arraylayer/models/mathops/): name -> (args, kwargs).
MATHOPS: Final[dict[str, tuple[list[Any], dict[str, Any]]]] = {
    "top_k": ([X, 2], {}), "in_top_k": ([LABELS, X, 1], {}),
    **{name: ([A([1.0, 2.0, 3.0]), A([0, 0, 1], "int32")], {"num_segments": 2})
       for name in ("segment_sum", "segment_prod", "segment_max", "segment_min")},
    **{name: ([A([0.25, 0.5, 0.75])], {}) for name in ("rsqrt", "erf", "erfc", "erfinv", "view_as_real")},
    "logdet": ([A([[2.0, 1.0], [1.0, 2.0]])], {}),
    "stft": ([A(_grid(8)), 4, 2, 4], {}), "istft": ([A(_grid(3, 3)), 4, 2, 4], {}),
    "scatter": ([A([[0], [2]], "int32"), A([1.0, 2.0]), (3,)], {}),
    "scatter_update": ([A([1.0, 2.0, 3.0]), A([[0], [2]], "int32"), A([5.0, 6.0])], {}),
    "slice_update": ([A([1.0, 2.0, 3.0]), (1,), A([5.0])], {}),
    "slice": ([A([1.0, 2.0, 3.0]), (1,), (2,)], {}),
    "saturate_cast": ([A([1.0, 300.0]), "uint8"], {}),
    "einsum": (["ij,jk->ik", A([[1.0, 2.0]]), A([[1.0], [2.0]])], {}),
    "cdist": ([X, X], {}), "extract_sequences": ([A(_grid(6)), 2, 2], {}),
    "view_as_complex": ([A([[1.0, 2.0], [3.0, 4.0]])], {}),
}


def _identity(x: Any) -> Any:
    return x


#: The control flow and transforms, with bodies that only pass their arrays on: what a dtype does to
#: the function itself (its rows say: nothing). name -> (function, args, kwargs).
FLOW: Final[dict[str, tuple[Callable[..., Any], list[Any], dict[str, Any]]]] = {
    "scan": (lambda init, xs: al.scan(lambda c, x: (c, x), init, xs), [A([1.0, 2.0]), A([[1.0, 2.0], [3.0, 4.0]])], {}),
    "map": (lambda xs: al.map(_identity, xs), [A([[1.0, 2.0], [3.0, 4.0]])], {}),
    "fori_loop": (lambda x: al.fori_loop(0, 2, lambda i, c: c, x), [A([1.0, 2.0])], {}),
    "while_loop": (lambda x: al.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1]), (0, x)), [A([1.0, 2.0])], {}),
    "cond": (lambda x: al.cond(True, _identity, _identity, x), [A([1.0, 2.0])], {}),
    "switch": (lambda x: al.switch(1, [_identity, _identity], x), [A([1.0, 2.0])], {}),
    "associative_scan": (lambda x: al.associative_scan(lambda a, b: b, x), [A([1.0, 2.0, 3.0])], {}),
    "vmap": (lambda x: al.vmap(_identity)(x), [A([[1.0, 2.0], [3.0, 4.0]])], {}),
    "stop_gradient": (al.stop_gradient, [A([1.0, 2.0])], {}),
    "custom_gradient": (lambda x: al.custom_gradient(lambda y: (y, _identity))(x), [A([1.0, 2.0])], {}),
}


def _step(name: str) -> Callable[..., Any]:
    """``optim.<name>`` as one call: make the optimizer from the factory's arguments, then one
    init and one update of ``params`` with ``grads``."""
    factory = getattr(al.optim, name)

    def step(params: Any, grads: Any, **hyper: Any) -> Any:
        optimizer = factory(**hyper)
        state = optimizer.init(params)
        return optimizer.update(grads, state, params)

    factory_parameters = [p.replace(kind=p.KEYWORD_ONLY) for p in inspect.signature(factory).parameters.values()]
    step.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("params", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("grads", inspect.Parameter.POSITIONAL_OR_KEYWORD), *factory_parameters])
    step.__qualname__ = f"optim.{name} (init and update)"
    return step


def _layer(name: str, part: str) -> Callable[..., Any]:
    return getattr(getattr(al.layers, name), part)


def calls() -> dict[str, tuple[Callable[..., Any], list[Any], dict[str, Any]]]:
    """Every qualified name (as arraylayer.support names it) -> (function, args, kwargs)."""
    found: dict[str, tuple[Callable[..., Any], list[Any], dict[str, Any]]] = {}
    for name, (args, kwargs) in NN.items():
        found[f"nn.{name}"] = (getattr(al.nn, name), list(args), dict(kwargs))
    for name, (init_args, init_kwargs, apply_args, apply_kwargs) in LAYERS.items():
        found[f"layers.{name}.init"] = (_layer(name, "init"), [KEY, *init_args], {**init_kwargs, "dtype": "float32"})
        found[f"layers.{name}.apply"] = (_layer(name, "apply"), [P(name, *init_args, **init_kwargs), *apply_args],
                                         dict(apply_kwargs))
    found["layers.batch_norm.init_state"] = (al.layers.batch_norm.init_state, [KEY, 3], {"dtype": "float32"})
    for name in al.optim.__all__:
        if name in ("Optimizer", "from_transforms"):
            continue
        found[f"optim.{name}"] = (_step(name), [OPTIM_PARAMS, OPTIM_PARAMS], dict(OPTIM_ARGS.get(name, {})))
    for name, (args, kwargs) in MATHOPS.items():
        found[name] = (getattr(al, name), list(args), dict(kwargs))
    for name, (f, args, kwargs) in FLOW.items():
        f.__qualname__ = name
        found[name] = (f, list(args), dict(kwargs))
    return found


#: Rows whose dtype is the ``dtype=`` of what they make (the layers' init: their parameters').
def probes_dtype_keyword(name: str) -> bool:
    return name in ("nn.one_hot", "nn.multi_hot") or name.endswith((".init", ".init_state"))


def materialise(value: Any, dtype: str | None = None) -> Any:
    """``value`` with its abstract parts made on the active backend; with ``dtype``, the float32
    arrays (and the layers' parameters) are made in ``dtype`` instead (from NumPy's cast)."""
    if isinstance(value, tuple) and value and value[0] == "A":
        kind, array_dtype, values = value
        if dtype is not None and array_dtype == "float32":
            return native(np.asarray(values, np.float64), dtype)
        return al.asarray(values, dtype=array_dtype)
    if isinstance(value, tuple) and value and value[0] == "K":
        return al.random.key(value[1])
    if isinstance(value, tuple) and value and value[0] in ("P", "S"):
        layer = getattr(al.layers, value[1])
        make = layer.init_state if value[0] == "S" else layer.init  # "S": a stateful layer's state
        made = make(al.random.key(0), *value[2], **(value[3] if len(value) > 3 else {}))
        return made if dtype is None else al.tree_map(lambda leaf: _retyped_leaf(leaf, dtype), made)
    if isinstance(value, list):
        return [materialise(v, dtype) for v in value]
    if isinstance(value, dict):
        return {k: materialise(v, dtype) for k, v in value.items()}
    return value


def _retyped_leaf(leaf: Any, dtype: str) -> Any:
    if not hasattr(leaf, "dtype") or al.as_dtype(leaf.dtype).category != "float":
        return leaf
    return native(np.asarray(al.to_backend(leaf, "numpy"), np.float64), dtype)


def native(values: np.ndarray, dtype: str) -> Any:
    """An array of the active backend in ``dtype`` from float64 ``values`` (integers: their absolute
    values rounded; bool: nonzero), made through NumPy so that every dtype arraylayer holds can be made."""
    target = al.Dtype(dtype)
    if target.category == "bool":
        return al.asarray(values != 0)
    if target.category in ("int", "uint"):
        return al.astype(al.asarray(np.round(np.abs(values) * 4).astype(np.int32)), dtype)
    return al.astype(al.asarray(values.astype(np.float32)), dtype)
