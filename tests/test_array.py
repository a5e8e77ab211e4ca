"""arraylayer.Array on every backend: operators give exactly what the functions give (dtype and
values, errors too) for a matrix of dtype pairs and Python scalars; in-place rules; indexing;
protocols; JAX pytree, tf.function and torch.compile."""

from __future__ import annotations

import math
import operator
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from conftest import make_array

import arraylayer as al
from arraylayer import Array

DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64")
VALUES = {"bool": ((True, False, True), (True, True, False))}
DEFAULT_VALUES = ((1, 2, 3), (2, 1, 3))
SCALARS = (True, 2, -3, 1.5, 2j)

BINARY = {
    "+": (operator.add, al.add), "-": (operator.sub, al.subtract), "*": (operator.mul, al.multiply),
    "/": (operator.truediv, al.divide), "//": (operator.floordiv, al.floor_divide),
    "%": (operator.mod, al.remainder), "**": (operator.pow, al.pow), "&": (operator.and_, al.bitwise_and),
    "|": (operator.or_, al.bitwise_or), "^": (operator.xor, al.bitwise_xor),
    "<<": (operator.lshift, al.bitwise_left_shift), ">>": (operator.rshift, al.bitwise_right_shift),
    "==": (operator.eq, al.equal), "!=": (operator.ne, al.not_equal), "<": (operator.lt, al.less),
    "<=": (operator.le, al.less_equal), ">": (operator.gt, al.greater), ">=": (operator.ge, al.greater_equal),
}
INPLACE = {"+": operator.iadd, "-": operator.isub, "*": operator.imul, "/": operator.itruediv,
           "//": operator.ifloordiv, "%": operator.imod, "**": operator.ipow, "&": operator.iand,
           "|": operator.ior, "^": operator.ixor, "<<": operator.ilshift, ">>": operator.irshift}
UNARY = {"-": (operator.neg, al.negative), "+": (operator.pos, al.positive), "abs": (abs, al.abs),
         "~": (operator.invert, al.bitwise_invert)}


def dtypes_of(backend: str) -> list[str]:
    valid = {str(d) for d in al.get_backend(backend).load().valid_dtypes()}
    return [d for d in DTYPES if d in valid]


def pair(backend: str, dtype: str):
    first, second = VALUES.get(dtype, DEFAULT_VALUES)
    return make_array(backend, dtype, first), make_array(backend, dtype, second)


def host(backend: str, x):
    """A NumPy view of a native array or an Array, for comparing values."""
    native = x.native if isinstance(x, Array) else x
    return np.asarray(al.get_backend(backend).to_numpy(native))


def outcome(backend: str, call):
    """("ok", dtype, values) or ("error", exception type) of ``call()``; operator results must
    be Arrays, function results native arrays."""
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the type is the outcome compared
        return ("error", type(error))
    native = result.native if isinstance(result, Array) else result
    return ("ok", str(al.get_backend(backend).dtype_of(native)), host(backend, native).tolist())


def same_outcome(backend, got, want, what):
    if got[0] == "ok" and want[0] == "ok":
        assert got[1] == want[1], f"{what}: dtype {got[1]} != {want[1]}"
        np.testing.assert_array_equal(np.asarray(got[2]), np.asarray(want[2]), err_msg=what)
    else:
        assert got[:2] == want[:2], f"{what}: {got} != {want}"


COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


def same_native_left(backend, symbol, got, want, what):
    """``native <op> Array``: the native's operator defers to the Array's reflected method, except
    that TensorFlow's comparisons do not defer (they raise the Array's refusal to convert, a
    TypeError), and TensorFlow re-raises an error of its own when the reflected method fails."""
    if backend == "tensorflow" and symbol in COMPARISONS:
        assert got[0] == "error" and issubclass(got[1], TypeError), f"{what}: {got}"
    elif backend == "tensorflow" and want[0] == "error":
        assert got[0] == "error", f"{what}: {got}"
    else:
        same_outcome(backend, got, want, what)


