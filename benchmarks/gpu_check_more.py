"""The second half of ``gpu_check.py``: what arrived after its first run on a GPU.

Low-precision manipulation (every code through the functions that move elements), the keyed
random draws and dropout masks (the same bits on the GPU as on the CPU), a transformer block
trained three Adam steps on the GPU and on the CPU, JAX's own float8 arithmetic on the GPU against
arraylayer's rule, and the timings of the float8 casts both ways and of ``lowp.scaled_matmul``.
``gpu_check.py`` calls :func:`run_more` after its own checks for each backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

import arraylayer as al
from arraylayer.models import layers
from arraylayer import lowp

# Each: arraylayer's call on the array (and the device), NumPy's on the codes.
MOVES: dict[str, tuple[Callable[[Any, str], Any], Callable[[np.ndarray], np.ndarray]]] = {
    "flip": (lambda x, d: al.flip(x, axis=0), lambda c: np.flip(c, 0)),
    "roll": (lambda x, d: al.roll(x, 3, axis=1), lambda c: np.roll(c, 3, axis=1)),
    "concat": (lambda x, d: al.concat([x, al.flip(x, axis=1)], axis=0), lambda c: np.concatenate([c, c[:, ::-1]])),
    "take": (lambda x, d: al.take(x, al.asarray([3, 0, 15, 3], device=d), axis=1), lambda c: c[:, [3, 0, 15, 3]]),
    "permute_dims": (lambda x, d: al.permute_dims(x, (1, 0)), lambda c: c.T),
    "reshape": (lambda x, d: al.reshape(al.permute_dims(x, (1, 0)), (8, 32)), lambda c: c.T.reshape(8, 32)),
    "tril": (lambda x, d: al.tril(x), np.tril),
    "Array getitem": (lambda x, d: al.Array(x)[::-2, 1::3].native, lambda c: c[::-2, 1::3]),
}


def _float_formats(backend: str) -> list[str]:
    return [d.name for d in al.valid_low_precision_dtypes(backend) if al.isdtype(d, "real floating")]


def run_more(backend: str, check: Callable[..., Any], device: str, to_numpy: Callable[[Any], np.ndarray],
             paired_median: Callable[..., dict[str, float]], wait: Callable[[Any], Any]) -> None:
    """The checks above for ``backend`` (already set), each recorded by ``check``."""

    @check(f"{backend}: lowp moving bits on gpu (every code of each float format)")
    def moving() -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in _float_formats(backend):
            mask = np.uint8((1 << lowp.get_format(name).bits) - 1)
            codes = (np.arange(256, dtype=np.uint8) & mask).reshape(16, 16)
            x = al.asarray(codes.view(getattr(ml_dtypes, name)), device=device)
            seen = {}
            for op, (ours, numpy_op) in MOVES.items():
                try:
                    got = ours(x, device)
                    bits = np.asarray(to_numpy(got)).view(np.uint8) & mask
                    seen[op] = int(np.sum(bits != numpy_op(codes))) if al.dev(got) == device else f"on {al.dev(got)}"
                except Exception as error:  # a refusal is recorded (e8m0 refuses tril on every backend)
                    seen[op] = f"{type(error).__name__}: {str(error)[:80]}"
            out[name] = seen
        return out

    @check(f"{backend}: keyed random draws and dropout, gpu vs cpu bits")
    def random_bits() -> dict[str, Any]:
        key = al.random.key(11)
        draws = {
            "uniform": lambda d: al.random.uniform(key, (4099,), device=d),
            "normal": lambda d: al.random.normal(key, (4099,), device=d),
            "randint": lambda d: al.random.randint(key, (4099,), 0, 1000, device=d),
            "bernoulli": lambda d: al.random.bernoulli(key, 0.3, (4099,), device=d),
            "dropout": lambda d: al.nn.dropout(key, al.random.normal(al.random.key(2), (64, 65), device=d), 0.1),
        }
        out = {}
        for name, draw in draws.items():
            on_gpu, on_cpu = draw(device), draw("cpu")
            a, b = np.asarray(to_numpy(on_gpu)), np.asarray(to_numpy(on_cpu))
            out[name] = {"device": al.dev(on_gpu), "differ": int(np.sum(a != b)), "of": int(a.size)}
            if a.dtype == np.float32 and out[name]["differ"]:  # how far: units in the last place
                out[name]["max_ulps"] = int(np.max(np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32))))
        return out

    @check(f"{backend}: transformer block, 3 Adam steps on gpu vs cpu")
    def model() -> dict[str, Any]:
        def train(place: str) -> tuple[list[float], str]:
            with al.use_device(place):
                params = layers.transformer_block.init(al.random.key(0), 32, 4)
                x = al.random.normal(al.random.key(1), (2, 16, 32))
                optimizer = al.optim.adam(1e-2)
                state = optimizer.init(params)

                def loss_fn(p: Any) -> Any:
                    y = layers.transformer_block.apply(p, x, heads=4)
                    return al.mean(y * y)

                losses = []
                for _ in range(3):
                    loss, grads = al.value_and_grad(loss_fn)(params)
                    params, state = optimizer.update(grads, state, params)
                    losses.append(float(loss))
                return losses, al.dev(loss)
        gpu, where = train(device)
        cpu, _ = train("cpu")
        return {"device": where, "losses_gpu": gpu, "losses_cpu": cpu,
                "max_rel": max(abs(g - c) / abs(c) for g, c in zip(gpu, cpu, strict=True))}

    @check(f"{backend}: float32 nn functions, gpu vs cpu (largest relative difference)")
    def nn_values() -> dict[str, float]:
        rng = np.random.default_rng(6)
        q, k, v = (rng.standard_normal((2, 16, 4, 8)).astype(np.float32) for _ in range(3))
        a = rng.standard_normal((3, 16, 32)).astype(np.float32)
        w = rng.standard_normal((32, 24)).astype(np.float32)
        cases = {
            "dot_product_attention causal": lambda p: al.nn.dot_product_attention(*(p(t) for t in (q, k, v)), causal=True),
            "batched matmul": lambda p: al.matmul(p(a), p(w)),
            "layer_norm": lambda p: al.nn.layer_norm(p(a)),
            "gelu": lambda p: al.nn.gelu(p(a)),
            "log_softmax": lambda p: al.nn.log_softmax(p(a), axis=-1),
            "dense": lambda p: layers.dense.apply({"w": p(w), "b": p(w[0])}, p(a)),
        }
        worst = {}
        for name, f in cases.items():
            gpu = to_numpy(f(lambda t: al.asarray(t, device=device)))
            cpu = to_numpy(f(lambda t: al.asarray(t, device="cpu")))
            worst[name] = float(np.max(np.abs(gpu - cpu)) / np.max(np.abs(cpu)))
        return worst

    if backend == "jax":
        @check("jax: jax's own float8 arithmetic on gpu vs arraylayer's rule (every pair of codes)")
        def jax_native() -> dict[str, Any]:
            import jax
            gpu = next(d for d in jax.devices() if d.platform == ("cpu" if device == "cpu" else "gpu"))
            codes = np.arange(256, dtype=np.uint8)
            out = {}
            for name in ("float8_e4m3fn", "float8_e5m2"):
                kind = getattr(ml_dtypes, name)
                a, b = np.repeat(codes, 256).view(kind), np.tile(codes, 256).view(kind)
                with al.use_backend("numpy"):
                    rule = {"add": al.add(a, b), "multiply": al.multiply(a, b), "exp": al.exp(a)}
                ja, jb = jax.device_put(a, gpu), jax.device_put(b, gpu)
                native = {"add": ja + jb, "multiply": ja * jb, "exp": jax.numpy.exp(ja)}
                seen = {}
                for op, expected in rule.items():
                    got = np.asarray(native[op])
                    both_nan = np.isnan(got.astype(np.float32)) & np.isnan(np.asarray(expected).astype(np.float32))
                    seen[op] = int(np.sum((got.view(np.uint8) != np.asarray(expected).view(np.uint8)) & ~both_nan))
                out[name] = seen
            return out

    @check(f"{backend}: float8 casts both ways vs the framework's own on gpu (2**22 values)")
    def cast_speed() -> dict[str, Any]:
        x = al.asarray(np.random.default_rng(3).standard_normal(2**22 if device != "cpu" else 2**16).astype(np.float32) * 100, device=device)
        out = {}
        for name in ("float8_e4m3fn", "float8_e5m2"):
            native_type = _native_type(backend, name)
            codes = lowp.cast(x, name)
            out[f"to {name}"] = paired_median(lambda n=name: lowp.cast(x, n), lambda t=native_type: _native_cast(backend, x, t),
                                              wait, calls=20)
            out[f"from {name}"] = paired_median(lambda c=codes: al.astype(c, "float32"),
                                                lambda c=codes: _native_cast(backend, c, _native_type(backend, "float32")),
                                                wait, calls=20)
        return out

    side = 256 if device == "cpu" else 4096  # a dry run on a CPU takes the small size

    @check(f"{backend}: lowp.scaled_matmul {side}^3 on gpu vs float32 matmul")
    def scaled_speed() -> dict[str, Any]:
        rng = np.random.default_rng(5)
        a = al.asarray(rng.standard_normal((side, side)).astype(np.float32), device=device)
        b = al.asarray(rng.standard_normal((side, side)).astype(np.float32), device=device)
        qa, sa = lowp.quantize(a, "float8_e4m3fn")
        qb, sb = lowp.quantize(b, "float8_e4m3fn")
        out = {"vs float32 matmul": paired_median(
            lambda: lowp.scaled_matmul(qa, sa, qb, sb, "float8_e4m3fn", "float8_e4m3fn"), lambda: al.matmul(a, b), wait,
            rounds=7, calls=5)}
        if backend == "torch" and device != "cpu":
            import torch
            ta, tb = a.to(torch.float8_e4m3fn), b.t().contiguous().to(torch.float8_e4m3fn).t()
            one = torch.tensor(1.0, device="cuda")
            out["vs torch._scaled_mm"] = paired_median(
                lambda: lowp.scaled_matmul(qa, sa, qb, sb, "float8_e4m3fn", "float8_e4m3fn"),
                lambda: torch._scaled_mm(ta, tb, scale_a=one, scale_b=one, out_dtype=torch.float32), wait, rounds=7, calls=5)
        return out


def _native_type(backend: str, name: str) -> Any:
    if backend == "torch":
        import torch
        return getattr(torch, name)
    import jax.numpy as jnp
    return getattr(jnp, name)


def _native_cast(backend: str, x: Any, kind: Any) -> Any:
    return x.to(kind) if backend == "torch" else x.astype(kind)


def native_decodes(backend: str, check: Callable[..., Any], device: str, to_numpy: Callable[[Any], np.ndarray]) -> None:
    """Whether the framework's own float8 -> float32 cast on the GPU gives ml_dtypes' bits for every
    code (arraylayer decodes through a table where it does not know)."""

    @check(f"{backend}: the framework's own float8 -> float32 cast on gpu vs ml_dtypes (every code)")
    def decodes() -> dict[str, Any]:
        out = {}
        for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"):
            kind = getattr(ml_dtypes, name)
            codes = np.arange(256, dtype=np.uint8).view(kind)
            expected = codes.astype(np.float32)
            try:
                native = al.asarray(codes, device=device)
                got = np.asarray(to_numpy(_native_cast(backend, native, _native_type(backend, "float32"))))
            except Exception as error:  # a format the framework lacks
                out[name] = f"{type(error).__name__}: {str(error)[:80]}"
                continue
            same_nan = np.isnan(got) & np.isnan(expected)
            out[name] = {"differ": int(np.sum((got.view(np.uint32) != expected.view(np.uint32)) & ~same_nan)),
                         "nan_bits_differ": int(np.sum((got.view(np.uint32) != expected.view(np.uint32)) & same_nan))}
        return out
