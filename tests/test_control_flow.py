"""Control flow and function transforms (arraylayer/models/flow/): scan, map, fori_loop,
while_loop, cond, switch, associative_scan, vmap, stop_gradient, custom_gradient and jvp.

Oracles: the same computation as a plain NumPy loop (values), the same loss written unrolled with
arraylayer ops (gradients), ``jax.lax.associative_scan`` (prefix order), per-example loops (vmap),
and calculus (jvp). Compilation is checked on the frameworks' own graphs: the jaxpr holds a
``scan`` / ``while`` / ``cond`` under ``jax.jit``, the ``tf.function`` graph a While / If op.
A body that breaks the carry's contract fails with the same ControlFlowError on every backend.
"""

from __future__ import annotations

import numpy as np
import pytest

import arraylayer as al
from conftest import AUTODIFF

XS = np.array([0.5, -1.0, 2.0, 0.25, 1.5], np.float32)


def on(backend, values, dtype="float32"):
    with al.use_backend(backend):
        return al.asarray(np.asarray(values).tolist(), dtype=dtype)


def host(backend, x):
    return np.asarray(al.get_backend(backend).to_numpy(x))


def dtype_name(x):
    return str(al.get_backend(al.backend_of(x).name).dtype_of(x))


def autodiff_only(backend):
    if backend not in AUTODIFF:
        pytest.skip(f"{backend} has no autodiff (arraylayer.grad refuses it: test_autodiff.py)")


# -- scan -------------------------------------------------------------------------------------------

def numpy_scan(xs, reverse=False):
    """The oracle: carry = (running sum, running product); y = (sum * x, x ** 2)."""
    total, product, ys = np.float32(0), np.float32(1), [None] * len(xs)
    for i in (range(len(xs) - 1, -1, -1) if reverse else range(len(xs))):
        total, product = total + xs[i], product * xs[i]
        ys[i] = (total * xs[i], xs[i] ** 2)
    return (total, product), np.array([y[0] for y in ys]), np.array([y[1] for y in ys])


def step(carry, x):
    total = al.add(carry["total"], x)
    product = al.multiply(carry["product"], x)
    return {"total": total, "product": product}, (al.multiply(total, x), al.square(x))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_matches_a_numpy_loop_with_a_tree_carry(backend, reverse):
    init = {"total": on(backend, 0.0), "product": on(backend, 1.0)}
    carry, (a, b) = al.scan(step, init, on(backend, XS), reverse=reverse)
    (total, product), want_a, want_b = numpy_scan(XS, reverse)
    assert set(carry) == {"total", "product"}
    np.testing.assert_allclose(host(backend, carry["total"]), total, rtol=1e-6)
    np.testing.assert_allclose(host(backend, carry["product"]), product, rtol=1e-6)
    np.testing.assert_allclose(host(backend, a), want_a, rtol=1e-6)
    np.testing.assert_allclose(host(backend, b), want_b, rtol=1e-6)
    assert dtype_name(a) == dtype_name(carry["total"]) == "float32"


def test_scan_without_xs_runs_length_steps_and_python_numbers_take_the_carry_dtype(backend):
    carry, ys = al.scan(lambda c, _: (c * 2 + 1, c), on(backend, 1.0, "float16"), length=4)
    np.testing.assert_array_equal(host(backend, carry), np.float16(31))
    np.testing.assert_array_equal(host(backend, ys), np.array([1, 3, 7, 15], np.float16))
    assert dtype_name(carry) == dtype_name(ys) == "float16"
    # a Python number in init takes its kind's default dtype; in the body's carry the carry's dtype
    count, _ = al.scan(lambda c, x: (c + 1, x), 0, on(backend, XS))
    assert int(host(backend, count)) == len(XS) and dtype_name(count) == str(al.default_int_dtype())


def test_scan_of_length_zero_returns_empty_ys_of_the_right_shape_and_dtype(backend):
    with al.use_backend(backend):
        xs = al.zeros((0, 3), dtype="float32")
    carry, ys = al.scan(lambda c, x: (c, {"y": al.astype(x, "int32"), "s": al.sum(x)}), on(backend, 2.0), xs)
    assert float(host(backend, carry)) == 2.0
    assert tuple(ys["y"].shape) == (0, 3) and dtype_name(ys["y"]) == "int32"
    assert tuple(ys["s"].shape) == (0,) and dtype_name(ys["s"]) == "float32"