# -- operators == functions -------------------------------------------------------------------------
@pytest.mark.parametrize("symbol", list(BINARY))
def test_binary_operators_are_the_functions(backend, symbol):
    op, function = BINARY[symbol]
    dtypes = dtypes_of(backend)
    for d1 in dtypes:
        for d2 in dtypes:
            x1, _ = pair(backend, d1)
            _, x2 = pair(backend, d2)
            want = outcome(backend, lambda: function(x1, x2))  # noqa: B023
            got = outcome(backend, lambda: op(Array(x1), Array(x2)))  # noqa: B023
            same_outcome(backend, got, want, f"{d1} {symbol} {d2} on {backend}")
            if want[0] == "ok":
                assert isinstance(op(Array(x1), Array(x2)), Array)
            # one side native: the Array's method (or reflected method) still runs arraylayer's function
            same_outcome(backend, outcome(backend, lambda: op(Array(x1), x2)), want,  # noqa: B023
                         f"Array({d1}) {symbol} native {d2}")
            native_left = outcome(backend, lambda: op(x1, Array(x2)))  # noqa: B023
            same_native_left(backend, symbol, native_left, want, f"native {d1} {symbol} Array({d2})")


@pytest.mark.parametrize("symbol", list(BINARY))
def test_operators_with_python_scalars_are_the_functions(backend, symbol):
    op, function = BINARY[symbol]
    for dtype in dtypes_of(backend):
        x, _ = pair(backend, dtype)
        for scalar in SCALARS:
            for reflected in (False, True):
                args = (scalar, x) if reflected else (x, scalar)
                wrapped = (scalar, Array(x)) if reflected else (Array(x), scalar)
                want = outcome(backend, lambda: function(*args))  # noqa: B023
                got = outcome(backend, lambda: op(*wrapped))  # noqa: B023
                same_outcome(backend, got, want, f"{args[0]!r} {symbol} {args[1]!r} ({dtype}) on {backend}")


def test_matmul_operator_is_matmul(backend):
    for d1 in dtypes_of(backend):
        for d2 in dtypes_of(backend):
            x1 = make_array(backend, d1, [[1, 0, 1], [0, 1, 1]] if d1 == "bool" else [[1, 2, 3], [4, 5, 6]])
            x2 = make_array(backend, d2, [[1, 0], [0, 1], [1, 1]] if d2 == "bool" else [[1, 2], [3, 4], [5, 6]])
            want = outcome(backend, lambda: al.matmul(x1, x2))  # noqa: B023
            same_outcome(backend, outcome(backend, lambda: Array(x1) @ Array(x2)), want, f"{d1} @ {d2}")  # noqa: B023
            same_native_left(backend, "@", outcome(backend, lambda: x1 @ Array(x2)), want, f"native {d1} @ {d2}")  # noqa: B023


@pytest.mark.parametrize("symbol", list(UNARY))
def test_unary_operators_are_the_functions(backend, symbol):
    op, function = UNARY[symbol]
    for dtype in dtypes_of(backend):
        x, _ = pair(backend, dtype)
        same_outcome(backend, outcome(backend, lambda: op(Array(x))), outcome(backend, lambda: function(x)),  # noqa: B023
                     f"{symbol}({dtype}) on {backend}")


def test_native_tensorflow_tensor_on_the_left():
    tf = pytest.importorskip("tensorflow")
    t, a = tf.constant([1, 2], tf.int8), Array(tf.constant([1.5, 2.5], tf.float32))
    result = t + a  # deferred to Array.__radd__: arraylayer's promotion (TensorFlow itself refuses int8 + float32)
    assert isinstance(result, Array) and result.dtype is al.float32
    with pytest.raises(TypeError, match="not converted to a tf.Tensor implicitly"):
        _ = t < a  # TensorFlow's comparisons never defer to the right operand
    assert isinstance(a > t, Array)


def test_comparisons_return_arrays_of_bool(backend):
    x, y = pair(backend, "int32")
    for symbol in ("==", "!=", "<", "<=", ">", ">="):
        result = BINARY[symbol][0](Array(x), Array(y))
        assert isinstance(result, Array) and result.dtype is al.bool


