"""The compiled dispatch (arraylayer._dispatch) and the pure-Python one give the same results.

The compiled functions replay plans that the Python planner made; every call they have no plan
for goes to the Python function. Here, on every backend, each element-wise function and each
Array operator is called through both paths on the same inputs (same dtype, mixed dtypes,
Python scalars, out-of-range scalars, JAX's weak types), with plans made by either path first,
and the outcomes (dtype and values, or the exception's class and message) must be identical.
A fresh interpreter with ARRAYLAYER_PURE_PYTHON=1 runs the pure-Python path chosen at import.

The normal run takes a fixed-seed sample of the functions; AL_DISPATCH_ALL=1 (``nox -s dispatch``)
takes every one.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al
from arraylayer.runtime import compiled_dispatch
from arraylayer.api import elementwise
from arraylayer.api.elementwise import BINARY, UNARY, clear_plans
from arraylayer.array.operators import OPERATORS
from arraylayer.backends.first_use import PREPARE

ROOT = Path(__file__).resolve().parent.parent
_ALL = os.environ.get("AL_DISPATCH_ALL") == "1"
_SAMPLE = random.Random(2411)
BINARY_NAMES = list(BINARY) if _ALL else ["add", *_SAMPLE.sample(sorted(set(BINARY) - {"add"}), 7)]
UNARY_NAMES = list(UNARY) if _ALL else ["negative", *_SAMPLE.sample(sorted(set(UNARY) - {"negative"}), 5)]

needs_compiled = pytest.mark.skipif(not compiled_dispatch.ACTIVE,
                                    reason="arraylayer._dispatch is not built here (no C compiler at install)")


def outcome(call, *args):
    """What a call gives, comparable across paths: (dtype, values) or (exception class, message)."""
    try:
        result = call(*args)
    except Exception as error:  # noqa: BLE001 - the error is the outcome compared
        return ("raises", type(error).__name__, str(error))
    native = result.native if isinstance(result, al.Array) else result
    values = np.asarray(al.to_backend(native, "numpy") if not isinstance(native, np.ndarray) else native)
    return (type(result).__name__, str(al.Dtype(native.dtype)), repr(values.tolist()))  # repr: nan == nan


def both_paths(compiled, python, *args):
    """Outcomes of: Python planning then Python replay then compiled replay; and, from empty plan
    caches, compiled first (the Python planner runs) then compiled replay."""
    clear_plans()
    first = [outcome(python, *args), outcome(python, *args), outcome(compiled, *args)]
    clear_plans()
    second = [outcome(compiled, *args), outcome(compiled, *args)]
    return first + second


def cases(backend):
    """(label, x1, x2): inputs that take each kind of plan."""
    f32, i32 = make_array(backend, "float32", (1.5, -2.0, 0.0)), make_array(backend, "int32", (3, -1, 0))
    i8, u8 = make_array(backend, "int8", (1, -2, 0)), make_array(backend, "uint8", (1, 2, 0))
    flag = make_array(backend, "bool", (True, False, True))
    out = [("same float32", f32, make_array(backend, "float32", (0.5, 4.0, -1.0))),
           ("same int32", i32, make_array(backend, "int32", (2, 5, 1))),
           ("same bool", flag, make_array(backend, "bool", (False, False, True))),
           ("mixed float32 int32", f32, i32), ("mixed int8 uint8", i8, u8),
           ("float32 and float", f32, 2.5), ("float and float32", 2.5, f32),
           ("int8 and int", i8, 3), ("int and int8", 3, i8), ("int8 and a too large int", i8, 300),
           ("not broadcastable", f32, make_array(backend, "float32", (1.0, 2.0)))]
    if backend == "jax":
        import jax.numpy as jnp

        weak = jnp.asarray(2.0)  # a weak-typed float
        out += [("jax weak and weak", weak, jnp.asarray(3.0)), ("jax weak and float32", weak, f32),
                ("jax float32 and weak", f32, weak)]
    return out


def compiled_and_python(name):
    function = getattr(elementwise, name)
    return function, compiled_dispatch.python_function(function)


@needs_compiled
def test_the_public_functions_are_compiled():
    assert isinstance(al.add, types.BuiltinFunctionType)
    assert compiled_dispatch.python_function(al.add) is not al.add
    assert isinstance(compiled_dispatch.python_function(al.add), types.FunctionType)
    assert al.add.__name__ == "add" and al.add.__doc__.startswith(BINARY["add"].summary)
    assert str(__import__("inspect").signature(al.add)) == "(x1, x2, /)"


@needs_compiled
def test_binary_functions_agree(backend):
    for label, x1, x2 in cases(backend):
        for name in BINARY_NAMES:
            got = both_paths(*compiled_and_python(name), x1, x2)
            assert all(g == got[0] for g in got), (backend, label, name, got)


@needs_compiled
def test_unary_functions_agree(backend):
    for label in ("float32", "int32", "bool"):
        x = make_array(backend, label, (1, 0, 2) if label != "float32" else (0.5, -1.5, 0.0))
        for name in UNARY_NAMES:
            got = both_paths(*compiled_and_python(name), x)
            assert all(g == got[0] for g in got), (backend, label, name, got)


def test_a_dtype_holder_holds_the_arrays_dtype_and_weak_type(backend):
    """Where a backend names a ``dtype_holder`` (JAX's ``aval``), the compiled dispatch reads
    ``x.<holder>.dtype`` and ``.weak_type`` for ``x.dtype`` and ``x.weak_type``: on concrete arrays
    and on the tracers of jit, grad and vmap they must be the same objects and flags."""
    holder = al.runtime.registry.get_backend(backend).dtype_holder
    if not holder:
        pytest.skip(f"{backend} names no dtype holder (its arrays' own dtype is read)")
    import jax
    import jax.numpy as jnp

    seen = []

    def check(x):
        held = getattr(x, holder)
        seen.append((type(x).__name__, held.dtype is x.dtype, held.weak_type == x.weak_type))
        return al.add(x, x)

    for x in (make_array(backend, "float32", (1.5, 2.0)), jnp.asarray(2.0), make_array(backend, "int32", (1, 2))):
        check(x)
        jax.jit(check)(x)
        jax.vmap(check)(x.reshape(-1)[None] if x.ndim else x[None])
    jax.grad(lambda x: check(x).sum())(make_array(backend, "float32", (1.5, 2.0)))
    assert len({name for name, _, _ in seen}) >= 4, seen  # the array class and three tracer classes
    assert all(same and weak for _, same, weak in seen), seen


@needs_compiled
def test_jax_traced_calls_agree(backend):
    """Inside jax.jit the compiled function replays plans keyed by the tracers' dtypes (read through
    their holder): the same outcome as the Python function, weak-typed inputs included."""
    if backend != "jax":
        pytest.skip("tracers with weak types are JAX's")
    import jax
    import jax.numpy as jnp

    f32 = make_array(backend, "float32", (1.5, -2.0))
    for x1, x2 in ((f32, f32), (f32, jnp.asarray(2.0)), (jnp.asarray(2.0), jnp.asarray(3.0)), (f32, 2.5)):
        got = both_paths(jax.jit(al.add), jax.jit(compiled_dispatch.python_function(al.add)), x1, x2)
        assert all(g == got[0] for g in got), got


@needs_compiled
def test_pow_plans_keep_the_integer_rule(backend):
    """A float plan replays the framework's own pow (the kernel's ``arrays_plain``); integer arrays,
    planned next, keep the rule for negative exponents (docs/errors.rst: 1 for a base of 1, +-1 for
    -1, 0 otherwise), on both paths and through the Array operator."""
    floats = make_array(backend, "float32", (2.0, 0.5)), make_array(backend, "float32", (-1.0, 2.0))
    ints = make_array(backend, "int32", (2, -1, 1, -1)), make_array(backend, "int32", (-1, -1, -3, -2))
    for got in (both_paths(*compiled_and_python("pow"), *floats),
                both_paths(lambda a, b: al.Array(a) ** al.Array(b), al.pow, *floats)):
        assert all(g[1:] == ("float32", repr([0.5, 0.25])) for g in got), (backend, got)
    for got in (both_paths(*compiled_and_python("pow"), *ints),
                both_paths(lambda a, b: al.Array(a) ** al.Array(b), al.pow, *ints)):
        assert all(g[1:] == ("int32", repr([0, -1, 1, 1])) for g in got), (backend, got)


@needs_compiled
def test_array_operators_agree(backend):
    """Every compiled operator (matmul is not element-wise: a Python method only) against its
    Python method; called directly, as the class holds the Python ones once torch.compile loads."""
    assert {name for _, name, _, _ in compiled_dispatch.OPERATORS} == {
        name for name, (function, form) in OPERATORS.items()
        if form in ("binary", "reflected", "unary") and function.__name__ != "matmul"}
    for label, x1, x2 in cases(backend):
        if isinstance(x1, (int, float)):
            continue  # the operators of Python scalars are Python's
        a1, a2 = al.Array(x1), x2 if isinstance(x2, (int, float)) else al.Array(x2)
        for _, name, compiled, python in compiled_dispatch.OPERATORS:
            arguments = (a1,) if OPERATORS[name][1] == "unary" else (a1, a2)
            got = both_paths(compiled, python, *arguments)
            assert all(g == got[0] for g in got), (backend, label, name, got)


@needs_compiled
def test_array_namespace_functions_agree(backend):
    """The Array namespace's compiled element-wise functions, and arraylayer's own given Arrays,
    against their Python forms."""
    import importlib

    xp = importlib.import_module(f"arraylayer.xp.arrays.{backend}")
    for label, x1, x2 in cases(backend):
        a1, a2 = (x if isinstance(x, (int, float)) else al.Array(x) for x in (x1, x2))
        for name in BINARY_NAMES:
            compiled = getattr(xp, name)
            assert isinstance(compiled, types.BuiltinFunctionType), name
            got = both_paths(compiled, compiled.__self__.fallback, a1, a2)
            assert all(g == got[0] for g in got), (backend, label, name, got)
            got = both_paths(*compiled_and_python(name), a1, a2)  # arraylayer's own function on Arrays
            assert all(g == got[0] for g in got), (backend, label, name, got)


@needs_compiled
def test_clear_plans_empties_the_compiled_caches():
    x = np.ones(3, np.float32)
    al.add(x, x)
    al.add(x, np.ones(3, np.int16))
    assert al.add.__self__.size() == 2
    clear_plans()
    assert al.add.__self__.size() == 0


@needs_compiled
def test_a_policy_change_is_not_served_a_stale_mixed_plan():
    x, i = np.ones(3, np.float32), np.ones(3, np.int32)
    assert al.add(x, i).dtype == np.float32 and al.add(x, i).dtype == np.float32  # planned, then replayed
    with al.dtype_promotion("strict"), pytest.raises(al.TypePromotionError):
        al.add(x, i)
    with al.dtype_promotion("strict"):
        assert al.add(x, x).dtype == np.float32  # one dtype: any policy


def test_the_pure_python_path_is_chosen_at_import():
    """ARRAYLAYER_PURE_PYTHON=1: Python functions and methods, and the same results."""
    code = (
        "import types, numpy as np, arraylayer as al\n"
        "from arraylayer.runtime import compiled_dispatch as c\n"
        "assert not c.ACTIVE and isinstance(al.add, types.FunctionType)\n"
        "assert isinstance(al.Array.__add__, types.FunctionType)\n"
        "x, i = np.array([1.5, 2.0], np.float32), np.array([3, 4], np.int32)\n"
        "for _ in range(2):\n"
        "    assert al.add(x, i).dtype == np.float32 and al.add(x, i).tolist() == [4.5, 6.0]\n"
        "    assert (al.Array(x) * 2).native.dtype == np.float32\n"
        "    assert al.sqrt(np.array([4.0], np.float32)).tolist() == [2.0]\n"
        "print('pure')\n"
    )
    env = dict(os.environ, ARRAYLAYER_PURE_PYTHON="1", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.strip() == "pure", done.stderr


@needs_compiled
def test_torch_compile_gets_the_python_operators():
    """Once torch._dynamo is imported, Array's operators are the Python methods (Dynamo traces
    nothing else) and the compiled functions are traced as their Python twins."""
    torch = pytest.importorskip("torch")
    import torch._dynamo  # noqa: F401  (what the first torch.compile imports)

    PREPARE["torch._dynamo"]()  # done already on import; idempotent
    assert all(getattr(cls, name) is python for cls, name, _, python in compiled_dispatch.OPERATORS)

    def f(a, b):
        return al.add(a, b) * 2, al.Array(a) - al.Array(b)

    x, y = torch.ones(3), torch.arange(3, dtype=torch.int32)
    got = torch.compile(f, backend="eager", fullgraph=True)(x, y)
    assert got[0].dtype == torch.float32 and got[0].tolist() == [2.0, 4.0, 6.0]
    assert got[1].native.dtype == torch.float32 and got[1].native.tolist() == [1.0, 0.0, -1.0]


_OPERATOR_PROTOCOL = """
import operator, numpy as np, arraylayer as al
from arraylayer.runtime import compiled_dispatch as c