def test_map_is_f_on_each_leading_slice(backend):
    xs = on(backend, np.arange(12, dtype=np.float32).reshape(4, 3))
    out = al.map(lambda row: {"max": al.max(row), "twice": al.multiply(row, 2.0)}, xs)
    np.testing.assert_array_equal(host(backend, out["max"]), [2, 5, 8, 11])
    np.testing.assert_array_equal(host(backend, out["twice"]), np.arange(12).reshape(4, 3) * 2)


# -- fori_loop and while_loop ---------------------------------------------------------------------

def test_fori_loop_gives_an_int32_index_and_matches_a_numpy_loop(backend):
    seen = []

    def body(i, value):
        seen.append(dtype_name(i))
        assert tuple(i.shape) == ()
        return value + al.astype(i, "float32") * value

    out = al.fori_loop(1, 5, body, on(backend, 0.5))
    want = np.float32(0.5)
    for i in range(1, 5):
        want = want + np.float32(i) * want
    np.testing.assert_allclose(host(backend, out), want, rtol=1e-6)
    assert set(seen) == {"int32"}
    assert float(host(backend, al.fori_loop(3, 3, body, on(backend, 7.0)))) == 7.0  # no step


def test_while_loop_matches_a_numpy_loop(backend):
    out = al.while_loop(lambda v: v["x"] < 100, lambda v: {"x": v["x"] * 3, "n": v["n"] + 1},
                        {"x": on(backend, 2.0), "n": 0})
    assert float(host(backend, out["x"])) == 162.0
    assert int(host(backend, out["n"])) == 4 and dtype_name(out["n"]) == str(al.default_int_dtype())


# -- cond and switch --------------------------------------------------------------------------------

def test_cond_takes_the_branch_the_predicate_names(backend):
    x = on(backend, [1.0, -2.0])
    for pred, want in ((True, [2.0, -4.0]), (on(backend, False, "bool"), [0.0, -3.0]),
                       (al.all(al.greater(x, 0.0)), [0.0, -3.0])):
        out = al.cond(pred, lambda a: al.multiply(a, 2.0), lambda a: al.subtract(a, 1.0), x)
        np.testing.assert_array_equal(host(backend, out), want)


@pytest.mark.parametrize(("index", "want"), [(0, 1.0), (1, 10.0), (2, 100.0), (-3, 1.0), (9, 100.0)])
def test_switch_picks_a_branch_and_clamps_the_index_as_jax(backend, index, want):
    branches = [lambda a: a, lambda a: a * 10, lambda a: a * 100]
    for i in (index, on(backend, index, "int32")):
        assert float(host(backend, al.switch(i, branches, on(backend, 1.0)))) == want


# -- associative_scan -------------------------------------------------------------------------------

def compose(a, b):
    """Affine maps x -> m x + c composed (b after a): associative, not commutative."""
    return {"m": al.multiply(b["m"], a["m"]), "c": al.add(al.multiply(b["m"], a["c"]), b["c"])}


def sequential_prefixes(m, c, reverse):
    """The oracle: each prefix composed one by one, ``acc = fn(acc, e[i])``; reversed, the same from
    the end (jax.lax.associative_scan's meaning, checked against it by hand: out[i] = fn(out[i+1], e[i]))."""
    order = range(len(m) - 1, -1, -1) if reverse else range(len(m))
    out_m, out_c = np.zeros_like(m), np.zeros_like(c)
    acc = None
    for i in order:
        acc = (m[i], c[i]) if acc is None else (m[i] * acc[0], m[i] * acc[1] + c[i])
        out_m[i], out_c[i] = acc
    return out_m, out_c


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("n", [1, 2, 7, 8])
def test_associative_scan_composes_in_order(backend, reverse, n):
    rng = np.random.default_rng(n)
    m = rng.uniform(0.5, 1.5, (n, 2)).astype(np.float32)
    c = rng.uniform(-1, 1, (n, 2)).astype(np.float32)
    out = al.associative_scan(compose, {"m": on(backend, m), "c": on(backend, c)}, reverse=reverse)
    want_m, want_c = sequential_prefixes(m, c, reverse)
    np.testing.assert_allclose(host(backend, out["m"]), want_m, rtol=1e-5)
    np.testing.assert_allclose(host(backend, out["c"]), want_c, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_equals_jax_bit_for_bit_along_an_axis(backend, reverse):
    jax = pytest.importorskip("jax")
    x = np.random.default_rng(3).standard_normal((3, 11)).astype(np.float32)
    want = np.asarray(jax.lax.associative_scan(jax.numpy.add, jax.numpy.asarray(x), reverse=reverse, axis=1))
    np.testing.assert_array_equal(host(backend, al.associative_scan(al.add, on(backend, x), reverse=reverse, axis=1)),
                                  want)


# -- vmap ---------------------------------------------------------------------------------------------

def test_vmap_equals_a_loop_over_examples(backend):
    w = on(backend, np.arange(6, dtype=np.float32).reshape(3, 2))
    xs = on(backend, np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))

    def f(x, w):
        y = al.matmul(x, w)
        return {"y": y, "norm": al.sum(al.square(y))}

    out = al.vmap(f, in_axes=(0, None))(xs, w)
    for b in range(4):
        one = f(xs[b], w)
        np.testing.assert_allclose(host(backend, out["y"])[b], host(backend, one["y"]), rtol=1e-6)
        np.testing.assert_allclose(host(backend, out["norm"])[b], host(backend, one["norm"]), rtol=1e-6)