def test_operators_refuse_what_is_not_an_array(backend):
    a = Array(pair(backend, "int32")[0])
    assert (a == None) is False  # noqa: E711 - Python's fallback after NotImplemented
    assert (a != "text") is True
    with pytest.raises(TypeError):
        a + "text"
    with pytest.raises(TypeError):
        [1, 2, 3] * a
    with pytest.raises(TypeError, match="modulo"):
        pow(a, 2, 3)
    with pytest.raises(TypeError, match="unhashable"):
        hash(a)


# -- in-place operators ---------------------------------------------------------------------------
ROUNDING_KINDS = "fc"  # NumPy's kind letters of float and complex: narrowing within them only rounds


@pytest.mark.parametrize("symbol", list(INPLACE))
def test_inplace_keeps_the_left_dtype_or_raises(backend, symbol):
    """``a op= b`` is ``op(a, b)`` stored with a's dtype: equal, or rounded within float or complex
    (NumPy's values, cast by NumPy); any other dtype change raises and leaves ``a`` as it was."""
    op, function = BINARY[symbol]
    iop = INPLACE[symbol]
    for d1 in dtypes_of(backend):
        for other_dtype in [*dtypes_of(backend), *SCALARS]:
            x1, _ = pair(backend, d1)
            other = other_dtype if not isinstance(other_dtype, str) else pair(backend, other_dtype)[1]
            want = outcome(backend, lambda: function(x1, other))  # noqa: B023
            before = host(backend, x1).copy()
            a = Array(x1)
            what = f"{d1} {symbol}= {other_dtype!r} on {backend}"
            if want[0] == "error":
                with pytest.raises(want[1]):
                    iop(a, other)
                np.testing.assert_array_equal(host(backend, a), before, err_msg=what)
            elif want[1] != d1 and not (np.dtype(d1).kind == np.dtype(want[1]).kind in ROUNDING_KINDS):
                with pytest.raises(al.TypePromotionError, match=f"from {d1} to {want[1]}"):
                    iop(a, other)
                assert a.native is x1, what  # unchanged after the refusal
                np.testing.assert_array_equal(host(backend, a), before, err_msg=what)
            else:
                result = iop(a, other)
                assert result is a, what
                rounded = ("ok", d1, np.asarray(want[2], dtype=want[1]).astype(d1).tolist())
                same_outcome(backend, outcome(backend, lambda: a), rounded, what)  # noqa: B023


def test_inplace_error_is_a_type_promotion_error_like_numpy(backend):
    a = Array(make_array(backend, "int32", [1, 2, 3]))
    with pytest.raises(al.TypePromotionError) as info:
        a += 1.5
    assert isinstance(info.value, TypeError) and "int32 to float32" in str(info.value)
    with pytest.raises(TypeError):
        a /= 2  # true division of integers is the default float