class Sub(al.Array):
    def __radd__(self, other):
        return "Sub.__radd__"

class Foreign:
    def __add__(self, other):
        return NotImplemented
    def __radd__(self, other):
        return "Foreign.__radd__"
    def __rsub__(self, other):
        return NotImplemented

f32, i32 = np.array([1.5, -2.0], np.float32), np.array([3, 4], np.int32)
A, B, I = al.Array(f32), al.Array(np.array([0.5, 4.0], np.float32)), al.Array(i32)
operands = [A, B, I, Sub(f32), Foreign(), 2, 2.5, True, f32, np.float64(2.0), object(), al.Array(np.ones(3, np.float32))]
binary = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
          operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift, operator.pow,
          operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]

def outcome(call, *args):
    try:
        got = call(*args)
    except Exception as error:
        return ("raises", type(error).__name__, str(error))
    if isinstance(got, al.Array):
        return ("Array", str(got.dtype), repr(np.asarray(got.native).tolist()))
    return (type(got).__name__, repr(got))

out = []
for _ in range(2):  # planned, then replayed
    for op in binary:
        out += [outcome(op, x, y) for x in operands for y in operands
                if isinstance(x, al.Array) or isinstance(y, al.Array)]
    out += [outcome(op, x) for op in (operator.neg, operator.pos, abs, operator.invert) for x in (A, I, Sub(i32))]
    out += [outcome(pow, x, y, 3) for x, y in ((A, B), (A, 2), (2, A), (Sub(f32), A), (A, Foreign()))]
