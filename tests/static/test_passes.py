"""Optimisation passes: each keeps results (and gradients) equal while shrinking the graph."""

import numpy as np
import pytest
from default_dtype import float64_default
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import naivegraph.static as ns
from naivegraph.static.passes import (
    algebraic_simplification,
    common_subexpression_elimination,
    constant_folding,
    dead_node_elimination,
    elementwise_fusion,
)

# numpy float64 data; each pass must keep outputs and gradients exactly:
# placeholders and Python floats in float64 too (the default dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)

PASSES = [
    constant_folding,
    algebraic_simplification,
    common_subexpression_elimination,
    dead_node_elimination,
    elementwise_fusion,
]


def test_gradient_of_square_shrinks_to_two_x():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=())
        (dx,) = ns.gradients(x**2, [x])
    assert ns.expression(dx) == "(1.0 * 2) * (x ** 1)"
    assert len(g.nodes) == 7
    small, report = ns.optimize(g, fetches=[dx])
    new_dx = report.mapping[dx]
    assert ns.expression(new_dx) == "2.0 * x"
    assert len(small.nodes) == 3
    assert [
        float(v) for v in small.compile([small["x"]], [new_dx], optimize=False)(np.array(5.0))
    ] == [10.0]
    text = str(report)
    assert "7 nodes -> 3 nodes" in text
    assert "mul_1 -> constant 2.0" in text
    assert "pow_scalar_2: x ** 1 -> x (x)" in text


def test_constant_folding_computes_constant_subgraphs_once():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2,))
        c = ns.exp(ns.constant(0.0)) * 3.0  # 3.0, known at build time
        y = x * c
    new = constant_folding(g, keep=[y])
    assert new.lineage.changes == ["exp_1 -> constant 1.0", "mul_1 -> constant 3.0"]
    assert ns.expression(new.lineage.mapping[y]) == "x * 3.0"


def test_cse_merges_identical_ops_but_never_variables_or_placeholders():
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=(2,))
        b = ns.placeholder("b", shape=(2,))  # looks like `a`, is another input
        v1 = ns.Variable([1.0, 2.0], name="v1")
        v2 = ns.Variable([1.0, 2.0], name="v2")  # same value today, may differ tomorrow
        y = ns.exp(a) + ns.exp(a) + ns.exp(b) + v1 + v2
    new = common_subexpression_elimination(g, keep=[y])
    assert new.lineage.changes == ["exp_2 == exp_1"]
    new = dead_node_elimination(new, keep=[new.lineage.mapping[y]])
    assert sorted(n.name for n in new.nodes if n.kind != "operation") == ["a", "b", "v1", "v2"]


def test_cse_never_replaces_a_fetched_node():
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=())
        e1, e2 = ns.exp(a), ns.exp(a)
    new = common_subexpression_elimination(g, keep=[e1, e2])
    assert new.lineage.changes == []
    assert new.lineage.mapping[e1] is not new.lineage.mapping[e2]


def test_dead_node_elimination_keeps_only_what_fetches_need():
    g = ns.Graph()
    with g:
        a = ns.placeholder("a", shape=())
        unused = ns.placeholder("unused", shape=())
        y = a * 2.0
        ns.sin(unused)
    new = dead_node_elimination(g, keep=[y])
    assert [n.name for n in new.nodes] == ["a", "const_1", "mul_1"]
    assert new.lineage.changes == ["removed unused", "removed sin_1"]


def test_simplification_respects_shape_and_dtype():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2,), dtype=np.float32)
        same = x * 1.0 + (-0.0) - 0.0  # weak Python scalars keep float32: all identities apply
        widened = x * np.ones(2)  # float64 ones would change the dtype: must stay
        broadcast = x * np.ones((3, 2), dtype=np.float32)  # changes the shape: must stay
        twice = -(-x)
    new = algebraic_simplification(g, keep=[same, widened, broadcast, twice])
    m = new.lineage.mapping
    assert m[same] is m[x] and m[twice] is m[x]
    assert m[widened].op_name == "mul" and m[broadcast].op_name == "mul"


