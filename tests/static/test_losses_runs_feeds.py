"""Static mode, round 2: losses with broadcasting, runs and assigns, optimisation that
keeps IEEE results bit for bit, feeds that refuse unsafe casts, no shared storage,
modes that do not mix, and check_numerics.

Each test names the behaviour it pins; torch is the oracle where it has the call.
"""

import operator
import warnings

import numpy as np
import pytest
from default_dtype import float64_default

import naivegraph as ng
import naivegraph.static as ns
from naivegraph.ops import OPS

# float64 values (1e300, special values) compared bit for bit or with torch's float64:
# placeholders, Variables and constants from Python floats in float64 too (the default
# dtype is float32)
pytestmark = pytest.mark.usefixtures(float64_default.__name__)


# -- 8c: mse_loss with a broadcast target averages over the broadcast shape -----------
# ns.mse_loss refuses shapes that differ, as F.mse_loss does (a broadcast is almost always
# a bug); the op itself broadcasts as torch's does (torch warns), so these tests call it.
def _mse_loss(x, target, reduction="mean"):
    return OPS["mse_loss"].dispatch(x, target, reduction=reduction)


def test_ns_mse_loss_refuses_the_broadcast_that_the_op_allows():
    with ns.Graph():
        w = ns.Variable([1.0, 2.0, 3.0], name="w")
        with pytest.raises(ValueError, match="must match"):
            ns.mse_loss(w, np.zeros((2, 3)))
        assert _mse_loss(w, ns.constant(np.zeros((2, 3)))).shape == ()


def _mse_broadcast_graph():
    with ns.Graph() as g:
        w = ns.Variable([1.0, 2.0, 3.0], name="w")
        target = ns.constant(np.zeros((2, 3)))
        loss = _mse_loss(w, target)
        (dw,) = ns.gradients(loss, [w])
    return g, w, loss, dw