def test_inplace_never_broadcasts_the_left_operand(backend):
    a = Array(make_array(backend, "float32", [1, 2, 3]))
    b = make_array(backend, "float32", [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match="shape"):
        a += b
    assert a.shape == (3,)


def test_inplace_matmul(backend):
    a = Array(make_array(backend, "float32", [[1, 2], [3, 4]]))
    identity = make_array(backend, "float32", [[1, 0], [0, 1]])
    before = host(backend, a)
    a @= identity
    np.testing.assert_array_equal(host(backend, a), before)


# -- wrapping ---------------------------------------------------------------------------------------
def test_wrapping_is_free(backend):
    x = make_array(backend, "float32", [1, 2, 3])
    a = Array(x)
    assert a.native is x
    assert Array(a).native is x
    if backend == "numpy":
        assert np.shares_memory(np.asarray(a), x)


def test_only_native_arrays_are_wrapped():
    with pytest.raises(TypeError, match="wraps a native array"):
        Array([1, 2, 3])
    with pytest.raises(TypeError, match="wraps a native array"):
        Array(1.5)


def test_properties(backend):
    x = make_array(backend, "int16", [[1, 2, 3], [4, 5, 6]])
    a = Array(x)
    assert a.dtype is al.int16
    assert a.shape == (2, 3) and type(a.shape) is tuple
    assert a.ndim == 2 and a.size == 6 and len(a) == 2
    assert a.device == "cpu"
    assert a.T.shape == (3, 2) and a.mT.shape == (3, 2)
    np.testing.assert_array_equal(host(backend, a.mT), host(backend, x).T)
    assert isinstance(a.T, Array)
    with pytest.raises(ValueError, match="2-d"):
        _ = Array(make_array(backend, "int16", [1, 2])).T
    assert a.to_device("cpu") is a
    with pytest.raises(al.DeviceError):
        a.to_device("cuda")
    assert "arraylayer.Array(" in repr(a)
    assert str(a) == str(x)


def test_array_namespace(backend):
    a = Array(make_array(backend, "float32", [1, 2]))
    namespace = a.__array_namespace__()
    assert namespace.__name__ == f"arraylayer.xp.arrays.{backend}"  # the closed Array namespace (issue 11)
    assert a.__array_namespace__(api_version="2023.12") is namespace
    with pytest.raises(ValueError, match="api_version"):
        a.__array_namespace__(api_version="1999.01")


def test_python_scalars_from_one_element(backend):
    assert int(Array(make_array(backend, "int32", [7]))) == 7
    assert float(Array(make_array(backend, "float32", 2.5))) == 2.5
    assert complex(Array(make_array(backend, "float32", 2.5))) == 2.5
    assert bool(Array(make_array(backend, "bool", True))) is True
    assert int(Array(make_array(backend, "float32", -2.7))) == -2  # truncation, as int(float)
    assert [10, 20, 30][Array(make_array(backend, "int8", 1))] == 20  # __index__
    with pytest.raises(ValueError, match="one element"):
        bool(Array(make_array(backend, "int32", [1, 2])))
    with pytest.raises(TypeError, match="integer"):
        operator.index(Array(make_array(backend, "float32", 1)))
    with pytest.raises(TypeError, match="complex"):
        float(Array(make_array(backend, "complex64", 1)))
    with pytest.raises(TypeError, match="0-d"):
        len(Array(make_array(backend, "int32", 1)))


def test_iteration_and_indexing(backend):
    x = make_array(backend, "int32", [[1, 2], [3, 4], [5, 6]])
    a = Array(x)
    rows = list(a)
    assert len(rows) == 3 and all(isinstance(r, Array) for r in rows)
    np.testing.assert_array_equal(host(backend, rows[1]), [3, 4])
    np.testing.assert_array_equal(host(backend, a[1:, 0]), [3, 5])
    np.testing.assert_array_equal(host(backend, a[..., -1]), [2, 4, 6])
    assert isinstance(a[0, 1], Array) and int(a[0, 1]) == 2
    assert a[Array(make_array(backend, "int32", 2))].shape == (2,)  # an Array as the index


def test_setitem(backend):
    x = make_array(backend, "float32", [[0, 0, 0], [0, 0, 0]])
    a = Array(x)
    a[0, 1] = 5
    a[1] = Array(make_array(backend, "float32", [1, 2, 3]))
    a[:, 2] = 7.5
    np.testing.assert_array_equal(host(backend, a), [[0, 5, 7.5], [1, 2, 7.5]])
    assert a.dtype is al.float32
    if backend in ("numpy", "torch"):
        assert a.native is x  # written in place
    with pytest.raises(al.TypePromotionError, match="keeps the array's dtype"):
        Array(make_array(backend, "int32", [1, 2]))[0] = 1.5
    with pytest.raises(al.ScalarOverflowError):
        Array(make_array(backend, "int8", [1, 2]))[0] = 1000


def test_setitem_with_a_mask(backend):
    a = Array(make_array(backend, "int32", [1, 5, 2, 8]))
    a[a > 4] = 0
    np.testing.assert_array_equal(host(backend, a), [1, 0, 2, 0])


def test_setitem_assigns_a_tf_variable():
    tf = pytest.importorskip("tensorflow")
    variable = tf.Variable([1.0, 2.0, 3.0])
    a = Array(variable)
    a[1:] = 0.5
    assert a.native is variable
    np.testing.assert_array_equal(variable.numpy(), [1.0, 0.5, 0.5])


def test_dlpack(backend):
    a = Array(make_array(backend, "float32", [1, 2, 3]))
    assert a.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(a), [1, 2, 3])
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(torch.from_dlpack(a).numpy(), [1, 2, 3])


