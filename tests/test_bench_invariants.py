"""What the operation benchmarks promise that does not depend on machine speed.

benchmarks/bench_ops.py measures times; these tests check the properties behind its
figures that hold on any machine: no graph breaks under torch.compile, one result array
per large add (and that the allocation counts can see a cast when there is one), and that
the benchmark itself runs. No test here asserts a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import load_script, selected_backends

import arraylayer as al

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks" / "bench_ops.py"
LARGE = 10**6


@pytest.fixture(scope="module")
def bench():
    """benchmarks/bench_ops.py as a module (its allocation counters and the MLP)."""
    return load_script(BENCH)


@pytest.fixture
def torch(request):
    if "torch" not in selected_backends(request.config):
        pytest.skip("torch not selected")
    return pytest.importorskip("torch")


# -- one result array per large add --------------------------------------------------------------
def _operands(bench, backend: str, dtype: str = "float32"):
    native = bench.NATIVES[backend]()
    rng = np.random.default_rng(0)
    a = native.array(rng.standard_normal(LARGE).astype(np.float32))
    b = native.array(rng.standard_normal(LARGE).astype(dtype))
    return native, a, b


@pytest.fixture
def eager_backend(backend):
    """The backends that compute when called (dask builds a graph: tests/test_dask.py counts its tasks)."""
    if backend == "dask":
        pytest.skip("dask arrays allocate nothing until computed; tests/test_dask.py counts graph tasks instead")
    return backend


def test_a_large_add_allocates_one_array(bench, eager_backend):
    backend = eager_backend
    native, a, b = _operands(bench, backend)
    count = bench.ALLOCATIONS[backend]
    assert count(eval(native.add, native.env), a, b)[0] == 1  # the method counts the native add as one
    allocated, details = count(al.add, a, b)
    assert allocated == 1, details
    if backend == "numpy":
        assert details["result_owns_data"]
    if backend == "jax":
        assert details["live_buffers_added"] == 1


def test_the_allocation_count_sees_a_cast(bench, eager_backend):
    backend = eager_backend
    """The counting method is sound: an add after an explicit cast is two arrays (cast, sum),
    natively and through arraylayer (float32 + int32 casts the int32 operand), but on torch, whose
    add promotes the pair inside its kernel and arraylayer's plan leaves it to (one array; the values
    are checked in tests/test_mixed_native.py)."""
    native, a, i = _operands(bench, backend, "int32")
    count = bench.ALLOCATIONS[backend]
    cast_then_add = eval(f"lambda a, i: {native.add}(a, {native.cast.format('i')})", native.env)
    assert count(cast_then_add, a, i)[0] == 2
    assert count(al.add, a, i)[0] == _MIXED_ADD_ARRAYS.get(backend, 2)


#: arrays allocated by al.add(float32, int32) where it is not a cast and a sum
_MIXED_ADD_ARRAYS = {"torch": 1}


# -- torch.compile: no graph breaks --------------------------------------------------------------
# Each check runs in a fresh interpreter: the api layer's plan caches live as long as the
# process, and what other tests left in them (another backend's dtypes, for one) changes
# what Dynamo traces.
_GRAPH_BREAKS = """
import json, sys
mode, names = sys.argv[1], sys.argv[2:]
sys.path.insert(0, {benchmarks!r})
import torch
import arraylayer as al
from bench_ops import mlp_arraylayer

if mode == "after_tensorflow":  # arraylayer used on TensorFlow first, in the same process
    import tensorflow as tf
    al.add(tf.ones(2), tf.ones(2))