def test_mse_loss_broadcast_target_numeric_gradient_matches_torch():
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch warns about the broadcast
        expected = torch.nn.functional.mse_loss(x, torch.zeros(2, 3, dtype=torch.float64))
    expected.backward()
    g, w, loss, _ = _mse_broadcast_graph()
    g.forward()
    g.backward(loss)
    assert float(loss.value) == pytest.approx(expected.item())
    np.testing.assert_allclose(w.grad, x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(w.grad, [2 / 3, 4 / 3, 2.0], rtol=1e-12)


def test_mse_loss_broadcast_target_symbolic_gradient_matches_torch():
    g, w, loss, dw = _mse_broadcast_graph()
    value, grad = g.compile([], [loss, dw])()
    assert float(value) == pytest.approx(14 / 3)
    np.testing.assert_allclose(grad, [2 / 3, 4 / 3, 2.0], rtol=1e-12)


def test_mse_loss_broadcast_input_gradient_sums_over_the_broadcast_axis():
    with ns.Graph() as g:
        w = ns.Variable([[1.0], [2.0]], name="w")  # (2, 1) against a (2, 3) target
        loss = _mse_loss(w, ns.constant(np.zeros((2, 3))), reduction="sum")
    g.forward()
    g.backward(loss)
    np.testing.assert_allclose(w.grad, [[6.0], [12.0]])  # 3 columns x 2 x w


# -- 10: feeds refuse casts that lose information ---------------------------------------
def _typed_placeholders():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        i = ns.placeholder("i", shape=(2,), dtype=np.int64)
        u = ns.placeholder("u", shape=(), dtype=np.uint8)
        f32 = ns.placeholder("f32", shape=(), dtype=np.float32)
    return g, x, i, u, f32


@pytest.mark.parametrize(
    "name, value, phrase",
    [
        (
            "x",
            np.array([1 + 2j, 2.0]),
            "dtype complex128, which cannot be cast to the placeholder's dtype float64",
        ),
        ("i", [1.7, 2.9], "dtype float64, which cannot be cast to the placeholder's dtype int64"),
        ("u", 300, "has values that do not fit its dtype uint8"),
        ("u", -1, "has values that do not fit its dtype uint8"),
        ("f32", 1e300, "has values that do not fit its dtype float32"),
    ],
)
def test_feed_with_an_unsafe_cast_is_refused_naming_placeholder_and_dtypes(name, value, phrase):
    g, *_ = _typed_placeholders()
    for run in (
        lambda: g.forward({name: value}, fetches=[name]),
        lambda: g.compile([name], [name])(value),
    ):
        with pytest.raises(TypeError, match=f"placeholder '{name}'") as info:
            run()
        assert phrase in str(info.value)
    assert len(g.nodes) == 4


@pytest.mark.parametrize(
    "name, value, expected",
    [
        ("x", [1, 2], np.array([1.0, 2.0])),  # int -> float is safe
        ("x", np.array([True, False]), np.array([1.0, 0.0])),
        ("i", np.array([1, 2], dtype=np.int32), np.array([1, 2])),
        ("u", 255, np.array(255, dtype=np.uint8)),
        ("f32", 0.5, np.array(0.5, dtype=np.float32)),
    ],
)
def test_feed_with_a_safe_cast_is_accepted(name, value, expected):
    g, *_ = _typed_placeholders()
    (out,) = g.forward({name: value}, fetches=[name])
    assert out.dtype == g[name].dtype
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(g.compile([name], [name])(value)[0], expected)


# -- 11: no result shares storage with a constant, a Variable or a feed ---------------
def test_constant_keeps_a_copy_of_the_array_it_was_built_from():
    arr = np.array([1.0, 2.0])
    with ns.Graph() as g:
        c = ns.constant(arr)
        y = c * 2.0
    arr[0] = 100.0
    np.testing.assert_array_equal(g.compile([], [y])()[0], [2.0, 4.0])
    np.testing.assert_array_equal(g.compile([], [y], optimize=False)()[0], [2.0, 4.0])


def test_literal_operand_is_copied_when_the_node_is_built():
    arr = np.array([1.0, 2.0])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = x + arr
    arr[:] = 0.0
    np.testing.assert_array_equal(g.forward(x=np.zeros(2), fetches=[y])[0], [1.0, 2.0])


def test_assign_keeps_a_copy_of_the_array_assigned():
    with ns.Graph():
        w = ns.Variable([1.0, 2.0], name="w")
    new = np.array([5.0, 6.0])
    w.assign(new)
    new[0] = 0.0
    np.testing.assert_array_equal(w.value, [5.0, 6.0])


def _aliasing_graph():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable([1.0, 2.0], name="w")
        c = ns.constant(np.array([7.0, 8.0]))
        plus_minus_zero = x + (-0.0)  # optimised away to x itself
        w_column = w.reshape(2, 1)  # a view of the Variable's array
        x_row = x.reshape(1, 2)  # a view of the fed array
    return g, x, w, c, [x, w, c, plus_minus_zero, w_column, x_row]


@pytest.mark.parametrize("entry", ["forward", "compile", "compile_optimized"])
def test_writing_to_a_result_changes_no_variable_constant_or_feed(entry):
    g, x, w, c, fetches = _aliasing_graph()
    feed = np.array([3.0, 4.0])
    if entry == "forward":
        results = g.forward({x: feed}, fetches=fetches)
    else:
        results = g.compile([x], fetches, optimize=entry == "compile_optimized")(feed)
    assert not any(r is feed for r in results)
    for r in results:
        r[...] = -1.0
    np.testing.assert_array_equal(feed, [3.0, 4.0])
    np.testing.assert_array_equal(w.value, [1.0, 2.0])
    np.testing.assert_array_equal(g.compile([], [c])()[0], [7.0, 8.0])
    np.testing.assert_array_equal(g.compile([x], [x * 1.0])(feed)[0], [3.0, 4.0])


def test_optimized_identity_output_is_not_the_input_array():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = x - 0.0
    a = np.array([1.0, 2.0])
    out = g.compile([x], [y], optimize=True)(a)[0]
    assert out is not a and not np.shares_memory(out, a)
    np.testing.assert_array_equal(out, a)


# -- 8f: backward uses the values of the run it follows --------------------------------
@pytest.mark.parametrize("fetch", [False, True])
def test_assign_between_forward_and_backward_does_not_leak_into_the_gradient(fetch):
    with ns.Graph() as g:
        w = ns.Variable(3.0, name="w")
        y = w * w
    if fetch:
        g.forward(fetches=[y])
    else:
        g.forward()
    w.assign(10.0)
    g.backward(y)
    assert float(y.value) == 9.0
    assert float(w.grad) == 6.0  # d(w*w)/dw at the run's w = 3, not 2 * 10
    assert float(w.value) == 10.0  # the assign itself stands
    g.forward()
    g.backward(y)
    assert (float(y.value), float(w.grad)) == (100.0, 20.0)


def test_assign_between_forward_and_backward_through_a_matmul_chain():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(1, 2))
        w = ns.Variable([[1.0], [2.0]], name="w")
        loss = ((x @ w) ** 2).sum()
    g.forward(x=np.array([[1.0, 1.0]]))
    w.assign([[5.0], [5.0]])
    g.backward(loss)
    np.testing.assert_array_equal(w.grad, [[6.0], [6.0]])  # 2 * (1 + 2) * x