def test_numpy_interoperability(backend):
    a = Array(make_array(backend, "int16", [1, 2]))
    assert np.asarray(a).dtype == np.int16
    assert np.asarray(a, dtype=np.float64).dtype == np.float64


# -- functions take and give Arrays ---------------------------------------------------------------
def test_functions_take_and_give_arrays(backend):
    x = make_array(backend, "float32", [[1, 2, 3], [4, 5, 6]])
    a = Array(x)
    for result, want in [
        (al.add(a, 1), al.add(x, 1)), (al.add(1, a), al.add(1, x)), (al.add(a, x), al.add(x, x)),
        (al.exp(a), al.exp(x)), (al.sum(a, axis=0), al.sum(x, axis=0)), (al.mean(a), al.mean(x)),
        (al.matmul(a, a.mT), al.matmul(x, al.matrix_transpose(x))), (al.reshape(a, (3, 2)), al.reshape(x, (3, 2))),
        (al.concat([a, x]), al.concat([x, x])), (al.where(a > 2, a, 0.0), al.where(al.greater(x, 2), x, 0.0)),
        (al.astype(a, "int8"), al.astype(x, "int8")), (al.asarray(a), x),
    ]:
        assert isinstance(result, Array)
        same_outcome(backend, outcome(backend, lambda: result), outcome(backend, lambda: want), str(want))  # noqa: B023
    values, counts = al.unique_counts(Array(make_array(backend, "int32", [3, 1, 3])))
    assert isinstance(values, Array) and isinstance(counts, Array)
    assert al.result_type(a, 1) is al.float32  # non-array results are left as they are
    xp = a.__array_namespace__()
    assert isinstance(xp.sum(a), Array) and isinstance(xp.linalg.matmul(a, a.mT), Array)


@pytest.mark.parametrize("name", ["jax", "torch", "tensorflow"])
def test_functions_on_arrays_inside_the_compilers(name, request):
    pytest.importorskip(name)
    chosen = request.config.getoption("--backend")
    if chosen and name not in chosen:
        pytest.skip(f"--backend excludes {name}")
    from test_compile_and_grad import compiler

    def f(a, b):
        return al.sum(al.add(al.matmul(a, b.mT), 1.0), axis=0), al.exp(a) * b

    a = Array(make_array(name, "float32", [[1, 2, 3], [4, 5, 6]]))
    b = Array(make_array(name, "float32", [[1, 0, 1], [0, 1, 0]]))
    eager = f(a, b)
    compiled = compiler(name)(f)(a, b)
    for got, want in zip(compiled, eager, strict=True):
        assert isinstance(got, Array) and got.dtype is want.dtype
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