def test_times_zero_only_for_integers_unless_finite_is_assumed():
    g = ns.Graph()
    with g:
        f = ns.placeholder("f", shape=(2,))
        i = ns.placeholder("i", shape=(2,), dtype=np.int64)
        yf, yi = f * 0, i * 0
    new = algebraic_simplification(g, keep=[yf, yi])
    assert new.lineage.mapping[yf].op_name == "mul"  # inf * 0 is nan: not an identity
    assert new.lineage.mapping[yi].kind == "constant"
    new = algebraic_simplification(g, keep=[yf, yi], assume_finite=True)
    assert new.lineage.mapping[yf].value.tolist() == [0.0, 0.0]


def test_fusion_merges_a_chain_into_one_step_with_equal_results():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(4,))
        y = ns.tanh(ns.sin(x) * 2.0 + 1.0)
        s = ns.sum(y)
    new = elementwise_fusion(g, keep=[s])
    fused = new.lineage.mapping[y]
    assert fused.op.members == ("sin_1", "mul_1", "add_1", "tanh_1")
    assert new.lineage.changes == ["fused_1 = sin_1 > mul_1 > add_1 > tanh_1"]
    v = np.array([0.1, -2.0, 3.0, 0.0])
    got = new.compile([new["x"]], [new.lineage.mapping[s]], optimize=False)(v)[0]
    assert got == np.sum(np.tanh(np.sin(v) * 2.0 + 1.0))


def test_fusion_is_inference_only_and_backward_says_so():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(np.ones(3), name="w")
        loss = ns.sum(ns.exp(x * w) + 1.0)
    new = elementwise_fusion(g, keep=[loss])
    new.forward(x=np.ones(3))
    with pytest.raises(RuntimeError, match="inference-only optimisation"):
        new.backward(new.lineage.mapping[loss])


def test_compile_optimize_fuses_gradient_graph_and_matches_unoptimised():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,))
        w = ns.Variable(np.array([0.5, -1.0, 2.0]), name="w")
        loss = ns.sum(ns.sigmoid(x * w) * ns.tanh(x))
        grads = ns.gradients(loss, [w, x])
    fast = g.compile([x], [loss, *grads], optimize=True)
    slow = g.compile([x], [loss, *grads], optimize=False)
    assert fast.report.total_changes > 0
    assert len(fast.plan.steps) < len(slow.plan.steps)
    v = np.array([1.0, 2.0, -0.5])
    for a, b in zip(fast(v), slow(v)):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_optimize_report_lists_each_pass():
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(2,))
        y = ns.exp(x) * 1.0 + ns.exp(x)
    new, report = ns.optimize(g, fetches=[y])
    names = [p.name for p in report.passes]
    assert names == [
        "constant_folding",
        "algebraic_simplification",
        "common_subexpression_elimination",
        "dead_node_elimination",
        "elementwise_fusion",
    ]
    text = str(report)
    assert "mul_1: x * 1 -> x (exp_1)" in text and "exp_2 == exp_1" in text


# ------------------------------------------------------------------ random programs
UNARY = ["sin", "cos", "tanh", "sigmoid", "neg", "exp_safe", "log_safe", "sqrt_safe", "relu"]
BINARY = ["add", "sub", "mul", "div_safe", "maximum", "add_one", "mul_one", "mul_const"]


def _unary(name, a):
    if name == "exp_safe":
        return ns.exp(ns.tanh(a))
    if name == "log_safe":
        return ns.log(a * a + 1.0)
    if name == "sqrt_safe":
        return ns.sqrt(a * a + 0.5)
    return getattr(ns, name)(a)


def _binary(name, a, b):
    if name == "div_safe":
        return a / (b * b + 1.0)
    if name == "add_one":
        return a + (-0.0)  # food for simplification (x + 0.0 is not x at -0.0)
    if name == "mul_one":
        return 1.0 * a
    if name == "mul_const":
        return a * (ns.constant(2.0) * 0.5)  # food for folding
    return getattr(ns, name)(a, b)