def test_vmap_moves_the_batch_axis_in_and_out(backend):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    out = al.vmap(lambda row: (al.cumulative_sum(row, axis=-1), al.max(row, axis=-1)), in_axes=1, out_axes=(1, 0))(on(backend, x))
    np.testing.assert_array_equal(host(backend, out[0]), np.cumsum(x, axis=-1))
    np.testing.assert_array_equal(host(backend, out[1]), x.max(axis=2).T)


def test_vmap_of_grad_gives_per_example_gradients(backend):
    autodiff_only(backend)
    rng = np.random.default_rng(1)
    w, xs, ys = (rng.standard_normal(s).astype(np.float32) for s in ((3,), (5, 3), (5,)))

    def loss(w, x, y):
        return al.square(al.subtract(al.sum(al.multiply(w, x)), y))

    per_example = al.vmap(al.grad(loss), in_axes=(None, 0, 0))(on(backend, w), on(backend, xs), on(backend, ys))
    want = [2 * (w @ xs[b] - ys[b]) * xs[b] for b in range(5)]  # d/dw (w.x - y)^2
    np.testing.assert_allclose(host(backend, per_example), np.stack(want), rtol=1e-5)


# -- gradients through loops ---------------------------------------------------------------------------

def rnn_loss_scan(w, xs):
    carry, ys = al.scan(lambda h, x: (al.tanh(al.add(al.multiply(w, h), x)),) * 2, al.zeros_like(w), xs)
    return al.add(al.sum(ys), carry)


def rnn_loss_unrolled(w, xs):
    h, total = al.zeros_like(w), al.zeros_like(w)
    for i in range(xs.shape[0]):
        h = al.tanh(al.add(al.multiply(w, h), xs[i]))
        total = al.add(total, h)
    return al.add(total, h)


def test_gradients_through_scan_and_fori_loop_equal_the_unrolled_loop(backend):
    autodiff_only(backend)
    w, xs = on(backend, 0.7), on(backend, XS)
    want = host(backend, al.grad(rnn_loss_unrolled, argnums=(0, 1))(w, xs)[0]), \
        host(backend, al.grad(rnn_loss_unrolled, argnums=(0, 1))(w, xs)[1])
    got = al.grad(rnn_loss_scan, argnums=(0, 1))(w, xs)
    np.testing.assert_allclose(host(backend, got[0]), want[0], rtol=1e-5)
    np.testing.assert_allclose(host(backend, got[1]), want[1], rtol=1e-5)

    def fori_loss(w):
        return al.fori_loop(0, 4, lambda i, v: al.multiply(al.sin(v), w), w)

    def unrolled(w):
        v = w
        for _ in range(4):
            v = al.multiply(al.sin(v), w)
        return v

    np.testing.assert_allclose(host(backend, al.grad(fori_loss)(w)), host(backend, al.grad(unrolled)(w)), rtol=1e-5)


def test_while_loop_differentiates_in_reverse_mode_where_the_framework_can():
    for backend in ("torch", "tensorflow"):
        pytest.importorskip(backend)
        w = on(backend, 1.5)
        g = al.grad(lambda w: al.while_loop(lambda v: v < 10, lambda v: al.multiply(v, w), w))(w)
        # 1.5 ** 6 = 11.39 > 10: v = w ** 6, dv/dw = 6 w ** 5
        np.testing.assert_allclose(host(backend, g), 6 * 1.5 ** 5, rtol=1e-5)


# -- stop_gradient, custom_gradient, jvp ------------------------------------------------------------

def test_stop_gradient_blocks_the_gradient_and_keeps_values(backend):
    x = on(backend, 3.0)
    np.testing.assert_array_equal(host(backend, al.stop_gradient({"a": x})["a"]), 3.0)
    autodiff_only(backend)
    g = al.grad(lambda x: al.multiply(x, al.stop_gradient(x)))(x)
    assert float(host(backend, g)) == 3.0  # not 2x = 6