g = torch.Generator().manual_seed(0)
x = torch.linspace(-1.0, 1.0, 8)
m = torch.randn(64, 32, generator=g)
params = tuple((torch.randn(32, 32, generator=g) / 6, torch.randn(32, generator=g)) for _ in range(3))
cases = {{
    "add": (lambda x: al.add(x, x * 2), (x,)),
    "maximum_with_scalar": (lambda x: al.maximum(x, 0.0), (x,)),
    "sum": (lambda x: al.sum(x), (x,)),
    "mlp": (mlp_arraylayer, (m, params)),
}}
results = {{}}
for name in names:
    fn, args = cases[name]
    if mode != "cold":
        fn(*args)  # planned eagerly first, as in a program that also runs it outside the compiled region
    try:
        # fullgraph first: explain() does not count a break in a frame that has no tensor
        # operation before it (and its eager fallback would plan the call, warming the caches)
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="eager", fullgraph=True)
        torch.testing.assert_close(compiled(*args), fn(*args))
        torch._dynamo.reset()
        explained = torch._dynamo.explain(fn)(*args)
        results[name] = {{"breaks": explained.graph_break_count, "graphs": explained.graph_count,
                         "reasons": [str(r.reason)[:300] for r in explained.break_reasons]}}
    except Exception as error:
        results[name] = {{"error": f"{{type(error).__name__}}: {{error}}"[:500]}}
print(json.dumps(results))
"""
_CASES = ("add", "maximum_with_scalar", "sum", "mlp")
_RESULTS: dict[tuple[str, str], dict] = {}


def _graph_breaks(mode: str, name: str) -> dict:
    """The explain() summary of case ``name``, from a fresh interpreter: one per case when
    "cold" (nothing planned before tracing), one for all cases otherwise."""
    if (mode, name) not in _RESULTS:
        names = [name] if mode == "cold" else list(_CASES)
        code = _GRAPH_BREAKS.format(benchmarks=str(BENCH.parent))
        out = subprocess.run([sys.executable, "-c", code, mode, *names], capture_output=True, text=True,
                             timeout=300, cwd=ROOT, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        assert out.returncode == 0, out.stderr[-2000:]
        for done, result in json.loads(out.stdout.strip().splitlines()[-1]).items():
            _RESULTS[mode, done] = result
    return _RESULTS[mode, name]


@pytest.mark.parametrize(("mode", "name"), [
    *(("warm", name) for name in _CASES),
    *(("cold", name) for name in _CASES),
])
def test_no_graph_breaks_under_torch_compile(torch, mode, name):
    """al.add, al.maximum(x, 0.0), al.sum and the benchmark's MLP compile to one graph, both
    when they ran eagerly first ("warm") and when their first call is being traced ("cold")."""
    assert _graph_breaks(mode, name) == {"breaks": 0, "graphs": 1, "reasons": []}


def test_no_graph_breaks_after_another_backend_used_the_function(torch, request):
    """al.add's plan caches then hold TensorFlow dtype objects too, which Dynamo cannot hash:
    tracing a torch call must not look at them."""
    if "tensorflow" not in selected_backends(request.config):
        pytest.skip("tensorflow not selected")
    pytest.importorskip("tensorflow")
    assert _graph_breaks("after_tensorflow", "add") == {"breaks": 0, "graphs": 1, "reasons": []}


# -- the benchmark runs ----------------------------------------------------------------------------
def test_the_benchmark_runs_in_quick_mode(tmp_path):
    output = tmp_path / "ops.json"
    out = subprocess.run([sys.executable, str(BENCH), "--quick", "--backend", "numpy", "--output", str(output)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    header = out.stdout.splitlines()[0].split()
    assert header == ["backend", "case", "native", "arraylayer", "ratio", "target", "ok"]
    result = json.loads(output.read_text())
    assert result["quick"] is True
    rows = {(row["backend"], row["case"]): row for row in result["results"]}
    details = {(row["backend"], row["case"]): row for row in result["details"]}
    assert not [key for key, row in details.items() if "error" in row]
    for case in ("tiny: add 1-element float32", "mixed: float32 + int32", "mixed: float32 + Python float",
                 "large: add 1e5 float32", "large: arrays allocated per add (1e5)"):
        assert rows["numpy", case]["ratio" if "allocated" not in case else "arraylayer_value"] is not None
    assert rows["numpy", "large: arrays allocated per add (1e5)"]["arraylayer_value"] == 1
    assert details["-", "import arraylayer (no framework)"]["frameworks_imported"] == []
