"""Calls of the model toolkit's functions (nn, math ops, control flow, layers, optimizers) on arrays
of one low-precision (or half-precision) dtype, each with its oracle: the same call on NumPy float32
copies of the inputs, its float32 results rounded once to the dtype with ml_dtypes (a NaN as the
format's positive NaN). ``outcome`` runs one call on one backend and says what happened;
``python -m tests.lowp_nn_cases`` prints the whole table (/work/notes/lowpnn_audit.md).

The inputs are the format's own values (float32 randoms cast with ml_dtypes), so the oracle's
inputs are exactly the tested call's inputs.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

import arraylayer as al
from arraylayer import lowp
from arraylayer.errors import ArrayLayerError, UnsupportedDtypeError

BACKENDS = ("numpy", "jax", "torch", "tensorflow")
HALF = ("float16", "bfloat16")
LOW_FLOATS = tuple(d.name for d in al.all_low_precision_dtypes if d.kind == "f")
INTS = tuple(d.name for d in al.all_low_precision_dtypes if d.kind != "f")


def holds(backend: str, dtype: str) -> bool:
    return dtype in HALF or lowp.STATUS[backend][dtype] in ("computed", "stored")


def _ml(dtype: str) -> Any:
    return np.float16 if dtype == "float16" else getattr(ml_dtypes, dtype)


def on_backend(backend: str, values: np.ndarray) -> Any:
    """An ml_dtypes (or float16, int) NumPy array as ``backend``'s own array of that dtype."""
    name = values.dtype.name
    if backend == "numpy":
        return values
    if backend == "jax":
        import jax.numpy as jnp

        return jnp.asarray(values)
    if backend == "torch":
        import torch

        if name in lowp.FORMATS or name == "bfloat16":
            return torch.from_numpy(values.view(np.uint8 if values.itemsize == 1 else np.int16).copy()).view(
                getattr(torch, name))
        return torch.from_numpy(values.copy())
    import tensorflow as tf

    if name in lowp.FORMATS:
        return tf.cast(tf.constant(values.astype(np.float32)), getattr(tf.dtypes.experimental, name))
    return tf.constant(values)


class Maker:
    """Makes a call's arrays: ``f(*shape)`` random values of the tested dtype, ``i(values)`` int32
    arrays. For the oracle (``backend`` None) the same values as NumPy float32 (int32) arrays."""

    def __init__(self, dtype: str, backend: str | None, seed: int) -> None:
        self.dtype, self.backend, self.rng = dtype, backend, np.random.default_rng(seed)

    def f(self, *shape: int, low: float = -2.0, high: float = 2.0) -> Any:
        values = self.rng.uniform(low, high, shape).astype(np.float32)
        if self.dtype == "float8_e8m0fnu":  # powers of two only, no zero, no sign
            values = np.abs(values) + np.float32(0.25)
        if self.dtype.startswith("float4") or self.dtype.startswith("float6"):
            values = np.clip(values, -3.0, 3.0)
        typed = values.astype(_ml(self.dtype))
        return typed.astype(np.float32) if self.backend is None else on_backend(self.backend, typed)

    def i(self, values: Any) -> Any:
        values = np.asarray(values, np.int32)
        return values if self.backend is None else on_backend(self.backend, values)

    def key(self, seed: int = 0) -> Any:
        with al.use_backend(self.backend or "numpy"):
            return al.random.key(seed)


Case = Callable[[Maker], Any]
#: calls whose arithmetic is the caller's element-wise functions (a loop's body) or the api's, one
#: rounding per operation by the element-wise rule: their oracle is that rule on NumPy (the same call
#: on NumPy arrays of the dtype), and every backend must give its bits
OP_BY_OP = ("flow.", "np.histogram")
#: calls whose result keeps float32 (a cast out of the format)
KEEPS_FLOAT32 = ("math.saturate_cast",)
#: result dtypes that are no rounding's (polar's complex64 from float8 computed in float32)
UNROUNDED = ("float32", "complex64")
nn, L = al.nn, al.layers


def _optimizer_step(make: Any) -> Case:
    def step(a: Maker) -> Any:
        params = {"w": a.f(3, 4), "b": a.f(4)}
        grads = {"w": a.f(3, 4, low=-0.5, high=0.5), "b": a.f(4, low=-0.5, high=0.5)}
        opt = make()
        state = opt.init(params)
        params, state = opt.update(grads, state, params)  # one step: the state is rounded after it
        return params["w"], params["b"]
    return step