# -- 8g: optimisation keeps IEEE results bit for bit ---------------------------------
TINY = np.finfo(np.float64).tiny
SPECIAL = np.array(
    [0.0, -0.0, np.nan, np.inf, -np.inf, 1e308, -1e308, TINY, -TINY, 5e-324, 1.0, -2.5]
)


def _rules(x):
    """One expression per rewrite rule (and per rule that must *not* fire)."""
    c = ns.constant
    return {
        "x + 0.0": x + 0.0,
        "0.0 + x": 0.0 + x,
        "x + (-0.0)": x + (-0.0),
        "(-0.0) + x": -0.0 + x,
        "x - 0.0": x - 0.0,
        "x - (-0.0)": x - (-0.0),
        "x + int 0": x + 0,
        "x - int 0": x - 0,
        "x * 1": x * 1.0,
        "1 * x": 1.0 * x,
        "x * int 1": x * 1,
        "x / 1": x / 1.0,
        "x ** 1": x**1,
        "-(-x)": -(-x),
        "x * 0": x * 0.0,
        "0 * x": 0.0 * x,
        "x * -0.0": x * -0.0,
        "1 / (x + 0.0)": 1.0 / (x + 0.0),
        "x / 0.0 + x / -0.0": x / 0.0 + x / -0.0,
        "x / c(0.0) + x / c(-0.0)": x / c(0.0) + x / c(-0.0),
        "x / c(nan) + x / c(nan)": x / c(np.nan) + x / c(np.nan),
        "folded -0.0": x * (c(-0.0) * 1.0),
        "folded 0 * inf": x + c(0.0) * np.inf,
        "x + zeros(n)": x + np.zeros(SPECIAL.shape),
        "x * ones(n)": x * np.ones(SPECIAL.shape),
        "x + (-zeros)": x + c(-np.zeros(SPECIAL.shape)),
        "reshape": x.reshape(SPECIAL.shape),
        "fused chain": ns.exp(-(x * 1.0 + 0.0)) / 2.0 - x,
        "cse twins": ns.sqrt(x) + ns.sqrt(x),
    }


