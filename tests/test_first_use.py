"""The first arraylayer call of a process may happen inside jax.jit, tf.function or
torch.compile(fullgraph=True): it traces (a cast included), its result equals the eager
one, arraylayer's own errors reach the caller as themselves, and AutoGraph says nothing
about arraylayer's functions. Each case runs in a fresh interpreter, with arraylayer
imported before and after the framework (the preparation has two paths)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

_SCRIPT = """
import json, sys, logging, io
order = sys.argv[2]
if order == "arraylayer_first":
    import arraylayer as al
    al.installed_backends()  # looks for the frameworks (find_spec) without importing them
import {framework}
if order == "framework_first":
    import arraylayer as al
import numpy as np
messages = io.StringIO()
for name in ("tensorflow", "absl", ""):
    logging.getLogger(name).addHandler(logging.StreamHandler(messages))
{setup}
out = {{}}
# int8 array next to a float32 array: the int8 operand is cast inside the trace
x, y = make(np.array([1, 2, 3], np.int8)), make(np.array([0.5, 0.25, 2.0], np.float32))
out["value"] = np.asarray(compile(lambda a, b: al.multiply(a, b))(x, y)).tolist()
out["dtype"] = str(al.result_type(x, y))
try:  # under torch.compile(fullgraph=True) an exception is Dynamo's Unsupported by design: raise_compile
    raise_compile(lambda a: al.add(a, 1000))(x)
    out["error"] = None
except Exception as error:
    out["error"], out["message"] = type(error).__name__, str(error)
out["autograph_messages"] = [line for line in messages.getvalue().splitlines() if "AutoGraph" in line]
print(json.dumps(out))
"""

_SETUPS = {
    "jax": ("jax", "import jax.numpy as jnp\nmake = jnp.asarray\ncompile = raise_compile = jax.jit"),
    "tensorflow": ("tensorflow as tf", "make = tf.constant\ncompile = raise_compile = tf.function"),
    "torch": ("torch", "make = torch.from_numpy\n"
                       "compile = lambda f: torch.compile(f, backend='eager', fullgraph=True)\n"
                       "raise_compile = lambda f: torch.compile(f, backend='eager')"),
}


@pytest.mark.parametrize("order", ["arraylayer_first", "framework_first"])
def test_first_call_inside_a_compiled_function(backend, order, tmp_path):
    if backend in ("numpy", "dask"):
        pytest.skip(f"{backend} has no compiler to trace with")
    framework, setup = _SETUPS[backend]
    pytest.importorskip(framework.split()[0])
    script = tmp_path / "first_use.py"  # a file, not -c: AutoGraph converts only code whose source it can read
    script.write_text(_SCRIPT.format(framework=framework, setup=setup))
    out = subprocess.run([sys.executable, str(script), backend, order], capture_output=True, text=True,
                         timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["value"] == [0.5, 0.5, 6.0]  # NumPy: [1, 2, 3] * [0.5, 0.25, 2.0]
    assert result["dtype"] == "float32"
    assert result["error"] == "ScalarOverflowError"
    assert result["message"].startswith("Python int 1000 does not fit int8")  # not rewritten by AutoGraph
    assert result["autograph_messages"] == []
    assert "AutoGraph could not transform" not in out.stderr
    assert "StagingError" not in out.stderr


_EAGER_SCRIPT = """
import sys
import arraylayer as al
import torch
al.set_backend("torch")
x, i = torch.tensor([1.0, -2.0, 3.0]), torch.tensor([1, 2, 3], dtype=torch.int8)
with al.dtype_promotion("standard"), al.use_default_dtypes(float="float32"):
    results = [al.add(x, x), al.multiply(i, x), al.add(x, 2.5), al.exp(x), al.sum(x), al.matmul(x, x),
               al.where(x > 0, x, 0.0), al.reshape(x, (3, 1)), al.zeros(3), al.asarray([1, 2]), al.asarray(x) + 1,
               al.nn.relu(x), al.astype(i, al.float32), al.argsort(x)]
print(sorted(m for m in sys.modules if m.startswith(("torch._dynamo", "torch._inductor"))))
"""


def test_eager_first_use_imports_no_compiler():
    """torch's first use costs what torch costs: arraylayer imports nothing of torch.compile
    (``torch._dynamo`` takes about a second to import) until the user compiles."""
    pytest.importorskip("torch")
    out = subprocess.run([sys.executable, "-c", _EAGER_SCRIPT], capture_output=True, text=True, timeout=300,
                         cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