@al.custom_gradient
def clipped_identity(x):
    return x, lambda g: al.clip(g, -1.0, 1.0)


def test_custom_gradient_uses_the_backward_it_defines(backend):
    x = on(backend, [2.0, -3.0])
    np.testing.assert_array_equal(host(backend, clipped_identity(x)), [2.0, -3.0])
    autodiff_only(backend)
    g = al.grad(lambda x: al.sum(al.multiply(clipped_identity(x), 5.0)))(x)
    np.testing.assert_array_equal(host(backend, g), [1.0, 1.0])  # 5 clipped to 1


def test_jvp_is_the_directional_derivative(backend):
    x, y = on(backend, [0.3, 1.2]), on(backend, [2.0, -1.0])
    tx, ty = on(backend, [1.0, 0.5]), on(backend, [0.0, 2.0])
    f = lambda x, y: al.multiply(al.sin(x), y)  # noqa: E731
    if backend not in AUTODIFF:
        with pytest.raises(al.UnsupportedOperationError, match="no automatic differentiation"):
            al.jvp(f, (x, y), (tx, ty))
        return
    out, tangent = al.jvp(f, (x, y), (tx, ty))
    xn, yn = np.array([0.3, 1.2]), np.array([2.0, -1.0])
    np.testing.assert_allclose(host(backend, out), np.sin(xn) * yn, rtol=1e-6)
    np.testing.assert_allclose(host(backend, tangent), np.cos(xn) * yn * [1.0, 0.5] + np.sin(xn) * [0.0, 2.0],
                               rtol=1e-5)


# -- compiled ---------------------------------------------------------------------------------------------

def test_loops_and_branches_stay_loops_under_jax_jit():
    jax = pytest.importorskip("jax")
    xs = on("jax", XS)
    programs = {
        "scan": lambda xs: al.scan(lambda c, x: (c + x, c), 0.0, xs),
        "while": lambda xs: al.while_loop(lambda v: al.all(v < 100), lambda v: v * 2, xs),
        "cond": lambda xs: al.cond(al.all(xs > 0), lambda a: a, lambda a: -a, xs),
    }
    for primitive, program in programs.items():
        jaxpr = str(jax.make_jaxpr(program)(xs))
        assert f"{primitive}[" in jaxpr, (primitive, jaxpr)
    traced_upper = jax.jit(lambda n, v: al.fori_loop(0, n, lambda i, v: v + 1.0, v))
    assert float(traced_upper(on("jax", 4, "int32"), on("jax", 0.0))) == 4.0


def test_loops_and_branches_are_graph_ops_under_tf_function():
    tf = pytest.importorskip("tensorflow")
    xs = on("tensorflow", XS)
    programs = {
        "While": lambda xs: al.scan(lambda c, x: (c + x, c), 0.0, xs),
        "If": lambda xs: al.cond(al.all(xs > 0), lambda a: a, lambda a: -a, xs),
    }
    for op, program in programs.items():
        graph = tf.function(program).get_concrete_function(xs).graph
        types = {o.type for o in graph.get_operations()}
        assert op in types or f"Stateless{op}" in types, (op, types)
    carry, ys = tf.function(lambda xs: al.scan(lambda c, x: (c + x, c * x), 1.0, xs))(xs)
    eager_carry, eager_ys = al.scan(lambda c, x: (c + x, c * x), 1.0, xs)
    np.testing.assert_array_equal(carry.numpy(), eager_carry.numpy())
    np.testing.assert_array_equal(ys.numpy(), eager_ys.numpy())


# -- the contract, and bad arguments: the same errors everywhere ----------------------------------------

def test_a_body_that_changes_the_carry_fails_the_same_way_everywhere(backend):
    x = on(backend, [1.0, 2.0])
    with pytest.raises(al.ControlFlowError, match=r"leaf of float16 \(2,\) where it should be float32 \(2,\)"):
        al.scan(lambda c, _: (al.astype(c, "float16"), c), x, length=2)
    with pytest.raises(al.ControlFlowError, match=r"leaf of float32 \(3,\) where it should be float32 \(2,\)"):
        al.fori_loop(0, 2, lambda i, v: al.concat([v, v[:1]]), x)
    with pytest.raises(al.ControlFlowError, match="structure"):
        al.while_loop(lambda v: v[0][0] < 5, lambda v: [v[0] + 1, v[1]], (x, x))
    with pytest.raises(al.ControlFlowError, match="boolean scalar"):
        al.while_loop(lambda v: v < 5, lambda v: v + 1, x)
    with pytest.raises(al.ControlFlowError, match="boolean scalar"):
        al.cond(on(backend, [True, False], "bool"), lambda a: a, lambda a: a, x)
    with pytest.raises(al.ControlFlowError, match="returns a pair"):
        al.scan(lambda c, x: c, x, length=1)
    with pytest.raises(al.ControlFlowError, match="str"):
        al.scan(lambda c, x: (c, x), {"a": "text"}, length=1)