if c.ACTIVE:  # the slots point at the compiled operators; setting an operator puts CPython's look-up back
    assert c._dispatch.fill_slots(al.Array) == 0
    for name in ("__sub__", "__pow__", "__lt__"):
        setattr(al.Array, name, getattr(al.Array, name))
        assert c._dispatch.fill_slots(al.Array) == 1, name
print(repr(out))
"""


@needs_compiled
def test_operator_slots_keep_pythons_protocol():
    """``A + B``, ``A ** B``, ``A < B`` through the class's number and comparison slots (compiled) and
    through CPython's look-up of the methods (pure Python): the same outcome for Arrays, subclasses that override a reflected method,
    foreign classes, scalars, NumPy operands and unsupported ones, in fresh interpreters."""
    outs = []
    for pure in ("0", "1"):
        env = dict(os.environ, ARRAYLAYER_PURE_PYTHON=pure, PYTHONPATH=str(ROOT))
        done = subprocess.run([sys.executable, "-c", _OPERATOR_PROTOCOL], capture_output=True, text=True, env=env,
                              cwd=ROOT)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert "Sub.__radd__" in outs[0] and "Foreign.__radd__" in outs[0] and "TypeError" in outs[0]


def test_arrays_and_subclasses_free_what_they_hold():
    """Array's deallocation (the compiled one where built, which keeps a few released Arrays for the
    next result): the native array, the class and a subclass's weak references and attributes are
    released, nothing more, and a reused Array is tracked by the collector like a new one."""
    import gc
    import weakref

    class Sub(al.Array):
        __slots__ = ("extra", "__weakref__")

    class WithDict(al.Array):
        pass

    native = np.ones(3, np.float32)
    gc.collect()  # garbage of earlier tests holding Arrays (each holds its class) is freed before counting
    counts = (sys.getrefcount(native), sys.getrefcount(al.Array), sys.getrefcount(Sub), sys.getrefcount(WithDict))
    for _ in range(50):
        A = al.Array(native)
        B = A + A  # made by the compiled operator where built (from the released Arrays kept for reuse)
        -A  # noqa: B018
        assert gc.is_tracked(B) and B.native is not A.native and B.native.tolist() == [2.0, 2.0, 2.0]
        s = Sub(native)
        s.extra = native
        probe = weakref.ref(s)
        w = WithDict(native)
        w.attribute = native
        del A, B, s, w
        assert probe() is None
    gc.collect()
    assert (sys.getrefcount(native), sys.getrefcount(al.Array), sys.getrefcount(Sub),
            sys.getrefcount(WithDict)) == counts
