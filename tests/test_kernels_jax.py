"""The jax kernels, called directly (no api layer), with ``jax_enable_x64`` on: the backend-neutral
cases of tests/test_kernels_numpy.py (values and result dtypes against numpy on the same data,
no weakly typed results), plus what only jax has: tracing under ``jax.jit`` and gradients.

The cases run inside one ``jax.jit`` per family and dtype (see :func:`jitted`), which keeps the
file fast and shows that every kernel traces; the tests after the table call kernels eagerly
(large Python ints, signed zeros, jitted-versus-eager agreement), and the api layer's tests
call every kernel eagerly too.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from test_kernels_numpy import (  # noqa: E402
    FAMILIES,
    Case,
    check_no_half_factorisations,
    params,
    prepare,
    run,
)

import arraylayer as al  # noqa: E402
from arraylayer.kernels.names import ALL_KERNEL_NAMES  # noqa: E402
from arraylayer.support import kernel_unsupported_dtypes  # noqa: E402

BACKEND = "jax"
K = al.get_backend(BACKEND).load().kernels
# Cases with data-dependent result shapes, which jax.jit cannot trace (jax needs a static size).
EAGER_ONLY = frozenset({"nonzero", "unique_all", "unique_counts", "unique_inverse", "unique_values", "repeat[array]"})


def _traceable(kernel: Any, native_args: list[Any], native_kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
    """``kernel``'s call as a function of its array arguments only (everything else stays static)."""
    leaves, tree = jax.tree.flatten((native_args, native_kwargs))
    slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, jax.Array)]

    def call(arrays: list[Any]) -> Any:
        filled = list(leaves)
        for i, array in zip(slots, arrays, strict=True):
            filled[i] = array
        args, kwargs = jax.tree.unflatten(tree, filled)
        return kernel(*args, **kwargs)

    return call, [leaves[i] for i in slots]


# XLA's CPU compiler options for the batches below: its simpler code generator, without LLVM
# optimisation, compiles ~5x faster; the values follow XLA's semantics either way (no fast-math).
FAST_COMPILE = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}


@functools.cache
def jitted(family: str, dtype: str) -> dict[str, Any]:
    """The results of every traceable case of ``family`` for ``dtype``, all computed in one
    ``jax.jit``: one XLA compilation instead of one per case (eager jax compiles every new
    call, ~50 ms on a CPU, so the ~2900 cases would take minutes). It is also the proof that
    every kernel traces under jit; the EAGER_ONLY cases run eagerly."""
    backend = al.get_backend(BACKEND).load()
    calls, inputs = {}, {}
    for case in FAMILIES[family]:
        traceable = case.name not in EAGER_ONLY and case.id not in EAGER_ONLY
        if dtype in case.dtypes and traceable and dtype not in kernel_unsupported_dtypes(backend, case.name):
            _, _, native_args, native_kwargs = prepare(backend, case, dtype)
            calls[case.id], inputs[case.id] = _traceable(backend.kernels[case.name], native_args, native_kwargs)
    lowered = jax.jit(lambda xs: {key: calls[key](x) for key, x in xs.items()}).lower(inputs)
    try:
        compiled = lowered.compile(FAST_COMPILE)
    except Exception:  # an XLA without these options: the default ones (a real error raises again)
        compiled = lowered.compile()
    return compiled(inputs)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("case", "dtype"), params("elementwise"))
def test_elementwise(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("elementwise", dtype))


@pytest.mark.parametrize(("case", "dtype"), params("creation"))
def test_creation(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("creation", dtype))


@pytest.mark.parametrize(("case", "dtype"), params("manipulation"))
def test_manipulation_and_indexing(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("manipulation", dtype))


@pytest.mark.parametrize(("case", "dtype"), params("searching"))
def test_searching_sorting_sets(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("searching", dtype))


@pytest.mark.parametrize(("case", "dtype"), params("statistical"))
def test_statistical_and_utility(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("statistical", dtype))


@pytest.mark.parametrize(("case", "dtype"), params("linalg"))
def test_linalg(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("linalg", dtype))


@pytest.mark.parametrize(("case", "dtype"), params("fft"))
def test_fft(case: Case, dtype: str) -> None:
    run(BACKEND, case, dtype, jitted("fft", dtype))


def test_kernel_names_and_unsupported_declarations() -> None:
    backend = al.get_backend(BACKEND).load()
    assert set(backend.kernels) == set(ALL_KERNEL_NAMES)
    assert not backend.supported, "declare UNSUPPORTED only"
    tested = {(case.name, dtype) for cases in FAMILIES.values() for case in cases for dtype in case.dtypes}
    for name in backend.unsupported:
        # the stored-only low-precision dtypes are refused by every kernel but astype: test_lowp_backends
        declared = {(name, d) for d in kernel_unsupported_dtypes(backend, name) if not d.is_low_precision}
        assert declared <= tested, name


def test_no_half_precision_factorisations() -> None:
    check_no_half_factorisations(BACKEND)


