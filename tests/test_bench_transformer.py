"""benchmarks/bench_transformer.py runs at a tiny size: the arraylayer step and the native one give
the same loss with dropout off (the script refuses to time them otherwise), dropout changes the
loss, and a timed round comes back with positive times. No test here asserts a time."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from conftest import load_script, selected_backends

import arraylayer as al

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_transformer.py"


@pytest.fixture(scope="module")
def bench():
    return load_script(BENCH)


# jax-jit compiles four step variants (minutes on 2 cores): `nox -s bench -- --quick` runs that case.
@pytest.mark.parametrize("case", ["torch-eager"])
def test_the_benchmark_runs_at_a_tiny_size(bench, request, case):
    backend = bench.CASES[case].backend
    if backend not in selected_backends(request.config):
        pytest.skip(f"{backend} not selected")
    row = bench.measure(case, bench.SIZES["tiny"], rounds=1, steps=1)
    assert row["arraylayer_ms"] > 0 and row["native_ms"] > 0 and row["ratio"] > 0
    # the tiny model starts near uniform guessing over its 11 tokens
    assert abs(row["loss_without_dropout"] - math.log(bench.SIZES["tiny"].vocab)) < 1.0
    assert row["dropout"] == bench.RATE and row["clock"] == "wall"


def test_rounds_timed_by_cpu_time_without_dropout(bench, request, monkeypatch):
    if "torch" not in selected_backends(request.config):
        pytest.skip("torch not selected")
    monkeypatch.setattr(bench, "clock", bench.CLOCKS["cpu"])
    row = bench.measure("torch-eager", bench.SIZES["tiny"], rounds=1, steps=1, rate=0.0)
    assert row["dropout"] == 0.0 and row["clock"] == "cpu" and row["arraylayer_ms"] > 0


def test_dropout_changes_the_loss(bench):
    size = bench.SIZES["tiny"]
    inputs = bench._inputs("numpy", size)
    params, _, tokens, targets, causal, key = inputs

    def loss(rate: float) -> float:
        with al.use_backend("numpy"):
            logits = bench.forward(params, tokens, causal, key, size, rate)
            return float(al.nn.cross_entropy(logits, al.reshape(targets, (-1,))))

    assert loss(0.0) != loss(0.5)
    assert loss(0.5) == loss(0.5)  # keyed masks: the same key drops the same elements