@st.composite
def programs(draw):
    """A list of instructions over vectors of length 3 and one 2x3 matrix input."""
    steps = []
    for _ in range(draw(st.integers(2, 12))):
        kind = draw(st.sampled_from(["unary", "binary", "reduce", "matmul", "repeat"]))
        steps.append(
            (
                kind,
                draw(st.sampled_from(UNARY)),
                draw(st.sampled_from(BINARY)),
                draw(st.integers(0, 100)),
                draw(st.integers(0, 100)),
            )
        )
    return steps


def build_program(steps):
    g = ns.Graph()
    with g:
        x = ns.placeholder("x", shape=(3,))
        m = ns.placeholder("m", shape=(2, 3))
        w = ns.Variable(np.array([0.3, -0.7, 1.1]), name="w")
        pool = [x, w, x * w]
        for kind, u, b, i, j in steps:
            a, c = pool[i % len(pool)], pool[j % len(pool)]
            if kind == "unary":
                pool.append(_unary(u, a))
            elif kind == "binary":
                pool.append(_binary(b, a, c))
            elif kind == "reduce":
                pool.append(a * ns.mean(c) + ns.sum(a, dim=0, keepdim=True))
            elif kind == "matmul":
                pool.append(ns.matmul(m, a).sum() * c)
            else:  # the same expression twice: food for CSE
                pool.append(_unary(u, a) + _unary(u, a))
        out = ns.sum(pool[-1] * pool[-2] * w)  # always depends on w
        grads = ns.gradients(out, [w, x, m])
    return g, (x, m), [out, *[gr for gr in grads if gr is not None]], w


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31 - 1))
def test_every_pass_preserves_outputs_and_gradients(steps, seed):
    g, inputs, fetches, w = build_program(steps)
    rng = np.random.default_rng(seed)
    feeds = [rng.normal(size=(3,)), rng.normal(size=(2, 3))]
    reference = g.compile(inputs, fetches, optimize=False)(*feeds)
    for pass_fn in PASSES:
        new = pass_fn(g, keep=fetches)
        m = new.lineage.mapping
        new_inputs = [new[p.name] if p.name in new._by_name else p for p in inputs]
        got = new.compile(
            [p for p in new_inputs if p.graph is new], [m[f] for f in fetches], optimize=False
        )(*[v for p, v in zip(new_inputs, feeds) if p.graph is new])
        for r, o in zip(reference, got):
            np.testing.assert_allclose(o, r, rtol=1e-12, atol=1e-12, err_msg=pass_fn.__name__)
    optimized = g.compile(inputs, fetches, optimize=True)(*feeds)
    for r, o in zip(reference, optimized):
        np.testing.assert_allclose(o, r, rtol=1e-12, atol=1e-12)
    # Numeric backward after the non-fusing passes equals the symbolic gradient (w first).
    non_fusing = [
        constant_folding,
        algebraic_simplification,
        common_subexpression_elimination,
        dead_node_elimination,
    ]
    new, report = ns.optimize(g, passes=non_fusing, fetches=fetches)
    loss = report.mapping[fetches[0]]
    new.forward(
        {p.name: v for p, v in zip(inputs, feeds) if p.name in new._by_name}, fetches=[loss]
    )
    new.backward(loss)
    np.testing.assert_allclose(new["w"].grad, reference[1], rtol=1e-12, atol=1e-12)


def test_optimize_report_node_counts_add_up_to_the_reduction():
    g = ns.Graph()
    with g:
        x = ns.placeholder("input", shape=(2, 2))
        w1, w2, w3 = ns.Variable(2.0), ns.Variable(3.0), ns.Variable(4.0)
        loss = ns.mean((x * w1 + w2) * (x * w1 * w3) * 1.0 + 0.0)
        grads = ns.gradients(loss, [w1, w2, w3])
    new, report = ns.optimize(g, fetches=[loss, *grads])
    assert sum(p.removed for p in report.passes) == len(g.nodes) - len(new.nodes)
    assert [p.removed for p in report.passes] == [0, 1, 2, 5, 2]
    text = str(report)
    assert "constant_folding" in text and "  0 node(s) removed" in text
    assert "equal constants: mul_6 == div_1" in text
