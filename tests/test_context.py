"""State lives in contextvars: threads and async tasks with their own settings never see each other's."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import arraylayer as al

# (policy, default float) per worker, and what promote_types must give under it.
WORKERS = [
    ("standard", "float32", ("int8", "uint8"), "int16"),
    ("strict", "float64", ("float32", int), "float32"),
    ("paddle", "float16", ("bool", int), "int64"),
    ("array_api", "bfloat16", ("uint8", "uint16"), "uint16"),
]


def _work(policy, float_default, pair, expected, iterations, errors):
    with al.dtype_promotion(policy), al.use_default_float_dtype(float_default):
        for _ in range(iterations):
            got = (al.get_dtype_promotion(), al.default_float_dtype(), al.promote_types(*pair),
                   al.result_type(1.5))
            want = (policy, float_default, expected,
                    "float32" if policy == "paddle" else float_default)
            if got != want:
                errors.append((policy, got, want))
                return


def test_threads_with_different_settings_never_cross_talk():
    errors: list = []
    threads = [threading.Thread(target=_work, args=(*w, 10_000, errors)) for w in WORKERS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert al.get_dtype_promotion() == "standard" and al.default_float_dtype() == "float32"


def test_async_tasks_with_different_settings_never_cross_talk():
    async def task(policy, float_default, pair, expected):
        with al.dtype_promotion(policy), al.use_default_float_dtype(float_default):
            for _ in range(200):
                await asyncio.sleep(0)  # let the other tasks run in between
                assert al.get_dtype_promotion() == policy
                assert al.default_float_dtype() == float_default
                assert al.promote_types(*pair) == expected
        return policy

    async def main():
        return await asyncio.gather(*(task(*w) for w in WORKERS))

    assert asyncio.run(main()) == [w[0] for w in WORKERS]


def test_process_wide_setting_is_seen_by_new_threads_but_scopes_win():
    al.set_dtype_promotion("strict")
    seen = {}

    def look(name, scoped):
        if scoped:
            with al.dtype_promotion(scoped):
                seen[name] = al.get_dtype_promotion()
        else:
            seen[name] = al.get_dtype_promotion()

    workers = [threading.Thread(target=look, args=("plain", None)),
               threading.Thread(target=look, args=("scoped", "paddle"))]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert seen == {"plain": "strict", "scoped": "paddle"}


def test_scopes_nest_and_restore():
    with al.dtype_promotion("strict"):
        with al.dtype_promotion("paddle"):
            assert al.get_dtype_promotion() == "paddle"
        assert al.get_dtype_promotion() == "strict"
    assert al.get_dtype_promotion() == "standard"


def test_import_loads_no_array_framework():
    code = ("import sys, arraylayer; "
            "print(sorted(m for m in ('numpy', 'torch', 'jax', 'tensorflow', 'ml_dtypes') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