def _layer(layer: Any, init: tuple, shape: tuple, **kwargs: Any) -> Case:
    def call(a: Maker) -> Any:
        with al.use_backend(a.backend or "numpy"):
            params = layer.init(a.key(1), *init, dtype="float32")
        params = al_tree_map(lambda v: a.f(*(int(s) for s in v.shape), low=-0.5, high=0.5), params)
        return layer.apply(params, a.f(*shape), **kwargs)
    return call


def al_tree_map(f: Callable[[Any], Any], tree: Any) -> Any:
    from arraylayer.models.tree import tree_map

    return tree_map(f, tree)


def _mathops() -> Any:
    import arraylayer.models.mathops as mathops

    return mathops


def cases() -> dict[str, Case]:
    mo = _mathops()
    c: dict[str, Case] = {}
    # nn: the framework kernels
    c["nn.conv1d"] = lambda a: nn.conv1d(a.f(2, 7, 3), a.f(3, 3, 4, low=-1, high=1))
    c["nn.conv2d"] = lambda a: nn.conv2d(a.f(2, 5, 5, 3), a.f(3, 3, 3, 4, low=-1, high=1), padding="SAME")
    c["nn.conv3d"] = lambda a: nn.conv3d(a.f(1, 4, 4, 4, 2), a.f(2, 2, 2, 2, 3, low=-1, high=1))
    c["nn.conv_transpose"] = lambda a: nn.conv_transpose(a.f(1, 4, 4, 2), a.f(3, 3, 3, 2, low=-1, high=1), stride=2,
                                                         data_format="NHWC")
    c["nn.depthwise_conv"] = lambda a: nn.depthwise_conv(a.f(1, 5, 5, 2), a.f(3, 3, 2, 2, low=-1, high=1))
    c["nn.separable_conv"] = lambda a: nn.separable_conv(a.f(1, 5, 5, 2), a.f(3, 3, 2, 1, low=-1, high=1),
                                                         a.f(1, 1, 2, 3, low=-1, high=1))
    for n, shape in ((1, (2, 6, 3)), (2, (2, 4, 4, 3)), (3, (1, 4, 4, 4, 2))):
        c[f"nn.max_pool{n}d"] = lambda a, n=n, s=shape: getattr(nn, f"max_pool{n}d")(a.f(*s), 2)
        c[f"nn.avg_pool{n}d"] = lambda a, n=n, s=shape: getattr(nn, f"avg_pool{n}d")(a.f(*s), 2)
    c["nn.avg_pool2d SAME"] = lambda a: nn.avg_pool2d(a.f(2, 5, 5, 3), 2, padding="SAME")
    c["nn.adaptive_avg_pool"] = lambda a: nn.adaptive_avg_pool(a.f(1, 5, 5, 2), 2)
    c["nn.adaptive_max_pool"] = lambda a: nn.adaptive_max_pool(a.f(1, 5, 5, 2), 2)
    # activations
    for name in ("relu", "gelu", "silu", "sigmoid", "softplus", "relu6", "leaky_relu", "elu", "selu", "celu",
                 "softsign", "log_sigmoid", "hard_sigmoid", "hard_silu", "hard_tanh", "tanh_shrink", "soft_shrink",
                 "hard_shrink", "sparse_plus", "sparse_sigmoid", "squareplus", "glu", "sparsemax", "softmax",
                 "log_softmax", "logsumexp"):
        c[f"nn.{name}"] = lambda a, name=name: getattr(nn, name)(a.f(3, 8, low=-4, high=4))
    c["nn.gelu approximate"] = lambda a: nn.gelu(a.f(3, 8, low=-4, high=4), approximate=True)
    c["nn.threshold"] = lambda a: nn.threshold(a.f(3, 8), 0.5, 0.0)
    # losses, normalisation, the rest
    c["nn.mse"] = lambda a: nn.mse(a.f(4, 3), a.f(4, 3))
    c["nn.cross_entropy"] = lambda a: nn.cross_entropy(a.f(4, 5), a.i([0, 2, 4, 1]))
    c["nn.binary_cross_entropy"] = lambda a: nn.binary_cross_entropy(a.f(4, 3), a.f(4, 3, low=0, high=1),
                                                                     from_logits=True)
    c["nn.categorical_cross_entropy"] = lambda a: nn.categorical_cross_entropy(a.f(4, 5), a.f(4, 5, low=0, high=1),
                                                                               from_logits=True)
    c["nn.sparse_categorical_cross_entropy"] = lambda a: nn.sparse_categorical_cross_entropy(
        a.f(4, 5), a.i([0, 2, 4, 1]), from_logits=True)
    c["nn.ctc_loss"] = lambda a: nn.ctc_loss(a.i([[1, 2], [2, 1]]), a.f(2, 5, 4), a.i([2, 2]), a.i([5, 5]))
    c["nn.layer_norm"] = lambda a: nn.layer_norm(a.f(3, 8))
    c["nn.rms_normalization"] = lambda a: nn.rms_normalization(a.f(3, 8))
    c["nn.moments"] = lambda a: nn.moments(a.f(3, 8), 1)
    c["nn.normalize"] = lambda a: nn.normalize(a.f(3, 8))
    c["nn.batch_norm"] = lambda a: nn.batch_norm(a.f(4, 3), a.f(3), a.f(3, low=0.5, high=2))
    c["nn.group_norm"] = lambda a: nn.group_norm(a.f(2, 4, 4), 2)
    c["nn.instance_norm"] = lambda a: nn.instance_norm(a.f(2, 4, 3))
    c["nn.dropout"] = lambda a: nn.dropout(a.key(3), a.f(4, 8), 0.5)
    c["nn.embedding"] = lambda a: nn.embedding(a.f(5, 3), a.i([0, 4, 2]))
    c["nn.dot_product_attention"] = lambda a: nn.dot_product_attention(a.f(1, 3, 2, 4), a.f(1, 3, 2, 4),
                                                                       a.f(1, 3, 2, 4))
    c["nn.depth_to_space"] = lambda a: nn.depth_to_space(a.f(1, 2, 2, 4), 2)
    c["nn.space_to_depth"] = lambda a: nn.space_to_depth(a.f(1, 4, 4, 1), 2)
    c["nn.unfold"] = lambda a: nn.unfold(a.f(1, 2, 4, 4), 2)
    c["nn.fold"] = lambda a: nn.fold(a.f(1, 8, 9), 4, 2)
    c["nn.psnr"] = lambda a: nn.psnr(a.f(4, 4, low=0, high=1), a.f(4, 4, low=0, high=1), 1.0)
    c["nn.polar"] = lambda a: nn.polar(a.f(4, low=0, high=2), a.f(4))
    c["nn.ctc_decode"] = lambda a: nn.ctc_decode(a.f(2, 5, 4), a.i([5, 5]))
    c["nn.one_hot"] = lambda a: nn.one_hot(a.i([0, 2]), 3, dtype=a.dtype)
    # math ops
    for name in ("rsqrt", "erf", "erfc", "erfinv"):
        c[f"math.{name}"] = lambda a, name=name: getattr(mo, name)(a.f(8, low=0.1 if name == "rsqrt" else -0.9,
                                                                        high=0.9))
    c["math.logdet"] = lambda a: mo.logdet(a.f(3, 3))
    c["math.top_k"] = lambda a: tuple(mo.top_k(a.f(2, 6), 3))
    c["math.in_top_k"] = lambda a: mo.in_top_k(a.i([1, 0]), a.f(2, 6), 3)
    for name in ("segment_sum", "segment_prod", "segment_max", "segment_min"):
        c[f"math.{name}"] = lambda a, name=name: getattr(mo, name)(a.f(6), a.i([0, 0, 1, 1, 2, 2]), 3)
    c["math.stft"] = lambda a: mo.stft(a.f(16), 8, 4, 8)
    c["math.scatter"] = lambda a: mo.scatter(a.i([[0], [2]]), a.f(2), (4,))
    c["math.scatter_update"] = lambda a: mo.scatter_update(a.f(4), a.i([[0], [2]]), a.f(2))
    c["math.slice_update"] = lambda a: mo.slice_update(a.f(4, 4), (1, 1), a.f(2, 2))
    c["math.saturate_cast"] = lambda a: mo.saturate_cast(a.f(4), "float32")
    c["math.slice"] = lambda a: mo.slice(a.f(4, 4), (1, 0), (2, 3))
    c["math.einsum"] = lambda a: mo.einsum("ij,jk->ik", a.f(2, 3), a.f(3, 2))
    c["math.cdist"] = lambda a: mo.cdist(a.f(3, 2), a.f(4, 2))
    c["math.extract_sequences"] = lambda a: mo.extract_sequences(a.f(8), 4, 2)
    # numpy-style additions of issue 40
    c["np.median"] = lambda a: al.median(a.f(7))
    c["np.percentile"] = lambda a: al.percentile(a.f(7), 30.0)
    c["np.isclose"] = lambda a: al.isclose(a.f(6), a.f(6))
    c["np.allclose"] = lambda a: al.allclose(a.f(6), a.f(6))
    c["np.nan_to_num"] = lambda a: al.nan_to_num(a.f(6))
    c["np.diag"] = lambda a: al.diag(a.f(3, 3))
    c["np.kron"] = lambda a: al.kron(a.f(2, 2), a.f(2, 2))
    c["np.histogram"] = lambda a: al.histogram(a.f(10), bins=3)[0]
    # control flow
    c["flow.scan"] = lambda a: al.scan(lambda h, x: (al.add(h, x), al.multiply(h, x)), a.f(3), a.f(4, 3))
    c["flow.fori_loop"] = lambda a: al.fori_loop(0, 3, lambda i, h: al.multiply(h, h), a.f(4, low=-1.2, high=1.2))
    c["flow.while_loop"] = lambda a: al.while_loop(lambda s: al.less(s[0], 3),
                                                   lambda s: (al.add(s[0], 1), al.add(s[1], s[1])), (0, a.f(4)))[1]
    c["flow.cond"] = lambda a: al.cond(True, lambda x: al.exp(x), lambda x: x, a.f(4))
    c["flow.switch"] = lambda a: al.switch(1, [lambda x: x, lambda x: al.negative(x)], a.f(4))
    c["flow.map"] = lambda a: al.map(lambda x: al.sum(x), a.f(3, 4))
    c["flow.associative_scan"] = lambda a: al.associative_scan(al.add, a.f(6))
    c["flow.vmap"] = lambda a: al.vmap(lambda x: al.multiply(x, x))(a.f(3, 4))
    # layers
    c["layers.dense"] = _layer(L.dense, (4, 3), (2, 4))
    c["layers.conv2d"] = _layer(L.conv2d, (2, 3), (1, 4, 4, 2))
    c["layers.layer_norm"] = _layer(L.layer_norm, (4,), (2, 4))
    c["layers.rms_norm"] = _layer(L.rms_norm, (4,), (2, 4))
    c["layers.group_norm"] = _layer(L.group_norm, (4,), (1, 3, 4), groups=2)
    c["layers.gru_cell"] = _layer(L.gru_cell, (3, 2), (2, 3))
    c["layers.gru"] = lambda a: _layer(L.gru, (3, 2), (2, 4, 3))(a)[0]
    c["layers.lstm"] = lambda a: _layer(L.lstm, (3, 2), (2, 4, 3))(a)[0]
    # optimizers
    o = al.optim
    c["optim.sgd"] = _optimizer_step(lambda: o.sgd(0.1, momentum=0.9))
    c["optim.adam"] = _optimizer_step(lambda: o.adam(0.1))
    c["optim.adamw"] = _optimizer_step(lambda: o.adamw(0.1))
    c["optim.rmsprop"] = _optimizer_step(lambda: o.rmsprop(0.1))
    c["optim.adagrad"] = _optimizer_step(lambda: o.adagrad(0.1))
    c["optim.lion"] = _optimizer_step(lambda: o.lion(0.1))
    c["optim.adafactor"] = _optimizer_step(lambda: o.adafactor(0.1))
    c["optim.lamb"] = _optimizer_step(lambda: o.lamb(0.1))
    return c