def _bits(array):
    array = np.asarray(array)
    return array.dtype, array.shape, array.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_rewrite_rule_keeps_results_bit_for_bit_on_special_values(dtype):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=SPECIAL.shape, dtype=dtype)
        rules = _rules(x)
    with np.errstate(over="ignore"):  # 1e308 is inf in float32
        feed = SPECIAL.astype(dtype)
    with np.errstate(all="ignore"):
        raw = g.compile([x], list(rules.values()), optimize=False)(feed)
        fast = g.compile([x], list(rules.values()), optimize=True)(feed)
    for name, a, b in zip(rules, raw, fast):
        assert _bits(a) == _bits(b), f"{name}: {a} became {b}"


@pytest.mark.parametrize(
    "one_pass",
    [
        ns.constant_folding,
        ns.algebraic_simplification,
        ns.common_subexpression_elimination,
        ns.dead_node_elimination,
        ns.elementwise_fusion,
    ],
)
def test_each_pass_alone_keeps_results_bit_for_bit_on_special_values(one_pass):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=SPECIAL.shape)
        rules = _rules(x)
        ns.exp(x) * 3.0  # dead: no fetch needs it
    fetches = list(rules.values())
    new, report = ns.optimize(g, passes=[one_pass], fetches=fetches)
    with np.errstate(all="ignore"):
        raw = g.compile([x], fetches, optimize=False)(SPECIAL)
        fast = new.compile(
            [report.mapping[x]], [report.mapping[f] for f in fetches], optimize=False
        )(SPECIAL)
    assert report.total_changes > 0
    for name, a, b in zip(rules, raw, fast):
        assert _bits(a) == _bits(b), f"{one_pass.__name__} changed {name}: {a} became {b}"


def test_optimisation_really_rewrites_the_rules_it_may():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(3,))
        exact = [x + (-0.0), x - 0.0, x * 1.0, 1.0 * x, x / 1.0, x**1, -(-x)]
        inexact = [x + 0.0, 0.0 + x, x - (-0.0), x * 0.0]
    _, report = ns.optimize(g, fetches=exact + inexact)
    assert all(report.mapping[e] is report.mapping[x] for e in exact)
    assert not any(report.mapping[e] is report.mapping[x] for e in inexact)


def test_scalar_plus_zeros_vector_keeps_the_broadcast_shape():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x + ns.constant(-np.zeros(3))
    (out,) = g.compile([x], [y], optimize=True)(np.array(-0.0))
    assert out.shape == (3,)
    assert np.signbit(out).all()


def test_cse_does_not_merge_zero_and_negative_zero_constants():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x / 0.0 + x / -0.0
    with np.errstate(all="ignore"):
        (out,) = g.compile([x], [y], optimize=True)(np.array(1.0))
    assert np.isnan(out)  # inf + -inf; merged constants would give inf


def test_plus_zero_is_not_dropped_because_it_flips_negative_zero():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = 1.0 / (x + 0.0)
    with np.errstate(divide="ignore"):
        (out,) = g.compile([x], [y], optimize=True)(np.array(-0.0))
    assert out == np.inf


@pytest.mark.parametrize("dtype", [np.int64, np.complex128])
def test_rewrite_rules_keep_integer_and_complex_results_exactly(dtype):
    feed = np.array([0, 1, -3, 7], dtype=dtype)
    if dtype is np.complex128:
        feed = np.array([complex(np.inf, 1), complex(-0.0, -0.0), complex(np.nan, 0), 1j])
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(4,), dtype=dtype)
        outs = [x + 0, x - 0, x * 1, 1 * x, x * 0, 0 * x, -(-x), x + (-0.0), x * 1.0]
    with np.errstate(all="ignore"):
        raw = g.compile([x], outs, optimize=False)(feed)
        fast = g.compile([x], outs, optimize=True)(feed)
    for a, b in zip(raw, fast):
        assert _bits(a) == _bits(b)


# -- 14s: modes do not mix; gradients and graph stacks refuse misuse clearly ----------

MIXING = "dynamic tensors and static graph nodes do not mix"