def test_a_one_array_carry_is_checked_at_every_step_not_only_the_first(backend):
    """The one-array carry's fast check (loops._leaf_like) still catches a change at a later step."""
    x = on(backend, [1.0, 2.0])
    steps = on(backend, [0.0, 1.0, 2.0])

    def changes_late(c, s):  # the carry turns float16 at the third step
        calls.append(1)
        return (al.astype(c, "float16") if len(calls) == 3 else c + s), c

    def y_grows_late(c, s):
        calls.append(1)
        return c, (al.concat([c, c[:1]]) if len(calls) == 3 else c)

    for body, match in ((changes_late, r"carry f returned has its leaf of float16 \(2,\)"),
                        (y_grows_late, r"y f returned has its leaf of float32 \(3,\)")):
        calls: list[int] = []
        if backend == "jax":  # lax.scan traces the body once: no third call, the first one's check covers all
            al.scan(body, x, steps)
            assert len(calls) == 1
            continue
        with pytest.raises(al.ControlFlowError, match=match):
            al.scan(body, x, steps)


@pytest.mark.parametrize("call, error, match", [
    (lambda x: al.scan(3, x, x), al.InvalidArgumentTypeError, "f must be a function"),
    (lambda x: al.scan(lambda c, v: (c, v), x, x[0]), al.InvalidArgumentError, "0-d"),
    (lambda x: al.scan(lambda c, v: (c, v), x, x, length=2), al.InvalidArgumentError, "length=2"),
    (lambda x: al.scan(lambda c, v: (c, v), x), al.InvalidArgumentError, "give length="),
    (lambda x: al.scan(lambda c, v: (c, v), x, [x, x[:2]]), al.InvalidArgumentError, "different leading"),
    (lambda x: al.scan(lambda c, v: (c, v), x, x, reverse=1), al.InvalidArgumentTypeError, "reverse"),
    (lambda x: al.fori_loop(True, 3, lambda i, v: v, x), al.InvalidArgumentTypeError, "lower is an int"),
    (lambda x: al.fori_loop(0, 2.5, lambda i, v: v, x), al.InvalidArgumentTypeError, "upper is an int"),
    (lambda x: al.switch(0, [], x), al.InvalidArgumentTypeError, "non-empty sequence"),
    (lambda x: al.switch(1.0, [lambda a: a], x), al.InvalidArgumentTypeError, "index is an int"),
    (lambda x: al.vmap(lambda a: a, in_axes="0")(x), al.InvalidArgumentTypeError, "in_axes"),
    (lambda x: al.vmap(lambda a, b: a, in_axes=(0, 0))(x, x[:2]), al.InvalidArgumentError, "different sizes"),
    (lambda x: al.vmap(lambda a: a, in_axes=2)(x), al.AxisError, "out of range"),
    (lambda x: al.vmap(lambda a: a, in_axes=None)(x), al.InvalidArgumentError, "no argument is batched"),
    (lambda x: al.associative_scan(al.add, x, axis=1), al.AxisError, "out of range"),
    (lambda x: al.map(lambda a: a, None), al.InvalidArgumentError, "no array"),
])
def test_bad_arguments_are_refused_alike(backend, call, error, match):
    with pytest.raises(error, match=match):
        call(on(backend, [1.0, 2.0, 3.0]))


def test_control_flow_error_is_a_type_error_as_jax_raises():
    assert issubclass(al.ControlFlowError, TypeError) and issubclass(al.ControlFlowError, al.ArrayLayerError)


def test_scan_and_fori_loop_compile_into_one_torch_graph():
    torch = pytest.importorskip("torch")
    xs = on("torch", XS)

    def program(xs):
        carry, ys = al.scan(lambda c, x: (c + x, c * x), al.zeros_like(xs[0]), xs)
        return al.fori_loop(0, 3, lambda i, v: v * 2, carry), ys

    compiled = torch.compile(program, fullgraph=True)  # fullgraph: a graph break would raise
    for got, want in zip(compiled(xs), program(xs), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