def test_uint64_python_ints_beyond_int64() -> None:
    """jax parses a Python int as int64 first; the kernels take 2**64 - 1 beside uint64."""
    big = 2**64 - 1
    x = jnp.asarray([1, big], dtype=jnp.uint64)
    assert K["equal"](x, big).tolist() == [False, True]
    assert K["subtract"](big, x).tolist() == [big - 1, 0]
    assert K["maximum"](x, 2**63).tolist() == [2**63, big]
    assert K["where"](x == 1, big, x).tolist() == [big, big]
    assert K["clip"](x, 2**63, None).tolist() == [2**63, big]
    assert K["remainder"](x, big).tolist() == [1, 0]
    for result in (K["add"](x, 2**63), K["bitwise_and"](x, big), K["floor_divide"](big, x)):
        assert result.dtype == jnp.uint64 and not result.weak_type


def test_uint32_python_ints_beyond_int32_without_x64(x64_off: None) -> None:
    """Without x64 jax parses a Python int as int32: 2**32 - 1 beside uint32 needs the same help."""
    x = jnp.asarray([1, 2**32 - 1], dtype=jnp.uint32)
    assert K["equal"](x, 2**32 - 1).tolist() == [False, True]
    assert K["add"](x, 2**31).tolist() == [2**31 + 1, 2**31 - 1]
    assert K["where"](x == 1, 2**31, x).dtype == jnp.uint32


def test_signed_zeros_of_remainder_and_floor_divide() -> None:
    """Python's (and the Array API's) signs, where jax's own functions give the opposite zero."""
    x1, x2 = jnp.asarray([-6.0, 6.0, -0.0, 0.0]), jnp.asarray([3.0, -3.0, 3.0, -3.0])
    assert np.signbit(K["remainder"](x1, x2)).tolist() == [False, True, False, True]
    assert np.signbit(K["floor_divide"](x1, x2)).tolist() == [True, True, True, True]
    assert np.signbit(K["remainder"](-6.0, jnp.asarray([3.0], jnp.float32))).tolist() == [False]


JIT_CALLS = {  # kernel name -> a call with static options; the wrapped kernels branch on dtypes
    "remainder": lambda k, x: k(x, -1.5),
    "floor_divide": lambda k, x: k(3.0, x),
    "clip": lambda k, x: k(x, 0.0, None),
    "where": lambda k, x: k(x > 0, x, 0.5),
    "sort": lambda k, x: k(x, axis=-1, descending=True, stable=True),
    "sum": lambda k, x: k(x, axis=1, dtype=x.dtype, keepdims=False),
    "matrix_norm": lambda k, x: k(x[:, :2], keepdims=False, ord="fro"),
    "trace": lambda k, x: k(x, offset=0, dtype=x.dtype),
}


@pytest.mark.parametrize("name", sorted(JIT_CALLS))
def test_jitted_and_eager_calls_agree(name: str) -> None:
    """A few wrapped kernels, jitted on their own and called eagerly, in half precision (their
    float32 detours are static branches); the batches above trace every kernel."""
    x = jnp.asarray([[1.5, -2.0, 0.5], [3.0, 0.25, -1.0]], dtype=jnp.bfloat16)
    call = JIT_CALLS[name]
    eager, jitted_ = call(K[name], x), jax.jit(lambda y: call(K[name], y))(x)
    for e, j in zip(jax.tree.leaves(eager), jax.tree.leaves(jitted_), strict=True):
        assert e.dtype == j.dtype and not j.weak_type
        np.testing.assert_allclose(np.asarray(j, np.float64), np.asarray(e, np.float64), rtol=1e-2, atol=1e-6)


GRADIENTS = {  # kernel name -> (a scalar function of x, its gradient written out)
    "sin": (lambda k, x: k(x).sum(), lambda x: np.cos(x)),
    "multiply": (lambda k, x: k(x, x).sum(), lambda x: 2 * x),
    "clip": (lambda k, x: k(x, -1.0, 1.0).sum(), lambda x: (np.abs(x) < 1).astype(float)),
    "sum": (lambda k, x: k(x * x, dtype=x.dtype), lambda x: 2 * x),
    "cumulative_sum": (lambda k, x: k(x[0], dtype=x.dtype).sum(), lambda x: np.array([[3.0, 2, 1], [0, 0, 0]])),
    "vector_norm": (lambda k, x: k(x), lambda x: x / np.linalg.norm(x)),
    "det": (lambda k, x: k(x[:, :2]), lambda x: np.pad(np.linalg.det(x[:, :2]) * np.linalg.inv(x[:, :2]).T,
                                                       ((0, 0), (0, 1)))),
    "sort": (lambda k, x: (k(x, descending=True) * jnp.arange(3.0)).sum(),
             lambda x: np.take_along_axis(np.tile(np.arange(3.0), (2, 1)),
                                          np.argsort(np.argsort(-x, axis=1), axis=1), 1)),
    "remainder": (lambda k, x: k(x, 0.75).sum(), lambda x: np.ones_like(x)),
    "floor_divide": (lambda k, x: k(x, 0.75).sum(), lambda x: np.zeros_like(x)),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_kernels_are_differentiable(name: str) -> None:
    x = np.array([[1.5, -2.0, 0.5], [3.0, 0.25, -1.25]])
    fn, expected = GRADIENTS[name]
    grad = jax.grad(lambda y: fn(K[name], y))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(grad), expected(x), rtol=1e-6, atol=1e-12)