CASES = cases()


def _leaves(result: Any) -> list[Any]:
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _values(leaf: Any) -> np.ndarray:
    """A result leaf as float64/int/bool NumPy values (low-precision arrays decoded)."""
    if hasattr(leaf, "native"):
        leaf = leaf.native
    if not hasattr(leaf, "dtype"):
        return np.asarray(leaf)
    if lowp.format_of(leaf) is not None:
        leaf = lowp.decode(leaf)
    kind = al.as_dtype(leaf.dtype).kind
    if al.as_dtype(leaf.dtype).name == "bfloat16":  # exact in float32
        leaf = al.astype(leaf, "float32")
    leaf = np.asarray(al.get_backend(al.backend_of(leaf).name).to_numpy(leaf))
    return leaf.astype(np.float64) if kind == "f" else leaf


def oracle(name: str, dtype: str, seed: int = 0) -> list[Any]:
    """The call on NumPy float32 copies, float32 results rounded once to ``dtype`` (ints, bools kept);
    for ``OP_BY_OP`` calls the call on NumPy arrays of ``dtype``."""
    by_op = name.startswith(OP_BY_OP)
    with al.use_backend("numpy"):
        result = CASES[name](Maker(dtype, "numpy" if by_op else None, seed))
    out = []
    for leaf in _leaves(result):
        if by_op:
            out.append((al.as_dtype(leaf.dtype).name, _values(leaf)))
            continue
        leaf = np.asarray(leaf.native if hasattr(leaf, "native") else leaf)
        if leaf.dtype == np.float32 and name not in KEEPS_FLOAT32:
            leaf = np.where(np.isnan(leaf), np.float32(np.nan), leaf)
            out.append((dtype, leaf.astype(_ml(dtype)).astype(np.float64)))
        else:
            out.append((leaf.dtype.name, leaf))
    return out