MIXED_CALLS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "pow": operator.pow,
    "matmul": operator.matmul,
    "maximum": lambda a, b: a.maximum(b),
    "minimum": lambda a, b: a.minimum(b),
    "ng.where": lambda a, b: ng.where(ng.tensor([True, False]), a, b),
    "ng.cat": lambda a, b: ng.cat([a, b]),
    "ng.stack": lambda a, b: ng.stack([a, b]),
    "ns.cat": lambda a, b: ns.cat([a, b]),
    "ns.add": lambda a, b: ns.add(a, b),
    "ns.where": lambda a, b: ns.where(ns.get_default_graph()["mask"], a, b),
    "ns.maximum": lambda a, b: ns.maximum(a, b),
    "ns.matmul": lambda a, b: ns.matmul(a, b),
}


@pytest.mark.parametrize("tensor_first", [True, False])
@pytest.mark.parametrize("name", list(MIXED_CALLS))
def test_dynamic_tensor_meeting_a_static_node_is_refused_and_graph_unchanged(name, tensor_first):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        ns.constant([True, False], name="mask")
    t = ng.tensor([1.0, 2.0], requires_grad=True)
    a, b = (t, x) if tensor_first else (x, t)
    with g:
        with pytest.raises(TypeError, match=MIXING) as info:
            MIXED_CALLS[name](a, b)
    assert "ns.constant(t.numpy())" in str(info.value)
    assert len(g.nodes) == 2
    assert t.grad is None and repr(t) == "tensor([1., 2.], requires_grad=True)"


@pytest.mark.parametrize(
    "function", [ns.exp, ns.neg, ns.relu, lambda t: ns.sum(t), lambda t: ns.reshape(t, 2, 1)]
)
def test_static_function_given_only_a_dynamic_tensor_is_refused(function):
    with ns.Graph() as g:
        with pytest.raises(TypeError, match=MIXING):
            function(ng.tensor([1.0, 2.0]))
    assert len(g.nodes) == 0


def test_explicit_constant_from_tensor_values_is_the_way_in():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = ns.constant(ng.tensor([1.0, 2.0]).numpy()) * x
    np.testing.assert_array_equal(g.forward(x=np.array([3.0, 4.0]), fetches=[y])[0], [3.0, 8.0])


def test_numpy_array_on_the_left_of_a_node_builds_one_node():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        y = np.array([2.0, 3.0]) * x
        z = np.float64(2.0) + x
    assert isinstance(y, ns.Operation) and isinstance(z, ns.Operation)
    assert len(g.nodes) == 5
    out = g.forward(x=np.array([1.0, 1.0]), fetches=[y, z])
    np.testing.assert_array_equal(out[0], [2.0, 3.0])
    np.testing.assert_array_equal(out[1], [3.0, 3.0])


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (lambda x, y: ns.gradients([], []), ValueError, "ns.gradients got no ys"),
        (
            lambda x, y: ns.gradients(3.0, [x]),
            TypeError,
            "ys must be static nodes (a node or a list of nodes), but it contains float 3.0",
        ),
        (
            lambda x, y: ns.gradients(y, [x, 3.0]),
            TypeError,
            "xs must be static nodes (a node or a list of nodes), but it contains float 3.0",
        ),
        (lambda x, y: ns.gradients(y, [None]), TypeError, "xs must be static nodes"),
        (
            lambda x, y: ns.gradients(y, ng.tensor(1.0)),
            TypeError,
            "xs must be static nodes (a node or a list of nodes), but it contains Tensor",
        ),
    ],
)
def test_gradients_with_bad_arguments_raise_clearly_and_add_nothing(call, error, phrase):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x * x
    with pytest.raises(error) as info:
        call(x, y)
    assert phrase in str(info.value)
    assert len(g.nodes) == 2


def test_gradients_with_no_xs_is_an_empty_list():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = x * x
    assert ns.gradients(y, []) == []
    assert len(g.nodes) == 2