# -- pytrees and compilers ------------------------------------------------------------------------
def test_jax_pytree_registered_when_jax_is_imported():
    pytest.importorskip("jax")
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import arraylayer as al
        assert "jax" not in sys.modules, "importing arraylayer imported jax"
        a = al.Array(np.ones(2, np.float32))   # made before JAX is imported
        import jax
        leaves, tree = jax.tree_util.tree_flatten({"a": a, "b": [a]})
        assert len(leaves) == 2 and all(type(x) is np.ndarray for x in leaves), leaves
        rebuilt = jax.tree_util.tree_unflatten(tree, [x * 2 for x in leaves])
        assert isinstance(rebuilt["a"], al.Array) and float(rebuilt["b"][0][0]) == 2.0
        out = jax.jit(lambda a: a + a)(a)
        assert isinstance(out, al.Array) and out.dtype == "float32"
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_jax_pytree_and_jit():
    jax = pytest.importorskip("jax")
    x = make_array("jax", "float32", [[1, 2], [3, 4]])
    a, b = Array(x), Array(make_array("jax", "float32", [[1, 0], [0, 1]]))
    leaves = jax.tree_util.tree_leaves([a, {"k": b}])
    assert len(leaves) == 2 and leaves[0] is x and leaves[1] is b.native
    mapped = jax.tree_util.tree_map(lambda v: v + 1, {"a": a})
    assert isinstance(mapped["a"], Array)

    def f(a, b):
        c = a * b + a
        c += a
        return {"matmul": c @ b.mT, "less": a < b, "neg": -c, "scaled": c / 2}

    eager = f(a, b)
    compiled = jax.jit(f)(a, b)
    for key, value in eager.items():
        assert isinstance(compiled[key], Array), key
        assert compiled[key].dtype is value.dtype, key
        np.testing.assert_array_equal(np.asarray(compiled[key]), np.asarray(value), err_msg=key)


def test_tf_function_takes_and_returns_arrays():
    tf = pytest.importorskip("tensorflow")
    a = Array(tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    b = Array(tf.constant([[1.0, 0.0], [0.0, 1.0]]))

    def f(a, b):
        c = a * b + a
        c += a
        c[0, 0] = 9.0
        return {"matmul": c @ b.mT, "less": a < b, "neg": -c, "scaled": c / 2}

    compiled = tf.function(f)
    eager = f(a, b)
    got = compiled(a, b)
    compiled(Array(tf.constant([[5.0, 6.0], [7.0, 8.0]])), b)  # same shapes and dtypes: no new trace
    assert compiled.experimental_get_tracing_count() == 1
    for key, value in eager.items():
        assert isinstance(got[key], Array), key
        assert got[key].dtype is value.dtype, key
        np.testing.assert_array_equal(np.asarray(got[key]), np.asarray(value), err_msg=key)


# torch 2.13's Dynamo traces the operators of user-defined classes except `@` and `~` ("Failed to
# trace builtin operator `matmul`"): call arraylayer.matmul / bitwise_invert on a.native there.
_TORCH_COMPILABLE = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "&": operator.and_, "|": operator.or_, "<<": operator.lshift, "<": operator.lt, "==": operator.eq,
    ">=": operator.ge, "python scalars": lambda a, b: (a * 2 - 1) ** 2 > b,
}


@pytest.mark.parametrize("symbol", list(_TORCH_COMPILABLE))
def test_torch_compile_fullgraph(symbol):
    torch = pytest.importorskip("torch")
    op = _TORCH_COMPILABLE[symbol]
    a = Array(torch.tensor([[1, 2], [3, 4]], dtype=torch.int32))
    b = Array(torch.tensor([[2, 2], [1, 5]], dtype=torch.int32))

    def f(a, b):
        c = op(a, b)
        return c, c.dtype, c.shape, -a, a.mT, a[0]

    eager = f(a, b)
    torch._dynamo.reset()
    got = torch.compile(f, backend="eager", fullgraph=True)(a, b)
    for g, e in zip(got, eager, strict=True):
        if isinstance(e, Array):
            assert isinstance(g, Array) and g.dtype is e.dtype
            assert torch.equal(g.native, e.native)
        else:
            assert g == e


def test_torch_compile_inplace_operators():
    torch = pytest.importorskip("torch")

    def f(a, b):
        a += b
        a *= b
        a -= b
        return a

    x, y = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    eager = f(Array(x.clone()), Array(y))
    torch._dynamo.reset()
    got = torch.compile(f, backend="eager", fullgraph=True)(Array(x.clone()), Array(y))
    assert isinstance(got, Array) and torch.equal(got.native, eager.native)


def test_size_of_unknown_dimensions():
    tf = pytest.importorskip("tensorflow")

    @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32)])
    def f(x):
        a = Array(x)
        assert a.shape == (None, 2) and a.size is None and a.ndim == 2
        return x

    f(tf.ones((3, 2)))
    assert Array(np.ones((2, 3))).size == math.prod((2, 3))