def _same(got: np.ndarray, want: np.ndarray) -> int:
    """How many elements differ (NaN equals NaN; +0 and -0 differ)."""
    got, want = np.broadcast_to(got, want.shape) if got.shape != want.shape and got.size == 1 else got, want
    if got.shape != want.shape:
        return max(got.size, want.size)
    if want.dtype.kind != "f":
        return int(np.sum(got != want))
    bad = ~((got == want) & (np.signbit(got) == np.signbit(want)) | (np.isnan(got) & np.isnan(want)))
    return int(np.sum(bad))


def outcome(name: str, backend: str, dtype: str, seed: int = 0) -> str:
    """``"="`` (the oracle's bits and dtype), ``"≠k"`` (k elements differ), ``"dtype X"`` (a result of
    another dtype), ``"U"``/``"I"``/``"P"`` (UnsupportedDtypeError / InvalidDtypeError /
    TypePromotionError), ``"error T: ..."`` (another arraylayer error), ``"raw T: ..."`` (a framework's own error)."""
    try:
        want = oracle(name, dtype, seed)
    except Exception as e:  # noqa: BLE001 - the float32 call itself
        return f"no oracle: {type(e).__name__}: {str(e)[:80]}"
    try:
        with al.use_backend(backend):
            result = CASES[name](Maker(dtype, backend, seed))
        got = _leaves(result)
    except UnsupportedDtypeError:
        return "U"
    except al.errors.InvalidDtypeError:
        return "I"
    except al.errors.TypePromotionError:
        return "P"
    except ArrayLayerError as e:
        return f"error {type(e).__name__}: {str(e)[:100]}"
    except Exception as e:  # noqa: BLE001 - what the audit looks for
        return f"raw {type(e).__module__}.{type(e).__name__}: {str(e)[:100]}"
    if len(got) != len(want):
        return f"{len(got)} results, want {len(want)}"
    differ, ulps = 0, 0.0
    for leaf, (want_dtype, values) in zip(got, want, strict=True):
        have = al.as_dtype(leaf.dtype).name if hasattr(leaf, "dtype") else type(leaf).__name__
        if have != want_dtype and hasattr(leaf, "dtype"):
            return f"dtype {have}"
        if want_dtype in UNROUNDED:  # float32 arithmetic kept as it is: the frameworks' float32 ulps apart
            differ += int(np.sum(~np.isclose(_values(leaf), values, rtol=1e-6, atol=1e-7, equal_nan=True)))
            continue
        differ += _same(_values(leaf), values)
        ulps = max(ulps, _ulps(_values(leaf), values, want_dtype))
    if not differ:
        return "="
    return f"≠{differ} (≤{ulps:.3g} ulp)" if ulps else f"≠{differ}"