def test_graph_exited_out_of_order_is_refused_and_the_stack_stays_right():
    g1, g2 = ns.Graph(name="outer"), ns.Graph(name="inner")
    g1.__enter__()
    g2.__enter__()
    try:
        with pytest.raises(RuntimeError, match="outer was exited while inner"):
            g1.__exit__(None, None, None)
        assert ns.get_default_graph() is g2
    finally:
        g2.__exit__(None, None, None)
        g1.__exit__(None, None, None)
    assert ns.get_default_graph() is not g1 and ns.get_default_graph() is not g2
    with pytest.raises(RuntimeError, match="outer is not open"):
        g1.__exit__(None, None, None)


def test_nested_with_blocks_still_work():
    with ns.Graph(name="a") as a:
        with ns.Graph(name="b") as b:
            assert ns.get_default_graph() is b
        assert ns.get_default_graph() is a


# -- A: check_numerics names the first bad node, its op and the line that built it -----
def _log_of_zero_graph():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable([1.0, 2.0], name="w")
        h = x * w
        y = ns.log(h)  # the line check_numerics must point at
        loss = ns.sum(y * 2.0)
    return g, x, w, y, loss


def _line_of(text):
    with open(__file__) as source:
        return next(i for i, line in enumerate(source, 1) if text in line)


@pytest.mark.parametrize("how", ["forward", "forward_fetches", "compile_raw"])
def test_check_numerics_forward_stops_at_the_first_bad_node(how):
    g, x, w, y, loss = _log_of_zero_graph()
    g.forward(x=np.array([1.0, 1.0]))
    before = [None if n.value is None else np.array(n.value) for n in g.nodes]
    bad = np.array([0.0, 1.0])
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError) as info:
        if how == "forward":
            g.forward(x=bad, check_numerics=True)
        elif how == "forward_fetches":
            g.forward(x=bad, fetches=[loss], check_numerics=True)
        else:
            g.compile([x], [loss], optimize=False, check_numerics=True)(bad)
    message = str(info.value)
    assert "node 'log_1' (log) has 0 NaN and 1 inf of 2 element(s)" in message
    assert f"{__file__}:{_line_of('the line check_numerics must point at')}" in message
    assert "y = ns.log(h)" in message
    after = [None if n.value is None else np.array(n.value) for n in g.nodes]
    assert len(after) == len(before) == 7
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)


def test_check_numerics_in_an_optimised_function_names_the_fused_node_and_its_line():
    g, x, w, y, loss = _log_of_zero_graph()
    f = g.compile([x], [loss], check_numerics=True)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError, match=r"fused\[") as info:
        f(np.array([0.0, 1.0]))
    assert "inf" in str(info.value) and __file__ in str(info.value)


def test_check_numerics_off_by_default_and_clean_runs_pass():
    g, x, w, y, loss = _log_of_zero_graph()
    with np.errstate(all="ignore"):
        (out,) = g.forward(x=np.array([0.0, 1.0]), fetches=[loss])
    assert out == -np.inf
    (out,) = g.forward(x=np.array([1.0, 1.0]), fetches=[loss], check_numerics=True)
    assert out == pytest.approx(2 * np.log(2.0))
    g.backward(loss, check_numerics=True)
    np.testing.assert_allclose(w.grad, [2.0, 1.0])


def test_check_numerics_nan_feed_is_reported_at_the_placeholder():
    g, x, *_ = _log_of_zero_graph()
    with pytest.raises(FloatingPointError, match="node 'x' \\(placeholder\\) has 1 NaN and 0 inf"):
        g.forward(x=np.array([np.nan, 1.0]), check_numerics=True)


