"""arraylayer keeps JAX's sharding: arrays sharded over 4 CPU devices stay sharded as jax.numpy keeps them.

XLA's device count is fixed when JAX starts (``XLA_FLAGS=--xla_force_host_platform_device_count=4``)
and this test process has already started JAX with one device, so the checks run in one
subprocess, which prints one JSON line per case: the sharding arraylayer's result has, the
sharding the same computation written with ``jax.numpy`` has (the oracle), and whether the
values agree. Cases run eagerly and inside ``jax.jit``, on row-sharded, column-sharded and
replicated inputs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = r'''
import json
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import arraylayer as al

assert len(jax.devices()) == 4, jax.devices()
mesh = Mesh(np.array(jax.devices()).reshape(2, 2), ("a", "b"))
LAYOUTS = {"rows": P(("a", "b"), None), "columns": P(None, ("a", "b")), "grid": P("a", "b"), "replicated": P()}
host = np.arange(64, dtype=np.float32).reshape(8, 8) / 7
ints = np.arange(64, dtype=np.int8).reshape(8, 8)

# name -> (arraylayer's computation, the same with jax.numpy); x: float32, i: int8, both sharded alike
CASES = {
    "add weak scalar": (lambda x, i: al.add(x, 1.5), lambda x, i: x + 1.5),
    "int8 + float32": (lambda x, i: al.add(i, x), lambda x, i: i.astype(jnp.float32) + x),
    "int8 * weak int": (lambda x, i: al.multiply(i, 3), lambda x, i: i * 3),
    "astype": (lambda x, i: al.astype(x, "float64"), lambda x, i: x.astype(jnp.float64)),
    "exp": (lambda x, i: al.exp(x), lambda x, i: jnp.exp(x)),
    "where": (lambda x, i: al.where(al.greater(x, 4.0), x, 0.0), lambda x, i: jnp.where(x > 4.0, x, 0.0)),
    "sum axis 0": (lambda x, i: al.sum(x, axis=0), lambda x, i: jnp.sum(x, axis=0)),
    "sum axis 1": (lambda x, i: al.sum(x, axis=1), lambda x, i: jnp.sum(x, axis=1)),
    "int8 sum": (lambda x, i: al.sum(i, axis=1), lambda x, i: jnp.sum(i, axis=1, dtype=jnp.int32)),  # the default int
    "mean": (lambda x, i: al.mean(x), lambda x, i: jnp.mean(x)),
    "matmul": (lambda x, i: al.matmul(x, x), lambda x, i: x @ x),
    "concat": (lambda x, i: al.concat([x, x], axis=0), lambda x, i: jnp.concatenate([x, x], axis=0)),
    "zeros_like": (lambda x, i: al.zeros_like(x), lambda x, i: jnp.zeros_like(x)),
    "full_like": (lambda x, i: al.full_like(i, 2), lambda x, i: jnp.full_like(i, 2)),
    "Array operators": (lambda x, i: (al.Array(x) * 2 + al.Array(i)).native,
                        lambda x, i: x * 2 + i.astype(jnp.float32)),
    "Array namespace": (lambda x, i: al.Array(x).__array_namespace__().sum(al.Array(x), axis=0).native,
                        lambda x, i: jnp.sum(x, axis=0)),
    "take": (lambda x, i: al.take(x, jnp.array([0, 3, 5]), axis=1), lambda x, i: jnp.take(x, jnp.array([0, 3, 5]), axis=1)),
    "sort": (lambda x, i: al.sort(x, axis=1), lambda x, i: jnp.sort(x, axis=1)),
    "cumulative_sum": (lambda x, i: al.cumulative_sum(x, axis=0), lambda x, i: jnp.cumulative_sum(x, axis=0)),
    "softmax": (lambda x, i: al.nn.softmax(x, axis=-1), lambda x, i: jax.nn.softmax(x, axis=-1)),
    "Array slice": (lambda x, i: al.Array(x)[2:6].native, lambda x, i: x[2:6]),
}

for layout, spec in LAYOUTS.items():
    sharding = NamedSharding(mesh, spec)
    x, i = jax.device_put(host, sharding), jax.device_put(ints, sharding)
    for name, (ours, theirs) in CASES.items():
        for mode in ("eager", "jit"):
            run = (lambda f: f) if mode == "eager" else jax.jit
            got, want = run(ours)(x, i), run(theirs)(x, i)
            print(json.dumps({
                "case": f"{name} / {layout} / {mode}",
                "same_sharding": bool(got.sharding.is_equivalent_to(want.sharding, got.ndim)),
                "spread": len(got.sharding.device_set),
                "expected_spread": len(want.sharding.device_set),
                "dtype": str(got.dtype), "expected_dtype": str(want.dtype),
                "values": bool(np.allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-6)),
            }))
print(json.dumps({"device": al.dev(jax.device_put(host, NamedSharding(mesh, LAYOUTS["rows"])))}))
'''


@pytest.fixture(scope="module")
def results() -> dict[str, dict]:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return {line.get("case", "device"): line for line in lines}


def _case_names() -> list[str]:
    names = ("add weak scalar", "int8 + float32", "int8 * weak int", "astype", "exp", "where", "sum axis 0",
             "sum axis 1", "int8 sum", "mean", "matmul", "concat", "zeros_like", "full_like", "Array operators",
             "Array namespace", "take", "sort", "cumulative_sum", "softmax", "Array slice")
    return [f"{n} / {layout} / {mode}" for n in names for layout in ("rows", "columns", "grid", "replicated")
            for mode in ("eager", "jit")]


@pytest.mark.parametrize("case", _case_names())
def test_sharding_is_kept_as_jax_numpy_keeps_it(results, case):
    got = results[case]
    assert got["same_sharding"], got
    assert got["spread"] == got["expected_spread"], got
    assert got["dtype"] == got["expected_dtype"], got
    assert got["values"], got


def test_every_case_ran(results):
    assert set(_case_names()) <= set(results)


def test_a_sharded_array_reports_the_cpu(results):
    """A sharded array lives on several devices of one kind; arraylayer names the kind."""
    assert results["device"]["device"] == "cpu"