def _ulps(got: np.ndarray, want: np.ndarray, dtype: str) -> float:
    """The largest difference in units of ``dtype``'s spacing at the oracle's value (half precision)."""
    if dtype not in HALF or want.dtype.kind != "f" or got.shape != want.shape:
        return 0.0
    finite = np.isfinite(want) & np.isfinite(got)
    if not finite.any():
        return 0.0
    info = ml_dtypes.finfo(_ml(dtype))
    magnitude = np.maximum(np.abs(want[finite]), float(info.smallest_normal))
    spacing = 2.0 ** (np.floor(np.log2(magnitude)) - info.nmant)
    return float(np.max(np.abs(got[finite] - want[finite]) / spacing))


def table(dtypes: tuple[str, ...], backends: tuple[str, ...] = BACKENDS) -> str:
    lines = []
    for dtype in dtypes:
        lines.append(f"\n### {dtype}\n\n| function | " + " | ".join(backends) + " |\n|---|" + "---|" * len(backends))
        for name in CASES:
            cells = [outcome(name, b, dtype) if holds(b, dtype) else "·" for b in backends]
            lines.append(f"| {name} | " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    for dtype in tuple(sys.argv[1:]) or (*LOW_FLOATS, *HALF):
        print(table((dtype,)), flush=True)