def test_check_numerics_backward_names_the_op_whose_backward_made_the_bad_gradient():
    with ns.Graph() as g:
        w = ns.Variable([0.0, 4.0], name="w")
        loss = ns.sum(ns.sqrt(w))  # sqrt'(0) is inf
    g.forward()
    with np.errstate(all="ignore"):
        g.backward(loss)
    previous = np.array(w.grad)
    with np.errstate(all="ignore"), pytest.raises(FloatingPointError) as info:
        g.backward(loss, check_numerics=True)
    message = str(info.value)
    assert "the gradient of node 'w' (variable) has 0 NaN and 1 inf of 2 element(s)" in message
    assert "made by the backward of 'sqrt_1' (sqrt)" in message
    assert f"{__file__}:{_line_of('sqrt' + chr(39) + '(0) is inf')}" in message
    np.testing.assert_array_equal(w.grad, previous)  # .grad untouched by the failed sweep


def test_nodes_record_the_user_line_that_built_them_including_gradient_nodes():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = ns.exp(x)  # built here
        (dy,) = ns.gradients(y, [x])  # gradient nodes built here
    assert y.built_at == (__file__, _line_of("y = ns.exp(x)  # built here"))
    assert dy.built_at == (__file__, _line_of("# gradient nodes built here"))
    small, report = ns.optimize(g, fetches=[y])
    assert report.mapping[y].built_at == y.built_at


# -- hostile follow-ups: assign casts, shared gradients, state after errors ------------
@pytest.mark.parametrize(
    "initial, trainable, value, phrase",
    [
        (
            [1.0, 2.0],
            True,
            [1 + 2j, 0.0],
            "dtype complex128, which cannot be cast to the Variable's dtype float64",
        ),
        (
            [1, 2],
            False,
            [1.7, 2.9],
            "dtype float64, which cannot be cast to the Variable's dtype int64",
        ),
        (
            np.array([1, 2], dtype=np.uint8),
            False,
            [1, 300],
            "has values that do not fit its dtype uint8",
        ),
    ],
)
def test_assign_refuses_a_lossy_cast_and_keeps_the_old_value(initial, trainable, value, phrase):
    with ns.Graph():
        v = ns.Variable(initial, name="v", trainable=trainable)
    old = np.array(v.value)
    with pytest.raises(TypeError, match="the value assigned to Variable 'v'") as info:
        v.assign(value)
    assert phrase in str(info.value)
    np.testing.assert_array_equal(v.value, old)


def test_assign_accepts_ints_into_a_float_variable():
    with ns.Graph():
        v = ns.Variable([1.0, 2.0], name="v")
    v.assign([3, 4])
    assert v.value.dtype == np.float64 and v.value.tolist() == [3.0, 4.0]


def test_gradients_of_two_variables_do_not_share_storage_with_each_other_or_the_seed():
    torch = pytest.importorskip("torch")
    with ns.Graph() as g:
        a = ns.Variable([1.0, 2.0], name="a")
        b = ns.Variable([3.0, 4.0], name="b")
        y = a + b.reshape(2)
    seed = np.array([1.0, 5.0])
    g.forward()
    g.backward(y, grad=seed)
    ta = torch.tensor([1.0, 2.0], requires_grad=True)
    tb = torch.tensor([3.0, 4.0], requires_grad=True)
    (ta + tb.reshape(2)).backward(torch.tensor([1.0, 5.0]))
    a.grad[0] = 100.0
    np.testing.assert_array_equal(b.grad, tb.grad.numpy())
    np.testing.assert_array_equal(seed, [1.0, 5.0])
    assert not np.shares_memory(a.grad, b.grad) and not np.shares_memory(b.grad, seed)


def _state(g):
    return (
        len(g.nodes),
        [np.array(v.value).tolist() for v in g.variables],
        [None if n.grad is None else np.array(n.grad).tolist() for n in g.nodes],
    )


def test_every_failing_entry_point_leaves_nodes_variables_and_grads_unchanged():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable([1.0, 2.0], name="w")
        loss = ns.sum(ns.log(x * w))
    g.forward(x=np.array([1.0, 1.0]))
    g.backward(loss)
    before = _state(g)
    failures = [
        lambda: g.forward(x=np.ones(3)),  # wrong shape
        lambda: g.forward(x=np.array([1 + 1j, 1.0])),  # lossy cast
        lambda: g.forward(fetches=[loss]),  # missing feed
        lambda: g.forward(x=np.array([0.0, 1.0]), check_numerics=True),  # -inf
        lambda: g.compile([x], [loss])(np.ones(3)),
        lambda: g.compile([], [loss]),
        lambda: g.backward(loss, grad=np.ones(2)),  # grad shape
        lambda: ns.gradients(loss, [x, 1.0]),
        lambda: ns.gradients(loss, [w], grad_ys=[1.0, 2.0]),
        lambda: w.assign([1.0, 2.0, 3.0]),
        lambda: w.assign(["a", "b"]),
        lambda: loss * ng.tensor(1.0),
        lambda: ng.tensor(1.0) - loss,
    ]
    for fail in failures:
        with (
            np.errstate(all="ignore"),
            pytest.raises((TypeError, ValueError, RuntimeError, FloatingPointError)),
        ):
            fail()
        assert _state(g) == before


@pytest.mark.parametrize(
    "convert, phrase",
    [
        (lambda x: ns.constant(x), "a constant must be numeric data"),
        (lambda x: ns.constant([[x, 1.0]]), "it contains Placeholder"),
        (
            lambda x: ns.Variable([x, 1.0], name="v"),
            "the value of Variable 'v' must be numeric data",
        ),
        (lambda x: np.asarray(x), "static node 'x' has no value while the graph is being built"),
        (lambda x: ng.tensor(x), "static node 'x' has no value while the graph is being built"),
    ],
)
def test_a_node_used_as_data_is_refused_without_building_index_nodes(convert, phrase):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
    with g:
        with pytest.raises(TypeError) as info:
            convert(x)
    assert phrase in str(info.value)
    assert len(g.nodes) == 1  # numpy used to read x as a sequence, building x[0], x[1]


def test_writing_to_a_compiled_constant_result_does_not_change_the_next_call():
    with ns.Graph() as g:
        c = ns.constant(np.array([1.0, 2.0]))
        y = c * 2.0  # folded into a constant by the optimiser
    f = g.compile([], [y, c])
    for out in f():
        out[...] = 0.0
    first, second = f()
    np.testing.assert_array_equal(first, [2.0, 4.0])
    np.testing.assert_array_equal(second, [1.0, 2.0])


@pytest.mark.parametrize("zero, negative_zero", [(0.0, -0.0), (np.float64(0.0), np.float64(-0.0))])
def test_cse_keeps_ops_whose_attributes_differ_only_in_the_sign_of_zero(zero, negative_zero):
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=())
        y = 1.0 / ns.clamp(x, min=zero) + 1.0 / ns.clamp(x, min=negative_zero)
    new, _ = ns.optimize(g, passes=[ns.common_subexpression_elimination], fetches=[y])
    assert [n.op_name for n in new.nodes].count("clamp") == 2
    with np.errstate(all="ignore"):
        raw = g.compile([x], [y], optimize=False)(np.array(-1.0))
        fast = g.compile([x], [y], optimize=True)(np.array(-1.0))
    assert _bits(raw[0]) == _bits(fast[0])


def test_kept_node_value_that_views_a_variable_or_feed_is_read_only():
    with ns.Graph() as g:
        x = ns.placeholder("x", shape=(2,))
        w = ns.Variable([1.0, 2.0], name="w")
        w_column = w.reshape(2, 1)
        x_row = x.reshape(1, 2)
        doubled = w * 2.0
    feed = np.array([3.0, 4.0])
    g.forward(x=feed)
    for view in (w_column.value, x_row.value):
        with pytest.raises(ValueError, match="read-only"):
            view[0, 0] = -1.0
    doubled.value[0] = 0.0  # a fresh result is the node's own: writable
    np.testing.assert_array_equal(w.value, [1.0, 2.0])
    np.testing.assert_array_equal(feed, [3.0, 4.0])
